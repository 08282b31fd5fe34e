"""Search: candidates from vectors and keywords, fused, then code-aware ranking signals.

    searcher = Searcher.open(root, settings)   # loads the index into memory once
    result = searcher.search("how are retries configured?", k=10)
    for hit in result.hits: print(hit.path, hit.start_line, hit.end_line, hit.score)

Searching a loaded index only: no indexing, no network (design "Boundaries"). Bringing the
index up to date first, the team's hits and the servers' caches are :mod:`seek.workspace`'s.

The names below load on first use, so that importing one light module of this package
(``seek.retrieve.scope``, ``seek.retrieve.types``) does not import the searcher and numpy.
"""

from __future__ import annotations

from seek import lazy_names

_LAZY = {
    "BM25_ONLY": "seek.retrieve.pipeline",
    "CONTENT_KINDS": "seek.retrieve.scope",
    "EVERYTHING": "seek.retrieve.scope",
    "HYBRID": "seek.retrieve.pipeline",
    "MODES": "seek.retrieve.pipeline",
    "SIGNALS": "seek.retrieve.signals",
    "VECTOR_ONLY": "seek.retrieve.pipeline",
    "Hit": "seek.retrieve.types",
    "Scope": "seek.retrieve.scope",
    "SearchResult": "seek.retrieve.types",
    "Searcher": "seek.retrieve.searcher",
    "fuse": "seek.retrieve.fusion",
    "rrf_ranks": "seek.retrieve.fusion",
}


__getattr__, __dir__ = lazy_names("seek.retrieve", _LAZY, globals())

__all__ = sorted(_LAZY)
