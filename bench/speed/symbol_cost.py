"""What naming each hit's enclosing symbol costs a search (issue 28 deliver 2), in one process,
on indexed folders: per question, the pipeline alone against the pipeline and the naming
(``Searcher.search``), alternating, median of 3 runs each; then the costs a one-shot
``seek search`` pays once per process: loading ``hit-symbols.json`` and naming ten hits, and
deriving it from the graph table when it is missing (after any change it is only the
changed files).

    OPENBLAS_NUM_THREADS=1 python -m bench.speed.symbol_cost --home DIR \\
        FOLDER=QUESTIONS_JSON [FOLDER=QUESTIONS_JSON ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def measure(folder: Path, questions: list[str], settings, runs: int = 3) -> dict[str, float]:
    from seek.retrieve import Searcher
    from seek.retrieve.symbols import SIDECAR, HitSymbols
    from seek.store import load_manifest

    searcher = Searcher.open(folder, settings)
    for question in questions:  # warm: model, caches, the searcher's definitions
        searcher.search(question, 10)
    bare, named, naming = [], [], []
    for question in questions:
        b, n, s = [], [], []
        for _ in range(runs):
            started = time.perf_counter()
            result = searcher.pipeline.search(question, 10)
            b.append(_ms(started))
            started = time.perf_counter()
            searcher.search(question, 10)
            n.append(_ms(started))
            started = time.perf_counter()
            searcher.symbols.name(result)
            s.append(_ms(started))
        bare.append(statistics.median(b))
        named.append(statistics.median(n))
        naming.append(statistics.median(s))
    hits = searcher.pipeline.search(questions[0], 10)
    manifest = load_manifest(searcher.index_dir)
    loads = []
    for _ in range(5):  # a fresh process's first naming: read the saved copy, name ten hits
        started = time.perf_counter()
        HitSymbols(searcher.index_dir, manifest).name(hits)
        loads.append(_ms(started))
    sidecar = searcher.index_dir / SIDECAR
    size = sidecar.stat().st_size
    sidecar.unlink()
    started = time.perf_counter()
    HitSymbols(searcher.index_dir, manifest).name(hits)  # derives it and saves it again
    derive = _ms(started)
    named_share = sum(h.symbol is not None for h in searcher.search(questions[0], 10).hits)
    return {
        "questions": len(questions),
        "pipeline_p50_ms": statistics.median(bare),
        "search_p50_ms": statistics.median(named),
        "naming_p50_ms": statistics.median(naming),
        "first_naming_from_saved_ms": statistics.median(loads),
        "derive_from_graph_ms": derive,
        "saved_kb": size / 1000,
        "first_question_hits_named": named_share,
    }


def main(argv: list[str] | None = None) -> int:
    from seek.settings import load_settings

    parser = argparse.ArgumentParser(
        prog="python -m bench.speed.symbol_cost", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("pairs", nargs="+", help="FOLDER=QUESTIONS_JSON (semble annotations)")
    parser.add_argument("--home", required=True, help="SEEK_HOME of the indexes")
    args = parser.parse_args(argv)
    settings = load_settings(None, overrides={"home": args.home}, env={},
                             user_config=Path(args.home) / "no-user-config.toml")  # fmt: skip
    for pair in args.pairs:
        folder, _, annotations = pair.partition("=")
        questions = [q["query"] for q in json.loads(Path(annotations).read_text())]
        found = measure(Path(folder).resolve(), questions, settings)
        print(Path(folder).name, json.dumps({k: round(v, 2) for k, v in found.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
