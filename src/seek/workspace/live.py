"""Searchers kept in memory for long-running front-ends (MCP, HTTP).

Before a search the workspace's index is brought up to date, at most once per
``FRESHNESS_S`` per workspace (a no-change check scans the tree; under load it would
otherwise run for every request), with one build at a time per workspace even when calls
arrive together. The loaded searcher is reused until the index's contents change: the
manifest minus its ``updatedAt``, which every update check rewrites even when nothing changed
(keyed on the file's time, a server reloaded every row of every busy workspace once a second,
and each reload left memory behind: issue 20).

When the index folder cannot be written (a full disk, a read-only folder: issue 31), searches
answer from the loaded index with a note that it is stale, and the update is tried again
later (:mod:`seek.index.backoff`);
:meth:`LiveIndexes.fault` gives the state for ``status``. While one call writes an index
update (a slow disk, a large change), other calls answer at once from the loaded searcher,
with a note, rather than wait behind its writes. A search that finds the index damaged has
it repaired here (:meth:`LiveIndexes.repair`: an index run), under the same lock and retry
times as an update.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

from seek.errors import IndexLockedError, IndexUnwritableError
from seek.index.backoff import retry_wait
from seek.index.freshness import is_current
from seek.index.indexer import index_workspace
from seek.index.refresh import locked_note, repaired_note, stale_note
from seek.retrieve import Searcher
from seek.settings import Settings
from seek.store import LocalIndexStore, index_dir_for
from seek.store.manifest import MANIFEST_NAME, contents_stamp
from seek.store.memory import release_free_memory

FRESHNESS_S = 1.0
UPDATING_NOTE = "The index was not updated first: another request is updating it."


@dataclass(slots=True)
class UpdateFault:
    """Why a workspace's updates fail, since when, and when they are tried again."""

    error: IndexUnwritableError
    since: float
    """Wall-clock time of the first failure of this run of failures."""
    failures: int
    retry_at: float
    """``time.monotonic()`` of the next try."""

    def to_json(self) -> dict[str, object]:
        return {
            "reason": str(self.error),
            "since": int(self.since * 1000),
            "failures": self.failures,
            "retry_in_s": round(max(0.0, self.retry_at - time.monotonic()), 1),
        }


class LiveIndexes:
    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[Path, threading.Lock] = {}
        self._checked: dict[Path, float] = {}
        self._searchers: dict[Path, tuple[str, Searcher]] = {}
        self._tokens: dict[Path, object] = {}  # the manifest's version when its stamp was taken
        self._faults: dict[Path, UpdateFault] = {}
        self._updating: set[Path] = set()
        """Workspaces whose index a call is writing now: other calls answer from the loaded
        searcher meanwhile rather than wait behind its writes (a slow disk: issue 31)."""

    def _lock(self, root: Path) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(root, threading.Lock())

    def searcher(
        self, root: Path, settings: Settings, *, update: bool = True
    ) -> tuple[Searcher, list[str]]:
        """An up-to-date searcher for ``root`` and notes for the caller's result
        (``update=False``: the index as it stands, nothing written). While another call is
        updating the index (a slow disk, a large change), a loaded searcher answers at once
        instead of waiting behind the update's writes (issue 31)."""
        loaded = self._searchers.get(root)
        if loaded is not None and root in self._updating:
            return loaded[1], [UPDATING_NOTE] if update else []
        with self._lock(root):
            notes = self._refresh(root, settings) if update else []
            store = LocalIndexStore(index_dir_for(root, settings))
            token = store.manifest_token()  # cheap; the digest below only when it moved
            cached = self._searchers.get(root)
            if cached is None or self._tokens.get(root) != token:
                stamp = contents_stamp(store.index_dir / MANIFEST_NAME)
                if cached is None or cached[0] != stamp:
                    replaced = cached is not None
                    cached = (stamp, Searcher.open(root, settings))
                    self._searchers[root] = cached
                    if replaced:  # the old searcher and the update's garbage are free now
                        release_free_memory()
                self._tokens[root] = token
        return cached[1], notes

    def refresh(self, root: Path, settings: Settings) -> list[str]:
        """Bring ``root``'s index up to date (at most once per ``FRESHNESS_S``, not before
        the retry time after a failure) without loading a searcher: the graph tools read
        the graph table only; notes for the caller's result."""
        if root in self._updating:
            return [UPDATING_NOTE]
        with self._lock(root):
            return self._refresh(root, settings)

    def forget(self, root: Path) -> None:
        """Drop ``root``'s loaded searcher (it found the index damaged): the next call reads
        the index again."""
        with self._lock(root):
            self._searchers.pop(root, None)
            self._tokens.pop(root, None)

    def repair(self, root: Path, settings: Settings) -> list[str]:
        """A search found ``root``'s index damaged: forget its loaded searcher and run the
        index now (a rebuild may have switched tables since it was loaded; else the run finds
        the damage and rebuilds), whatever the freshness clock says; notes for the result."""
        self.forget(root)
        with self._lock(root):
            return self._refresh(root, settings, repair=True)

    def _refresh(self, root: Path, settings: Settings, *, repair: bool = False) -> list[str]:
        """Update ``root``'s index when the freshness clock allows (a repair: always), never
        before a failed update's retry time."""
        fault = self._faults.get(root)
        if fault is not None and time.monotonic() < fault.retry_at:
            return [stale_note(fault.error)]  # no write is tried before the retry time
        if not repair and time.monotonic() - self._checked.get(root, float("-inf")) < FRESHNESS_S:
            return [stale_note(fault.error)] if fault is not None else []
        notes = self._update(root, settings, repair=repair)
        self._checked[root] = time.monotonic()
        return notes

    def _update(self, root: Path, settings: Settings, *, repair: bool = False) -> list[str]:
        if not repair and is_current(root, settings):
            self._faults.pop(root, None)
            return []
        self._updating.add(root)
        try:
            report = index_workspace(root, settings, verify_graph=repair)
        except IndexLockedError as exc:
            return [locked_note(exc)]
        except IndexUnwritableError as exc:
            self.failed(root, exc)
            return [stale_note(exc)]
        finally:
            self._updating.discard(root)
        self._faults.pop(root, None)
        return [repaired_note(report)] if repair and report.rebuild_reason else []

    def failed(self, root: Path, error: IndexUnwritableError) -> None:
        """Record a failed update of ``root`` (a search's or an index request's) and put the
        next try off (:func:`seek.index.backoff.retry_wait`)."""
        previous = self._faults.get(root)
        failures = previous.failures + 1 if previous else 1
        wait = retry_wait(failures)
        since = previous.since if previous else time.time()
        self._faults[root] = UpdateFault(error, since, failures, time.monotonic() + wait)

    def succeeded(self, root: Path) -> None:
        self._faults.pop(root, None)

    def fault(self, root: Path) -> UpdateFault | None:
        """Why updates of ``root`` fail now (None: they do not)."""
        return self._faults.get(root)
