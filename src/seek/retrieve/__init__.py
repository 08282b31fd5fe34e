"""Search: candidates from vectors and keywords, fused, then code-aware ranking signals.

    searcher = Searcher.open(root, settings)   # loads the index into memory once
    result = searcher.search("how are retries configured?", k=10)
    for hit in result.hits: print(hit.path, hit.start_line, hit.end_line, hit.score)

Searching a loaded index only: no indexing, no network (design "Boundaries"). Bringing the
index up to date first, the team's hits and the servers' caches are :mod:`seek.workspace`'s.
"""

from __future__ import annotations

from seek.retrieve.fusion import fuse, rrf_ranks
from seek.retrieve.scope import CONTENT_KINDS, EVERYTHING, Scope
from seek.retrieve.searcher import BM25_ONLY, HYBRID, MODES, VECTOR_ONLY, Searcher
from seek.retrieve.signals import SIGNALS
from seek.retrieve.types import Hit, SearchResult

__all__ = [
    "BM25_ONLY", "CONTENT_KINDS", "EVERYTHING", "HYBRID", "MODES", "SIGNALS", "VECTOR_ONLY",
    "Hit", "Scope", "SearchResult", "Searcher", "fuse", "rrf_ranks",
]  # fmt: skip
