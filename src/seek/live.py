"""Searchers kept in memory for long-running front-ends (MCP, HTTP).

Before a search the workspace's index is brought up to date, at most once per
``FRESHNESS_S`` per workspace (a no-change check scans the tree; under load it would
otherwise run for every request), with one build at a time per workspace even when calls
arrive together. The loaded searcher is reused until the manifest changes.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from seek.errors import DamagedIndexError
from seek.indexer import refresh_before_search
from seek.retrieve import Searcher, SearchResult
from seek.settings import Settings
from seek.store import LocalIndexStore, index_dir_for

FRESHNESS_S = 1.0


class LiveIndexes:
    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[Path, threading.Lock] = {}
        self._checked: dict[Path, float] = {}
        self._searchers: dict[Path, tuple[object, Searcher]] = {}

    def _lock(self, root: Path) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(root, threading.Lock())

    def searcher(self, root: Path, settings: Settings) -> tuple[Searcher, list[str]]:
        """An up-to-date searcher for ``root`` and notes for the caller's result."""
        notes: list[str] = []
        with self._lock(root):
            if time.monotonic() - self._checked.get(root, float("-inf")) >= FRESHNESS_S:
                notes = refresh_before_search(root, settings)
                self._checked[root] = time.monotonic()
            stamp = LocalIndexStore(index_dir_for(root, settings)).manifest_token()
            cached = self._searchers.get(root)
            if cached is None or cached[0] != stamp:
                cached = (stamp, Searcher.open(root, settings))
                self._searchers[root] = cached
        return cached[1], notes

    def search(
        self, root: Path, settings: Settings, query: str, k: int, focus: tuple[str, ...]
    ) -> SearchResult:
        searcher, notes = self.searcher(root, settings)
        try:
            return searcher.search(query, k, focus=focus).with_notes_first(notes)
        except DamagedIndexError:
            # A rebuild may have switched tables since this searcher was loaded: read the
            # current one once before reporting damage.
            with self._lock(root):
                if self._searchers.get(root, (0, None))[1] is searcher:
                    del self._searchers[root]
            searcher, notes = self.searcher(root, settings)
            return searcher.search(query, k, focus=focus).with_notes_first(notes)
