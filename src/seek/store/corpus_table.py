"""The corpus table: every repository's rows in one LanceDB table (issue 17, "Corpus";
design "A store addressed by URI": like every LanceDB user, it lives in ``store/``).

One row per embedding window, as in a workspace's table (:mod:`seek.store.table`), plus
``repo`` (the repository's name) and ``hash`` (the file's SHA-1, so a row says which version
of its file it came from). Writes, all atomic LanceDB commits:

- ``add``: rows of files that had none (one append);
- ``replace``: rows of files that had rows, swapped in one ``merge_insert`` commit (keyed by
  repo, path, chunk and part; the old rows the new version no longer has are deleted in the
  same commit), so a reader never sees a changed file half-written;
- ``delete``: rows of removed files.

A writer that dies between its commit and its manifest save leaves rows the manifest does
not describe; the next run of that repository removes rows of unstamped files
(:meth:`stored_paths`), so nothing is lost or kept twice.

``finish`` keeps the indexes (:mod:`seek.store.corpus_upkeep`: the table's maintenance, apart
from its rows).
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from seek.errors import CorpusError, SeekError
from seek.redact import one_line
from seek.store.corpus_upkeep import ANN_MIN_ROWS, build_vector_index, finish_indexes, index_names
from seek.store.event_loop import start, wait
from seek.store.table import in_batches, sql_quote

if TYPE_CHECKING:
    from seek.store.location import DatabaseLocation

log = logging.getLogger(__name__)

TABLE = "chunks"
KEY = ["repo", "path", "chunk", "part"]
INDEX_CACHE_BYTES = 512 << 20
METADATA_CACHE_BYTES = 64 << 20
NPROBES = 24
REFINE_FACTOR = 4
"""Bounds on LanceDB's caches for one search process: the IVF-PQ codes of 1M rows with 48
sub-vectors are 48 MB, the keyword index of 1M chunks ~400 MB on disk of which the queried
posting lists are cached. Memory then stays flat as the corpus grows."""


def arrow_rows(repo: str, columns: dict[str, list], vectors: np.ndarray) -> Any:
    """A pyarrow table in the corpus schema (``columns``: path, hash, chunk, start_line,
    end_line, part, content, keywords)."""
    import pyarrow as pa

    n = len(columns["path"])
    dims = vectors.shape[1] if vectors.ndim == 2 else 0
    flat = pa.array(vectors.astype(np.float32, copy=False).reshape(-1), pa.float32())
    return pa.table(
        {
            "repo": pa.array([repo] * n, pa.string()),
            "path": pa.array(columns["path"], pa.string()),
            "hash": pa.array(columns["hash"], pa.string()),
            "chunk": pa.array(columns["chunk"], pa.int32()),
            "start_line": pa.array(columns["start_line"], pa.int32()),
            "end_line": pa.array(columns["end_line"], pa.int32()),
            "part": pa.array(columns["part"], pa.int32()),
            "content": pa.array(columns["content"], pa.string()),
            "keywords": pa.array(columns["keywords"], pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(flat, dims),
        }
    )


def repo_filter(repos: Iterable[str]) -> str:
    names = list(repos)
    if len(names) == 1:
        return f"repo = {sql_quote(names[0])}"
    return "repo IN (" + ", ".join(sql_quote(r) for r in names) + ")"


def files_filter(repo: str, paths: Sequence[str]) -> str:
    return f"repo = {sql_quote(repo)} AND path IN (" + ", ".join(sql_quote(p) for p in paths) + ")"


def read_problem(chunks: CorpusTable, open_table: Callable[[], Any | None], column: str,
                 what: str) -> str:  # fmt: skip
    """ "" when the table ``open_table`` gives (None: there is none) reads whole, else
    ``what`` "cannot be read (...)" on one line: ``column`` of every row is read (LanceDB
    reports a damaged data file as many error types). On S3 a failure is the storage's one
    line (:class:`CorpusError`, raised), never damage: a bucket out of reach for a moment
    must not make a run drop the table."""
    try:
        with chunks._storage():
            table = open_table()
            rows = 0 if table is None else table.count_rows()
            if rows:
                table.search().select([column]).limit(rows).to_arrow()
    except SeekError:
        raise
    except Exception as exc:  # noqa: BLE001 - see above
        return chunks.unreadable(what, exc)
    return ""


def delete_files(table: Any | None, repo: str, paths: Sequence[str]) -> None:
    """Delete ``repo``'s rows of ``paths`` from an opened table of the corpus (its chunks or
    its graph; None: there is no table yet), in SQL lists of bounded size."""
    if table is None:
        return
    for batch in in_batches(paths):
        table.delete(files_filter(repo, batch))


def delete_repo(table: Any | None, repo: str) -> None:
    """Delete every row of ``repo`` from an opened table of the corpus (None: none yet)."""
    if table is not None:
        table.delete(repo_filter([repo]))


class CorpusTable:
    """The ``chunks`` table of a corpus, opened lazily (reading never creates it)."""

    def __init__(self, location: DatabaseLocation) -> None:
        self.location = location
        self._db: Any = None
        self._table: Any = None
        self._session: Any = None
        self._reader: Any = None

    @contextmanager
    def _storage(self) -> Iterator[None]:
        """LanceDB's failures to reach an S3 corpus (a missing bucket, an endpoint that
        refuses the connection, refused credentials) as one :class:`CorpusError` line naming
        the corpus, credentials masked (:mod:`seek.redact`); LanceDB's own message is a Rust
        debug dump carrying the endpoint with its ``user:password@``."""
        try:
            yield
        except Exception as exc:
            if not self.location.is_s3 or isinstance(exc, SeekError):
                raise
            raise CorpusError(f"cannot open {self.location.db_uri}: {self._cause(exc)}") from None

    def _cause(self, exc: BaseException) -> str:
        text = str(exc)
        if "NoSuchBucket" in text or "bucket does not exist" in text.lower():
            return self.location.no_bucket()
        if "ConnectionRefused" in text or "tcp connect error" in text or "dns error" in text:
            return f"cannot reach {self.location.server()}"
        if "AccessDenied" in text or "InvalidAccessKeyId" in text or "Forbidden" in text:
            return self.location.access_denied()
        return one_line(text, 200, self.location.env)

    def unreadable(self, what: str, exc: BaseException) -> str:
        """``what`` "cannot be read (the cause)" on one line, the cause as :meth:`_cause` puts
        it: credentials masked (LanceDB's message can carry an endpoint's password)."""
        return f"{what} cannot be read ({self._cause(exc)})"

    def connect(self) -> Any:
        if self._db is None:
            from seek.store.lance import package

            lancedb = package()
            self._session = lancedb.Session(
                index_cache_size_bytes=INDEX_CACHE_BYTES,
                metadata_cache_size_bytes=METADATA_CACHE_BYTES,
            )
            if not self.location.is_s3:
                os.makedirs(self.location.db_uri, exist_ok=True)
            with self._storage():
                self._db = lancedb.connect(
                    self.location.db_uri,
                    storage_options=self.location.storage_options() or None,
                    session=self._session,
                )
        return self._db

    def open(self) -> Any | None:
        if self._table is None:
            db = self.connect()
            with self._storage():
                if TABLE in db.list_tables().tables:
                    self._table = db.open_table(TABLE)
        return self._table

    def refresh(self) -> None:
        """Read the latest committed version (a searcher calls this between queries)."""
        table = self.open()
        if table is not None:
            table.checkout_latest()
        if self._reader is not None:
            wait(self._reader.checkout_latest)

    def reader(self) -> Any:
        """The table's asynchronous handle, which every search query goes through.

        LanceDB's synchronous query builders are its asynchronous ones driven from its
        background event loop, one round trip per step (the table's schema alone three
        times a query); a question's three queries built on the asynchronous handle and
        run as one coroutine each cost 1.5-2 ms less apiece at 1M chunks, and the two
        retrievers' queries overlap on the store's loop (:mod:`seek.store.event_loop`)
        instead of on two blocked threads (docs/research/bench-rounds.md,
        "Scale, round four"). It shares
        the connection's session, so LanceDB's caches stay one set of bounded caches."""
        if self._reader is None:
            if self.open() is None:
                raise ValueError("the corpus has no table yet")
            from seek.store.lance import package

            lancedb = package()

            async def open_reader() -> Any:
                db = await lancedb.connect_async(
                    self.location.db_uri,
                    storage_options=self.location.storage_options() or None,
                    session=self._session,
                )
                return await db.open_table(TABLE)

            self._reader = wait(open_reader)
        return self._reader

    def count_rows(self, where: str | None = None) -> int:
        table = self.open()
        return 0 if table is None else int(table.count_rows(where))

    def problem(self) -> str:
        """What is wrong with the table ("" when nothing is, or when there is none): one
        column of every row is read, so a data file cut short or replaced shows, as a
        workspace's health check reads it (:func:`seek.store.health.read_check`)."""
        return read_problem(self, self.open, "part", "the corpus's chunk table")

    def drop(self, name: str = TABLE) -> None:
        """Drop the corpus's table ``name`` (a damaged one: before every repository is
        indexed again, or its graph read again)."""
        db = self.connect()
        with self._storage():
            if name in db.list_tables().tables:
                db.drop_table(name)
        if name == TABLE:
            self._table = self._reader = None

    # -- writing ---------------------------------------------------------------------
    def add(self, rows: Any) -> None:
        if not rows.num_rows:
            return
        table = self.open()
        if table is None:
            try:
                self._table = self.connect().create_table(TABLE, rows)
                return
            except (ValueError, OSError):  # another writer created it meanwhile
                table = self.open()
                if table is None:
                    raise
        table.add(rows)

    def replace(self, repo: str, paths: Sequence[str], rows: Any) -> None:
        """The rows of ``paths`` (files of ``repo`` that had rows) become ``rows``, in one
        commit per batch of paths."""
        table = self.open()
        if table is None:
            self.add(rows)
            return
        import pyarrow.compute as pc

        for batch in map(list, in_batches(paths)):
            mask = pc.is_in(rows.column("path"), value_set=_string_array(batch))
            (
                table.merge_insert(KEY)
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .when_not_matched_by_source_delete(files_filter(repo, batch))
                .execute(rows.filter(mask))
            )

    def commit(self, batches: Sequence[tuple[str, Any, Sequence[str]]]) -> None:
        """Write task results: ``(repo, rows or None, files that had rows before)`` each.
        New files' rows go in one append, changed files' rows in one merge per repository;
        a changed file that has no rows now loses its old ones."""
        import pyarrow as pa

        new_rows = []
        changed: dict[str, tuple[list[str], list[Any]]] = {}
        for repo, rows, had_rows in batches:
            had = set(had_rows)
            if had:
                paths, tables = changed.setdefault(repo, ([], []))
                paths.extend(had_rows)
                if rows is not None:
                    tables.append(rows)
            if rows is not None:
                keep = [p not in had for p in rows.column("path").to_pylist()] if had else None
                new_rows.append(rows.filter(pa.array(keep)) if keep is not None else rows)
        for repo, (paths, tables) in changed.items():
            rows = pa.concat_tables(tables) if tables else None
            if rows is None or not rows.num_rows:
                self.delete(repo, paths)
            else:
                self.replace(repo, paths, rows)
        if new_rows:
            self.add(pa.concat_tables(new_rows))

    def delete(self, repo: str, paths: Sequence[str]) -> None:
        delete_files(self.open(), repo, paths)

    def delete_repo(self, repo: str) -> None:
        delete_repo(self.open(), repo)

    def stored_paths(self, repo: str) -> set[str]:
        table = self.open()
        if table is None:
            return set()
        where = f"{repo_filter([repo])} AND part = 0"
        rows = table.count_rows(where)
        if not rows:
            return set()
        data = table.search().where(where).select(["path"]).limit(rows).to_arrow()
        return set(data.column("path").unique().to_pylist())

    # -- searching ----------------------------------------------------------------------
    def vector_files(
        self,
        q: np.ndarray,
        limit: int,
        where: str | None,
        exact: bool,
        nprobes: int = NPROBES,
        refine_factor: int | None = REFINE_FACTOR,
    ) -> Future[list[tuple[str, str]]]:
        """Started at once, a future of ``(repo, path)`` of the ``limit`` windows nearest
        ``q`` (cosine), best first: exact over the filtered rows, or the IVF-PQ index
        (``nprobes`` partitions) with ``refine_factor`` x the candidates re-scored exactly
        (None: ranked by their PQ codes alone)."""
        query = self.reader().query().nearest_to(q).column("vector").distance_type("cosine")
        if exact:
            query = query.bypass_vector_index()
        else:
            query = query.nprobes(nprobes)
            if refine_factor is not None:
                query = query.refine_factor(refine_factor)
        if where:
            query = query.where(where)  # a prefilter: the query's rows are the filter's
        query = query.select(["repo", "path", "_distance"]).limit(limit)
        return start(lambda: _tuples(query, ("repo", "path")))

    def keyword_hits(
        self, words: str, limit: int, where: str | None
    ) -> Future[list[tuple[str, str, int, float]]]:
        """Started at once, a future of ``(repo, path, chunk, BM25 score)`` of the best
        keyword matches."""
        if not words or self.open() is None:
            done: Future[list[tuple[str, str, int, float]]] = Future()
            done.set_result([])
            return done
        query = self.reader().query().nearest_to_text(words, columns="keywords")
        if where:
            query = query.where(where)
        query = query.select(["repo", "path", "chunk", "_score"]).limit(limit)
        return start(lambda: _tuples(query, ("repo", "path", "chunk", "_score")))

    def fetch_files(
        self, files: Sequence[tuple[str, str]], meanwhile: Callable[[], object] | None = None
    ) -> dict[str, Any]:
        """Every row of these ``(repo, path)`` files, as :meth:`ChunkTable.load_all` returns
        them plus ``repo``, less ``keywords`` (a pool's keyword scores come from the
        full-text index) and the text of windows after a chunk's first (None).
        ``meanwhile`` runs on this thread while LanceDB reads them."""
        repos = sorted({repo for repo, _ in files})
        paths = sorted({path for _, path in files})
        # One repository: its files. Several: every asked path in every asked repository
        # (both scalar indexes serve it), the other pairs dropped here: half the CPU of an
        # OR of one clause per repository on the 1M-chunk corpus
        # (docs/research/bench-rounds.md, "Scale").
        where = f"{repo_filter(repos)} AND path IN ({', '.join(sql_quote(p) for p in paths)})"
        columns = ["repo", "path", "chunk", "start_line", "end_line", "part", "content",
                   "vector"]  # fmt: skip
        reading = start(self.reader().query().where(where).select(columns).to_arrow)
        if meanwhile is not None:
            try:
                meanwhile()
            except BaseException:
                reading.cancel()
                raise
        rows = reading.result()
        data = {name: rows.column(name).to_pylist() for name in columns[:-2]}
        # Only a chunk's first window carries the text a pool reads (SearchData.from_rows).
        texts = rows.column("content").to_pylist()
        data["content"] = [t if p == 0 else None for t, p in zip(texts, data["part"], strict=True)]
        vectors = rows.column("vector").combine_chunks()
        dims = vectors.type.list_size
        flat = vectors.values.to_numpy(zero_copy_only=False)
        data["vectors"] = flat.reshape(-1, dims) if dims else np.zeros((0, 0), np.float32)
        if len(repos) > 1:  # the asked pairs only (0.4 ms less than the same in Arrow)
            wanted = set(files)
            keep = [pair in wanted for pair in zip(data["repo"], data["path"], strict=True)]
            if not all(keep):
                for name in columns[:-1]:
                    data[name] = list(itertools.compress(data[name], keep))
                data["vectors"] = data["vectors"][np.array(keep, dtype=bool)]
        return data

    # -- indexes: kept by seek.store.corpus_upkeep -------------------------------------
    def index_names(self) -> dict[str, str]:
        """Indexed column -> index type."""
        return index_names(self.open())

    def finish(self, ann_min_rows: int = ANN_MIN_ROWS, compact: bool = True) -> None:
        """Indexes cover every row; compact what the run wrote (:func:`finish_indexes`)."""
        table = self.open()
        if table is not None:
            finish_indexes(table, ann_min_rows, compact)

    def build_vector_index(self, rows: int) -> None:
        build_vector_index(self.open(), rows)

    def has_vector_index(self) -> bool:
        return "vector" in self.index_names()


async def _tuples(query: Any, columns: Sequence[str]) -> list[tuple[Any, ...]]:
    """The query's rows as tuples of these columns, in its order."""
    rows = await query.to_arrow()
    return list(zip(*(rows.column(c).to_pylist() for c in columns), strict=True))


def _string_array(values: list[str]) -> Any:
    import pyarrow as pa

    return pa.array(values, pa.string())
