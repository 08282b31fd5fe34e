"""A workspace's index, loaded from its store and searched (seek.md §5 "Retrieval").

The rows come from the search cache (:mod:`.search_cache`) when it is current, else from
the table (and the cache is written again); they become a :class:`~.loaded.LoadedIndex`,
searched by a :class:`~.pipeline.SearchPipeline` over the two retrievers: vector search on
the in-memory float32 matrix of every window (exact cosine, one matrix-vector product:
measured faster than LanceDB's flat search, with perfect recall), and BM25 over the keyword
column, in memory with LanceDB's tokens and scores (:mod:`.bm25`), or LanceDB's own on a
helper thread for very large indexes.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from seek.embed import Embedder, task_prefixes
from seek.errors import SeekError
from seek.retrieve.embedding import IndexEmbedder
from seek.retrieve.loaded import LoadedIndex
from seek.retrieve.pipeline import SearchPipeline
from seek.retrieve.retrievers import (
    Keywords,
    MemoryKeywords,
    QueryEmbedding,
    TableKeywords,
    damaged,
)
from seek.retrieve.search_cache import cache_key, last_complete_key, load_cache, write_cache
from seek.retrieve.search_data import SearchData
from seek.retrieve.symbols import HitSymbols
from seek.retrieve.types import SearchResult
from seek.settings import Settings
from seek.store import ChunkTable, LocalIndexStore, index_dir_for, load_manifest
from seek.store.table import KEYWORD_INDEX_MIN_CHUNKS

log = logging.getLogger(__name__)

KEYWORDS_IN_MEMORY_MAX_CHUNKS = KEYWORD_INDEX_MIN_CHUNKS - 1
"""Up to this many chunks (250,000) the keyword pass runs in memory on the search cache's
postings, and the table has no full-text index; above, it runs on LanceDB's full-text index
(see docs/research/bench-rounds.md, "Keyword search in memory")."""


class Searcher:
    """A workspace's index loaded into memory for fast repeated searches: its
    :class:`~.loaded.LoadedIndex` (``index``) and the :class:`~.pipeline.SearchPipeline`
    over it (``pipeline``)."""

    def __init__(self, root: Path, settings: Settings, embedder: Embedder | None = None) -> None:
        self.root = root
        self.settings = settings
        self.index_dir = index_dir_for(root, settings)
        store = LocalIndexStore(self.index_dir)
        token = store.manifest_token()
        manifest = load_manifest(self.index_dir)
        if not manifest.has_index:
            raise SeekError(f"{root} has no index yet: run `seek index {root}`")
        self.table = ChunkTable(self.index_dir, manifest.table)
        self.model_id = manifest.model
        self.document_prefix, self.query_prefix = task_prefixes(settings.model or self.model_id)
        self._embedding = IndexEmbedder(settings, self.model_id, embedder)
        expected = 0 if manifest.run_open else sum(s.chunks for s in manifest.files.values())
        key = cache_key(manifest)
        if key is None and manifest.run_open and not store.is_locked():
            # A run stopped (a full disk, a read-only folder: issue 31) with rows changed in
            # place: the last complete index is the newest complete search cache.
            data = load_cache(self.index_dir, last_complete_key(self.index_dir))
        else:
            data = load_cache(self.index_dir, key)
        self.from_cache = data is not None
        """Whether the rows came from the search cache (else from the table)."""
        try:
            if data is None:
                data = SearchData.from_rows(self.table.load_all())
                if expected and not data.paths:  # an empty or missing table is damage
                    raise ValueError(
                        f"the table holds no rows, the manifest lists {expected} chunks"
                    )
                self._keep(data, key, store, token)
            self.index = LoadedIndex(data, self._embedding, self.document_prefix)
        except Exception as exc:  # lance reports damage as many error types
            raise damaged(root, exc) from exc
        self.symbols = HitSymbols(self.index_dir, manifest)
        """Names each hit's enclosing definition, from the graph stored with the index."""
        self.pipeline = self._pipeline()

    @classmethod
    def open(cls, root: Path | str, settings: Settings, embedder: Embedder | None = None):
        return cls(Path(root).resolve(), settings, embedder)

    def search(self, query: str, k: int = 10, **options: Any) -> SearchResult:
        """The ``k`` best chunks for ``query``; ``options`` (focus, disabled, mode, scope) are
        :meth:`~.pipeline.SearchPipeline.search`'s. Each hit names its enclosing symbol
        (:mod:`.symbols`), after the pipeline: order and scores are the pipeline's."""
        return self.symbols.name(self.pipeline.search(query, k, **options))

    def _keep(
        self, data: SearchData, key: str | None, store: LocalIndexStore, token: object
    ) -> None:
        """Write the search cache of rows just read from the table, when they are what the
        manifest describes: no run was open and no run started while they were read (a run
        saves the manifest before it touches a row)."""
        if key is None or store.manifest_token() != token:
            return
        try:
            write_cache(self.index_dir, key, data, self.table.db_dir / f"{self.table.name}.lance")
        except OSError as exc:  # a read-only index, a full disk: search without it
            log.info("could not write the search cache of %s: %s", self.root, exc)

    def _pipeline(self) -> SearchPipeline:
        """The pipeline over the loaded index, with the keyword retriever its size calls for
        (see ``KEYWORDS_IN_MEMORY_MAX_CHUNKS``)."""
        index = self.index
        keywords: Keywords = (
            MemoryKeywords(index)
            if len(index.paths) <= KEYWORDS_IN_MEMORY_MAX_CHUNKS
            else TableKeywords(index, self.table, self.root)
        )
        vectors = len(index.vectors) > 0
        query_vector = QueryEmbedding(self._embedding, self.query_prefix, vectors)
        return SearchPipeline(
            index, self.settings, self._embedding, query_vector, keywords, self.symbols.defined
        )

    @property
    def keywords(self) -> Keywords:
        return self.pipeline.keywords
