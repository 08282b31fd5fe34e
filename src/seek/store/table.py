"""The LanceDB table ``chunks``: one row per embedding window (reference §3.2).

Contract (with :mod:`seek.store.lance`, the only place seek touches lancedb/pyarrow for it;
writes, counts and full reads go through LanceDB's engine alone where that is safe, the
full-text index and the two queries through the ``lancedb`` package):

- ``replace_files(paths, rows)`` deletes every row of ``paths`` then adds ``rows``;
- ``delete_files(paths)`` removes every row of ``paths``;
- ``finish()`` builds the keyword (BM25) index when missing and compacts the table
  (``ensure_keyword_index()`` and ``compact()`` do one each);
- ``vector_search(vector, limit, paths=None)`` returns the nearest chunks, one hit per chunk
  at the rank of its nearest window, optionally only within ``paths``;
- ``keyword_search(query, limit, paths=None)`` runs BM25 over the keyword column of each
  chunk's first window (so a chunk is one hit), optionally only within ``paths``;
- ``count_chunks()`` counts chunks (``part = 0`` rows); ``stored_paths()`` lists the files
  that have rows.

Rows: ``path`` (workspace-relative, ``/``), ``chunk`` (its number in the file), ``start_line``
and ``end_line`` (0-based, inclusive, overlap prefix included), ``part`` (window number),
``content`` (the whole chunk, same on every window row), ``keywords`` (path words + code
words), ``vector`` (the window's embedding).

LanceDB commits are atomic, so a process killed mid-write leaves the previous version.
Only writers (under the writer lock) call the writing methods; a search never writes, not
even a missing keyword index (:func:`seek.store.health.check` reports it and the next run
rebuilds).

Each index's rows live in the table its manifest names (``chunks`` for older indexes); a
rebuild fills a new one beside it (see :mod:`seek.store.manifest`).
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

from seek.store import lance
from seek.store.files import folder_size
from seek.store.threads import reads_lance, writes_lance

log = logging.getLogger(__name__)

KEYWORD_COLUMN = "keywords"
KEYWORD_INDEX = {"with_position": False, "base_tokenizer": "simple", "language": "English",
                 "lower_case": True, "stem": True, "remove_stop_words": True}  # fmt: skip
"""LanceDB's full-text index on the keyword column, a workspace's and the corpus's alike: no
positions (no phrase queries); the simple tokenizer cannot split identifiers, which is why
the keyword column carries them pre-split."""
SQL_IN_BATCH = 500
INDEX_CACHE_BYTES = 64 << 20
METADATA_CACHE_BYTES = 16 << 20
"""LanceDB's caches, per connection (its defaults, 6 GiB and 1 GiB, are no bound for a server
that runs for weeks). They hold the keyword index's posting lists and the table's metadata.
Measured (both together) after 2,000 distinct questions, when they had levelled off: 1.8 MiB
for tokio (4,000 chunks, keyword index 1.2 MB on disk), 8.9 MiB for abseil-cpp (12,300
chunks, 4.7 MB); so 64 MiB keeps the whole keyword index of a repository of ~80,000 chunks
in memory. A connection's caches go with it when its searcher is replaced (one session per
index folder for the whole process was considered and not adopted: every update makes new
index files, so a shared cache would fill with entries no search asks for again, up to the
cap, instead of being freed with the replaced searcher)."""

OLD_VERSIONS_KEPT = timedelta(minutes=1)
"""How long the table versions an update replaced stay on disk. LanceDB keeps every version
for 7 days by default, each with the fragments a compaction rewrote, so a server whose
workspace is edited all day grew its index without end (gin's: 3 -> 57 MB over 155 edits).
seek never reads an old version on purpose; a search that still holds the table of a version
removed under it fails once and is retried on the current one (``seek.workspace.live``). A minute
covers any search in flight."""


@dataclass(frozen=True, slots=True)
class StoredChunk:
    path: str
    chunk: int
    """The chunk's number within its file."""
    start_line: int
    end_line: int
    content: str
    score: float
    """Vector hits: distance (smaller is nearer). Keyword hits: BM25 score (larger is better)."""


@dataclass(slots=True)
class RowBatch:
    """Rows of several files, column by column, ready to write."""

    path: list[str]
    chunk: list[int]
    start_line: list[int]
    end_line: list[int]
    part: list[int]
    content: list[str]
    keywords: list[str]
    vectors: np.ndarray

    @classmethod
    def empty(cls, dims: int) -> RowBatch:
        return cls([], [], [], [], [], [], [], np.zeros((0, dims), dtype=np.float32))

    def __len__(self) -> int:
        return len(self.path)

    def extend(self, other: RowBatch) -> None:
        """Append the rows of ``other``, every column but the vectors (set after embedding)."""
        self.path.extend(other.path)
        self.chunk.extend(other.chunk)
        self.start_line.extend(other.start_line)
        self.end_line.extend(other.end_line)
        self.part.extend(other.part)
        self.content.extend(other.content)
        self.keywords.extend(other.keywords)

    def append_row(
        self, path: str, chunk: int, start: int, end: int, part: int, content: str, keywords: str
    ) -> None:
        """One window's row (its vector is set for the whole batch after embedding)."""
        self.path.append(path)
        self.chunk.append(chunk)
        self.start_line.append(start)
        self.end_line.append(end)
        self.part.append(part)
        self.content.append(content)
        self.keywords.append(keywords)


def sql_quote(value: str) -> str:
    """A SQL string literal: single quotes, embedded quotes doubled."""
    return "'" + value.replace("'", "''") + "'"


def paths_filter(paths: Iterable[str]) -> str:
    return "path IN (" + ", ".join(sql_quote(p) for p in paths) + ")"


def in_batches(paths: Sequence[str]) -> Iterator[Sequence[str]]:
    """``paths`` in slices of ``SQL_IN_BATCH``: one SQL ``IN`` list each, within what a
    LanceDB filter takes."""
    for i in range(0, len(paths), SQL_IN_BATCH):
        yield paths[i : i + SQL_IN_BATCH]


KEYWORD_INDEX_MIN_CHUNKS = 250_001
"""A table of fewer chunks gets no full-text index: its searches run BM25 in memory on the
search cache's postings (``seek.retrieve.bm25``, the same tokens and scores), so the index
would be a build each run and a fixed cost for nothing (issue 14). Larger tables keep it;
``seek.retrieve.searcher.KEYWORDS_IN_MEMORY_MAX_CHUNKS`` is this minus one."""


def needs_keyword_index(chunks: int | None) -> bool:
    """Whether a table of ``chunks`` chunks must have LanceDB's full-text index."""
    return chunks is not None and chunks >= KEYWORD_INDEX_MIN_CHUNKS


class ChunkTable:
    """Lazily opened LanceDB table in ``<index_dir>/lancedb``: ``name``, by default the one
    the index's manifest names."""

    def __init__(self, index_dir: Path, name: str | None = None) -> None:
        self.db_dir = index_dir / "lancedb"
        if name is None:
            from seek.store.manifest import DEFAULT_TABLE, MANIFEST_NAME, load_manifest

            has_manifest = (index_dir / MANIFEST_NAME).exists()
            name = load_manifest(index_dir).table if has_manifest else DEFAULT_TABLE
        self.name = name
        self._db: lance.Connection | lance.PackageConnection | None = None
        self._table: lance.Table | lance.PackageTable | None = None
        self._package: Any = None
        """The package's handle on the table, for what only the package does (the keyword
        index and queries); the same object as ``_table.raw`` on the package path."""
        self._has_keyword_index = False

    # -- opening --------------------------------------------------------------
    def _connect(self) -> lance.Connection | lance.PackageConnection:
        if self._db is None:
            self.db_dir.mkdir(parents=True, exist_ok=True)
            self._db = lance.connect(self.db_dir, INDEX_CACHE_BYTES, METADATA_CACHE_BYTES)
        return self._db

    def _open(self) -> lance.Table | lance.PackageTable | None:
        """The table, or None when nothing was written yet (reading never creates files)."""
        if self._table is None and self.db_dir.is_dir():
            db = self._connect()
            if self.name in self.table_names():
                self._table = db.open_table(self.name)
        return self._table

    def _package_table(self) -> Any | None:
        """The package's table, for the keyword index and the queries. A handle opened beside
        the engine's sees the table as of its opening: it is dropped whenever this object
        writes through the other (:meth:`_wrote`)."""
        table = self._open()
        if table is None:
            return None
        if isinstance(table, lance.PackageTable):
            return table.raw
        if self._package is None:
            db = lance.PackageConnection(self.db_dir, INDEX_CACHE_BYTES, METADATA_CACHE_BYTES)
            self._package = db.open_table(self.name).raw
        return self._package

    def _wrote(self, through_package: bool = False) -> None:
        """After a write: the handle that did not write would read an older version."""
        if isinstance(self._table, lance.PackageTable):
            return
        if through_package:
            self._table = None
        else:
            self._package = None

    def table_names(self) -> list[str]:
        """Every table in the database (this one, a rebuild's, retired ones), read from the
        folder (a local LanceDB keeps table ``t`` in ``t.lance``) rather than through a new
        connection: every update check lists them, once a second in a busy server."""
        try:
            entries = list(os.scandir(self.db_dir))
        except (FileNotFoundError, NotADirectoryError):
            return []
        suffix = ".lance"
        return sorted(
            e.name[: -len(suffix)] for e in entries if e.name.endswith(suffix) and e.is_dir()
        )

    def exists(self) -> bool:
        return self.name in self.table_names()

    @writes_lance
    def drop(self, name: str | None = None) -> None:
        """Remove a table (default: this one) with every row; a missing one is fine."""
        name = name or self.name
        if name == self.name:
            self._table = None
            self._package = None
            self._has_keyword_index = False
        if name in self.table_names():
            try:
                self._connect().drop_table(name)
            except (OSError, ValueError, RuntimeError) as exc:  # a damaged table's leftovers
                log.warning("could not drop table %s: %s", name, exc)
                shutil.rmtree(self.db_dir / f"{name}.lance", ignore_errors=True)
        else:
            shutil.rmtree(self.db_dir / f"{name}.lance", ignore_errors=True)

    # -- writing --------------------------------------------------------------
    def _arrow(self, rows: RowBatch) -> Any:
        import pyarrow as pa

        dims = rows.vectors.shape[1]
        # From the buffer, not pa.array(ndarray): that path imports numpy.ma (10-80 ms, a
        # fixed cost of every cold index; issue 14).
        values = np.ascontiguousarray(rows.vectors, dtype=np.float32).reshape(-1)
        flat = pa.Array.from_buffers(pa.float32(), len(values), [None, pa.py_buffer(values)])
        return pa.table(
            {
                "path": pa.array(rows.path, pa.string()),
                "chunk": pa.array(rows.chunk, pa.int32()),
                "start_line": pa.array(rows.start_line, pa.int32()),
                "end_line": pa.array(rows.end_line, pa.int32()),
                "part": pa.array(rows.part, pa.int32()),
                "content": pa.array(rows.content, pa.string()),
                "keywords": pa.array(rows.keywords, pa.string()),
                "vector": pa.FixedSizeListArray.from_arrays(flat, dims),
            }
        )

    @writes_lance
    def delete_files(self, paths: Sequence[str]) -> None:
        table = self._open()
        if table is None or not paths:
            return
        for batch in in_batches(paths):
            table.delete(paths_filter(batch))
        self._wrote()

    @writes_lance
    def replace_files(self, paths: Sequence[str], rows: RowBatch) -> None:
        """Delete the rows of ``paths`` (files that had rows before) and add ``rows``."""
        self.delete_files(paths)
        if not len(rows):
            return
        data = self._arrow(rows)
        table = self._open()
        if table is None:
            self._table = self._connect().create_table(self.name, data)
        else:
            table.add(data)
        self._wrote()

    @reads_lance
    def has_keyword_index(self) -> bool:
        if self._has_keyword_index:
            return True  # indexes are never dropped while a table object is open
        table = self._open()
        if table is None:
            return False
        self._has_keyword_index = any(KEYWORD_COLUMN in idx.columns for idx in table.list_indices())
        return self._has_keyword_index

    @writes_lance
    def build_keyword_index(self) -> None:
        self._package = None  # opened now: it must see every row written so far
        table = self._package_table()
        if table is None:
            return
        from lancedb.index import FTS  # the package is loaded: _package_table opened it

        table.create_index(KEYWORD_COLUMN, config=FTS(**KEYWORD_INDEX), replace=True)
        self._wrote(through_package=True)
        self._has_keyword_index = True

    @writes_lance
    def ensure_keyword_index(self) -> None:
        """Build the keyword index when the table has none (an existing one is kept up to
        date by :meth:`compact`)."""
        if self._open() is not None and not self.has_keyword_index():
            self.build_keyword_index()

    @writes_lance
    def compact(self) -> None:
        """Merge the small fragments a run's writes leave, bring the indexes up to date with
        the rows added since they were built, and drop versions older than
        ``OLD_VERSIONS_KEPT`` (the index must not grow on disk with every update)."""
        table = self._open()
        if table is not None:
            table.optimize(OLD_VERSIONS_KEPT)
            self._wrote()

    @writes_lance
    def finish(self) -> None:
        """Make the keyword index cover every row and compact what the run wrote."""
        self.ensure_keyword_index()
        self.compact()

    # -- reading --------------------------------------------------------------
    @reads_lance
    def count_chunks(self) -> int:
        table = self._open()
        return 0 if table is None else int(table.count_rows("part = 0"))

    @reads_lance
    def count_rows(self) -> int:
        table = self._open()
        return 0 if table is None else int(table.count_rows())

    @reads_lance
    def stored_paths(self) -> set[str]:
        table = self._open()
        if table is None:
            return set()
        if not table.count_rows():
            return set()
        return set(table.scan(["path"], "part = 0").column("path").unique().to_pylist())

    @reads_lance
    def load_all(self) -> dict[str, Any]:
        """Every row's path, lines, part, content, keywords and vector, for in-memory search.

        Returns plain Python lists and a float32 ``vectors`` matrix (rows x dims); content is
        only kept on ``part = 0`` rows (the other rows carry the same text).
        """
        columns = ["path", "chunk", "start_line", "end_line", "part", "content", "keywords"]
        table = self._open()
        rows = 0 if table is None else table.count_rows()
        if not rows:
            return {**{c: [] for c in columns}, "vectors": np.zeros((0, 0), dtype=np.float32)}
        data = table.scan([*columns, "vector"])
        vector_column = data.column("vector").combine_chunks()
        dims = vector_column.type.list_size
        vectors = vector_column.values.to_numpy(zero_copy_only=False).reshape(-1, dims)
        return {
            **{c: data.column(c).to_pylist() for c in columns},
            "vectors": np.ascontiguousarray(vectors, dtype=np.float32),
        }

    @reads_lance
    def vector_search(
        self, vector: np.ndarray, limit: int, paths: Sequence[str] | None = None
    ) -> list[StoredChunk]:
        table = self._package_table()
        if table is None or limit <= 0:
            return []
        query = table.search(np.asarray(vector, dtype=np.float32), vector_column_name="vector")
        if paths is not None:
            query = query.where(paths_filter(paths), prefilter=True)
        columns = ["path", "chunk", "start_line", "end_line", "content"]
        rows = query.limit(2 * limit).select(columns).to_list()
        hits: list[StoredChunk] = []
        seen: set[tuple[str, int]] = set()
        for row in rows:
            key = (row["path"], row["chunk"])
            if key in seen:
                continue
            seen.add(key)
            hits.append(StoredChunk(*(row[c] for c in columns), float(row["_distance"])))
            if len(hits) == limit:
                break
        return hits

    def keyword_search(
        self, query_text: str, limit: int, paths: Sequence[str] | None = None
    ) -> list[StoredChunk]:
        rows = self._keyword_rows(
            query_text, limit, paths, ["path", "chunk", "start_line", "end_line", "content"]
        )
        return [
            StoredChunk(
                r["path"], r["chunk"], r["start_line"], r["end_line"], r["content"], r["_score"]
            )
            for r in rows
        ]

    def keyword_scores(
        self, query_text: str, limit: int, paths: Sequence[str] | None = None
    ) -> list[tuple[str, int, float]]:
        """``(path, chunk number, BM25 score)`` of the best matches: what a searcher that holds
        the contents in memory needs (reading the content column costs a third of the time)."""
        rows = self._keyword_rows(query_text, limit, paths, ["path", "chunk"])
        return [(r["path"], r["chunk"], r["_score"]) for r in rows]

    @reads_lance
    def _keyword_rows(
        self, query_text: str, limit: int, paths: Sequence[str] | None, columns: list[str]
    ) -> list[dict]:
        table = self._package_table()
        if table is None or limit <= 0 or not query_text.strip():
            return []
        if not self.has_keyword_index():  # health.check reports it; the next run rebuilds
            return []
        query = table.search(query_text, query_type="fts", fts_columns=KEYWORD_COLUMN)
        if paths is not None:
            query = query.where(paths_filter(paths), prefilter=True)
        return query.select(columns).limit(limit).to_list()

    def size_bytes(self) -> int:
        return folder_size(self.db_dir)
