"""CPU per query of seek, in one process, on an indexed folder (issue 14): the median over the
questions of ``time.process_time`` (median of 3 runs each), less sensitive to machine load
than wall time. semble's counterpart is ``bench/speed/_semble_query_cpu.py`` (run with semble's
python).

    OPENBLAS_NUM_THREADS=1 python -m bench.speed.query_cpu FOLDER QUESTIONS_JSON --home DIR
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path


def cpu_p50(search, questions: list[str], runs: int = 3) -> float:
    """Median over ``questions`` of each one's median CPU milliseconds over ``runs``."""
    for question in questions:  # warm: model, caches
        search(question)
    per_question = []
    for question in questions:
        times = []
        for _ in range(runs):
            started = time.process_time()
            search(question)
            times.append((time.process_time() - started) * 1000)
        per_question.append(statistics.median(times))
    return statistics.median(per_question)


def main(argv: list[str] | None = None) -> int:
    from seek.retrieve import Searcher
    from seek.settings import load_settings

    parser = argparse.ArgumentParser(
        prog="python -m bench.speed.query_cpu", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("folder")
    parser.add_argument("questions", help="an annotations file (a JSON list of {query: ...})")
    parser.add_argument("--home", required=True, help="SEEK_HOME of the index")
    args = parser.parse_args(argv)
    settings = load_settings(None, overrides={"home": args.home}, env={},
                             user_config=Path(args.home) / "no-user-config.toml")  # fmt: skip
    searcher = Searcher.open(Path(args.folder).resolve(), settings)
    questions = [q["query"] for q in json.loads(Path(args.questions).read_text())]
    print(f"seek cpu p50 {cpu_p50(lambda q: searcher.search(q, 10), questions):.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
