"""The facade every front-end calls (design "One service facade for every front-end").

The CLI, ``seek ask``, the MCP server and the HTTP API all search, gather context, find
related code, report status and index through this module, so one query gets the same hits,
notes and ``calibrated`` flag wherever it comes from. What lives here and nowhere else:

- **freshness**: a one-shot call (CLI, library) brings the index up to date first; a
  long-running server keeps its searchers in :class:`seek.workspace.live.LiveIndexes` and
  refreshes at most once per ``FRESHNESS_S``; when the index folder cannot be written (a full
  disk, a read-only folder: issue 31), the answer comes from the last complete index with a note
  that it is stale, and a server tries the update again later (:mod:`seek.workspace.live`);
- **team merge**: with ``team_url`` set, the team server is asked in parallel and its hits
  follow the local ones (:mod:`seek.workspace.team`);
- **one index run at a time** per workspace for servers (a second one gets
  :class:`IndexLockedError` at once);
- **JSON**: ``SearchResult.to_json``, ``ContextResult.to_json``, ``IndexReport.to_json`` and
  ``WorkspaceStatus.to_json`` are the one schema every front-end prints.

Which folders a caller may name stays with the front-end (MCP: inside the client's roots;
HTTP: exactly one of the served workspaces); it passes the resolved root here.
:mod:`seek.retrieve` stays pure: it searches a loaded index and knows nothing of indexing or
the network.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seek.errors import IndexLockedError, IndexUnwritableError
from seek.index.report import REBUILD, UPDATE
from seek.index.root import resolve_workspace as resolve_workspace
from seek.retrieve.scope import EVERYTHING, Scope
from seek.retrieve.types import SearchResult
from seek.settings import Settings, load_settings
from seek.untrusted import check_query

# What one command does not need loads when used: a `seek search` process imports neither
# the servers' caches, the team client (httpx), the context builder nor the status module.
if TYPE_CHECKING:
    from seek.index.report import IndexReport
    from seek.index.status import WorkspaceStatus
    from seek.retrieve import Searcher
    from seek.retrieve.context import ContextResult
    from seek.workspace.code_graph import GraphCache, GraphResult, Lookup

__all__ = ["Workspaces", "context", "related", "resolve_workspace", "search"]


class Workspaces:
    """Workspaces served by one process: settings per root (with the front-end's overrides),
    and, for a long-running server (``live=True``), searchers kept between calls."""

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

    def searcher(self, root: Path, settings: Settings) -> tuple[Searcher, list[str]]:
        """A searcher over an up-to-date index, and notes for the caller's result."""
        if self.live is not None:
            return self.live.searcher(root, settings)
        from seek.index.indexer import refresh_before_search
        from seek.retrieve.searcher import Searcher

        notes = refresh_before_search(root, settings)
        return Searcher.open(root, settings), notes

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
        if self.live is not None and update and rerank and scope == EVERYTHING:
            result = self.live.search(root, settings, query, k, focus)
        else:
            from seek.index.indexer import refresh_before_search
            from seek.retrieve.searcher import Searcher

            if not update:
                notes = []
            elif self.live is not None:  # a server's retry times hold for these too
                notes = self.live.refresh(root, settings)
            else:
                notes = refresh_before_search(root, settings)
            searcher = Searcher.open(root, settings)
            found = searcher.search(query, k, focus=focus, disabled=disabled, scope=scope)
            result = found.with_notes_first(notes)
        if pending is None:
            return result
        from seek.workspace.team import with_team_hits

        return with_team_hits(result, pending)

    def related(self, root: Path, file: str, line: int, k: int = 10) -> SearchResult:
        """Chunks of other files most like the chunk at ``file:line`` (see
        :mod:`seek.retrieve.related`)."""
        from seek.retrieve.related import related as related_chunks

        searcher, notes = self.searcher(root, self.settings(root))
        return related_chunks(searcher, file, line, k).with_notes_first(notes)

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
        settings = settings or self.settings(root)
        from seek.retrieve.context import build_context

        found = self.search(root, question, settings.rerank_top, focus, settings=settings)
        return build_context(
            root, found, settings, budget=budget, snippets=snippets, threshold=threshold
        )

    # -- the code graph (seek.md §2 `seek def/refs/...`; seek.workspace.code_graph) --------
    def _lookup(self, root: Path) -> Lookup:
        """The graph stored with ``root``'s index, brought up to date as a search's would be."""
        from seek.workspace.code_graph import GraphCache, Lookup, graph_for

        settings = self.settings(root)
        if self.live is not None:
            notes = self.live.refresh(root, settings)
            with self._guard:
                self._graphs = self._graphs or GraphCache()
            return Lookup(root, graph_for(root, settings, self._graphs, notes), notes)
        from seek.index.indexer import refresh_before_search

        notes = refresh_before_search(root, settings)
        return Lookup(root, graph_for(root, settings, None, notes), notes)

    def defs(self, root: Path, name: str, limit: int | None = None) -> GraphResult:
        """Definition sites of ``name`` (or ``Container.name``), best first."""
        from seek.workspace import code_graph as cg

        name, limit = cg.check_name(name), cg.check_limit(limit)
        return cg.defs(self._lookup(root), name, limit)

    def refs(self, root: Path, target: str, limit: int | None = None) -> GraphResult:
        """Uses of NAME, or of the definition at PATH:LINE, grouped by enclosing definition."""
        from seek.workspace import code_graph as cg

        target, limit = check_query(target, "the name"), cg.check_limit(limit)
        if cg.parse_location(target) is None:
            cg.check_name(target)
        return cg.refs(self._lookup(root), target.strip(), limit)

    def callers(self, root: Path, path: str, line: int, limit: int | None = None) -> GraphResult:
        """Definitions that call the definition at (or around) ``path:line``."""
        from seek.workspace import code_graph as cg

        path, line, limit = cg.check_path(path), cg.check_line(line), cg.check_limit(limit)
        return cg.callers(self._lookup(root), path, line, limit)

    def callees(self, root: Path, path: str, line: int, limit: int | None = None) -> GraphResult:
        """What the definition at (or around) ``path:line`` calls."""
        from seek.workspace import code_graph as cg

        path, line, limit = cg.check_path(path), cg.check_line(line), cg.check_limit(limit)
        return cg.callees(self._lookup(root), path, line, limit)

    def outline(self, root: Path, path: str, limit: int | None = None) -> GraphResult:
        """A file's definitions with their spans and signatures, in file order."""
        from seek.workspace import code_graph as cg

        path = cg.check_path(path)
        return cg.outline(self._lookup(root), path, cg.check_limit(limit or cg.MAX_ROWS))

    def map(self, root: Path, question: str = "", budget: int | None = None) -> GraphResult:
        """The repository's most central definitions as signatures within ``budget`` tokens,
        personalised toward ``question`` when given."""
        from seek.workspace import code_graph as cg

        question, budget = check_query(question, "the question"), cg.check_budget(budget)
        return cg.repo_map(self._lookup(root), question.strip(), budget)

    def status(self, root: Path) -> WorkspaceStatus:
        from seek.index.status import workspace_status

        status = workspace_status(root, self.settings(root))
        fault = self.live.fault(root) if self.live is not None else None
        if fault is not None:  # a server's failed updates: why, and when it tries again
            status.stale = str(fault.error)
            status.update_fault = fault.to_json()
        return status

    def status_json(self, root: Path) -> dict[str, Any]:
        """:meth:`status` as the servers answer it (README "JSON", status): the same
        fields as ``seek status --json``, with ``workspace_config``, the trust state of the
        workspace's own settings file (seek.md section 3), so a page or client can say which
        of its settings are ignored."""
        from seek.settings import user_config_path
        from seek.settings.trust import describe

        trust = describe(root, user_config_path())
        return {**self.status(root).to_json(), "workspace_config": trust}

    def index(self, root: Path, rebuild: bool = False) -> IndexReport:
        """One run at a time per workspace: a second caller gets :class:`IndexLockedError`
        at once (a queue of rebuilds would only hold clients until their time limit)."""
        with self._guard:
            lock = self._runs.setdefault(root, threading.Lock())
        from seek.index.indexer import index_workspace

        if not lock.acquire(blocking=False):
            raise IndexLockedError("an index run of this workspace is in progress; try later")
        try:
            report = index_workspace(root, self.settings(root), mode=REBUILD if rebuild else UPDATE)
        except IndexUnwritableError as exc:
            if self.live is not None:
                self.live.failed(root, exc)
            raise
        finally:
            lock.release()
        if self.live is not None:
            self.live.succeeded(root)
        return report


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
    check_query(query)
    root = resolve_workspace(path)
    return _one_shot(settings).search(
        root, query, k, focus, settings=settings, update=update, rerank=rerank, scope=scope
    )


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
