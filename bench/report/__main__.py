"""``python -m bench.report``: write the docs' benchmark tables from ``bench/results/``;
``--check``: only say what differs or is stale (exit 1), as tests/test_bench_report.py does."""

from __future__ import annotations

import argparse
import sys

from bench.common import REPO_ROOT
from bench.report import TABLES, blocks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.report", description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 on a problem")
    parser.add_argument("--list", action="store_true", help="the tables, their files and docs")
    args = parser.parse_args(argv)
    if args.list:
        for name, table in TABLES.items():
            stale = f"stale after {table.max_commits} commits to {' '.join(table.measures)}"
            print(f"{name}: {', '.join(table.results)} -> {', '.join(table.docs)} ({stale})")
        return 0
    if not args.check:
        for doc in blocks.write(REPO_ROOT, TABLES):
            print(f"wrote {doc}")
    found = blocks.problems(REPO_ROOT, TABLES) + blocks.staleness(REPO_ROOT, TABLES)
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
