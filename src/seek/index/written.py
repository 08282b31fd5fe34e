"""The rows a run wrote to a table it created, kept for that table's search cache (issue 14:
a cold index then need not read its table back; see
:func:`seek.retrieve.search_cache.refresh_search_cache`, which uses them only for that
table and only when their chunks add up to its manifest's)."""

from __future__ import annotations

from typing import Any

import numpy as np

from seek.store import RowBatch


class WrittenRows:
    """Every row written to table ``table`` by this run, in write order."""

    def __init__(self, table: str) -> None:
        self.table = table
        self._rows = RowBatch.empty(0)
        self._vectors: list[np.ndarray] = []

    def add(self, rows: RowBatch) -> None:
        """Rows just written (their strings are shared, not copied; vectors as stored)."""
        self._rows.extend(rows)
        self._vectors.append(np.asarray(rows.vectors, dtype=np.float32))

    def columns(self) -> dict[str, Any]:
        """``ChunkTable.load_all``'s form plus ``table``; this object lets go of its vector
        blocks (one matrix of them is made), so call it once."""
        rows, vectors = self._rows, self._vectors
        self._rows, self._vectors = RowBatch.empty(0), []
        return {
            "table": self.table, "path": rows.path, "chunk": rows.chunk,
            "start_line": rows.start_line, "end_line": rows.end_line, "part": rows.part,
            "content": rows.content, "keywords": rows.keywords,
            "vectors": np.concatenate(vectors) if vectors else np.zeros((0, 0), np.float32),
        }  # fmt: skip
