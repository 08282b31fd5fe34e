"""The code graph's table: one row per source file with its definitions, references and
imports (issue 28 deliver 1; seek.md §2 `seek def/refs/...`), stored beside the chunk table.

Rows: ``path`` (workspace-relative, ``/``), ``definitions`` and ``facts`` (the file's
definitions and the rest of its facts, encoded by :mod:`seek.index.graph_rows`; the store
does not read them; definitions apart, so that a file's are read alone:
:meth:`GraphTable.definitions`). The table of chunk table ``t`` is ``t_graph<GRAPH_FORMAT>``
(:func:`graph_table_name`): a rebuild's new chunk table gets a new graph table with it, the
manifest's switch makes both current at once, and a retired chunk table's graph goes with
it. The writer replaces a file's graph row with its chunk rows, before the stamp is saved,
so the stamp protocol (rows before stamps, ``runOpen``) keeps the graph as crash-safe as
the chunks (:mod:`seek.index.indexer`).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seek.errors import failure_line
from seek.store.threads import reads_lance, writes_lance

# The table code (numpy, asyncio) loads on first use: the freshness check before every
# search asks only whether the graph table exists (:func:`graph_exists`).
if TYPE_CHECKING:
    from seek.store import lance

COLUMNS = ("path", "definitions", "facts")
GRAPH_FORMAT = 5
"""The version of what a row holds: its encoding (:mod:`seek.index.graph_rows`) and the facts
:mod:`seek.graph` extracts; bumped when either changes. It is part of the table's name, so a
table of another version is not read as this index's graph: the next run fills the current
one from the files, as for an index stored before the graph, and drops the old one with the
other tables no reader needs (version 1: rows without declared types, bases or owners;
version 2: with the uses of a function's own locals, which mean no definition; version 3: a
C or C++ function with a body spanning its declarator's line only, so the uses in its body
had no enclosing definition; version 4: TypeScript and JavaScript rows without declared types
and with loop variables, destructured names and callback parameters as uses)."""
GRAPH_SUFFIX = f"_graph{GRAPH_FORMAT}"


def graph_table_name(chunk_table: str) -> str:
    """The graph table that goes with chunk table ``chunk_table``."""
    return chunk_table + GRAPH_SUFFIX


def graph_exists(index_dir: Path, chunk_table: str) -> bool:
    """Whether the graph table of ``chunk_table`` was created (it may hold no rows)."""
    return (index_dir / "lancedb" / f"{graph_table_name(chunk_table)}.lance").is_dir()


class GraphTable:
    """Lazily opened graph table ``name`` in ``<index_dir>/lancedb``."""

    def __init__(self, index_dir: Path, name: str) -> None:
        self.db_dir = index_dir / "lancedb"
        self.name = name
        self._db: lance.Connection | lance.PackageConnection | None = None
        self._table: lance.Table | lance.PackageTable | None = None

    def _connect(self) -> lance.Connection | lance.PackageConnection:
        if self._db is None:
            from seek.store import lance
            from seek.store.table import INDEX_CACHE_BYTES, METADATA_CACHE_BYTES

            self.db_dir.mkdir(parents=True, exist_ok=True)
            self._db = lance.connect(self.db_dir, INDEX_CACHE_BYTES, METADATA_CACHE_BYTES)
        return self._db

    def exists(self) -> bool:
        return (self.db_dir / f"{self.name}.lance").is_dir()

    def _open(self) -> lance.Table | lance.PackageTable | None:
        if self._table is None and self.exists():
            self._table = self._connect().open_table(self.name)
        return self._table

    @staticmethod
    def _arrow(rows: Sequence[tuple[str, str, str]]) -> Any:
        import pyarrow as pa

        return pa.table(
            {
                name: pa.array([row[i] for row in rows], pa.string())
                for i, name in enumerate(COLUMNS)
            }
        )

    @writes_lance
    def create_empty(self) -> None:
        """Create the table with no rows, so that an index whose files have no graph (no
        source code) is told from one built before the graph was stored."""
        if not self.exists():
            self._table = self._connect().create_table(self.name, self._arrow([]))

    @writes_lance
    def delete_files(self, paths: Sequence[str]) -> None:
        from seek.store.table import in_batches, paths_filter

        table = self._open()
        if table is None or not paths:
            return
        for batch in in_batches(paths):
            table.delete(paths_filter(batch))

    @writes_lance
    def replace_files(self, paths: Sequence[str], rows: Sequence[tuple[str, str, str]]) -> None:
        """Delete the rows of ``paths`` and add ``rows`` ((path, definitions, facts))."""
        self.delete_files(paths)
        if not rows:
            return
        data = self._arrow(rows)
        table = self._open()
        if table is None:
            self._table = self._connect().create_table(self.name, data)
        else:
            table.add(data)

    @writes_lance
    def compact(self) -> None:
        from seek.store.table import OLD_VERSIONS_KEPT

        table = self._open()
        if table is not None:
            table.optimize(OLD_VERSIONS_KEPT)

    @writes_lance
    def drop(self) -> None:
        if self.exists():
            try:
                self._connect().drop_table(self.name)
            except Exception:  # noqa: BLE001 - a damaged table: its folder goes all the same
                shutil.rmtree(self.db_dir / f"{self.name}.lance", ignore_errors=True)
        self._table = None

    @reads_lance
    def problem(self) -> str:
        """What is wrong with the table ("" when nothing is, or when there is none): every
        column of every row is read, so a data file cut short or replaced shows (LanceDB
        reports such damage as many error types)."""
        if not self.exists():
            return ""
        try:
            table = self._open()
            if table is not None and table.count_rows():
                table.scan(COLUMNS)
        except Exception as exc:  # noqa: BLE001 - lance reports damage as many error types
            self._table = None
            return f"the code graph's table cannot be read ({failure_line(exc)})"
        return ""

    @reads_lance
    def stored_paths(self) -> set[str]:
        table = self._open()
        if table is None or not table.count_rows():
            return set()
        return set(table.scan(["path"]).column("path").to_pylist())

    @reads_lance
    def load_all(self) -> list[tuple[str, str, str]]:
        """Every (path, definitions, facts) row; empty when the table does not exist."""
        table = self._open()
        if table is None or not table.count_rows():
            return []
        data = table.scan(COLUMNS)
        return list(zip(*(data.column(name).to_pylist() for name in COLUMNS), strict=True))

    @reads_lance
    def definitions(self, paths: Sequence[str]) -> dict[str, str]:
        """The encoded definitions of those of ``paths`` that have a row (the one column a
        search hit's enclosing definition needs; nothing else is read)."""
        from seek.store.table import in_batches, paths_filter

        table = self._open()
        found: dict[str, str] = {}
        if table is None:
            return found
        unique = sorted(set(paths))
        for batch in in_batches(unique):
            data = table.scan(["path", "definitions"], paths_filter(batch))
            found.update(
                zip(
                    data.column("path").to_pylist(),
                    data.column("definitions").to_pylist(),
                    strict=True,
                )
            )
        return found
