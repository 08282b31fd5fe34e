"""One semble measurement in a fresh process; run with *semble's* python.

    $SEMBLE_PYTHON bench/speed/_semble_worker.py REPO_DIR MODEL_DIR

Imports only semble and the standard library (seek is not installed in semble's venv), and
prints one JSON object on stdout. Kept apart from ``bench.speed.index_speed`` for that reason.

What it does, mirroring the seek worker in ``bench/speed/index_speed.py``:

1. import semble and load + warm the model (``load_model`` then one ``encode``): excluded;
2. cold: ``SembleIndex.from_path`` + ``save_index_to_cache`` into a fresh, empty cache folder
   (``SEMBLE_CACHE_LOCATION``) - what ``semble index``/the MCP server do on first use, and the
   counterpart of seek writing its index under a fresh home;
3. no-change: a second ``SembleIndex.from_path`` on the same, untouched tree with that cache
   kept - semble's real incremental path (``get_validated_cache`` walks the tree, compares
   mtimes and loads the saved index from disk).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_s() -> float:
    """User + system CPU seconds of this process and its waited-for children (as in
    ``bench.speed.index_speed``)."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: _semble_worker.py REPO_DIR MODEL_DIR", file=sys.stderr)
        return 2
    repo = str(Path(argv[0]).resolve())
    model_dir = str(Path(argv[1]).resolve())
    cache = tempfile.mkdtemp(prefix="bench-semble-cache-")
    # Both must be set before semble resolves them; they are read at call time, but set them
    # before the import anyway so nothing can pick up the user's ~/.cache/semble.
    os.environ["SEMBLE_CACHE_LOCATION"] = cache
    os.environ["SEMBLE_MODEL_NAME"] = model_dir
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        import semble
        from semble import SembleIndex
        from semble.cache import resolve_cache_folder, save_index_to_cache
        from semble.index.dense import load_model

        assert resolve_cache_folder() == Path(cache), "SEMBLE_CACHE_LOCATION not honoured"
        model, model_path = load_model(model_dir)
        model.encode(["warm up"])

        before = set(sys.modules)
        started, cpu = time.perf_counter(), _cpu_s()
        index = SembleIndex.from_path(repo)
        built = time.perf_counter()
        save_index_to_cache(index, repo)
        cold_s = time.perf_counter() - started
        cold_cpu_s = _cpu_s() - cpu
        save_s = time.perf_counter() - built
        late_imports = sorted({name.split(".")[0] for name in set(sys.modules) - before})
        stats = index.stats
        cold_loaded = index.loaded_from_disk
        del index

        started = time.perf_counter()
        again = SembleIndex.from_path(repo)
        nochange_s = time.perf_counter() - started

        result = {
            "tool": "semble",
            "version": getattr(semble, "__version__", ""),
            "repo_dir": repo,
            "model": model_path,
            "cold_s": cold_s,
            "cold_save_s": save_s,
            "cold_cpu_s": cold_cpu_s,
            "nochange_s": nochange_s,
            "files": stats.indexed_files,
            "chunks": stats.total_chunks,
            "nochange_files": again.stats.indexed_files,
            "nochange_chunks": again.stats.total_chunks,
            # True = the second from_path was a cache hit (nothing re-chunked or re-embedded).
            "nochange_cache_hit": bool(again.loaded_from_disk),
            "cold_was_cold": not cold_loaded,
            "cold_late_imports": late_imports,
            "peak_rss_mb": _peak_rss_mb(),
        }
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
