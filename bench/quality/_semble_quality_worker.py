"""semble's side of the quality benchmark, one repo per process; run with *semble's* python.

    $SEMBLE_PYTHON bench/quality/_semble_quality_worker.py REPO_DIR MODEL_DIR QUERIES_JSON
        [--runs 5] [--top-k 10]

``QUERIES_JSON`` is a file holding a JSON array of query strings. Imports only semble and the
standard library (seek is not installed in semble's venv; the parent scores the hits with
``bench.quality.scoring``). Prints one JSON object on stdout::

    {"tool": "semble", "version": ..., "model": ..., "index_s": ..., "chunks": ..., "files": ...,
     "queries": [{"hits": [[path, start_line, end_line], ...], "latency_ms": median,
                  "runs_ms": [...], "stable": true}, ...]}

Like semble's own ``run_benchmark.py`` (spec §2.5): the model is loaded and warmed first
(excluded), ``SembleIndex.from_path`` builds the index (``index_s``, cold: the cache folder is a
fresh temporary directory, so nothing stale is reused), then each query runs ``--runs`` times
in a row with ``top_k`` results; its latency is the median of those runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="_semble_quality_worker.py")
    parser.add_argument("repo_dir")
    parser.add_argument("model_dir")
    parser.add_argument("queries_json")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--top-k", type=int, default=10)
    args = parser.parse_args(argv)

    repo = str(Path(args.repo_dir).resolve())
    model_dir = str(Path(args.model_dir).resolve())
    queries = json.loads(Path(args.queries_json).read_text(encoding="utf-8"))
    if not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
        print("QUERIES_JSON must hold a JSON array of strings", file=sys.stderr)
        return 2
    runs = max(1, args.runs)

    cache = tempfile.mkdtemp(prefix="bench-semble-quality-cache-")
    # Set before importing semble so nothing can pick up the user's ~/.cache/semble; the
    # location must be absolute or semble ignores it (semble/cache.py).
    os.environ["SEMBLE_CACHE_LOCATION"] = cache
    os.environ["SEMBLE_MODEL_NAME"] = model_dir
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        import semble
        from semble import SembleIndex
        from semble.cache import resolve_cache_folder
        from semble.index.dense import load_model

        if resolve_cache_folder() != Path(cache):
            raise RuntimeError("SEMBLE_CACHE_LOCATION not honoured")
        model, model_path = load_model(model_dir)
        model.encode(["warm up"])

        started = time.perf_counter()
        index = SembleIndex.from_path(repo)
        index_s = time.perf_counter() - started
        if getattr(index, "loaded_from_disk", False):
            raise RuntimeError("semble loaded a cached index; expected a fresh build")

        out_queries = []
        for query in queries:
            first = None
            stable = True
            times_ms = []
            for _ in range(runs):
                t0 = time.perf_counter()
                results = index.search(query, top_k=args.top_k)
                times_ms.append((time.perf_counter() - t0) * 1000.0)
                hits = [
                    [r.chunk.file_path, int(r.chunk.start_line), int(r.chunk.end_line)]
                    for r in results
                ]
                if first is None:
                    first = hits
                elif hits != first:
                    stable = False
            out_queries.append(
                {
                    "hits": first or [],
                    "latency_ms": statistics.median(times_ms),
                    "runs_ms": times_ms,
                    "stable": stable,
                }
            )

        stats = getattr(index, "stats", None)
        result = {
            "tool": "semble",
            "version": getattr(semble, "__version__", ""),
            "repo_dir": repo,
            "model": model_path,
            "index_s": index_s,
            "files": getattr(stats, "indexed_files", None),
            "chunks": getattr(stats, "total_chunks", None),
            "queries": out_queries,
        }
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
