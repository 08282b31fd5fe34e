"""Create and update a workspace's index (reference §4.2 with seek.md §4).

A run: take the writer lock -> decide whether the stored index can be updated or must be
rebuilt (model, dimensions, chunk settings, format) -> scan -> forget deleted files ->
for each file whose size or mtime changed: read, sniff for binary, compare SHA-1, chunk,
window -> every few files (``EMBED_STEP_FILES``) embed the pending windows on a second
thread -> once ``flush_every_files`` files or ``WRITE_ROWS`` rows are embedded (or the
oldest waited ``WRITE_AFTER_S``), replace those files' rows and save the manifest -> build
the keyword index, and compact unless the run created the table.

Stamps are saved only after their rows are written, and ``runOpen`` marks a run in progress,
so a process killed at any instant leaves an index that the next run repairs without
re-embedding the files already stamped.

A rebuild of an existing index never touches it: the new rows go to a new table, described
by ``manifest.next.json`` while they are written, and ``manifest.json`` is switched to it
(one atomic rename) only when the table is complete, keyword index included. Searches keep
reading the last complete index meanwhile. A rebuild that is killed or cancelled leaves the
old index in place; its half-built table is dropped by the next run. So is every table a
rebuild replaced, once ``RETIRED_GRACE_S`` have passed (a search that opened it has finished).

Each run first checks that the stored table agrees with the manifest
(:func:`seek.store.health.check`): a damaged index (a deleted table, a truncated data file, a
missing keyword index) is rebuilt with the reason ``index damaged: ...``.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from threading import Event

from seek.embed import Embedder, model_id_for, task_prefixes
from seek.errors import IndexMismatchError
from seek.index.embed_steps import DimensionsChanged, EmbedSteps
from seek.index.graph_rows import file_facts
from seek.index.pending import Pending
from seek.index.progress_file import ProgressFile
from seek.index.report import REBUILD, UPDATE, IndexReport, Progress
from seek.index.room import check_room, estimate_bytes
from seek.index.root import resolve_workspace
from seek.index.rules import chunking_spec, damage_reason, is_stale, rebuild_reason
from seek.index.stages import FileSpec
from seek.index.written import WrittenRows
from seek.retrieve.search_cache import refresh_search_cache
from seek.scan import ScannedFile, scan_workspace
from seek.scan.beneath import read_beneath
from seek.scan.walk import UNREADABLE, check_file
from seek.settings import Settings
from seek.store import (
    LocalIndexStore,
    Manifest,
    index_dir_for,
    needs_keyword_index,
)
from seek.store.faults import as_unwritable
from seek.store.graph_table import GraphTable, graph_table_name
from seek.store.manifest import MANIFEST_NAME

log = logging.getLogger(__name__)

STAGING_NAME = "manifest.next.json"
RETIRED_GRACE_S = 120.0


def new_table_name() -> str:
    return f"chunks_{uuid.uuid4().hex[:12]}"


class Indexer(EmbedSteps):
    """One run over one workspace. Use :func:`index_workspace`."""

    def __init__(
        self,
        root: Path,
        settings: Settings,
        *,
        embedder: Embedder | None = None,
        progress: Callable[[Progress], None] | None = None,
        cancel: Event | None = None,
        verify_graph: bool = False,
    ) -> None:
        self.root = root
        self.verify_graph = verify_graph
        """Read the whole graph table to check it, even when it is the one the hit symbols'
        saved copy was derived from (a repair: a graph tool could not read it)."""
        self.settings = settings
        self.index_dir = index_dir_for(root, settings)
        self.embedder = embedder
        self.model_id = embedder.model_id if embedder is not None else model_id_for(settings)
        self.chunking = chunking_spec(settings)
        self.doc_prefix = task_prefixes(settings.model or self.model_id)[0]
        self.spec = FileSpec(
            self.chunking, settings.binary_sniff_bytes, self.doc_prefix, graph=True
        )
        self.progress = progress or (lambda event: None)
        self.cancel = cancel or Event()
        self.store = LocalIndexStore(self.index_dir)
        """Rows, manifest and writer lock (:class:`seek.store.IndexStore`)."""
        self.table = self.store.table()
        self.manifest_name = MANIFEST_NAME
        """Where this run saves its manifest: ``manifest.next.json`` while a rebuild fills a
        new table beside the current index."""
        self.fresh_table = False
        """This run created the table: nothing to compact at the end (see WRITE_ROWS)."""
        self._unwritten = Pending()
        """Embedded rows waiting for their write (touched by the writer thread only)."""
        self._unwritten_since = 0.0
        self._written: WrittenRows | None = None
        """The rows written to a table this run created (None otherwise), for its cache."""
        self._graph: GraphTable | None = None

    @property
    def graph(self) -> GraphTable:
        """The code graph's table that goes with the chunk table this run writes
        (:mod:`seek.store.graph_table`): written, removed and compacted with it."""
        name = graph_table_name(self.table.name)
        if self._graph is None or self._graph.name != name:
            self._graph = GraphTable(self.index_dir, name)
        return self._graph

    # -- the run ----------------------------------------------------------------
    def run(self, mode: str) -> IndexReport:
        started = time.perf_counter()
        with self._write_faults(), self.store.writer_lock(f"seek index {self.root}"):
            try:
                report = self._run(mode)
            except DimensionsChanged as exc:
                report = self._run(REBUILD, reason=str(exc))
            written, self._written = self._written, None
            built, self._built = self._built, None
            refresh_search_cache(self.index_dir, built or (written.columns() if written else None))
        report.seconds = time.perf_counter() - started
        return report

    @contextmanager
    def _write_faults(self) -> Iterator[None]:
        """A write fault anywhere in a run (the lock, the manifest, a LanceDB commit, the
        writer thread) ends it with one :class:`IndexUnwritableError` naming the cause and
        the folder. What the run saved stays: the stamps of written files, ``runOpen``,
        so the next run resumes where this one stopped (issue 31)."""
        try:
            yield
        except Exception as exc:
            error = as_unwritable(exc, self.index_dir)
            if error is None or error is exc:
                raise
            raise error from exc

    def _save(self, manifest: Manifest, name: str | None = None) -> None:
        """Every manifest this run writes goes through here (``name``: the current one, for a
        rebuild's switch)."""
        self.store.save_manifest(manifest, name or self.manifest_name)

    def _open_run(self, manifest: Manifest) -> None:
        """Mark the run open before the first row changes: a run that dies leaves the mark,
        and the next one removes rows no stamp accounts for."""
        manifest.run_open = True
        self._save(manifest)

    def _close_run(self, manifest: Manifest) -> None:
        self._finish_table(sum(stamp.chunks for stamp in manifest.files.values()))
        manifest.run_open = False

    def _finish_table(self, chunks: int) -> None:
        """The table's last step in a run. The keyword (BM25) index is built here and only
        here, and only for a table of ``chunks`` large enough to need one
        (:func:`seek.store.table.needs_keyword_index`: smaller ones are searched in memory).
        A table this run created got its rows in a few large writes and needs no compaction;
        a table updated in place is compacted, which also brings a keyword index up to date."""
        if needs_keyword_index(chunks):
            self.table.ensure_keyword_index()
        if not self.fresh_table:
            self.table.compact()
            self.graph.compact()

    def _collect_tables(self, manifest: Manifest) -> None:
        """Drop tables no reader can need: a killed rebuild's, and retired ones past the grace
        period (the manifest that names the current table is what readers open)."""
        (self.index_dir / STAGING_NAME).unlink(missing_ok=True)
        now = time.time() * 1000
        keep = {manifest.table} | {
            name for name, since in manifest.retired.items()
            if now - since < RETIRED_GRACE_S * 1000
        }  # fmt: skip
        keep |= {graph_table_name(name) for name in keep}
        for name in self.store.table(manifest.table).table_names():
            if name not in keep:
                self.store.table(name).drop()
        manifest.retired = {n: t for n, t in manifest.retired.items() if n in keep}

    def _run(self, mode: str, reason: str = "") -> IndexReport:
        report = IndexReport(self.root, self.index_dir, mode=mode)
        self.manifest_name = MANIFEST_NAME
        self.fresh_table = False
        self._written = None
        self._built = None
        manifest = self.store.load_manifest()
        self._collect_tables(manifest)
        self.table = self.store.table(manifest.table)
        if not reason and mode == REBUILD and manifest.has_index:
            reason = "rebuild requested"
        reason = (
            reason
            or rebuild_reason(manifest, self.model_id, self.chunking)
            or damage_reason(self.index_dir, manifest)
        )
        previous: Manifest | None = None
        if reason or not manifest.has_index:
            report.rebuild_reason = reason
            report.mode = REBUILD if reason else UPDATE
            if manifest.has_index:
                previous = manifest  # stays what searches read until the new table is done
                self.manifest_name = STAGING_NAME
            manifest = Manifest(
                model=self.model_id, chunking=self.chunking, table=new_table_name(),
                retired=dict(manifest.retired),
            )  # fmt: skip
            self.table = self.store.table(manifest.table)
            self.fresh_table = True
            self._written = WrittenRows(manifest.table)
            self._save(manifest)

        self.progress(Progress("scanning"))
        scan = scan_workspace(
            self.root,
            max_file_bytes=self.settings.max_file_bytes,
            ignored_globs=self.settings.ignored_globs,
            exclude_dirs=(self.index_dir,),
        )
        scanned = {f.rel: f for f in scan.files}
        removed = [path for path in manifest.files if path not in scanned]
        stale = [f for f in scan.files if is_stale(manifest.files.get(f.rel), f)]
        report.unchanged = len(scan.files) - len(stale)
        report.removed = len(removed)

        if not self.fresh_table:
            self._check_graph(manifest)
            self._backfill_graph(manifest)
        if removed or stale or manifest.run_open:
            # Before the first row: a disk too small is refused now, not found full halfway.
            needed = estimate_bytes(self.index_dir, previous or manifest, stale, manifest)
            check_room(self.index_dir, needed)
            interrupted = manifest.run_open
            self._open_run(manifest)
            if interrupted:
                self._drop_orphans(manifest, removed)
            self._remove(manifest, removed)
            report.forgotten = list(removed)
            self._embed_stale(manifest, stale, report)
            self.progress(Progress("finishing"))
            self._close_run(manifest)
        if manifest.has_index and not self.graph.exists():
            self.graph.create_empty()  # no source files: an empty graph, not a missing one

        read_skips = Counter(s.skip for s in manifest.files.values() if s.skip)
        skipped = Counter(scan.skipped)
        skipped.update(read_skips)
        skipped[UNREADABLE] += len(report.unreadable)
        manifest.skipped = {k: v for k, v in skipped.items() if v}
        examples = dict(scan.examples)
        if report.unreadable:
            examples[UNREADABLE] = (examples.get(UNREADABLE, []) + report.unreadable)[:5]
        manifest.skipped_examples = examples
        if not report.cancelled:
            manifest.updated_at = int(time.time() * 1000)
        if previous is None:
            self._save(manifest)
        elif not report.cancelled:  # the switch: one rename makes the new table current
            manifest.retired[previous.table] = int(time.time() * 1000)
            self._save(manifest, MANIFEST_NAME)
            (self.index_dir / STAGING_NAME).unlink(missing_ok=True)
        else:  # a cancelled rebuild keeps the old index; the next run drops its table
            (self.index_dir / STAGING_NAME).unlink(missing_ok=True)
            manifest = previous
            report.kept_previous = True
        report.skipped = dict(manifest.skipped)
        report.files = len(manifest.files)
        return report

    def run_paths(self, rels: list[str]) -> IndexReport:
        """Bring only these paths up to date (a save, a delete, a rename under ``seek watch``).

        Each path is judged as a full scan would: indexable files go through the same
        unchanged checks (a save without a change embeds nothing); files that vanished or
        became empty, too big, ignored or not allowlisted lose their rows; a path that was a
        folder forgets every file under it. Refuses when the index must be rebuilt first.
        """
        started = time.perf_counter()
        with self._write_faults(), self.store.writer_lock(f"seek watch {self.root}"):
            report = IndexReport(self.root, self.index_dir)
            self.manifest_name = MANIFEST_NAME
            manifest = self.store.load_manifest()
            self.table = self.store.table(manifest.table)
            reason = rebuild_reason(manifest, self.model_id, self.chunking) or damage_reason(
                self.index_dir, manifest
            )
            if reason or not manifest.has_index:
                raise IndexMismatchError(
                    f"updates stopped: {reason or 'there is no index yet'}; run `seek index`"
                )
            stale: list[ScannedFile] = []
            removed: set[str] = set()
            for rel in dict.fromkeys(rels):
                verdict = check_file(
                    self.root, rel, max_file_bytes=self.settings.max_file_bytes,
                    ignored_globs=self.settings.ignored_globs, exclude_dirs=(self.index_dir,),
                )  # fmt: skip
                if isinstance(verdict, ScannedFile):
                    if is_stale(manifest.files.get(rel), verdict):
                        stale.append(verdict)
                    else:
                        report.unchanged += 1
                    continue
                removed.update(p for p in manifest.files if p == rel or p.startswith(rel + "/"))
            report.removed = len(removed)
            self._backfill_graph(manifest)
            if removed or stale:
                check_room(self.index_dir, estimate_bytes(self.index_dir, manifest, stale))
                self._open_run(manifest)
                report.forgotten = sorted(removed)
                self._remove(manifest, report.forgotten)
                self._embed_stale(manifest, stale, report)
                self._close_run(manifest)
                self._save(manifest)
            report.files = len(manifest.files)
            refresh_search_cache(self.index_dir)
        report.seconds = time.perf_counter() - started
        return report

    # -- steps ------------------------------------------------------------------
    def _drop_orphans(self, manifest: Manifest, removed: list[str]) -> None:
        """Rows written by a run that died before saving their stamps."""
        orphans = sorted(self.table.stored_paths() - manifest.files.keys() - set(removed))
        if orphans:
            log.info("removing rows of %d files left by an interrupted run", len(orphans))
            self.table.delete_files(orphans)
        graph_orphans = sorted(self.graph.stored_paths() - manifest.files.keys() - set(removed))
        self.graph.delete_files(graph_orphans)

    def _remove(self, manifest: Manifest, removed: list[str]) -> None:
        if not removed:
            return
        with_rows = [p for p in removed if manifest.files[p].chunks]
        self.table.delete_files(with_rows)
        self.graph.delete_files(with_rows)
        for path in removed:
            del manifest.files[path]
        self._save(manifest)

    def _check_graph(self, manifest: Manifest) -> None:
        """A graph table that cannot be read is dropped, so that :meth:`_backfill_graph`
        makes it again from the files (the chunk table is left as it is). It is read only
        when its files are not those the hit symbols' saved copy was derived from (a
        no-change run then loads no LanceDB), or when the run is a graph tool's repair."""
        from seek.retrieve.symbols import graph_unchanged

        if not manifest.has_index or not self.graph.exists():
            return
        if not self.verify_graph and graph_unchanged(self.index_dir, manifest):
            return
        problem = self.graph.problem()
        if problem:
            log.warning("%s: made again from the files", problem)
            self.graph.drop()

    def _backfill_graph(self, manifest: Manifest) -> None:
        """An index stored before the code graph was gets it from the files as they are now,
        in one write (a run killed before it leaves no table, and the next run starts
        over); a file that changed since its stamp is written again by the run anyway."""
        if not manifest.has_index or self.graph.exists():
            return
        rows = []
        for rel, stamp in manifest.files.items():
            if not stamp.chunks:
                continue
            try:
                data = read_beneath(self.root, rel)
            except OSError:
                continue  # gone or unreadable: the run removes or reports it
            facts = file_facts(rel, data, self.root)
            if facts is not None:
                rows.append((rel, *facts))
        self.graph.replace_files([], rows)
        if not rows:
            self.graph.create_empty()


def index_workspace(
    path: Path | str,
    settings: Settings,
    *,
    mode: str = UPDATE,
    embedder: Embedder | None = None,
    progress: Callable[[Progress], None] | None = None,
    cancel: Event | None = None,
    verify_graph: bool = False,
) -> IndexReport:
    """Create or update the index of ``path``; ``mode`` is ``update`` or ``rebuild``;
    ``verify_graph``: read the whole code graph table (a graph tool could not) and make it
    again from the files when it cannot be read."""
    if mode not in (UPDATE, REBUILD):
        raise ValueError(f"mode must be {UPDATE!r} or {REBUILD!r}")
    root = resolve_workspace(path)
    with ProgressFile(index_dir_for(root, settings), progress) as published:
        indexer = Indexer(root, settings, embedder=embedder, progress=published, cancel=cancel,
                          verify_graph=verify_graph)  # fmt: skip
        return indexer.run(mode)


__all__ = [
    "IndexReport",
    "Indexer",
    "Progress",
    "index_workspace",
    "resolve_workspace",
]
