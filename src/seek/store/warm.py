"""Warming LanceDB up at the start of a long-running command (issue 20).

Kept apart from :mod:`seek.store.threads` (the gate and thread caps every table uses) because
the warm-up drives a whole :class:`~seek.store.table.ChunkTable`, which itself uses the gate.
"""

from __future__ import annotations

import threading


def preload_lancedb() -> None:
    """Load LanceDB now, in a background thread beside start-up (issue 20). A long-running
    command (serve, mcp, ui, watch) needs it at its first index update anyway; loading it
    then (1-2 s) stalls that update and makes the process's memory jump long after start,
    which a soak cannot tell from growth. Importing is not enough: the ~60 MiB of LanceDB's
    code that an update runs is read from disk only when first run (the soak's resident file
    pages: 76 -> 136 MiB at its first edit, round five), so :func:`warm_lancedb` runs one
    update's steps on a throwaway table. The one-shot commands stay lean (issue 14): only
    the long-running ones call this."""
    threading.Thread(target=warm_lancedb, name="seek-preload", daemon=True).start()


def warm_lancedb() -> None:
    """What an index update does to its table (write, keyword index, compaction with
    cleanup, both searches, the full read of the search cache), on a few rows in a temporary
    folder. Each step is gated like a real update's (:data:`seek.store.threads.LANCE_GATE`).
    A failure here only costs the warm-up: the real update reports its own errors."""
    import logging
    import tempfile
    from pathlib import Path

    import numpy as np

    from seek.store.table import ChunkTable, RowBatch

    try:
        with tempfile.TemporaryDirectory(prefix="seek-warm-") as folder:
            table = ChunkTable(Path(folder), "warm")
            rows = RowBatch.empty(8)
            for n in range(4):
                rows.append_row(f"w{n}.py", 0, 0, 1, 0, f"def warm_{n}(): pass", f"warm {n}")
            rows.vectors = np.ones((len(rows), 8), dtype=np.float32)
            table.replace_files([], rows)
            table.replace_files(["w0.py"], rows)  # a second version: compaction has work
            table.finish()
            table.vector_search(np.ones(8, dtype=np.float32), 2)
            table.keyword_search("warm", 2)
            table.load_all()
            table.drop()
    except Exception as exc:  # noqa: BLE001 - a warm-up must never stop a server
        logging.getLogger(__name__).debug("warming LanceDB failed: %s", exc)
