"""What a run holds between chunking and writing: files and their rows, by step (design
"Pure per-file stages"; issue 14's bounded batches).

The run's thread fills a :class:`Pending` with prepared files; the writer thread embeds it and
absorbs it into the one that waits for the next write (:mod:`seek.index.indexer`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from seek.store import RowBatch, Stamp


@dataclass(slots=True)
class Pending:
    """Files chunked and waiting to be embedded and written."""

    stamps: dict[str, Stamp] = field(default_factory=dict)
    refreshed: dict[str, Stamp] = field(default_factory=dict)
    """Touched but unchanged files: only their size and mtime are new."""
    had_rows: list[str] = field(default_factory=list)
    rows: RowBatch = field(default_factory=lambda: RowBatch.empty(0))
    """Every column but the vectors (set from ``vectors`` when the rows are written)."""
    texts: list[str] = field(default_factory=list)
    """What is embedded for each row: ``<task prefix><path>\n<window>``."""
    vectors: list[np.ndarray] = field(default_factory=list)
    """The rows' vectors, one matrix per embedded step, in row order."""
    graph: list[tuple[str, str, str]] = field(default_factory=list)
    """(path, definitions, facts) of the files with code-graph facts (encoded:
    :mod:`seek.index.graph_rows`), written with the rows."""
    graph_elsewhere: list[str] = field(default_factory=list)
    """Files whose graph rows a :class:`seek.index.graph_worker.GraphWorker` extracts, taken
    just before the write."""

    def __len__(self) -> int:
        return len(self.stamps) + len(self.refreshed)

    def absorb(self, step: Pending) -> None:
        """Add an embedded step's files and rows (its texts are no longer needed)."""
        self.stamps.update(step.stamps)
        self.refreshed.update(step.refreshed)
        self.had_rows.extend(step.had_rows)
        self.rows.extend(step.rows)
        self.vectors.extend(step.vectors)
        self.graph.extend(step.graph)
        self.graph_elsewhere.extend(step.graph_elsewhere)
