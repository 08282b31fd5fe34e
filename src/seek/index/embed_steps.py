"""The embedding half of an index run (:mod:`seek.index.indexer`): files chunked on the run's
thread are handed, a step at a time, to a writer thread that embeds them and writes the rows
(tokenizing and LanceDB writes release the GIL, so both cores work); only the writer touches
the manifest's stamps, and a stamp is saved only after its rows are written.

A mixin of :class:`seek.index.indexer.Indexer` rather than a class of its own: the steps share
the run's table, manifest saves, progress and cancel flag, which the run owns.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from threading import Event

import numpy as np

from seek.chunk import PARSE
from seek.embed import Embedder, make_embedder
from seek.errors import EmbeddingError
from seek.index.graph_worker import GraphWorker, usable
from seek.index.pending import Pending
from seek.index.report import IndexReport, Progress
from seek.index.rules import is_resized
from seek.index.stages import (
    FileSpec,
    Prepared,
    Source,
    prepare_file,
    prepare_source,
    read_source,
    wants_syntax,
)
from seek.index.written import WrittenRows
from seek.retrieve.search_cache import BuiltRows, build_written
from seek.scan import ScannedFile
from seek.settings import Settings
from seek.store import ChunkTable, Manifest
from seek.store.graph_table import GraphTable
from seek.store.memory import release_free_memory
from seek.untrusted import printable

log = logging.getLogger("seek.index.indexer")

EMBED_STEP_FILES = 25
EMBED_STEP_ROWS = 1024
"""A step of the pipeline: files chunked on the run's thread are handed to the writer thread
to be embedded once this many files or rows wait (or ``flush_every_files``, when smaller),
so embedding starts early and overlaps the chunking of the next files."""
READ_AHEAD_FILES = 8
"""With a graph worker, stale files are read and sent to it this many ahead of the one this
thread chunks, so that it has parsed a file (and sent its syntax breaks) by the time the file
is chunked (:mod:`seek.index.graph_worker`)."""
WRITE_ROWS = 4096
"""Embedded rows wait in memory until ``flush_every_files`` files or this many rows (about
10 MB with 384 dimensions) are ready, then go to the table in one write, with one manifest
save. Each LanceDB write is a commit and a data file with a fixed cost (issue 14): a cold
index of a few thousand chunks is now one or two commits instead of one per 25 files, and
its table needs no compaction."""
WRITE_AFTER_S = 10.0
"""...or once the oldest of them has waited this long: with a slow embedding server, a
killed run still loses at most about this much embedding work."""


class DimensionsChanged(Exception):
    def __init__(self, old: int, new: int) -> None:
        super().__init__(f"vector dimensions changed ({old} -> {new})")


class EmbedSteps:
    """Chunk, embed and write the stale files of a run (see the module docstring)."""

    root: Path
    settings: Settings
    embedder: Embedder | None
    spec: FileSpec
    table: ChunkTable
    graph: GraphTable
    progress: Callable[[Progress], None]
    cancel: Event
    _unwritten: Pending
    _unwritten_since: float
    _written: WrittenRows | None
    _graph_worker: GraphWorker | None = None
    _built: BuiltRows | None = None
    """The search data of a created table's rows, built in the last write (see _write)."""

    def _save(self, manifest: Manifest, name: str | None = None) -> None:
        raise NotImplementedError  # the run's (Indexer._save)

    def _embed_stale(
        self, manifest: Manifest, stale: list[ScannedFile], report: IndexReport
    ) -> None:
        """Chunk, embed and write ``stale``; their graph facts are extracted on a forked
        worker where that can overlap (:mod:`seek.index.graph_worker`), forked here, before
        the writer thread exists, and ended however the run ends."""
        worker = None
        if self.spec.graph and usable(len(stale)):
            try:
                worker = GraphWorker(self.root, self.spec.chunking.max)
            except OSError as exc:  # no fork (process or memory limits): in-process then
                log.debug("no graph worker (%s); extracting in-process", exc)
        self._graph_worker = worker
        try:
            spec = replace(self.spec, graph_elsewhere=True) if worker else self.spec
            self._steps(manifest, stale, report, spec)
        finally:
            self._graph_worker = None
            if worker is not None:
                worker.close()

    def _steps(
        self, manifest: Manifest, stale: list[ScannedFile], report: IndexReport, spec: FileSpec
    ) -> None:
        """Chunk files on this thread while a writer thread embeds the previous step and
        writes what is embedded (tokenizing and LanceDB writes release the GIL, so both cores
        work). At most one step is in flight, and only the writer touches the manifest's
        stamps (this thread's last write comes after the writer is done)."""
        step_files = min(EMBED_STEP_FILES, self.settings.flush_every_files)
        self._unwritten = Pending()
        pending = Pending()
        total = len(stale)
        done = 0
        recent: list[str] = []
        in_flight: Future[None] | None = None
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="seek-writer") as writer:
            if any(is_resized(manifest.files.get(f.rel), f) for f in stale):
                in_flight = writer.submit(self._get_ready)  # while this thread chunks
            try:
                for done, (scanned, read) in enumerate(self._ahead(manifest, stale, spec)):
                    if self.cancel.is_set():
                        report.cancelled = True
                        break
                    recent = (recent + [scanned.rel])[-3:]
                    self.progress(Progress("embedding", done, total, tuple(recent), report.chunks))
                    self._prepare(manifest, scanned, pending, report, spec, read)
                    if len(pending) >= step_files or len(pending.texts) >= EMBED_STEP_ROWS:
                        if in_flight is not None:
                            in_flight.result()
                        in_flight = writer.submit(self._embed_step, manifest, pending, report)
                        pending = Pending()
                else:
                    done = total
            finally:
                # Files already chunked are kept even when the run stops early.
                if in_flight is not None:
                    in_flight.result()
        if len(pending):
            self._embed_step(manifest, pending, report)
        self._write(manifest, report, last=True)
        self.progress(Progress("embedding", done, total, chunks=report.chunks))

    def _get_ready(self) -> None:
        """On the writer thread, before its first step: load the embedding model and the
        table's libraries, so that a run's fixed start-up costs overlap the chunking of its
        first files (a small folder's run was otherwise chunk, then load, then embed). A
        failure is left to the step that needs the model or the table: it reports it."""
        try:
            if self.embedder is None:
                self.embedder = make_embedder(self.settings)
            getattr(self.embedder, "get_ready", lambda: None)()
            from seek.store.lance import native_module

            native_module()
        except Exception as exc:  # noqa: BLE001 - reported by the step that needs it
            log.debug("getting ready to embed and write failed: %s", exc)

    def _ahead(
        self, manifest: Manifest, stale: list[ScannedFile], spec: FileSpec
    ) -> Iterator[tuple[ScannedFile, Prepared | Source | None]]:
        """Each stale file with what :func:`seek.index.stages.read_source` read of it, read
        :data:`READ_AHEAD_FILES` ahead and sent to the graph worker to parse while this thread
        chunks the files before it (``None`` without a worker: the file is prepared whole)."""
        worker = self._graph_worker
        if worker is None:
            yield from ((scanned, None) for scanned in stale)
            return
        window: deque[tuple[ScannedFile, Prepared | Source]] = deque()
        files = iter(stale)
        while True:
            while len(window) <= READ_AHEAD_FILES:
                scanned = next(files, None)
                if scanned is None:
                    break
                # (a stamp the writer updates meanwhile is another file's: one done before)
                read = read_source(self.root, scanned, manifest.files.get(scanned.rel))
                if isinstance(read, Source) and wants_syntax(scanned.rel, read.data, spec):
                    worker.submit(scanned.rel, read.data)
                window.append((scanned, read))
            if not window:
                return
            yield window.popleft()

    def _prepare(
        self,
        manifest: Manifest,
        scanned: ScannedFile,
        pending: Pending,
        report: IndexReport,
        spec: FileSpec,
        read: Prepared | Source | None = None,
    ) -> None:
        """One file through the pure stage (:func:`seek.index.stages.prepare_file`; ``read``:
        its first half, done ahead), then merged: its windows queued, or its stamp
        refreshed."""
        worker = self._graph_worker
        old = manifest.files.get(scanned.rel)
        if read is None:
            prepared = prepare_file(self.root, scanned, old, spec)
        elif isinstance(read, Prepared):
            prepared = read
        else:  # the worker's breaks, or PARSE (it was not sent, or the worker cannot say)
            breaks = worker.breaks(scanned.rel) if worker is not None else PARSE
            prepared = prepare_source(self.root, scanned, old, spec, read, breaks)
        rel = prepared.rel
        if prepared.stamp is None:
            log.warning("cannot read %s: %s", printable(rel), prepared.unreadable)
            report.unreadable.append(rel)
            return
        if prepared.unchanged:
            pending.refreshed[rel] = prepared.stamp
            report.unchanged += 1
            return
        pending.stamps[rel] = prepared.stamp
        if prepared.had_rows:
            pending.had_rows.append(rel)
        for number, start, end, part, content, keywords in prepared.rows:
            pending.rows.append_row(rel, number, start, end, part, content, keywords)
        pending.texts.extend(prepared.texts)
        if prepared.graph is not None:
            pending.graph.append((rel, *prepared.graph))
        if worker is None:
            return
        if prepared.graph_source is not None:
            # sent ahead (stages.wants_syntax); were that rule and the chunker's ever to part,
            # it is sent now, or the write would wait for rows that never come
            if not worker.sent(rel):
                worker.submit(rel, prepared.graph_source)
            pending.graph_elsewhere.append(rel)
        elif worker.sent(rel):
            worker.forget(rel)  # parsed there, but no chunks here: no facts are stored

    def _embed_step(self, manifest: Manifest, step: Pending, report: IndexReport) -> None:
        """Embed a step's windows; write once enough rows wait (see ``WRITE_ROWS``)."""
        if step.texts:
            vectors = self._embed(step.texts)
            dims = int(vectors.shape[1])
            if manifest.dimensions and manifest.dimensions != dims:
                raise DimensionsChanged(manifest.dimensions, dims)
            manifest.dimensions = dims
            step.vectors.append(vectors)
            step.texts = []
        if not len(self._unwritten):
            self._unwritten_since = time.monotonic()
        self._unwritten.absorb(step)
        unwritten = self._unwritten
        if (
            len(unwritten) >= self.settings.flush_every_files
            or len(unwritten.rows) >= WRITE_ROWS
            or time.monotonic() - self._unwritten_since >= WRITE_AFTER_S
        ):
            self._write(manifest, report)

    def _write(self, manifest: Manifest, report: IndexReport, last: bool = False) -> None:
        """Replace the rows of the embedded files waiting, then save their stamps (``last``:
        the run's last write)."""
        pending, self._unwritten = self._unwritten, Pending()
        if not len(pending):
            return
        rows = pending.rows
        if pending.vectors:
            rows.vectors = np.concatenate(pending.vectors)
        self.table.replace_files(pending.had_rows, rows)
        if self._written is not None and len(rows):  # a table this run created
            self._written.add(rows)
        worker = self._graph_worker
        if pending.graph_elsewhere and worker is not None:
            if last and self._written is not None and not worker.answered(pending.graph_elsewhere):
                # The worker is still extracting: the new table's search data is built
                # meanwhile, on this core, rather than after the run (its rows are final).
                self._built = build_written(self._written.columns())
            pending.graph.extend(worker.take(pending.graph_elsewhere))
        if last and worker is not None:
            worker.finish()  # it exits while the graph rows are written
        # The graph rows of the same files, also before their stamps (a killed run's are
        # removed or replaced by the next run, as its chunk rows are).
        self.graph.replace_files(pending.had_rows, pending.graph)
        if last and worker is not None:
            worker.close()  # its memory is let go before the search cache is built
        # A write's Arrow copy and LanceDB's buffers are freed into heaps that the next
        # step's allocations only partly reuse: handed back, a cold index of abseil-cpp
        # held ~60 MB less when its search cache began (a few ms a write; issue 14).
        release_free_memory()
        manifest.files.update(pending.refreshed)
        manifest.files.update(pending.stamps)
        self._save(manifest)
        for path, stamp in pending.stamps.items():
            if not stamp.skip:
                report.embedded += 1
                report.chunks += stamp.chunks
                report.updated.append(path)

    def _embed(self, texts: list[str]) -> np.ndarray:
        if self.embedder is None:
            self.embedder = make_embedder(self.settings)
        vectors = self.embedder.embed(texts)
        if vectors.shape[0] != len(texts):
            raise EmbeddingError(
                f"the embedder returned {vectors.shape[0]} vectors for {len(texts)} texts"
            )
        return vectors
