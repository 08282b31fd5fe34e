"""Search: candidates from vectors and keywords, fused, then code-aware ranking signals.

    searcher = Searcher.open(root, settings)   # loads the index into memory once
    result = searcher.search("how are retries configured?", k=10)
    for hit in result.hits: print(hit.path, hit.start_line, hit.end_line, hit.score)

or, bringing the index up to date first: ``search(root, question, settings)``.
"""

from __future__ import annotations

from pathlib import Path

from seek.retrieve.fusion import fuse, rrf_ranks
from seek.retrieve.scope import CONTENT_KINDS, EVERYTHING, Scope
from seek.retrieve.searcher import BM25_ONLY, HYBRID, MODES, VECTOR_ONLY, Searcher
from seek.retrieve.signals import LEARNED_RANKER, SIGNALS
from seek.retrieve.types import Hit, SearchResult
from seek.settings import Settings

__all__ = [
    "BM25_ONLY", "CONTENT_KINDS", "HYBRID", "MODES", "SIGNALS", "VECTOR_ONLY", "Hit", "Scope",
    "SearchResult", "Searcher", "context", "fuse", "related", "rrf_ranks", "search",
]  # fmt: skip


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
    hits come from (see :mod:`.scope`). When another process is
    writing the index, the search uses the index as it stands and
    says so in the notes. With ``team_url`` set, the team server's hits follow the local
    ones (see :mod:`seek.team`).
    """
    from seek.indexer import refresh_before_search, resolve_workspace
    from seek.team import start_team_search, with_team_hits
    from seek.untrusted import check_query

    check_query(query)  # before any work: a query that is not text fails in one line
    root = resolve_workspace(path)
    team = start_team_search(settings, query)  # in parallel with the local search
    notes = refresh_before_search(root, settings) if update else []
    disabled = frozenset() if rerank else frozenset({LEARNED_RANKER})
    result = Searcher.open(root, settings).search(
        query, k, focus=focus, disabled=disabled, scope=scope
    )
    return with_team_hits(result.with_notes_first(notes), team)


def related(
    path: Path | str, file: str, line: int, settings: Settings, *, k: int = 10
) -> SearchResult:
    """The chunks of other files most like the chunk at ``file:line`` (workspace-relative
    ``file``, 1-based ``line``), after bringing the index up to date (see :mod:`.related`)."""
    from seek.indexer import refresh_before_search, resolve_workspace
    from seek.retrieve.related import related as related_chunks

    root = resolve_workspace(path)
    notes = refresh_before_search(root, settings)
    return related_chunks(Searcher.open(root, settings), file, line, k).with_notes_first(notes)


def context(
    path: Path | str,
    question: str,
    settings: Settings,
    *,
    budget: int | None = None,
    snippets: int | None = None,
    threshold: float | None = None,
):  # ContextResult (imported lazily)
    """Labelled, budgeted prompt blocks answering ``question`` (see :mod:`.context`)."""
    from seek.indexer import resolve_workspace
    from seek.retrieve.context import build_context

    root = resolve_workspace(path)
    result = search(root, question, settings, k=settings.rerank_top)
    return build_context(
        root, result, settings, budget=budget, snippets=snippets, threshold=threshold
    )
