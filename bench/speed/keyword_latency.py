"""Keyword pass latency: in-memory BM25 (the search cache) against LanceDB's full-text index,
on one indexed folder, same questions, same process (issue 14).

    python -m bench.speed.keyword_latency FOLDER [--home DIR] [--questions 200] [--k 50]

The folder must be indexed already (``seek index``; ``--home`` = its ``SEEK_HOME``). The
questions are the semble dev annotations' (their keyword form, as a search sends them).
Prints p50/p95 in ms of each, and how many top ``k`` lists agree: the same chunks in the
same order, and the same scores rank by rank (lists that differ only in how ties are ordered).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from bench.common import SHARED
from seek.retrieve.searcher import Searcher
from seek.settings import load_settings
from seek.text import keyword_query


def _latency(fn, questions: list[str]) -> tuple[float, float]:
    times = []
    for words in questions:
        started = time.perf_counter()
        fn(words)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.speed.keyword_latency", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("folder")
    parser.add_argument("--home", help="SEEK_HOME of the index (default: the settings')")
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--k", type=int, default=50)
    args = parser.parse_args(argv)
    overrides = {"home": args.home} if args.home else {}
    settings = load_settings(None, overrides=overrides)
    searcher = Searcher.open(Path(args.folder), settings)
    questions = [
        keyword_query(q["query"])
        for path in sorted((SHARED / "annotations").glob("*.json"))
        for q in json.loads(path.read_text())
    ][: args.questions]
    in_memory = lambda words: searcher.index.bm25.top(words, args.k)  # noqa: E731
    lancedb = lambda words: searcher.table.keyword_scores(words, args.k)  # noqa: E731
    lancedb(questions[0])  # open the table and its index first
    same_ids = same_scores = 0
    for words in questions:
        ours, theirs = in_memory(words), lancedb(words)
        same_ids += [i for i, _ in ours] == [
            searcher.index.chunk_of_key[(p, c)] for p, c, _ in theirs
        ]
        pairs = zip([s for _, s in ours], [s for _, _, s in theirs], strict=False)
        same_scores += len(ours) == len(theirs) and all(
            abs(a - b) <= 1e-5 * max(1.0, abs(b)) for a, b in pairs
        )
    memory_p50, memory_p95 = _latency(in_memory, questions)
    lance_p50, lance_p95 = _latency(lancedb, questions)
    print(f"{len(searcher.index.paths)} chunks, {len(questions)} questions, top {args.k}")
    print(f"in memory  p50 {memory_p50:.3f} ms  p95 {memory_p95:.3f} ms")
    print(f"LanceDB    p50 {lance_p50:.3f} ms  p95 {lance_p95:.3f} ms")
    print(f"same chunks in the same order: {same_ids}; same scores rank by rank: {same_scores}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
