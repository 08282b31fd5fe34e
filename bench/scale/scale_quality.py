"""Corpus questions in one process, with their quality: latency, CPU and NDCG@10 of the semble
dev questions filtered to their repository and over the whole corpus (issue 17;
docs/research/bench-rounds.md, "Scale, round three").

    python -m bench.scale.scale_quality LABEL [search.POOL_FILES=24 ...]
        [--corpus /tmp/seek-scale/1m] [--modes unfiltered,filtered] [--out FILE.jsonl]

``KEY=VALUE`` sets a constant of ``seek.corpus.search`` (``search.``) or
``seek.store.corpus_table`` (``corpus_table.``) for the run, to compare settings on the same
corpus. Whole-corpus questions (every third, as ``bench.scale`` asks them) are scored with
the hits of other repositories counted as misses, two ways: ``ndcg10`` takes a copy of the
question's repository (``<name>--copy<i>``, the same files) as its own, ``ndcg10_exact_repo``
does not; ``top_hit_repo`` / ``top_hit_exact_repo``: how often the first hit is in the
question's repository. One JSON line per run is appended to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import time
from pathlib import Path

from bench.common import BENCH_DIR_HELP, SEMBLE_SET, peak_rss_kb, resolve_bench_dir

MISS = "\0another repository"
"""The path of a hit from another repository: no judged target ends with it."""


def base_name(repo: str) -> str:
    return re.sub(r"--copy\d+$", "", repo)


def main(argv: list[str] | None = None) -> int:
    from seek.store.threads import one_blas_thread

    one_blas_thread()  # as in every seek command, before numpy loads (bench.scale's query)
    from bench.quality.quality import load_repos
    from bench.quality.scoring import Hit, score_query
    from seek.corpus import search
    from seek.corpus.location import CorpusLocation
    from seek.settings import load_settings
    from seek.store import corpus_table

    parser = argparse.ArgumentParser(prog="python -m bench.scale.scale_quality")
    parser.add_argument("label")
    parser.add_argument("settings", nargs="*", help="module.CONSTANT=value")
    parser.add_argument("--corpus", default="/tmp/seek-scale/1m")
    parser.add_argument("--bench-dir", type=Path, help=BENCH_DIR_HELP)
    parser.add_argument("--modes", default="unfiltered,filtered")
    parser.add_argument("--out", type=Path, default=Path("bench/results/scale-quality.jsonl"))
    args = parser.parse_args(argv)
    args.bench_dir = resolve_bench_dir(parser, args.bench_dir)
    modules = {"search": search, "corpus_table": corpus_table}
    for item in args.settings:
        key, _, value = item.partition("=")
        module, _, name = key.partition(".")
        if module not in modules or not hasattr(modules[module], name):
            parser.error(f"unknown setting {key}")
        setattr(modules[module], name, json.loads(value))
    repos, _ = load_repos(args.bench_dir, SEMBLE_SET.default_names())
    settings = load_settings(user_config=Path("/nonexistent/seek.toml"))
    searcher = search.CorpusSearcher(CorpusLocation(args.corpus), settings)
    questions = [(repo.name, q) for repo in repos for q in repo.queries]
    for name, q in questions[:5]:  # warm: model, ranker, caches
        searcher.search(q.query, 10, repos=[name])
        searcher.search(q.query, 10)
    out: dict = {"label": args.label, "settings": args.settings, "loadavg_start": os.getloadavg()}
    for mode in args.modes.split(","):
        asked = questions[::3] if mode == "unfiltered" else questions
        wall, cpu, tops, exact_tops = [], [], [], []
        scores: dict[str, dict[str, list[float]]] = {"ndcg10": {}, "ndcg10_exact_repo": {}}
        for name, q in asked:
            started, cpu_started = time.perf_counter(), time.process_time()
            result = searcher.search(q.query, 10, repos=[name] if mode == "filtered" else ())
            wall.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - cpu_started) * 1000)
            for key, exact in (("ndcg10", False), ("ndcg10_exact_repo", True)):
                hits = [Hit(h.path if (h.repo if exact else base_name(h.repo)) == name else MISS,
                            h.start_line, h.end_line) for h in result.hits]  # fmt: skip
                scores[key].setdefault(name, []).append(score_query(hits, q)["ndcg10"])
            if result.hits:
                tops.append(base_name(result.hits[0].repo) == name)
                exact_tops.append(result.hits[0].repo == name)
        wall.sort()
        out[mode] = {
            "questions": len(wall),
            "p50_ms": round(statistics.median(wall), 1),
            "p95_ms": round(wall[int(0.95 * (len(wall) - 1))], 1),
            "cpu_p50_ms": round(statistics.median(cpu), 1),
            **{
                key: round(statistics.fmean(statistics.fmean(v) for v in per.values()), 4)
                for key, per in scores.items()
            },  # fmt: skip
            "top_hit_repo": round(statistics.fmean(tops), 3),
            "top_hit_exact_repo": round(statistics.fmean(exact_tops), 3),
        }
    out["loadavg_end"] = os.getloadavg()
    out["peak_rss_mb"] = round(peak_rss_kb() / 1024, 1)
    print(json.dumps(out))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a") as fh:
        fh.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
