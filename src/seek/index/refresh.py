"""Before a one-shot answer: bring the index up to date, or say why it answers from the
index as it stands (seek.md §5: a search updates the index first; issue 31: a full disk does
not stop search).

Kept apart from :mod:`seek.index.indexer` so that a call whose index is current (a `seek
def`, a `seek search` on an unchanged workspace) checks it without importing the indexing
pipeline (the embedding steps, the graph worker and multiprocessing: about 30 ms of a 0.5 s
`seek def` on tokio; the rest of what the indexer imports, a search needs too).
"""

from __future__ import annotations

from pathlib import Path

from seek.errors import IndexLockedError, IndexUnwritableError
from seek.index.freshness import is_current
from seek.index.report import IndexReport
from seek.settings import Settings


def refresh_before_search(root: Path, settings: Settings, *, repair: bool = False) -> list[str]:
    """Bring the index up to date before a search; when another process is writing it, the
    search goes ahead on the index as it stands and the returned note says so. A current
    index (:func:`seek.index.freshness.is_current`) is left alone: no lock, no write.
    ``repair``: a search found the index damaged, so a run is made even when it looks
    current (each run checks the table and rebuilds a damaged one), and a rebuild is noted."""
    if not repair and is_current(root, settings):
        return []
    from seek.index.indexer import index_workspace  # the run, and its imports, only now

    try:
        report = index_workspace(root, settings, verify_graph=repair)
    except IndexLockedError as exc:
        return [locked_note(exc)]
    except IndexUnwritableError as exc:
        return [stale_note(exc)]
    return [repaired_note(report)] if repair and report.rebuild_reason else []


def locked_note(exc: IndexLockedError) -> str:
    """The note a search carries when another process was writing the index: it answered
    from the index as it stood."""
    return f"The index was not updated first: {exc}."


def stale_note(exc: IndexUnwritableError) -> str:
    """The one note a search carries when the index could not be brought up to date because
    its folder cannot be written (issue 31): it answers from the last complete index."""
    cause = str(exc).split(" writing the index in ", 1)[0]
    return (
        f"The index is stale: it cannot be updated ({cause} in {exc.folder}); "
        "answering from the last complete index."
    )


def repaired_note(report: IndexReport) -> str:
    """The note a search carries when it found the index damaged and a run rebuilt it
    before the search was answered (the same from every front-end: the facade retries)."""
    return f"The index was rebuilt before this answer: {report.rebuild_reason}."
