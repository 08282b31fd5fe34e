"""Mine the training texts for scripts/build_code_model.py from locally installed code.

Run with seek's own environment (it uses seek's tree-sitter chunker, so the training windows
look exactly like what seek embeds: ``<path>\\n<window of at most 600 characters>``):

    .venv/bin/python scripts/mine_code_corpus.py OUT.jsonl [--debs DIR] [--seed 0]

Sources (permissive licences only; anything GPL/LGPL/AGPL/MPL/EPL is skipped, and so is any
package named like one of the benchmark repositories, see BENCH_NAMES):

* the Python standard library (/usr/lib/python3.11, PSF-2.0);
* Python distributions in the site-packages of /root/distill-venv, /work/main/.venv and
  /root/semble-venv whose metadata names a permissive licence;
* npm packages under /usr/lib/node_modules whose package.json names a permissive licence;
* Debian packages fetched with ``apt-get download`` and unpacked with ``dpkg-deb -x`` into
  ``--debs`` (one folder per package; the licence is read from its debian/copyright), see
  DEB_PACKAGES in scripts/build_code_model.py for the list.

Two kinds of text are written, one JSON object a line (text, kind, source, licence, lang):
``code`` (embedding windows of seek's chunks) and ``nl`` (docstrings and comment blocks,
which read like a developer's question). Sampling is capped per package and seeded.
"""

from __future__ import annotations

import argparse
import ast
import json
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
        except Exception as exc:  # noqa: BLE001
            print(f"skip {f}: {exc}", file=sys.stderr)
            continue
        docs = python_docstrings(source) if lang == "python" else comment_blocks(source, lang)
        nl += [(d, lang) for d in docs if nl_ok(d)]
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
    parser.add_argument("--debs", type=Path, default=Path("/root/models/corpus/deb"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    rows: list[dict] = []

    stdlib = Path("/usr/lib/python3.11")
    files = [
        p
        for p in stdlib.rglob("*.py")
        if not (set(p.relative_to(stdlib).parts) & SKIP_DIRS)
        and "test" not in p.relative_to(stdlib).parts
    ]
    rows += collect_package("python3.11-stdlib", stdlib, files, "PSF-2.0", rng, 400, 4000, 2500)

    sps = [
        Path(p)
        for p in (
            "/root/distill-venv/lib/python3.11/site-packages",
            "/work/main/.venv/lib/python3.11/site-packages",
            "/root/semble-venv/lib/python3.11/site-packages",
        )
    ]
    for name, sp, files, lic in python_dists(sps):
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

    seen, unique = set(), []
    for row in rows:
        if row["text"] not in seen:
            seen.add(row["text"])
            unique.append(row)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w") as fh:
        for row in unique:
            fh.write(json.dumps(row) + "\n")
    from collections import Counter

    print(f"{len(unique)} texts -> {args.out}")
    print(Counter(r["kind"] for r in unique))
    print(Counter((r["kind"], r["lang"]) for r in unique))
    print(f"{len({r['source'] for r in unique})} packages")


if __name__ == "__main__":
    main()
