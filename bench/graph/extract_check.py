"""Does a change to graph extraction keep its output identical? (issue 28, cost bound)

    .venv/bin/python -m bench.graph.extract_check BENCH_DIR --write DUMP [--repos ...]
    .venv/bin/python -m bench.graph.extract_check BENCH_DIR --compare DUMP [--repos ...]

``--write`` pickles `extract(path, bytes)` of every file bench.graph.oracle reads in each
repository (run it on the code before the change); ``--compare`` runs the current code on
the same files and reports every file whose FileFacts differ (exit 1 when any does), plus
the extraction CPU of both runs (a second pass, after one that compiles the queries).
The dump is a local artefact: keep it out of the repo.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from pathlib import Path

DEFAULT_REPOS = "flask,requests,express,zod,chi,gin"


def extract_all(folder: Path) -> tuple[dict, float]:
    from bench.graph.oracle import workspace_files
    from seek.graph.extract import extract

    files = workspace_files(folder)
    for path, source in files:  # warm: per-grammar queries are compiled once, untimed
        extract(path, source)
    started = time.process_time()
    facts = {path: extract(path, source) for path, source in files}
    return facts, time.process_time() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bench_dir", type=Path)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", type=Path, help="pickle the current output here")
    mode.add_argument("--compare", type=Path, help="compare the current output with this dump")
    parser.add_argument("--repos", default=DEFAULT_REPOS)
    args = parser.parse_args(argv)
    repos = [r for r in args.repos.split(",") if r]
    if args.write:
        dump = {}
        for repo in repos:
            facts, cpu = extract_all(args.bench_dir / repo)
            dump[repo] = {"facts": facts, "cpu_s": cpu}
            print(f"{repo}: {len(facts)} files, extract CPU {cpu:.2f} s")
        args.write.write_bytes(pickle.dumps(dump))
        return 0
    before = pickle.loads(args.compare.read_bytes())
    bad = 0
    for repo in repos:
        facts, cpu = extract_all(args.bench_dir / repo)
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
