"""Mine the training texts for scripts/build_code_model.py from locally installed code.

Run with seek's own environment (it uses seek's tree-sitter chunker, so the training windows
look exactly like what seek embeds: ``<path>\\n<window of at most 600 characters>``):

    .venv/bin/python scripts/mine_code_corpus.py OUT.jsonl --site-packages DIR [...] \
        [--debs DIR] [--seed 0]

``--debs`` and ``--extra-root`` default to ``$CORPUS_DIR/deb`` and ``$CORPUS_DIR/extra``
(``$CORPUS_DIR``: the folder outside the repository that holds the training data, see
scripts/build_code_model.py); without ``$CORPUS_DIR`` name them.

Sources (permissive licences only; anything GPL/LGPL/AGPL/MPL/EPL is skipped, and so is any
package named like one of the benchmark repositories, see BENCH_NAMES):

* the Python standard library (/usr/lib/python3.11, PSF-2.0);
* Python distributions in each ``--site-packages`` folder whose metadata names a permissive
  licence (the shipped corpus read three: the teacher's virtualenv ``$DISTILL_VENV``, seek's
  own ``.venv`` with its test extra, and a virtualenv with semble 0.7.0 installed);
* npm packages under /usr/lib/node_modules whose package.json names a permissive licence;
* Debian packages fetched with ``apt-get download`` and unpacked with ``dpkg-deb -x`` into
  ``--debs`` (one folder per package; the licence is read from its debian/copyright), see
  DEB_PACKAGES in scripts/build_code_model.py for the list.

Two kinds of text are written, one JSON object a line (text, kind, source, licence, lang):
``code`` (embedding windows of seek's chunks) and ``nl`` (docstrings and comment blocks,
which read like a developer's question). Sampling is capped per package and seeded.

``--extra`` mines a second corpus with the languages the first lacks (Java, Kotlin, Swift,
C#, C, C++, Haskell, Elixir, Scala, Zig, Bash) from the sources in EXTRA_SOURCES and
EXTRA_DEB_PACKAGES, unpacked under ``--extra-root`` (default ``$CORPUS_DIR/extra``);
at most 150 files, 700 code windows and 250 comment texts a source, then at most
EXTRA_PER_LANG (1,800) texts a language, all seeded. Here a Debian package is excluded if
any part of its debian/copyright is copyleft (libsqlite3-dev, libuv1-dev, rapidjson-dev,
libpugixml-dev and libmsgpack-dev were left out for that). Haskell comes from the
hyperlinked sources in Haddock's html/src of the libghc-*-doc packages (tags and hover
types stripped); Bash also from extensionless scripts with a sh/bash shebang. Fetch with:

    X=$CORPUS_DIR/extra; mkdir -p $X/deb $X/npm $X/pypi $X/src
    cd $X/deb && apt-get download <EXTRA_DEB_PACKAGES> && for f in *.deb; do \
        n=${f%%_*}; mkdir -p $n; dpkg-deb -x $f $n; done
    cd $X/npm && npm pack @capacitor/android@8.5.2 @capacitor/ios@8.5.2 \
        expo-modules-core@58.1.0 react-native-screens@4.30.1 \
        react-native-gesture-handler@3.5.0 @react-native-async-storage/async-storage@3.1.1
      # unpack each NAME-VERSION.tgz into the folder EXTRA_SOURCES names
      # (capacitor-android/, ..., react-native-async-storage/)
    cd $X/pypi && pip download --no-deps --no-binary :all: JPype1==1.7.1 pythonnet==3.2.1 \
        clr-loader==0.3.1 && pip download --no-deps --only-binary :all: \
        --platform manylinux_2_12_x86_64 ziglang==0.17.1
      # unpack the sdists into jpype1/, pythonnet/, clr_loader/ and the wheel into ziglang/
    # Debian sources (a deb-src entry for bookworm main in /etc/apt/sources.list.d):
    cd $X/src && apt-get source --download-only elixir-lang=1.14.0.dfsg-2 scala=2.11.12-5
      # unpack the .orig.tar.xz files into elixir-lang/ and scala/
    .venv/bin/python scripts/mine_code_corpus.py $CORPUS_DIR/extra.jsonl --extra

(15,020 texts: 10,874 code windows and 4,146 comment texts, 33 sources.)
"""

from __future__ import annotations

import argparse
import ast
import html
import json
import os
import random
import re
import sys
from pathlib import Path

from seek.chunk import chunk_file, embedding_windows

BENCH_NAMES = {
    "abseil",
    "absl",
    "aeson",
    "aiohttp",
    "alamofire",
    "axum",
    "bats",
    "cats",
    "cobra",
    "curl",
    "express",
    "fastapi",
    "flask",
    "gin",
    "gson",
    "kotlinx",
    "ktor",
    "model2vec",
    "monolog",
    "newtonsoft",
    "pandoc",
    "phoenix",
    "plug",
    "rack",
    "requests",
    "sinatra",
    "telescope",
    "tokio",
    "trpc",
    "zls",
    "zod",
    "semble",
    "seek",
}
PERMISSIVE = re.compile(
    r"\b(MIT|Expat|BSD|Apache|PSF|Python Software Foundation|ISC|Unlicense|Zlib|HPND|0BSD|"
    r"Artistic|CC0|Public Domain)\b",
    re.I,
)
COPYLEFT = re.compile(r"\b(A?GPL|LGPL|MPL|EPL|EUPL|CDDL|SSPL)", re.I)
EXTS = {
    ".py": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".ts": "typescript",
    ".rs": "rust",
    ".go": "go",
    ".rb": "ruby",
    ".php": "php",
    ".lua": "lua",
}
SKIP_DIRS = {
    "__pycache__",
    "site-packages",
    "dist-packages",
    "node_modules",
    "idlelib",
    "lib2to3",
    "tkinter",
    "turtledemo",
    "pydoc_data",
    "encodings",
    "_vendor",
    "vendor",
}
COMMENT = {
    "rust": re.compile(r"^\s*//[/!]?\s?(.*)$"),
    "go": re.compile(r"^\s*//\s?(.*)$"),
    "javascript": re.compile(r"^\s*(?://|/\*\*?|\*)\s?(.*?)(?:\*/)?$"),
    "typescript": re.compile(r"^\s*(?://|/\*\*?|\*)\s?(.*?)(?:\*/)?$"),
    "php": re.compile(r"^\s*(?://|/\*\*?|\*)\s?(.*?)(?:\*/)?$"),
    "ruby": re.compile(r"^\s*#\s?(.*)$"),
    "lua": re.compile(r"^\s*--+\s?(.*)$"),
}
DEB_PREFIX = re.compile(
    r"^usr/(share/(gocode/src/(github\.com/|golang\.org/)?|cargo/registry/|php/|nodejs/|rubygems-integration/all/gems/[^/]+/|lua/[^/]+/)"
    r"|lib/ruby/vendor_ruby/|lib/[^/]+/)"
)
# --extra: languages the first corpus lacks (file extension -> seek's grammar name).
EXTRA_EXTS = {
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".swift": "swift",
    ".cs": "csharp",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".hs": "haskell",
    ".ex": "elixir",
    ".exs": "elixir",
    ".scala": "scala",
    ".zig": "zig",
    ".sh": "bash",
    ".bash": "bash",
}
C_LIKE = re.compile(r"^\s*(?://[/!]?|/\*\*?!?|\*)\s?(.*?)(?:\*/)?$")
for _lang in ("java", "kotlin", "swift", "csharp", "c", "cpp", "scala", "zig"):
    COMMENT[_lang] = C_LIKE
COMMENT["haskell"] = re.compile(r"^\s*(?:--+|\{-)\s?[|^]?\s?(.*?)(?:-\})?$")
COMMENT["elixir"] = re.compile(r"^\s*#\s?(.*)$")
COMMENT["bash"] = re.compile(r"^\s*#\s?(.*)$")
SHEBANG = re.compile(rb"^#!\s*/(?:usr/)?bin/(?:env\s+)?(?:ba)?sh\b")
# (source name, folder under --extra-root, sub-folder mined, licence). Debian packages under
# deb/ are listed in EXTRA_DEB_PACKAGES and take their licence from debian/copyright.
EXTRA_SOURCES = (
    ("npm:@capacitor/android", "npm/capacitor-android/package", ".", "MIT"),
    ("npm:@capacitor/ios", "npm/capacitor-ios/package", ".", "MIT"),
    ("npm:expo-modules-core", "npm/expo-modules-core/package", ".", "MIT"),
    ("npm:react-native-screens", "npm/react-native-screens/package", ".", "MIT"),
    ("npm:react-native-gesture-handler", "npm/react-native-gesture-handler/package", ".", "MIT"),
    (
        "npm:@react-native-async-storage/async-storage",
        "npm/react-native-async-storage/package",
        ".",
        "MIT",
    ),
    ("pypi:JPype1", "pypi/jpype1/jpype1-1.7.1", "native", "Apache-2.0"),
    ("pypi:pythonnet", "pypi/pythonnet/pythonnet-3.2.1", "src", "MIT"),
    ("pypi:clr-loader", "pypi/clr_loader/clr_loader-0.3.1", ".", "MIT"),
    ("pypi:ziglang", "pypi/ziglang/ziglang/lib", "std", "MIT"),
    ("debsrc:elixir-lang", "src/elixir-lang", "lib", "Apache-2.0"),
    ("debsrc:scala", "src/scala", "src/library", "BSD-3-Clause"),
)
EXTRA_DEB_PACKAGES = (
    "libfmt-dev libspdlog-dev nlohmann-json3-dev catch2 libcereal-dev libcxxopts-dev libglm-dev "
    "libstb-dev libcjson-dev libjansson-dev libyaml-dev libinih-dev "
    "libghc-vector-doc libghc-megaparsec-doc libghc-optparse-applicative-doc "
    "libghc-unordered-containers-doc libghc-conduit-doc libghc-async-doc "
    "dehydrated neofetch git-extras shunit2"
).split()
EXTRA_PER_LANG = 1800
EXTRA_DEB_PREFIX = re.compile(r"^usr/(?:include/|bin/|share/[^/]+/)?")
CHUNK = dict(max_chars=1000, min_chars=100, overlap_chars=100)
WINDOW, WINDOW_OVERLAP = 600, 80


def is_bench(name: str) -> bool:
    low = name.lower().replace("_", "-")
    return any(low == b or low.startswith(b + "-") or low.endswith("-" + b) for b in BENCH_NAMES)


def licence_ok(text: str) -> bool:
    return bool(PERMISSIVE.search(text)) and not COPYLEFT.search(text)


def nl_ok(text: str) -> bool:
    text = " ".join(text.split())
    words = re.findall(r"[A-Za-z]{2,}", text)
    return (
        25 <= len(text) <= 400
        and len(words) >= 4
        and not text.lower().startswith(
            ("copyright", "license", "licensed", "spdx", "todo", "fixme", "noqa", "type:")
        )
    )


def clean_nl(text: str) -> str:
    para = text.strip().split("\n\n")[0]
    return " ".join(para.split())


def python_docstrings(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module):
            doc = ast.get_docstring(node)
            if doc:
                out.append(clean_nl(doc))
    return out


def comment_blocks(source: str, lang: str) -> list[str]:
    pattern = COMMENT.get(lang)
    if pattern is None:
        return []
    out, block = [], []
    for line in source.split("\n"):
        m = pattern.match(line)
        if m and not line.strip().startswith(("#!", "#[", "#!")):
            body = m.group(1).strip()
            if body.startswith("@"):  # JSDoc / PHPDoc tags end the prose part
                continue
            block.append(body)
        else:
            if block:
                out.append(clean_nl("\n".join(block)))
            block = []
    if block:
        out.append(clean_nl("\n".join(block)))
    return out


def windows_of(rel: str, source: str) -> list[str]:
    chunks = chunk_file(rel, source.encode("utf-8"), **CHUNK)
    texts = []
    for chunk in chunks:
        for window in embedding_windows(chunk.content, WINDOW, WINDOW_OVERLAP) or [chunk.content]:
            if len(window.strip()) >= 60:
                texts.append(f"{rel}\n{window}")
    return texts


def sampled_rows(
    code: list[tuple[str, str]],
    nl: list[tuple[str, str]],
    rng: random.Random,
    name: str,
    licence: str,
    max_code: int,
    max_nl: int,
) -> list[dict]:
    """A seeded sample of one source's code windows and (deduplicated) prose, as rows."""
    rng.shuffle(code)
    rng.shuffle(nl)
    nl = list(dict.fromkeys(nl))
    rows = [
        dict(text=t, kind="code", lang=lang, source=name, licence=licence)
        for t, lang in code[:max_code]
    ]
    rows += [
        dict(text=t, kind="nl", lang=lang, source=name, licence=licence) for t, lang in nl[:max_nl]
    ]
    return rows


def collect_package(
    name: str,
    root: Path,
    files: list[Path],
    licence: str,
    rng: random.Random,
    max_files: int,
    max_code: int,
    max_nl: int,
) -> list[dict]:
    files = sorted(
        f
        for f in files
        if f.suffix in EXTS
        and f.is_file()
        and f.stat().st_size < 200_000
        and not (set(f.parts) & SKIP_DIRS - {root.name})
    )
    rng.shuffle(files)
    code, nl = [], []
    for f in files[:max_files]:
        try:
            source = f.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        lang = EXTS[f.suffix]
        rel = DEB_PREFIX.sub("", f.relative_to(root).as_posix())
        try:
            code += [(t, lang) for t in windows_of(rel, source)]
        except Exception as exc:
            print(f"skip {f}: {exc}", file=sys.stderr)
            continue
        docs = python_docstrings(source) if lang == "python" else comment_blocks(source, lang)
        nl += [(d, lang) for d in docs if nl_ok(d)]
    return sampled_rows(code, nl, rng, name, licence, max_code, max_nl)


def elixir_docs(source: str) -> list[str]:
    return [clean_nl(d) for d in re.findall(r'@(?:module)?doc\s+"""\n(.*?)"""', source, re.S)]


def extra_file(root: Path, f: Path, deb: bool) -> tuple[str, str, str] | None:
    """(path seek would see, source text, grammar) of a file for --extra, or None."""
    rel = f.relative_to(root).as_posix()
    if f.suffix == ".html" and "/html/src/" in rel:  # Haddock's hyperlinked Haskell source
        module = f.stem
        if not re.fullmatch(r"[A-Z][\w']*(\.[A-Z][\w']*)*", module):
            return None
        raw = f.read_text(encoding="utf-8", errors="replace")
        body = raw.split("<pre>", 1)[-1].rsplit("</pre>", 1)[0]
        body = re.sub(r'<span class="annottext">[^<]*</span>', "", body)  # hover types
        return (
            "src/" + module.replace(".", "/") + ".hs",
            html.unescape(re.sub(r"<[^>]+>", "", body)),
            "haskell",
        )
    if deb:
        rel = EXTRA_DEB_PREFIX.sub("", rel)
    lang = EXTRA_EXTS.get(f.suffix)
    if lang is None:
        if f.suffix or not f.is_file():
            return None
        with f.open("rb") as fh:
            if not SHEBANG.match(fh.read(64)):
                return None
        lang = "bash"
    try:
        return rel, f.read_text(encoding="utf-8"), lang
    except (OSError, UnicodeDecodeError):
        return None


def collect_extra(
    name: str,
    root: Path,
    sub: str,
    licence: str,
    rng: random.Random,
    deb: bool,
    max_files: int = 150,
    max_code: int = 700,
    max_nl: int = 250,
) -> list[dict]:
    files = sorted(
        f
        for f in (root / sub).rglob("*")
        if f.is_file()
        and f.stat().st_size < 400_000
        and not f.name.startswith(".")
        and not (deb and "/usr/share/doc/" in str(f) and "/html/src/" not in str(f))
        and not (deb and "/usr/share/man/" in str(f))
    )
    rng.shuffle(files)
    code, nl, used = [], [], 0
    for f in files:
        if used >= max_files:
            break
        got = extra_file(root, f, deb)
        if got is None:
            continue
        rel, source, lang = got
        try:
            code += [(t, lang) for t in windows_of(rel, source)]
        except Exception as exc:
            print(f"skip {f}: {exc}", file=sys.stderr)
            continue
        used += 1
        docs = comment_blocks(source, lang) + (elixir_docs(source) if lang == "elixir" else [])
        if lang == "csharp":
            docs = [clean_nl(re.sub(r"<[^>]+>", " ", d)) for d in docs]
        nl += [(d, lang) for d in docs if nl_ok(d)]
    return sampled_rows(code, nl, rng, name, licence, max_code, max_nl)


def mine_extra(extra_root: Path, rng: random.Random) -> list[dict]:
    rows: list[dict] = []
    for name, folder, sub, licence in EXTRA_SOURCES:
        rows += collect_extra(name, extra_root / folder, sub, licence, rng, deb=False)
    for pkg in EXTRA_DEB_PACKAGES:
        root = extra_root / "deb" / pkg
        if is_bench(pkg) or not root.is_dir():
            print(f"missing or excluded: {pkg}", file=sys.stderr)
            continue
        copyright_files = list(root.glob("usr/share/doc/*/copyright"))
        lic = " ".join(re.findall(r"^License: (.*)$", copyright_files[0].read_text(), re.M))
        lic = " ".join(dict.fromkeys(lic.split()))
        if not licence_ok(lic):  # stricter than the first corpus: any copyleft part excludes
            print(f"licence excluded: {pkg}: {lic}", file=sys.stderr)
            continue
        rows += collect_extra("deb:" + pkg, root, ".", lic, rng, deb=True)
    capped: list[dict] = []
    for lang in sorted({r["lang"] for r in rows}):  # at most EXTRA_PER_LANG texts a language
        of_lang = [r for r in rows if r["lang"] == lang]
        rng.shuffle(of_lang)
        capped += of_lang[:EXTRA_PER_LANG]
    return capped


def python_dists(site_packages: list[Path]):
    seen = set()
    for sp in site_packages:
        for info in sorted(sp.glob("*.dist-info")):
            meta = info / "METADATA"
            if not meta.is_file():
                continue
            text = meta.read_text(encoding="utf-8", errors="replace")
            head = text.split("\n\n")[0]
            name = re.search(r"^Name: (.+)$", head, re.M).group(1).strip()
            key = name.lower().replace("_", "-")
            if key in seen or is_bench(key):
                continue
            seen.add(key)
            lic = " ".join(
                re.findall(
                    r"^(?:License(?:-Expression)?: .*|Classifier: License :: .*)$", head, re.M
                )
            )
            if not licence_ok(lic):
                continue
            record = info / "RECORD"
            if not record.is_file():
                continue
            files = []
            for line in record.read_text().splitlines():
                rel = line.split(",")[0]
                if rel.endswith(".py") and ".dist-info" not in rel and not rel.startswith(".."):
                    files.append(sp / rel)
            short = re.sub(r"\s+", " ", lic)[:80]
            yield name, sp, files, short


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    # The downloaded sources live outside the repository: name them, or set $CORPUS_DIR.
    corpus_dir = os.environ.get("CORPUS_DIR")
    parser.add_argument("--debs", type=Path, default=corpus_dir and Path(corpus_dir, "deb"))
    parser.add_argument(
        "--site-packages",
        type=Path,
        action="append",
        default=[],
        help="a site-packages folder whose permissively licensed distributions are mined",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--extra", action="store_true", help="mine only the EXTRA_* sources")
    parser.add_argument("--extra-root", type=Path, default=corpus_dir and Path(corpus_dir, "extra"))
    args = parser.parse_args()
    if args.extra and not args.extra_root:
        parser.error("--extra needs --extra-root (or $CORPUS_DIR)")
    if not args.extra and not (args.debs and args.site_packages):
        parser.error("name --debs (or set $CORPUS_DIR) and at least one --site-packages")
    rng = random.Random(args.seed)
    rows: list[dict] = []
    if args.extra:
        rows = mine_extra(args.extra_root, rng)
        write(rows, args.out)
        return

    stdlib = Path("/usr/lib/python3.11")
    files = [
        p
        for p in stdlib.rglob("*.py")
        if not (set(p.relative_to(stdlib).parts) & SKIP_DIRS)
        and "test" not in p.relative_to(stdlib).parts
    ]
    rows += collect_package("python3.11-stdlib", stdlib, files, "PSF-2.0", rng, 400, 4000, 2500)

    for name, sp, files, lic in python_dists(args.site_packages):
        rows += collect_package(name, sp, files, lic, rng, 40, 250, 120)

    for pj in sorted(Path("/usr/lib/node_modules").rglob("package.json")):
        if "test" in pj.parts or pj.parent.parent.name not in ("node_modules",):
            continue
        try:
            meta = json.loads(pj.read_text())
        except (OSError, ValueError):
            continue
        name, lic = str(meta.get("name", "")), str(meta.get("license", ""))
        if not name or is_bench(name) or not licence_ok(lic):
            continue
        files = [
            p for p in pj.parent.rglob("*") if "node_modules" not in p.relative_to(pj.parent).parts
        ]
        rows += collect_package("npm:" + name, pj.parent, files, lic, rng, 15, 60, 30)

    for pkg in sorted(args.debs.iterdir()) if args.debs.is_dir() else []:
        if is_bench(pkg.name) or pkg.name == "node-lodash":
            continue
        copyright_files = list(pkg.glob("usr/share/doc/*/copyright"))
        lic_text = (
            " ".join(re.findall(r"^License: (.*)$", copyright_files[0].read_text(), re.M))
            if copyright_files
            else ""
        )
        if not PERMISSIVE.search(lic_text):
            continue
        files = [p for p in pkg.rglob("*") if p.suffix in EXTS and "/usr/share/doc/" not in str(p)]
        rows += collect_package("deb:" + pkg.name, pkg, files, lic_text, rng, 120, 500, 200)

    write(rows, args.out)


def write(rows: list[dict], out: Path) -> None:
    seen, unique = set(), []
    for row in rows:
        if row["text"] not in seen:
            seen.add(row["text"])
            unique.append(row)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w") as fh:
        for row in unique:
            fh.write(json.dumps(row) + "\n")
    from collections import Counter

    print(f"{len(unique)} texts -> {out}")
    print(Counter(r["kind"] for r in unique))
    print(Counter((r["kind"], r["lang"]) for r in unique))
    print(f"{len({r['source'] for r in unique})} packages")


if __name__ == "__main__":
    main()
