"""The embedder of a loaded index: made on first use, for the question and for file paths
(the ranker's path similarity). Split from :mod:`.searcher`, which holds one of each."""

from __future__ import annotations

import numpy as np

from seek.embed import Embedder, make_embedder, model_id_for
from seek.errors import SeekError
from seek.settings import Settings


class IndexEmbedder:
    """The embedder of an index's model, made on first use; None when the settings name
    another model (the index then answers by keywords only)."""

    def __init__(self, settings: Settings, model_id: str, embedder: Embedder | None) -> None:
        self.settings, self.model_id, self.embedder = settings, model_id, embedder

    def get(self) -> Embedder | None:
        if self.embedder is None:
            if model_id_for(self.settings) != self.model_id:
                return None
            self.embedder = make_embedder(self.settings)
        return self.embedder


class PathVectors:
    """Unit embeddings of file paths (for the ranker), kept while the index is loaded.

    Its own object, not a method of the searcher: the searcher's corpus holds it, and a bound
    method there made a reference cycle, so every searcher a long-running server replaced (its
    rows, and LanceDB handles with open files) lived on until the cyclic GC happened to run
    (issue 20: one more open file and ~2 MiB per index change)."""

    def __init__(self, embedding: IndexEmbedder, document_prefix: str, dims: int) -> None:
        self.embedding, self.document_prefix, self.dims = embedding, document_prefix, dims
        self.known: dict[str, np.ndarray] = {}

    def __call__(self, paths: list[str]) -> np.ndarray:
        missing = [p for p in dict.fromkeys(paths) if p not in self.known]
        embedder = self.embedding.get()
        if missing and embedder is not None:
            try:
                vectors = embedder.embed([self.document_prefix + p for p in missing])
            except SeekError:  # the query was embedded a moment ago; a failure costs a feature
                vectors = None
            if vectors is not None:
                vectors = np.asarray(vectors, dtype=np.float32)
                norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
                self.known.update(zip(missing, vectors / norms, strict=True))
        zero = np.zeros(self.dims, dtype=np.float32)
        return np.array([self.known.get(p, zero) for p in paths])
