"""LanceDB's threads under steady searches while a file is edited and re-indexed (issue 20).

In one process: a copy of ``src/seek`` indexed in a temporary ``SEEK_HOME``, 3 threads
searching it through ``LiveIndexes`` without pause, and the main thread appending a new
function to one file ``--edits`` times (the next search re-indexes it). Prints the process's
threads by name every 5 edits, searches per second and the index's size on disk. Compare
``LANCE_IO_THREADS=2 python -m bench.soak.lance_threads`` with lance's default (unset; seek's
long-running commands set 2, see ``seek.store.threads``). ``--gap 11 --mode vector`` asks whether
the pool shrinks between edits (tokio ends a thread idle for 10 s) when no search uses
LanceDB. docs/research/bench-rounds.md, "Soak".
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from bench.common import REPO_ROOT

SRC = REPO_ROOT / "src" / "seek"
WORDS = ["table", "index", "manifest", "search query", "tokenizer", "chunk", "embedding"]


def threads_by_name() -> Counter[str]:
    tasks = Path("/proc/self/task")
    return Counter((task / "comm").read_text().strip() for task in tasks.iterdir())


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.soak.lance_threads", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--edits", type=int, default=30)
    parser.add_argument("--searchers", type=int, default=3)
    parser.add_argument("--gap", type=float, default=0.5, help="seconds between edits")
    parser.add_argument(
        "--mode", default="hybrid", choices=("hybrid", "vector"),
        help="vector: searches that never touch LanceDB (the vectors are in memory)",
    )  # fmt: skip
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="seek-threads-"))
    os.environ["SEEK_HOME"] = str(scratch / "home")
    workspace = scratch / "ws"
    shutil.copytree(SRC, workspace, ignore=shutil.ignore_patterns("__pycache__", "models"))

    import seek.workspace.live
    from seek.settings import load_settings
    from seek.workspace import Workspaces

    seek.workspace.live.FRESHNESS_S = (
        0.2  # re-check often: each edit is picked up by the next search
    )
    settings = load_settings(workspace)
    spaces = Workspaces(settings=settings)  # a server's facade: its live searchers
    live = spaces.live
    assert live is not None
    spaces.search(workspace, "search", 5)
    print("LANCE_IO_THREADS", os.environ.get("LANCE_IO_THREADS", "(lance's default)"))
    print("start", dict(threads_by_name()), flush=True)
    stop = threading.Event()
    counts = [0] * args.searchers

    def search(i: int) -> None:
        while not stop.is_set():
            query = f"{WORDS[(counts[i] + i) % len(WORDS)]} q{counts[i]}"
            if args.mode == "hybrid":
                spaces.search(workspace, query, 5)
            else:
                searcher, _ = live.searcher(workspace, settings)
                searcher.search(query, 5, mode=args.mode)
            counts[i] += 1

    workers = [threading.Thread(target=search, args=(i,)) for i in range(args.searchers)]
    started = time.monotonic()
    for worker in workers:
        worker.start()
    target = workspace / "text.py"
    original = target.read_text(encoding="utf-8")
    before_edits = []  # LanceDB's threads just before each edit: did the pool shrink?
    try:
        for edit in range(1, args.edits + 1):
            before_edits.append(threads_by_name()["lancedb-tokio-w"])
            target.write_text(original + f"\n\ndef probe_{edit}():\n    return {edit}\n")
            time.sleep(args.gap)
            live.searcher(workspace, settings)  # the update has run when this returns
            if edit % 5 == 0:
                print("edit", edit, dict(threads_by_name()), flush=True)
    finally:
        stop.set()
        for worker in workers:
            worker.join()
    print("lancedb-tokio-w before each edit", before_edits)
    print("searches/s", round(sum(counts) / (time.monotonic() - started), 1))
    size = sum(f.stat().st_size for f in (scratch / "home").rglob("*") if f.is_file())
    print("index MiB", round(size / 2**20, 1))
    shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
