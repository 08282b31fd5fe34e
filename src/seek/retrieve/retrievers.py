"""The two retrievers a search fuses (seek.md §5 "Retrieval"): the question's embedding
against every chunk of a :class:`~.loaded.LoadedIndex`, and BM25 over its keywords.

The dense side is the same everywhere (exact cosine over the loaded matrix); where the
question's vector comes from is :class:`QueryEmbedding`'s (or, in a corpus pool, the vector
already embedded for the corpus's own pass). The keyword side is a :class:`Keywords`: in
memory on the index's postings (:class:`MemoryKeywords`), on LanceDB's full-text index for
a very large index (:class:`TableKeywords`), or the hits a corpus's full-text index gave
for a pool (:mod:`seek.corpus.search`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from seek.errors import DamagedIndexError, failure_line
from seek.retrieve.embedding import IndexEmbedder
from seek.retrieve.loaded import LoadedIndex
from seek.store import ChunkTable

SCOPE_FILTER_PATHS = 500
"""On LanceDB's keyword index, a search limited to at most this many files filters BM25 by
path; a wider one fetches ``SCOPE_OVERFETCH`` times the rows and keeps those in scope (in
memory, only the scope's chunks are scored)."""
SCOPE_OVERFETCH = 4


def damaged(root: Path, exc: BaseException) -> DamagedIndexError:
    return DamagedIndexError(
        f"the index of {root} is damaged ({failure_line(exc)}): run `seek index` to repair it"
    )


class QueryEmbedding:
    """The question's unit embedding by the index's model (None when the settings name
    another model, or the index holds no vectors)."""

    def __init__(self, embedding: IndexEmbedder, query_prefix: str, vectors: bool = True) -> None:
        self.embedding, self.query_prefix, self.vectors = embedding, query_prefix, vectors

    def __call__(self, query: str) -> np.ndarray | None:
        embedder = self.embedding.get()
        if embedder is None or not self.vectors:
            return None
        q = embedder.embed([self.query_prefix + query])[0].astype(np.float32)
        return q / max(float(np.linalg.norm(q)), 1e-12)


def vector_candidates(
    similarities: np.ndarray | None, n: int, chunk_ids: np.ndarray | None = None
) -> list[int]:
    """The ``n`` chunks most similar to the query, optionally among ``chunk_ids`` only."""
    if similarities is None or n <= 0:
        return []
    ids = np.arange(len(similarities)) if chunk_ids is None else chunk_ids
    scores = similarities[ids]
    if not len(scores):
        return []
    want = min(n, len(scores))
    top = np.argpartition(-scores, want - 1)[:want]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [int(ids[i]) for i in top]


class Keywords:
    """A keyword retriever over a loaded index: the BM25 matches of a question's words."""

    in_memory = True
    """Whether a pass runs in memory (on the searching thread: it takes less than handing
    it over) rather than on LanceDB (on a helper thread, while the vectors are searched)."""

    def scored(self, words: str, n: int, paths: list[str] | None = None) -> list[tuple[int, float]]:
        """The ``n`` best matches as ``(chunk_id, BM25 score)``, best first, optionally only
        in ``paths``."""
        raise NotImplementedError

    def candidates(self, words: str, n: int, paths: list[str] | None = None) -> list[int]:
        return [i for i, _ in self.scored(words, n, paths)]

    def in_scope(self, words: str, n: int, scope_paths: list[str]) -> list[tuple[int, float]]:
        """:meth:`scored` for a search limited to ``scope_paths``: exact here, only the
        scope's chunks are scored."""
        return self.scored(words, n, scope_paths)

    def available(self) -> bool:
        """Whether there is a keyword index to ask (LanceDB's can be missing)."""
        return True


class MemoryKeywords(Keywords):
    """BM25 in memory on the index's postings (:mod:`.bm25`, LanceDB's tokens and scores)."""

    def __init__(self, index: LoadedIndex) -> None:
        self.index = index

    def scored(self, words: str, n: int, paths: list[str] | None = None) -> list[tuple[int, float]]:
        if not words:
            return []
        allowed = None
        if paths is not None:
            allowed = self.index.chunks_in([p for p in paths if p in self.index.chunks_of_path])
        return self.index.bm25.top(words, n, allowed)


class TableKeywords(Keywords):
    """BM25 by LanceDB's full-text index of the table (an index too large for memory)."""

    in_memory = False

    def __init__(self, index: LoadedIndex, table: ChunkTable, root: Path) -> None:
        self.index, self.table, self.root = index, table, root

    def scored(self, words: str, n: int, paths: list[str] | None = None) -> list[tuple[int, float]]:
        if not words:
            return []
        try:
            hits = self.table.keyword_scores(words, n, paths=paths)
        except Exception as exc:  # lance reports damage as many error types
            raise damaged(self.root, exc) from exc
        key = self.index.chunk_of_key
        scored = [(key.get((path, chunk)), score) for path, chunk, score in hits]
        return [(i, float(score)) for i, score in scored if i is not None]

    def in_scope(self, words: str, n: int, scope_paths: list[str]) -> list[tuple[int, float]]:
        if not scope_paths:
            return []
        if len(scope_paths) <= SCOPE_FILTER_PATHS:
            return self.scored(words, n, scope_paths)
        # A long IN list costs more than fetching extra rows and dropping them.
        allowed = set(scope_paths)
        more = self.scored(words, n * SCOPE_OVERFETCH)
        return [(i, s) for i, s in more if self.index.paths[i] in allowed][:n]

    def available(self) -> bool:
        try:
            return self.table.has_keyword_index()
        except Exception as exc:  # lance reports damage as many error types
            raise damaged(self.root, exc) from exc
