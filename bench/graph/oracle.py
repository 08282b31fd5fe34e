"""The code graph against precise oracles (issue 28, deliver 3).

    .venv/bin/python -m bench.graph.oracle BENCH_DIR [--repos flask,chi,...] [--sample 200]
        [--seed 0] [--oracle-bin DIR] [--out bench/results/graph_oracle.json]
        [--cache DIR] [--misses FILE]

For each repository (folder BENCH_DIR/<name>/<benchmark_root>, as bench.speed.index_speed), the
graph is built with `seek.graph.build_graph` and an oracle indexes the same folder:

* Python: scip-python (npm `@sourcegraph/scip-python`, pyright inside);
* JavaScript / TypeScript: scip-typescript (npm `@sourcegraph/scip-typescript`,
  `--infer-tsconfig`);
* Go: bench/graph/oracle_go, go/types over the module (the checker gopls is built on;
  Debian's gopls 0.5 ran here but took 8-70 s per query, see bench/README.md).

`--oracle-bin` is the folder holding `scip-python`, `scip-typescript` (an npm
`node_modules/.bin`) and `graph_oracle_go` (built with `go build` in bench/graph/oracle_go).

Sampling: definitions of the graph that the oracle also has as a definition at the same
name position (others are skipped: the oracle cannot resolve them), drawn with a fixed
seed, at most --sample per repository.  For each one, at line granularity and leaving out
declaration lines:

* references: the graph's uses of the definition (`CodeGraph.uses`) against the oracle's
  references; `grep -rnw NAME` over the folder likewise, with its characters of output;
* definition lookup: at up to 5 of the oracle's reference sites, whether the graph's top
  definition for that use (`definition_at`) is the sampled one; and whether `defs(NAME)`
  (no context, what `seek def NAME` answers) ranks it first.

Micro averages (summed over all sampled definitions) are the headline; see bench/README.md.

An oracle's answer is cached (--cache, default ~/.cache/seek-bench/graph_oracle) under the
repository's name and a hash of the files it reads, so that re-measuring the graph after a
change costs the graph's build and the lookups, not minutes of scip-python.  --misses writes
each sampled definition's wrong and missed reference lines (with their text) for reading.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

from bench.common import REPO_ROOT, REPOS_JSON, git_commit, machine_info
from seek.chunk.languages import grammar_for_path
from seek.graph import build_graph

DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "graph_oracle.json"
DEFAULT_CACHE = Path.home() / ".cache" / "seek-bench" / "graph_oracle"
DEFAULT_REPOS = "flask,requests,express,redux,zod,chi,cobra,gin"
SKIP_DIRS = {".git", "node_modules", "vendor", "testdata", "__pycache__"}
SITES_PER_DEF = 5


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def workspace_files(folder: Path) -> list[tuple[str, bytes]]:
    """The files seek's graph reads: those with a grammar, go.mod and package.json."""
    out = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if any(part in SKIP_DIRS for part in rel.split("/")[:-1]) or not path.is_file():
            continue
        if grammar_for_path(rel) or path.name in ("go.mod", "package.json"):
            out.append((rel, path.read_bytes()))
    return out


# -- SCIP, read without generated code: a protobuf walk over the few fields we need --------


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        byte = data[i]
        i += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, i
        shift += 7


def _fields(data: bytes):
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 2:
            size, i = _varint(data, i)
            value, i = data[i : i + size], i + size
        elif wire == 1:
            value, i = data[i : i + 8], i + 8
        elif wire == 5:
            value, i = data[i : i + 4], i + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield number, wire, value


def read_scip(path: Path) -> dict[str, dict]:
    """symbol -> {"defs": {(path, line1, col0)}, "refs": {(path, line1, col0)}} for the
    non-local symbols of a SCIP index (Index.documents: Document.relative_path = 1,
    occurrences = 2; Occurrence.range = 1, symbol = 2, symbol_roles = 3, Definition = 1)."""
    symbols: dict[str, dict] = defaultdict(lambda: {"defs": set(), "refs": set()})
    for number, _, document in _fields(path.read_bytes()):
        if number != 2:
            continue
        rel, occurrences = "", []
        for field, _, value in _fields(document):
            if field == 1:
                rel = value.decode()
            elif field == 2:
                occurrences.append(value)
        for occurrence in occurrences:
            span, symbol, roles = [], "", 0
            for field, wire, value in _fields(occurrence):
                if field == 1 and wire == 2:
                    j = 0
                    while j < len(value):
                        v, j = _varint(value, j)
                        span.append(v)
                elif field == 1:
                    span.append(value)
                elif field == 2:
                    symbol = value.decode()
                elif field == 3:
                    roles = value
            if not symbol or symbol.startswith("local ") or len(span) < 2:
                continue
            site = (rel, span[0] + 1, span[1])
            symbols[symbol]["defs" if roles & 1 else "refs"].add(site)
    return symbols


def scip_oracle(tool: Path, folder: Path, language: str, out: Path) -> dict[str, dict]:
    if language == "python":
        cmd = [
            str(tool / "scip-python"),
            "index",
            ".",
            "--project-name",
            folder.name,
            "--project-version",
            "0",
            "--output",
            str(out),
        ]
    else:
        cmd = [str(tool / "scip-typescript"), "index", "--infer-tsconfig", "--output", str(out)]
    run = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=1800)
    if run.returncode != 0 or not out.is_file():
        raise RuntimeError(f"{cmd[0]} failed: {run.stdout[-400:]} {run.stderr[-400:]}")
    return read_scip(out)


def byte_columns(symbols: dict[str, dict], files: list[tuple[str, bytes]]) -> dict[str, dict]:
    """A SCIP oracle's sites with tree-sitter's columns: SCIP counts a column in UTF-16 code
    units, tree-sitter in bytes, so a name after non-ASCII text on its line (a locale's
    message) sat at another column than the graph's use of it."""
    lines = {path: data.split(b"\n") for path, data in files}

    def convert(site):
        path, line, col = site
        raw = lines.get(path, [])
        text = raw[line - 1] if 0 < line <= len(raw) else b""
        if text.isascii():
            return site
        head = text.decode("utf-8", "replace").encode("utf-16-le")[: 2 * col]
        return (path, line, len(head.decode("utf-16-le", "replace").encode("utf-8")))

    return {
        s: {"defs": {convert(x) for x in e["defs"]}, "refs": {convert(x) for x in e["refs"]}}
        for s, e in symbols.items()
    }


def go_oracle(tool: Path, folder: Path) -> dict[str, dict]:
    run = subprocess.run(
        [str(tool / "graph_oracle_go"), str(folder)], capture_output=True, text=True, timeout=1800
    )
    if run.returncode != 0:
        raise RuntimeError(f"graph_oracle_go failed: {run.stderr[-400:]}")
    symbols = {}
    for n, line in enumerate(run.stdout.splitlines()):
        row = json.loads(line)
        d = row["def"]
        symbols[f"{n}:{row['name']}"] = {
            # go/token columns are 1-based bytes; tree-sitter's are 0-based bytes
            "defs": {(d["path"], d["line"], d["col"] - 1)},
            "refs": {(u["path"], u["line"], u["col"] - 1) for u in row["uses"] or ()},
        }
    return symbols


def _fingerprint(files: list[tuple[str, bytes]]) -> str:
    digest = hashlib.sha256()
    for rel, data in files:
        digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()[:20]


def cached_oracle(cache: Path | None, key: str, compute) -> dict[str, dict]:
    """``compute()``'s symbols, read from / written to ``cache/key.json`` when a cache is set."""
    path = cache / f"{key}.json" if cache is not None else None
    if path is not None and path.is_file():
        rows = json.loads(path.read_text())
        return {
            s: {"defs": {tuple(x) for x in d}, "refs": {tuple(x) for x in r}} for s, d, r in rows
        }
    symbols = compute()
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        rows = [[s, sorted(e["defs"]), sorted(e["refs"])] for s, e in symbols.items()]
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(rows))
        tmp.replace(path)
    return symbols


# -- scoring --------------------------------------------------------------------------------


def grep_run(folder: Path, name: str) -> tuple[list[tuple[str, int]], bytes]:
    """``grep -rnw NAME`` over ``folder``: its matching (path, line)s in order, and its
    output."""
    run = subprocess.run(["grep", "-rnw", "--", name, "."], cwd=folder, capture_output=True)
    hits = []
    for raw in run.stdout.decode("utf-8", "replace").splitlines():
        path, _, rest = raw.partition(":")
        line, _, _ = rest.partition(":")
        if line.isdigit():
            hits.append((path.removeprefix("./"), int(line)))
    return hits, run.stdout


def grep_lines(folder: Path, name: str) -> tuple[set[tuple[str, int]], int]:
    hits, output = grep_run(folder, name)
    return set(hits), len(output)


def _symbol_name(symbol: str) -> str:
    """The name a symbol's last descriptor gives: `pkg/Flask#run().` -> run, a parameter
    `pkg/f().(self)` -> self (not f: a multi-line signature puts a parameter at the
    column of the name on the next line), the Go oracle's `N:name` -> name."""
    text = symbol.rstrip(".#/:!")
    if text.endswith(")") and not text.endswith("()"):
        return text[text.rfind("(") + 1 : -1]
    text = text.removesuffix("()")
    for separator in ("/", "#", ".", ":", " ", "`"):
        text = text.rpartition(separator)[2] or text
    return text.strip("`")


def match_definitions(graph, oracle: dict):
    """The graph's definitions the oracle has at the same name position, as (definition,
    oracle symbol, name line), and each name's definition lines."""
    by_def: dict[tuple[str, int, int], str] = {}
    for symbol, entry in oracle.items():
        for site in entry["defs"]:
            by_def.setdefault(site, symbol)
    matched = []
    def_lines: dict[str, set[tuple[str, int]]] = defaultdict(set)  # name -> its definition lines
    for facts in graph.files.values():
        for d in facts.definitions:
            # the name sits on the node's first lines (after decorators or a doc comment the
            # node may start earlier); the oracle's symbol must carry the same name
            for line in range(d.line, min(d.line + 3, d.end_line + 1)):
                symbol = by_def.get((d.path, line, d.column))
                if symbol is not None and _symbol_name(symbol) == d.name:
                    matched.append((d, symbol, line))
                    def_lines[d.name].add((d.path, line))
                    break
    return matched, def_lines


def score_repo(
    name: str,
    language: str,
    folder: Path,
    oracle: dict,
    sample: int,
    seed: int,
    misses: list | None = None,
):
    files = workspace_files(folder)
    started = time.perf_counter()
    graph = build_graph(files)
    build_s = time.perf_counter() - started
    matched, def_lines = match_definitions(graph, oracle)
    total_defs = sum(len(f.definitions) for f in graph.files.values())
    rng = random.Random(seed)
    chosen = rng.sample(matched, min(sample, len(matched)))
    lines_text = {path: data.split(b"\n") for path, data in files}
    t = defaultdict(float)
    for d, symbol, name_line in chosen:
        entry = oracle[symbol]
        # declarations are not uses: the symbol's own, and other definitions of the name
        # (a Python @overload stub, which the oracle lists as a reference)
        decl = {(p, ln) for p, ln, _ in entry["defs"]} | {(d.path, name_line)} | def_lines[d.name]
        truth = {(p, ln) for p, ln, _ in entry["refs"]} - decl
        ours = {(r.path, r.line) for r in graph.uses(d)} - decl
        grep, grep_chars = grep_lines(folder, d.name)
        grep -= decl
        t["defs"] += 1
        t["truth"] += len(truth)
        t["ours"] += len(ours)
        t["ours_tp"] += len(ours & truth)
        t["grep"] += len(grep)
        t["grep_tp"] += len(grep & truth)
        t["grep_chars"] += grep_chars
        if misses is not None and ours != truth:

            def text(site):
                lines = lines_text.get(site[0], [])
                raw = lines[site[1] - 1] if 0 < site[1] <= len(lines) else b""
                return f"{site[0]}:{site[1]}: {raw.decode('utf-8', 'replace').strip()[:160]}"

            misses.append(
                {
                    "repo": name,
                    "definition": f"{d.path}:{d.line} {d.kind} {d.qualified}",
                    "wrong": [text(x) for x in sorted(ours - truth)],
                    "missed": [text(x) for x in sorted(truth - ours)],
                }
            )
        t["ours_chars"] += sum(
            len(p) + len(str(ln)) + 3 + len(lines_text.get(p, [b""] * (ln + 1))[ln - 1])
            for p, ln in ours
        )

        # any definition site of the oracle's symbol is right (TS overloads, Go's
        # declaration merged across a package checked alone and with its tests)
        def same(found, sites=entry["defs"]):
            return found is not None and any(
                (found.path, line, found.column) in sites
                for line in range(found.line, found.end_line + 1)
            )

        top = graph.defs(d.name)
        t["name_top1"] += bool(top) and same(top[0])
        uses = sorted(entry["refs"])
        for path, line, col in rng.sample(uses, min(SITES_PER_DEF, len(uses))):
            t["sites"] += 1
            at = graph.definition_at(path, line, col)
            t["site_top1"] += same(at)
            if misses is not None and not same(at):
                lines = lines_text.get(path, [])
                raw = (
                    lines[line - 1].decode("utf-8", "replace").strip() if line <= len(lines) else ""
                )
                misses.append(
                    {
                        "repo": name,
                        "site": f"{path}:{line}:{col}: {raw[:160]}",
                        "expected": f"{d.path}:{d.line} {d.kind} {d.qualified}",
                        "found": f"{at.path}:{at.line} {at.kind} {at.qualified}" if at else None,
                    }
                )
            found = graph.defs(d.name, from_path=path)
            t["site_name_top1"] += bool(found) and same(found[0])
    div = lambda a, b: round(a / b, 4) if b else None  # noqa: E731
    return {
        "repo": name,
        "language": language,
        "files": len(graph.files),
        "definitions": total_defs,
        "oracle_matched_definitions": len(matched),
        "sampled": int(t["defs"]),
        "graph_build_s": round(build_s, 2),
        "refs_precision": div(t["ours_tp"], t["ours"]),
        "refs_recall": div(t["ours_tp"], t["truth"]),
        "grep_precision": div(t["grep_tp"], t["grep"]),
        "grep_recall": div(t["grep_tp"], t["truth"]),
        "refs_chars": int(t["ours_chars"]),
        "grep_chars": int(t["grep_chars"]),
        "use_sites": int(t["sites"]),
        "def_top1_at_use": div(t["site_top1"], t["sites"]),
        "def_top1_name_from_file": div(t["site_name_top1"], t["sites"]),
        "def_top1_name": div(t["name_top1"], t["defs"]),
        "counts": {k: int(v) for k, v in t.items()},
    }


_COLUMNS = (
    ("refs P", "ours_tp", "ours"),
    ("refs R", "ours_tp", "truth"),
    ("grep P", "grep_tp", "grep"),
    ("def@use", "site_top1", "sites"),
    ("def NAME from file", "site_name_top1", "sites"),
    ("def NAME", "name_top1", "defs"),
)


def table(rows: list[dict]) -> str:
    """The headline figures per repository and summed over all (micro), as markdown."""
    head = "| repository | " + " | ".join(c[0] for c in _COLUMNS) + " |"
    out = [head, "|---" + "|--:" * len(_COLUMNS) + "|"]
    total: dict[str, int] = defaultdict(int)
    for row in rows:
        for k, v in row["counts"].items():
            total[k] += v
    for label, counts in [(r["repo"], r["counts"]) for r in rows] + [("all (micro)", total)]:
        cells = [f"{counts[a] / counts[b]:.3f}" if counts.get(b) else "-" for _, a, b in _COLUMNS]
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench_dir", type=Path)
    parser.add_argument("--repos", default=DEFAULT_REPOS)
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--oracle-bin", type=Path, default=Path.home() / "oracle" / "bin")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="'' for no cache")
    parser.add_argument("--misses", type=Path, help="write wrong and missed uses here (JSON)")
    args = parser.parse_args(argv)
    cache = args.cache if str(args.cache) not in ("", ".") else None
    misses: list | None = [] if args.misses else None
    specs = {r["name"]: r for r in json.loads(REPOS_JSON.read_text())}
    results, failures = [], {}
    for name in args.repos.split(","):
        spec = specs[name]
        folder = args.bench_dir / name / (spec.get("benchmark_root") or "")
        if not folder.is_dir():
            _log(f"{name}: no checkout at {folder}; skipped")
            continue
        language = spec["language"]
        started = time.perf_counter()
        if language == "go":
            folder = args.bench_dir / name  # the module root: go.mod is there
        key = f"{name}-{language}-{_fingerprint(workspace_files(folder))}"

        def compute(folder=folder, language=language):
            if language == "go":
                return go_oracle(args.oracle_bin, folder)
            with tempfile.TemporaryDirectory() as tmp:
                return scip_oracle(args.oracle_bin, folder, language, Path(tmp) / "i.scip")

        try:
            oracle = cached_oracle(cache, key, compute)
        except (RuntimeError, subprocess.TimeoutExpired, OSError) as exc:
            failures[name] = str(exc)[:600]
            _log(f"{name}: oracle failed: {exc}")
            continue
        oracle_s = time.perf_counter() - started
        if language != "go":  # go/types counts bytes already
            oracle = byte_columns(oracle, workspace_files(folder))
        row = score_repo(name, language, folder, oracle, args.sample, args.seed, misses)
        row["oracle_s"] = round(oracle_s, 1)
        _log(json.dumps({k: v for k, v in row.items() if k != "counts"}))
        results.append(row)
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": git_commit(),
        "machine": machine_info(),
        "command": "python -m bench.graph.oracle "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "sample": args.sample,
        "seed": args.seed,
        "repos": results,
        "oracle_failures": failures,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(table(results))
    if args.misses:
        args.misses.write_text(json.dumps(misses, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
