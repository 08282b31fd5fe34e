"""Searchers kept in memory for long-running front-ends (MCP, HTTP).

Before a search the workspace's index is brought up to date, at most once per
``FRESHNESS_S`` per workspace (a no-change check scans the tree; under load it would
otherwise run for every request), with one build at a time per workspace even when calls
arrive together. The loaded searcher is reused until the index's contents change: the
manifest minus its ``updatedAt``, which every update check rewrites even when nothing changed
(keyed on the file's time, a server reloaded every row of every busy workspace once a second,
and each reload left memory behind: issue 20).
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from pathlib import Path

from seek.errors import DamagedIndexError
from seek.indexer import refresh_before_search
from seek.memory import release_free_memory
from seek.retrieve import Searcher, SearchResult
from seek.settings import Settings
from seek.store import LocalIndexStore, index_dir_for
from seek.store.manifest import MANIFEST_NAME

FRESHNESS_S = 1.0
_UPDATED_AT = re.compile(rb'"updatedAt":(?:null|-?\d+)')


def contents_stamp(manifest: Path) -> str:
    """A digest of the manifest without ``updatedAt`` ("" when there is none): it changes when
    the index's rows may have, not when an update check found nothing to do."""
    try:
        data = manifest.read_bytes()
    except FileNotFoundError:
        return ""
    return hashlib.sha1(_UPDATED_AT.sub(b"", data)).hexdigest()


class LiveIndexes:
    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[Path, threading.Lock] = {}
        self._checked: dict[Path, float] = {}
        self._searchers: dict[Path, tuple[str, Searcher]] = {}
        self._tokens: dict[Path, object] = {}  # the manifest's version when its stamp was taken

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
