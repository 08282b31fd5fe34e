"""Does a change keep seek's answers? Dump the hits of every annotated question with one
version of seek, then compare two dumps: the questions whose hits differ, and NDCG@10 of each
(issue 14: the search cache and in-memory BM25 must leave NDCG unchanged).

    python -m bench.checks.same_hits dump OUT.json --home DIR [--repos a,b]
    PYTHONPATH=/path/to/baseline/src python -m bench.checks.same_hits dump BASE.json --home DIR
    python -m bench.checks.same_hits compare BASE.json OUT.json

``dump`` searches the indexes already in ``--home`` (``bench.quality --home DIR`` builds them)
without updating them, so both versions read the same rows; run the baseline from its own
source tree with ``PYTHONPATH`` (it must read the same index format). Questions and folders
are the semble dev set's (``bench.common``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from bench.common import (
    BENCH_DIR_HELP,
    SHARED,
    read_benchmark_roots,
    read_repo_list,
    repo_folder,
    resolve_bench_dir,
)
from bench.quality.scoring import Hit, load_annotations, score_query


def dump(out: Path, home: str, names: list[str], checkouts: Path) -> None:
    from seek.retrieve import Searcher
    from seek.settings import load_settings

    settings = load_settings(None, overrides={"home": home}, env={},
                             user_config=Path(home) / "no-user-config.toml")  # fmt: skip
    roots = read_benchmark_roots()
    result: dict[str, dict[str, list]] = {}
    for name in names:
        folder = repo_folder(checkouts, name, roots).resolve()
        searcher = Searcher.open(folder, settings)
        questions = load_annotations(SHARED / "annotations" / f"{name}.json")
        result[name] = {
            q.query: [
                [h.path, h.start_line, h.end_line, h.score]
                for h in searcher.search(q.query, 10).hits
            ]  # fmt: skip
            for q in questions
        }
        print(f"{name}: {len(questions)} questions", file=sys.stderr, flush=True)
    out.write_text(json.dumps(result) + "\n")


def compare(base: dict, new: dict) -> int:
    differ = total = 0
    means: dict[str, list[tuple[float, float]]] = {"base": [], "new": []}
    for name in sorted(base.keys() & new.keys()):
        questions = {q.query: q for q in load_annotations(SHARED / "annotations" / f"{name}.json")}
        for label, data in (("base", base), ("new", new)):
            scores = [score_query([Hit(*h[:3]) for h in hits], questions[q])
                      for q, hits in data[name].items()]  # fmt: skip
            means[label].append((statistics.mean(s["ndcg10"] for s in scores),
                                 statistics.mean(s["ndcg10_file"] for s in scores)))  # fmt: skip
        for query, hits in base[name].items():
            total += 1
            if [h[:3] for h in hits] != [h[:3] for h in new[name].get(query, [])]:
                differ += 1
                print(f"hits differ: {name}: {query}")
    print(f"{len(means['base'])} repos, {total} questions, hit lists differ: {differ}")
    for label in ("base", "new"):
        chunk = statistics.mean(m[0] for m in means[label])
        file = statistics.mean(m[1] for m in means[label])
        print(f"{label}: NDCG@10 chunk {chunk:.4f}, file {file:.4f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.checks.same_hits", description=__doc__.split("\n\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out")
    d.add_argument("--home", required=True)
    d.add_argument("--repos")
    d.add_argument("--bench-dir", help=BENCH_DIR_HELP)
    c = sub.add_parser("compare")
    c.add_argument("base")
    c.add_argument("new")
    args = parser.parse_args(argv)
    if args.command == "dump":
        names = args.repos.split(",") if args.repos else read_repo_list()
        dump(Path(args.out), args.home, names, resolve_bench_dir(d, args.bench_dir))
        return 0
    return compare(json.loads(Path(args.base).read_text()), json.loads(Path(args.new).read_text()))


if __name__ == "__main__":
    raise SystemExit(main())
