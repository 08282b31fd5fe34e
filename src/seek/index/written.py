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
        rows, blocks = self._rows, self._vectors
        self._rows, self._vectors = RowBatch.empty(0), []
        return {
            "table": self.table, "path": rows.path, "chunk": rows.chunk,
            "start_line": rows.start_line, "end_line": rows.end_line, "part": rows.part,
            "content": rows.content, "keywords": rows.keywords, "vectors": _stack(blocks),
        }  # fmt: skip


def _stack(blocks: list[np.ndarray]) -> np.ndarray:
    """``np.concatenate(blocks)``, letting go of each block once copied (``blocks`` ends
    empty): the whole matrix and one block at the peak, not two whole matrices."""
    if not blocks:
        return np.zeros((0, 0), np.float32)
    out = np.empty((sum(len(b) for b in blocks), blocks[0].shape[1]), np.float32)
    at = 0
    blocks.reverse()
    while blocks:
        block = blocks.pop()
        out[at : at + len(block)] = block
        at += len(block)
    return out
