"""The facade every front-end calls (design "One service facade for every front-end").

The CLI, ``seek ask``, the MCP server, the HTTP API and the page all search, gather
context, find related code, report status, index and watch through this module, so one query
gets the same hits, notes and ``calibrated`` flag wherever it comes from
(``tests/test_boundaries.py`` holds them to it). What lives here and nowhere else:

- **freshness**: a one-shot call (CLI, library) brings the index up to date first; a
  long-running server keeps its searchers in :class:`seek.workspace.live.LiveIndexes` and
  refreshes at most once per ``FRESHNESS_S``; when the index folder cannot be written (a full
  disk, a read-only folder: issue 31), the answer comes from the last complete index with a note
  that it is stale, and a server tries the update again later (:mod:`seek.workspace.live`);
- **team merge**: with ``team_url`` set, the team server is asked in parallel and its hits
  follow the local ones (:mod:`seek.workspace.team`);
- **one searcher path**: every search, context and related call gets its searcher from
  :meth:`Workspaces.searcher` and, when the index turns out damaged (a table gone, a data
  file cut short), repairs it (an index run, which rebuilds a damaged table) and asks once
  more, with a note (:meth:`Workspaces._answer`); the query is checked once, here;
- **one index entry point**, :meth:`Workspaces.index` (progress callback and cancel), one
  run at a time per workspace (a second one gets :class:`IndexLockedError` at once), and
  one status, :meth:`Workspaces.status` (the workspace's trust state included);
- **JSON**: ``SearchResult.to_json``, ``ContextResult.to_json``, ``IndexReport.to_json`` and
  ``WorkspaceStatus.to_json`` are the one schema every front-end prints.

Which folders a caller may name stays with the front-end (MCP: inside the client's roots;
HTTP: exactly one of the served workspaces); it passes the resolved root here.
:mod:`seek.retrieve` stays pure: it searches a loaded index and knows nothing of indexing or
the network.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seek.errors import DamagedIndexError, IndexLockedError, IndexUnwritableError
from seek.index.report import REBUILD, UPDATE
from seek.index.root import resolve_workspace as resolve_workspace
from seek.retrieve.scope import EVERYTHING, Scope
from seek.retrieve.types import SearchResult
from seek.settings import Settings, load_settings
from seek.untrusted import check_query
from seek.workspace.change_tools import ChangeTools
from seek.workspace.graph_tools import GraphTools
from seek.workspace.test_tools import TestTools

# What one command does not need loads when used: a `seek search` process imports neither
# the servers' caches, the team client (httpx), the context builder nor the status module.
if TYPE_CHECKING:
    from seek.index.report import IndexReport, Progress
    from seek.index.status import WorkspaceStatus
    from seek.index.watch import Watcher
    from seek.retrieve import Searcher
    from seek.retrieve.context import ContextResult
    from seek.workspace.code_graph import GraphResult, Lookup
    from seek.workspace.stored_graph import GraphCache

__all__ = [
    "Workspaces", "context", "index", "related", "resolve_workspace", "search", "status",
    "watcher",
]  # fmt: skip


class Workspaces(GraphTools, ChangeTools, TestTools):
    """Workspaces served by one process: settings per root (with the front-end's overrides),
    and, for a long-running server (``live=True``), searchers kept between calls. A process
    holds one: ``seek ui``'s page and API share it, and so their searchers."""

    def __init__(
        self,
        overrides: dict[str, object] | None = None,
        *,
        live: bool = True,
        settings: Settings | None = None,
    ) -> None:
        self.overrides = dict(overrides or {})
        self.fixed = settings
        """Settings for every root (a library caller's, as given) instead of loading them."""
        if live:
            from seek.workspace.live import LiveIndexes

            self.live: LiveIndexes | None = LiveIndexes()
        else:
            self.live = None
        self._guard = threading.Lock()
        self._runs: dict[Path, threading.Lock] = {}
        self._graphs: GraphCache | None = None  # a server's code graphs (made when first asked)

    def settings(self, root: Path | None) -> Settings:
        if self.fixed is not None:
            return self.fixed
        return load_settings(root, overrides=self.overrides)

    # -- searching -----------------------------------------------------------------------

    def searcher(
        self, root: Path, settings: Settings, *, update: bool = True
    ) -> tuple[Searcher, list[str]]:
        """A searcher over an up-to-date index (``update=False``: the index as it stands),
        and notes for the caller's result: a server's kept one, else one opened now."""
        if self.live is not None:
            return self.live.searcher(root, settings, update=update)
        from seek.index.refresh import refresh_before_search
        from seek.retrieve.searcher import Searcher

        notes = refresh_before_search(root, settings) if update else []
        return Searcher.open(root, settings), notes

    def _answer(
        self,
        root: Path,
        settings: Settings,
        ask: Callable[[Searcher], SearchResult],
        update: bool = True,
    ) -> SearchResult:
        """``ask`` a searcher; when the index turns out damaged (its table deleted or cut
        short under a search cache that still opens), repair it and ask once more. The
        repair is an index run, which checks the table and rebuilds a damaged one (a note
        says so); it also picks up a rebuild that switched tables since a server loaded its
        searcher. Without ``update`` nothing is written: the searcher is only read again."""
        try:
            searcher, notes = self.searcher(root, settings, update=update)
            return ask(searcher).with_notes_first(notes)
        except DamagedIndexError:
            if not update:  # nothing may be written: only read the index again
                notes = []
                if self.live is not None:
                    self.live.forget(root)
            elif self.live is not None:  # under the server's lock, retry times and faults
                notes = self.live.repair(root, settings)
            else:
                from seek.index.refresh import refresh_before_search

                notes = refresh_before_search(root, settings, repair=True)
            searcher, more = self.searcher(root, settings, update=False)
            return ask(searcher).with_notes_first(notes + more)

    def search(
        self,
        root: Path,
        query: str,
        k: int = 10,
        focus: tuple[str, ...] = (),
        *,
        settings: Settings | None = None,
        update: bool = True,
        rerank: bool = True,
        scope: Scope = EVERYTHING,
        team: bool = True,
    ) -> SearchResult:
        """Ranked hits for ``query``, the team's after them (a note when it failed);
        ``team=False`` for a search a team client asked (no loops)."""
        check_query(query)  # before any work: a query that is not text fails in one line
        settings = settings or self.settings(root)
        pending = None
        if team and settings.team_url:
            from seek.workspace.team import start_team_search

            pending = start_team_search(settings, query)  # runs in parallel
        from seek.retrieve.signals import LEARNED_RANKER

        disabled = frozenset() if rerank else frozenset({LEARNED_RANKER})
        result = self._answer(
            root,
            settings,
            lambda searcher: searcher.search(query, k, focus=focus, disabled=disabled, scope=scope),
            update,
        )
        if pending is None:
            return result
        from seek.workspace.team import with_team_hits

        return with_team_hits(result, pending)

    def related(self, root: Path, file: str, line: int, k: int = 10) -> SearchResult:
        """Chunks of other files most like the chunk at ``file:line`` (see
        :mod:`seek.retrieve.related`)."""
        from seek.retrieve.related import related as related_chunks

        return self._answer(
            root, self.settings(root), lambda searcher: related_chunks(searcher, file, line, k)
        )

    def context(
        self,
        root: Path,
        question: str,
        budget: int | None = None,
        *,
        snippets: int | None = None,
        threshold: float | None = None,
        settings: Settings | None = None,
        focus: tuple[str, ...] = (),
    ) -> ContextResult:
        """Labelled, budgeted prompt blocks answering ``question`` (see
        :mod:`seek.retrieve.context`)."""
        from seek.retrieve.context import build_context

        settings = settings or self.settings(root)
        found = self._context_search(root, question, settings, focus)
        return build_context(
            root, found, settings, budget=budget, snippets=snippets, threshold=threshold
        )

    def found_and_context(self, root: Path, question: str) -> tuple[SearchResult, ContextResult]:
        """The page's search: the hits a context is built from, and the context (the
        settings' limits), so each hit can show the wider block the context kept."""
        from seek.retrieve.context import build_context

        settings = self.settings(root)
        found = self._context_search(root, question, settings)
        return found, build_context(root, found, settings)

    def _context_search(
        self, root: Path, question: str, settings: Settings, focus: tuple[str, ...] = ()
    ) -> SearchResult:
        return self.search(root, question, settings.rerank_top, focus, settings=settings)

    # -- the code graph (seek.md §2 `seek def/refs/...`; its tools: seek.workspace.graph_tools,
    # change_tools, test_tools): the one way they read it, and the one repair -----------------
    def _lookup(self, root: Path, update: bool = True) -> Lookup:
        """The graph stored with ``root``'s index, brought up to date as a search's would be
        (``update=False``: as it stands)."""
        from seek.workspace.code_graph import Lookup
        from seek.workspace.stored_graph import GraphCache, graph_for

        settings = self.settings(root)
        if self.live is not None:
            notes = self.live.refresh(root, settings) if update else []
            with self._guard:
                self._graphs = self._graphs or GraphCache()
            return Lookup(root, graph_for(root, settings, self._graphs, notes), notes)
        from seek.index.refresh import refresh_before_search

        notes = refresh_before_search(root, settings) if update else []
        return Lookup(root, graph_for(root, settings, None, notes), notes)

    def _graph_answer(self, root: Path, answer: Callable[[bool], GraphResult]) -> GraphResult:
        """``answer(update)``; when the stored graph turns out damaged (a data file cut
        short or replaced), repair the index and answer once more, as a search does
        (:meth:`_answer`). The repair is an index run that reads the graph table and makes a
        damaged one again from the files; a graph still unreadable is one line
        (:class:`DamagedIndexError`)."""
        from dataclasses import replace

        from seek.workspace.code_graph import GRAPH_REPAIRED

        try:
            return answer(True)
        except DamagedIndexError:
            settings = self.settings(root)
            if self.live is not None:  # under the server's lock, retry times and faults
                notes = self.live.repair(root, settings)
            else:
                from seek.index.refresh import refresh_before_search

                notes = refresh_before_search(root, settings, repair=True)
            found = answer(False)
            return replace(found, notes=(*notes, GRAPH_REPAIRED, *found.notes))

    # -- status and index runs -------------------------------------------------------------

    def status(self, root: Path) -> WorkspaceStatus:
        """What the index holds, whether it fits the settings, the trust state of the
        workspace's settings file, and (a server's) why updates fail."""
        from seek.index.status import workspace_status

        status = workspace_status(root, self.settings(root))
        fault = self.live.fault(root) if self.live is not None else None
        if fault is not None:  # a server's failed updates: why, and when it tries again
            status.stale = str(fault.error)
            status.update_fault = fault.to_json()
        return status

    def status_json(self, root: Path) -> dict[str, Any]:
        """:meth:`status` as every front-end prints it (docs/commands.md, status)."""
        return self.status(root).to_json()

    def writer(self, root: Path) -> dict[str, Any] | None:
        """The run writing ``root``'s index now, whoever started it (None: none): its
        ``writer`` and the progress it publishes, else the files and chunks its manifest
        holds so far. The lock is probed first (cheap: a page asks once a second)."""
        from seek.index.progress_file import read_progress
        from seek.store import describe_holder, index_dir_for, is_locked

        index_dir = index_dir_for(root, self.settings(root))
        if not is_locked(index_dir):
            return None
        published = read_progress(index_dir)
        if published is not None:
            fields = ("phase", "done", "total", "current", "chunks", "elapsed")
            return {"writer": describe_holder(index_dir), **{k: published[k] for k in fields}}
        status = self.status(root)
        if not status.writer:
            return None
        return {"writer": status.writer, "files": status.files, "indexed_chunks": status.chunks}

    def index(
        self,
        root: Path,
        rebuild: bool = False,
        *,
        progress: Callable[[Progress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> IndexReport:
        """Create or update ``root``'s index: the one entry point of every front-end (the
        CLI's progress bar, ``POST /v1/index``, the page's runs). ``progress`` gets each
        event; setting ``cancel`` stops the run after the files in hand. One run at a time
        per workspace: a second caller gets :class:`IndexLockedError` at once (a queue of
        rebuilds would only hold clients until their time limit)."""
        with self._guard:
            lock = self._runs.setdefault(root, threading.Lock())
        from seek.index.indexer import index_workspace

        if not lock.acquire(blocking=False):
            raise IndexLockedError("an index run of this workspace is in progress; try later")
        try:
            report = index_workspace(
                root, self.settings(root), mode=REBUILD if rebuild else UPDATE,
                progress=progress, cancel=cancel,
            )  # fmt: skip
        except IndexUnwritableError as exc:
            if self.live is not None:
                self.live.failed(root, exc)
            raise
        finally:
            lock.release()
        if self.live is not None:
            self.live.succeeded(root)
        return report

    def watcher(self, root: Path, echo: Callable[[str], None]) -> Watcher:
        """``seek watch``'s loop over ``root``: index, then follow every change."""
        from seek.index.watch import Watcher

        return Watcher(root, self.settings(root), echo=echo)


def _one_shot(settings: Settings) -> Workspaces:
    return Workspaces(live=False, settings=settings)


def search(
    path: Path | str,
    query: str,
    settings: Settings,
    *,
    k: int = 10,
    focus: tuple[str, ...] = (),
    update: bool = True,
    rerank: bool = True,
    scope: Scope = EVERYTHING,
) -> SearchResult:
    """Search a workspace, first bringing its index up to date (cheap when nothing changed).

    ``rerank=False`` keeps the fused order (no learned ranker); ``scope`` limits the files
    hits come from (see :mod:`seek.retrieve.scope`). When another process is writing the
    index, the search uses the index as it stands and says so in the notes. With
    ``team_url`` set, the team server's hits follow the local ones (see :mod:`seek.workspace.team`).
    """
    return _one_shot(settings).search(
        resolve_workspace(path), query, k, focus, settings=settings, update=update,
        rerank=rerank, scope=scope,
    )  # fmt: skip


def related(
    path: Path | str, file: str, line: int, settings: Settings, *, k: int = 10
) -> SearchResult:
    """The chunks of other files most like the chunk at ``file:line`` (workspace-relative
    ``file``, 1-based ``line``), after bringing the index up to date."""
    return _one_shot(settings).related(resolve_workspace(path), file, line, k)


def context(
    path: Path | str,
    question: str,
    settings: Settings,
    *,
    budget: int | None = None,
    snippets: int | None = None,
    threshold: float | None = None,
    focus: tuple[str, ...] = (),
) -> ContextResult:
    """Labelled, budgeted prompt blocks answering ``question``, after bringing the index up
    to date."""
    return _one_shot(settings).context(
        resolve_workspace(path), question, budget, snippets=snippets, threshold=threshold,
        settings=settings, focus=focus,
    )  # fmt: skip


def index(
    path: Path | str,
    settings: Settings,
    *,
    rebuild: bool = False,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> IndexReport:
    """Create or update the index of ``path`` (see :meth:`Workspaces.index`)."""
    return _one_shot(settings).index(
        resolve_workspace(path), rebuild, progress=progress, cancel=cancel
    )


def status(path: Path | str, settings: Settings) -> WorkspaceStatus:
    """What the index of ``path`` holds (see :meth:`Workspaces.status`)."""
    return _one_shot(settings).status(resolve_workspace(path))


def watcher(path: Path | str, settings: Settings, echo: Callable[[str], None]) -> Watcher:
    """``seek watch``'s loop over ``path`` (see :meth:`Workspaces.watcher`)."""
    return _one_shot(settings).watcher(resolve_workspace(path), echo)
