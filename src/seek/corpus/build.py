"""Index a corpus: its repositories' files fanned out as tasks, rows committed by a bounded
number of writers (issue 17, "Fan-out on Ray").

A run: take each selected repository's lock -> load its manifest (an empty one when the
model, chunk settings or format changed: the repository is re-indexed and its old rows
dropped) -> scan it -> after an interrupted run, drop rows of files without a stamp ->
delete rows of removed files -> cut the stale files of every repository into tasks of
``files_per_task`` files -> the runner (:mod:`.fanout`) runs :func:`.work.prepare_batch`
on each -> finished results are buffered and handed to ``writers`` writer threads once they
hold ``commit_rows`` rows -> a writer commits them (new files: one append; changed files:
one ``merge_insert``), then records their stamps in the manifests, saved at most every
``SAVE_EVERY_S`` -> at the end the table's indexes are refreshed (:meth:`CorpusTable.finish`)
and every manifest is saved with ``runOpen`` cleared.

The code graph (issue 28 deliver 1) goes the same way: each task returns its source files'
graph rows with their chunk rows, and a writer commits them to the corpus graph table
(:mod:`seek.store.corpus_graph`) after the chunk rows and before the stamps; removed
files, orphans and a rebuilt or removed repository lose their graph rows with their chunk
rows. A repository whose graph is not stored yet (indexed before the graph was, or under
another graph format) gets it from its stamped files at the start of its next run.

The links between repositories (issue 45: what each provides, what its files import from
outside it; :mod:`seek.corpus.links`) are written per repository at the end of a run, from
its committed graph rows, before its stamps are final: a repository whose files change
loses its links marker first, so a run stopped before the end leaves it unmarked and the
next run writes them again; one repository's change rewrites its own links only.

Nothing is lost or written twice when a worker dies: Ray re-runs its task and the driver
receives one result per task. When the driver itself dies, stamps saved are exactly the
rows committed before them; the rows committed after the last save belong to files without
a stamp (removed by the next run, then re-embedded) or with an older stamp (re-embedded and
replaced).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from seek.corpus.catalog import Catalog, RepoEntry
from seek.corpus.fanout import Runner
from seek.corpus.links import keep_current
from seek.corpus.location import CorpusError, CorpusLocation
from seek.corpus.provides import Provided, read_provides
from seek.corpus.work import BatchResult, prepare_batch
from seek.embed import model_id_for, task_prefixes
from seek.index.graph_rows import file_facts
from seek.index.rules import chunking_spec, is_stale, rebuild_reason
from seek.index.stages import FileSpec
from seek.scan import ScannedFile, scan_workspace
from seek.scan.beneath import read_beneath
from seek.settings import Settings
from seek.store.corpus_graph import CorpusGraph
from seek.store.corpus_links import CorpusLinks
from seek.store.corpus_table import CorpusTable
from seek.store.corpus_upkeep import ANN_MIN_ROWS
from seek.store.faults import as_unwritable
from seek.store.manifest import Manifest

log = logging.getLogger(__name__)

FILES_PER_TASK = 64
COMMIT_ROWS = 20_000
SAVE_EVERY_S = 5.0


@dataclass(slots=True)
class RepoReport:
    name: str
    files: int = 0
    embedded: int = 0
    chunks: int = 0
    rows: int = 0
    removed: int = 0
    unreadable: list[str] = field(default_factory=list)
    rebuild_reason: str = ""

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "files": self.files, "embedded": self.embedded,
                "chunks": self.chunks, "rows": self.rows, "removed": self.removed,
                "unreadable": self.unreadable, "rebuild_reason": self.rebuild_reason}  # fmt: skip


@dataclass(slots=True)
class CorpusReport:
    uri: str
    runner: str
    workers: int
    repos: list[RepoReport] = field(default_factory=list)
    seconds: float = 0.0
    tasks: int = 0

    @property
    def chunks(self) -> int:
        return sum(r.chunks for r in self.repos)

    def to_json(self) -> dict[str, object]:
        rate = self.chunks / self.seconds if self.seconds else 0.0
        return {"uri": self.uri, "runner": self.runner, "workers": self.workers,
                "tasks": self.tasks, "seconds": round(self.seconds, 2),
                "chunks": self.chunks, "chunks_per_s": round(rate, 1),
                "repos": [r.to_json() for r in self.repos]}  # fmt: skip


@dataclass(slots=True)
class _Repo:
    entry: RepoEntry
    root: Path
    manifest: Manifest
    report: RepoReport
    stale: list[ScannedFile]
    provided: list[Provided] | None = None
    """What it provides, read when its files changed or its links are missing (None: its
    links are current)."""
    dirty: bool = False


class CorpusIndexer:
    """One run over some repositories of a corpus."""

    def __init__(
        self,
        location: CorpusLocation,
        settings: Settings,
        runner: Runner,
        *,
        writers: int = 1,
        files_per_task: int = FILES_PER_TASK,
        commit_rows: int = COMMIT_ROWS,
        ann_min_rows: int = ANN_MIN_ROWS,
        task: Callable[..., BatchResult] = prepare_batch,
        folders: Sequence[str | Path] = (),
        rebuild: bool = False,
    ) -> None:
        self.location = location
        self.rebuild = rebuild
        """Drop both tables and index every repository again (``--rebuild``)."""
        self.settings = settings
        self.runner = runner
        self.writers = max(1, writers)
        self.files_per_task = max(1, files_per_task)
        self.commit_rows = max(1, commit_rows)
        self.ann_min_rows = ann_min_rows
        self.task = task
        """What each task runs (tests swap in one that kills its worker first)."""
        self.catalog = Catalog(location)
        self.folders = tuple(folders)
        """Folder sources this run's operator vouched for (``--folder``; see :mod:`.catalog`)."""
        self.table = CorpusTable(location)
        self.graph = CorpusGraph(self.table)
        self.links = CorpusLinks(self.table)
        self.model_id = model_id_for(settings)
        self.chunking = chunking_spec(settings)
        doc_prefix = task_prefixes(settings.model or self.model_id)[0]
        self.spec = FileSpec(self.chunking, settings.binary_sniff_bytes, doc_prefix, graph=True)
        self._manifests = threading.Lock()
        self._last_save: float | None = None
        """``time.monotonic()`` of this run's last stamp save; None until the first, which
        is never put off: the clock counts from boot, so "long enough since 0.0" would skip
        the saves of a run on a machine up for less than ``SAVE_EVERY_S`` (issue 42)."""

    def run(self, names: list[str] | tuple[str, ...] | None = None) -> CorpusReport:
        """Index ``names`` (all: None). A write fault in a local corpus folder (no space,
        read-only, quota, permission, I/O error) at any step - a lock, a manifest, a LanceDB
        commit in a writer thread - ends the run with one :class:`IndexUnwritableError`
        naming the cause and the folder (issue 31): the locks are released, the manifests
        keep ``runOpen`` and the stamps of rows committed, so the next run resumes."""
        try:
            return self._run(names)
        except Exception as exc:
            if self.location.is_s3:
                raise
            error = as_unwritable(exc, Path(self.location.uri))
            if error is None or error is exc:
                raise
            raise error from exc

    def _run(self, names: list[str] | tuple[str, ...] | None) -> CorpusReport:
        started = time.perf_counter()
        entries = self.catalog.select(names, self.folders)
        if not entries:
            raise CorpusError(f"the corpus {self.location.uri} has no repositories: "
                              "add one with `seek corpus add`")  # fmt: skip
        stored_model = self.catalog.model()
        if stored_model and stored_model != self.model_id:
            raise CorpusError(f"the corpus was embedded with {stored_model}, the settings name "
                              f"{self.model_id}: use the same model")  # fmt: skip
        if not stored_model:
            self.catalog.set_model(self.model_id)
        report = CorpusReport(self.location.uri, self.runner.name, self.runner.workers)
        with ExitStack() as stack:
            for entry in entries:  # every lock first: a held one stops the run before work
                stack.enter_context(self.location.lock(entry.name, "seek corpus index"))
            damage = self._check_tables(entries)
            repos = [self._prepare_repo(entry, damage) for entry in entries]
            report.repos = [r.report for r in repos]
            report.tasks = self._embed(repos)
            self.table.finish(self.ann_min_rows)
            self.graph.finish()
            for repo in repos:
                if repo.provided is not None:
                    keep_current(self.links, self.graph, repo.entry.name, repo.provided)
            self.links.finish()
            for repo in repos:
                repo.manifest.run_open = False
                repo.manifest.updated_at = int(time.time() * 1000)
                repo.report.files = len(repo.manifest.files)
                self.catalog.save_manifest(repo.entry.name, repo.manifest)
        report.seconds = time.perf_counter() - started
        return report

    def _check_tables(self, entries: list[RepoEntry]) -> str:
        """Read both tables whole before writing (seek.md §4: a damaged index is rebuilt, as
        a workspace's is), or drop them unread for ``--rebuild``. A graph table that cannot
        be read is dropped: every repository's graph is filled again from its stamped
        files, by this run or by its next, with nothing embedded again. A chunk table that
        cannot be read is dropped too, and every repository is indexed again (the reason
        returned); rows of the repositories a run leaves out would be lost with it, so only
        a run over all of them may do that."""
        uri = self.location.uri

        def everyone() -> bool:  # the catalog read again only when a table goes
            return {e.name for e in entries} == set(self.catalog.repos())

        if self.rebuild:  # not read first: the way to mend a table S3 cannot read
            if not everyone():
                raise CorpusError("a rebuild indexes every repository: run `seek corpus index "
                                  f"{uri} --rebuild` without naming repositories")  # fmt: skip
            self.table.drop()
            self.graph.drop()
            self.links.drop()
            return "rebuild requested"
        problem = self.graph.problem()
        if problem:
            log.warning("%s: dropped, each repository's graph is read again", problem)
            self.graph.drop()
        problem = self.links.problem()
        if problem:  # written again from the graph rows at the end of this run
            log.warning("%s: dropped, each repository's links are written again", problem)
            self.links.drop()
        problem = self.table.problem()
        if not problem:
            return ""
        if not everyone():
            raise CorpusError(f"{problem}: run `seek corpus index {uri}` without naming "
                              "repositories, which indexes all of them again")  # fmt: skip
        self.table.drop()
        self.graph.drop()
        self.links.drop()
        return f"corpus table damaged: {problem}"

    # -- per repository ------------------------------------------------------------------
    def _prepare_repo(self, entry: RepoEntry, damage: str = "") -> _Repo:
        """``damage``: the chunk table was dropped (:meth:`_check_tables`), this is why."""
        root = entry.checkout()
        manifest = self.catalog.load_manifest(entry.name)
        report = RepoReport(entry.name)
        reason = damage or rebuild_reason(manifest, self.model_id, self.chunking)
        if reason or not manifest.has_index:
            if reason or manifest.run_open:
                self.table.delete_repo(entry.name)  # rows of another model or a lost run
                self.graph.delete_repo(entry.name)
                self.links.delete_repo(entry.name)
            report.rebuild_reason = reason
            manifest = Manifest(model=self.model_id, chunking=self.chunking)
        scan = scan_workspace(root, max_file_bytes=self.settings.max_file_bytes,
                              ignored_globs=self.settings.ignored_globs)  # fmt: skip
        scanned = {f.rel: f for f in scan.files}
        removed = [p for p in manifest.files if p not in scanned]
        stale = [f for f in scan.files if is_stale(manifest.files.get(f.rel), f)]
        interrupted = manifest.run_open
        manifest.skipped = {k: v for k, v in scan.skipped.items() if v}
        if stale or removed:
            # Marked open before the first row changes: a run stopped by a write fault (or
            # killed) before this save leaves the corpus exactly as it was (issue 31).
            manifest.run_open = True
            self.catalog.save_manifest(entry.name, manifest)
            self.links.unmark(entry.name)  # written again at the end of the run
        if interrupted:  # rows written after the last save of an interrupted run
            orphans = self.table.stored_paths(entry.name) - manifest.files.keys()
            self.table.delete(entry.name, sorted(orphans - set(removed)))
            graph_orphans = self.graph.stored_paths(entry.name) - manifest.files.keys()
            self.graph.delete(entry.name, sorted(graph_orphans - set(removed)))
        with_rows = [p for p in removed if manifest.files[p].chunks]
        self.table.delete(entry.name, with_rows)
        self.graph.delete(entry.name, with_rows)
        for path in removed:
            del manifest.files[path]
        report.removed = len(removed)
        if not self.graph.has_graph(entry.name):
            self.links.unmark(entry.name)
            self._fill_graph(entry.name, root, manifest, scanned)
        provided = None  # read only where the links may change: cheap, but per repository
        if stale or removed or not self.links.has_links(entry.name):
            provided = read_provides(root, sorted(scanned))
        return _Repo(entry, root, manifest, report, stale, provided)

    def _fill_graph(
        self, name: str, root: Path, manifest: Manifest, scanned: dict[str, ScannedFile]
    ) -> None:
        """The graph of a repository that has none stored, from its stamped files as they are
        now (a new or rebuilt repository has none yet: its marker alone). A file changed
        since its stamp is stale, and this run replaces its row anyway. Only files this
        run's scan found are read: a manifest's paths are not trusted to stay in ``root``
        (another machine may write an S3 corpus's manifests)."""
        rows = []
        for rel, stamp in manifest.files.items():
            if not stamp.chunks or rel not in scanned:
                continue
            try:
                data = read_beneath(root, rel)
            except OSError:
                continue  # gone or unreadable: the run removes or reports it
            facts = file_facts(rel, data, root)
            if facts is not None:
                rows.append((rel, *facts))
        self.graph.fill(name, rows)

    def _tasks(self, repos: list[_Repo]) -> Iterator[tuple]:
        for repo in repos:
            files = [(f, repo.manifest.files.get(f.rel)) for f in repo.stale]
            for i in range(0, len(files), self.files_per_task):
                batch = files[i : i + self.files_per_task]
                yield (repo.entry.name, str(repo.root), batch, self.spec, self.settings,
                       self.model_id)  # fmt: skip

    # -- the fan-out and the writers -------------------------------------------------------
    def _embed(self, repos: list[_Repo]) -> int:
        by_name = {r.entry.name: r for r in repos}
        tasks = 0
        buffer: list[BatchResult] = []
        buffered = 0
        in_flight: list[Future[None]] = []
        with ThreadPoolExecutor(self.writers, thread_name_prefix="seek-corpus-writer") as pool:

            def hand_over(batch: list[BatchResult]) -> None:
                # At most ``writers`` commits queued behind the running ones (a memory bound).
                while len(in_flight) >= 2 * self.writers:
                    in_flight.pop(0).result()
                in_flight.append(pool.submit(self._commit, batch, by_name))

            results = self.runner.map_unordered(
                self.task, self._tasks(repos), in_flight=2 * self.runner.workers
            )
            for result in results:
                tasks += 1
                buffer.append(result)
                buffered += result.row_count
                if buffered >= self.commit_rows:
                    hand_over(buffer)
                    buffer, buffered = [], 0
            if buffer:
                hand_over(buffer)
            for future in in_flight:
                future.result()
        return tasks

    def _commit(self, batch: list[BatchResult], repos: dict[str, _Repo]) -> None:
        """Write a batch of task results (new files in one append, changed files in one
        merge per repository), then record their stamps."""
        self.table.commit([(r.repo, r.rows, r.had_rows) for r in batch])
        # the same files' graph rows, also before their stamps (see the module docstring)
        self.graph.commit([(r.repo, r.graph, r.had_rows) for r in batch])
        with self._manifests:
            for result in batch:
                repo = repos[result.repo]
                repo.manifest.files.update(result.refreshed)
                repo.manifest.files.update(result.stamps)
                if result.row_count:
                    dims = int(result.rows.schema.field("vector").type.list_size)
                    repo.manifest.dimensions = dims
                repo.report.embedded += sum(1 for s in result.stamps.values() if not s.skip)
                repo.report.chunks += result.chunk_count
                repo.report.rows += result.row_count
                repo.report.unreadable.extend(result.unreadable)
                repo.dirty = True
            now = time.monotonic()
            if self._last_save is None or now - self._last_save >= SAVE_EVERY_S:
                self._last_save = now
                for repo in repos.values():
                    if repo.dirty:
                        self.catalog.save_manifest(repo.entry.name, repo.manifest)
                        repo.dirty = False


def remove_repos(location: CorpusLocation, names: Sequence[str]) -> None:
    """``seek corpus remove``: each repository's entry, rows (chunks and graph) and manifest,
    under its lock."""
    catalog = Catalog(location)
    for name in names:
        with location.lock(name, "seek corpus remove"):
            catalog.remove(name)
            table = CorpusTable(location)
            table.delete_repo(name)
            CorpusGraph(table).delete_repo(name)
            CorpusLinks(table).delete_repo(name)
            catalog.delete_manifest(name)
