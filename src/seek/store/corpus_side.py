"""A table beside the corpus's chunk table in the same LanceDB database: the code graph's
rows (:mod:`seek.store.corpus_graph`, issue 28) and the links between repositories
(:mod:`seek.store.corpus_links`, issue 45). Each is opened lazily through the chunk table's
connection (the same location, local or S3, and its one-line storage errors), holds string
columns only, is created by its first append, and is dropped to be written again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seek.store.corpus_table import CorpusTable


class SideTable:
    """One side table: ``NAME`` and its ``COLUMNS`` (all strings), set by each subclass."""

    NAME: str
    COLUMNS: tuple[str, ...]

    def __init__(self, chunks: CorpusTable) -> None:
        self.chunks = chunks
        self._table: Any = None

    def open(self) -> Any | None:
        if self._table is None:
            db = self.chunks.connect()
            with self.chunks._storage():  # the chunk table's S3 errors, one line each
                if self.NAME in db.list_tables().tables:
                    self._table = db.open_table(self.NAME)
        return self._table

    def _arrow(self, rows: Sequence[Sequence[str]]) -> Any:
        import pyarrow as pa

        return pa.table(
            {
                name: pa.array([row[i] for row in rows], pa.string())
                for i, name in enumerate(self.COLUMNS)
            }
        )

    def _append(self, rows: Sequence[Sequence[str]]) -> None:
        """Append ``rows`` in one commit, creating the table with them when there is none."""
        data = self._arrow(rows)
        table = self.open()
        if table is None:
            try:
                self._table = self.chunks.connect().create_table(self.NAME, data)
                return
            except (ValueError, OSError):  # another writer created it meanwhile
                table = self.open()
                if table is None:
                    raise
        table.add(data)

    def drop(self) -> None:
        self.chunks.drop(self.NAME)
        self._table = None
