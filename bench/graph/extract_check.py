"""Does a change to graph extraction keep its output identical? (issue 28, cost bound)

    .venv/bin/python -m bench.graph.extract_check BENCH_DIR --write DUMP [--repos ...]
    .venv/bin/python -m bench.graph.extract_check BENCH_DIR --compare DUMP [--repos ...]
        [--pass-tree]

``--write`` pickles `extract(path, bytes)` of every file bench.graph.oracle reads in each
repository (run it on the code before the change); ``--compare`` runs the current code on
the same files and reports every file whose FileFacts differ (exit 1 when any does), plus
the extraction CPU of both runs (a second pass, after one that compiles the queries).
``--pass-tree`` parses each file first, untimed, and hands extract() the tree, as an indexer
passing the chunker's tree would.  ``--rows`` times ``extract_rows`` (what the indexer runs:
references as plain rows, index/graph_rows.py) and compares the facts built from its rows;
it needs the code that has it, so use it with ``--compare`` only.  The dump is a local
artefact: keep it out of the repo.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from pathlib import Path

DEFAULT_REPOS = "flask,requests,express,zod,chi,gin"


def extract_all(folder: Path, pass_tree: bool = False, rows: bool = False) -> tuple[dict, float]:
    from bench.graph.oracle import workspace_files
    from seek.chunk.languages import grammar_for_path, parser_for
    from seek.graph.extract import extract

    if rows:
        from seek.graph.extract import extract_rows

    files = workspace_files(folder)
    for path, source in files:  # warm: per-grammar queries are compiled once, untimed
        extract(path, source)
    trees = {}
    if pass_tree:  # the trees the chunker parsed already (untimed), as an indexer would pass
        for path, source in files:
            grammar = grammar_for_path(path)
            parser = parser_for(grammar) if grammar else None
            trees[path] = parser.parse(source) if parser is not None else None
    started = time.process_time()
    if rows:
        found = {p: extract_rows(p, source, tree=trees.get(p)) for p, source in files}
        cpu = time.process_time() - started
        return {p: _with_references(p, f) for p, f in found.items()}, cpu
    if pass_tree:
        facts = {path: extract(path, source, tree=trees[path]) for path, source in files}
    else:  # no tree= keyword: the code before it was added must run this too
        facts = {path: extract(path, source) for path, source in files}
    return facts, time.process_time() - started


def _with_references(path: str, found):
    """The FileFacts extract() returns, from extract_rows()'s (facts, rows)."""
    from seek.graph.model import Reference

    if found is None:
        return None
    facts, rows = found
    facts.references = [Reference(path, *row) for row in rows]
    return facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bench_dir", type=Path)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", type=Path, help="pickle the current output here")
    mode.add_argument("--compare", type=Path, help="compare the current output with this dump")
    parser.add_argument("--repos", default=DEFAULT_REPOS)
    parser.add_argument(
        "--pass-tree", action="store_true", help="hand extract() a parsed tree (not timed)"
    )
    parser.add_argument(
        "--rows", action="store_true", help="time extract_rows, the indexer's path (--compare)"
    )
    args = parser.parse_args(argv)
    repos = [r for r in args.repos.split(",") if r]
    if args.write:
        dump = {}
        for repo in repos:
            facts, cpu = extract_all(args.bench_dir / repo, args.pass_tree)
            dump[repo] = {"facts": facts, "cpu_s": cpu}
            print(f"{repo}: {len(facts)} files, extract CPU {cpu:.2f} s")
        args.write.write_bytes(pickle.dumps(dump))
        return 0
    before = pickle.loads(args.compare.read_bytes())
    bad = 0
    for repo in repos:
        facts, cpu = extract_all(args.bench_dir / repo, args.pass_tree, args.rows)
        old = before[repo]["facts"]
        differ = sorted(p for p in set(old) | set(facts) if old.get(p) != facts.get(p))
        bad += len(differ)
        print(
            f"{repo}: {len(facts)} files, {len(differ)} differ; extract CPU "
            f"{before[repo]['cpu_s']:.2f} s -> {cpu:.2f} s ({before[repo]['cpu_s'] / cpu:.2f}x)"
        )
        for path in differ[:10]:
            print(f"  differs: {path}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
