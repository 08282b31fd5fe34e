"""An index loaded into memory: what a search reads (seek.md §5 "Retrieval"; design.md
"Layout as seek grows": retrieve/ is a loaded index and the search pipeline).

The rows of the search cache or of the table (:class:`~.search_cache.SearchData`) arranged
for search: each chunk's file, lines and text (chunk ids are positions), the window vectors
as one float32 matrix, BM25 postings, file stems grouped for the definition signals, and
the ranker's view of it all (:class:`~.ranker.Corpus`). Where the rows came from (a
workspace's store, one corpus question's pool) is the caller's business: this object only
holds them, so a workspace searcher and the corpus pool build it the same way.
"""

from __future__ import annotations

import numpy as np

from seek.retrieve.bm25 import Bm25
from seek.retrieve.embedding import IndexEmbedder, PathVectors
from seek.retrieve.ranker import Corpus
from seek.retrieve.search_data import SearchData
from seek.retrieve.signals.names import chunks_by_stem
from seek.retrieve.types import Hit

WINDOW_BEST_WEIGHT = 0.3
"""A chunk's vector score = 0.3 x its best window + 0.7 x its windows' mean. Dev-set NDCG@10
for weights 1.0 (best window only) / 0.7 / 0.5 / 0.3 / 0.0 (mean only):
0.856 / 0.860 / 0.861 / 0.862 / 0.857; leave-one-repository-out CV picks 0.3 in every fold."""


class LoadedIndex:
    """One index's rows in memory, arranged for search (chunk ids are positions)."""

    def __init__(self, data: SearchData, embedding: IndexEmbedder, document_prefix: str) -> None:
        self.paths = data.paths
        self.starts = data.starts
        self.ends = data.ends
        self.contents = data.contents
        self.chunk_numbers = data.chunk_numbers
        self.stems = [p.rpartition("/")[2].split(".", 1)[0].lower() for p in self.paths]
        self.stem_groups = chunks_by_stem(self.stems)
        # A chunk's windows are consecutive rows, so per-chunk reductions are one ``reduceat``.
        self.chunk_first_row = data.chunk_first_row
        self.chunk_rows = data.chunk_rows
        chunks_by_path: dict[str, list[int]] = {}
        for chunk_id, path in enumerate(self.paths):
            chunks_by_path.setdefault(path, []).append(chunk_id)
        self.chunks_of_path = {p: np.array(c, dtype=np.int64) for p, c in chunks_by_path.items()}
        self.vectors = data.vectors
        self.bm25 = Bm25(data.postings)
        dims = self.vectors.shape[1] if len(self.vectors) else 0
        self.path_vectors = PathVectors(embedding, document_prefix, dims)
        self.corpus = Corpus(
            self.paths, self.contents, self.chunks_of_path, self.path_vectors, data.word_sets
        )
        self._chunk_of_key: dict[tuple[str, int], int] | None = None

    @property
    def chunk_of_key(self) -> dict[tuple[str, int], int]:
        """Chunk id of each (path, number in file): only keyword hits named by LanceDB (a
        large index's full-text index, a corpus pool's) need it."""
        if self._chunk_of_key is None:
            keys = zip(self.paths, self.chunk_numbers.tolist(), strict=True)
            self._chunk_of_key = {key: n for n, key in enumerate(keys)}
        return self._chunk_of_key

    def chunks_in(self, paths: list[str]) -> np.ndarray:
        """The chunk ids of ``paths`` (each an indexed path), file by file."""
        return np.concatenate([self.chunks_of_path[p] for p in paths] or [np.array([], int)])

    def chunk_similarities(self, q: np.ndarray) -> np.ndarray:
        """Each chunk's similarity to the unit vector ``q``: a blend of its best window and
        its windows' mean, so a chunk that is on topic throughout beats one with a single
        lucky window."""
        sims = self.vectors @ q
        best = np.maximum.reduceat(sims, self.chunk_first_row)
        mean = np.add.reduceat(sims, self.chunk_first_row) / self.chunk_rows
        return WINDOW_BEST_WEIGHT * best + (1.0 - WINDOW_BEST_WEIGHT) * mean

    def hit(self, chunk_id: int, score: float) -> Hit:
        """Chunk ``chunk_id`` as a hit (1-based lines)."""
        return Hit(
            self.paths[chunk_id],
            self.starts[chunk_id] + 1,
            self.ends[chunk_id] + 1,
            round(score, 6),
            self.contents[chunk_id],
        )
