"""Search a corpus without loading it (issue 17, "Search that does not load the corpus").

A question goes to LanceDB twice, at once (both queries on the store's event loop while this
thread embeds the question), both prefiltered to the asked repositories and path prefixes:
the vector index (IVF-PQ once the table holds ``ANN_MIN_ROWS`` rows and the filter leaves
more than ``FLAT_MAX_ROWS``, else exact; ``VECTOR_WINDOWS`` x the candidates, re-scored
exactly by ``refine_factor``, not at all over the whole corpus) and the full-text index.
The files they name are ranked by fusing the two lists (:func:`pool_files`), the first
``POOL_FILES`` (``WHOLE_CORPUS``'s, cheaper, without a filter) are fetched whole - every
window with its vector; their paths are embedded meanwhile - and become a small
in-memory index (:class:`~seek.retrieve.loaded.LoadedIndex`) on which seek's own search
pipeline runs unchanged (:func:`pool_pipeline`): exact chunk similarities, fusion,
signals, the learned ranker and the chunk stage. Memory holds one question's pool and
LanceDB's bounded caches (:mod:`seek.store.corpus_table`), so it does not grow with the corpus.

Differences from a workspace search, by design: keyword scores are BM25 with statistics of
the whole corpus (not of one repository); signals that look across the index (a symbol's
definitions elsewhere, older copies of a file) see the pool's files only. The NDCG cost is
measured in docs/research/bench-rounds.md ("Scale").

A pool spanning several repositories names its files ``repo/path`` inside the pool, so two
repositories' ``README.md`` stay two files; hits carry the repository and the plain path.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from seek.corpus.catalog import Catalog
from seek.corpus.location import CorpusError, CorpusLocation
from seek.embed import Embedder, task_prefixes
from seek.errors import SeekError
from seek.retrieve import signals as sig
from seek.retrieve.embedding import IndexEmbedder, PathVectors
from seek.retrieve.fusion import fuse
from seek.retrieve.loaded import LoadedIndex
from seek.retrieve.pipeline import SearchPipeline
from seek.retrieve.retrievers import Keywords, QueryEmbedding
from seek.retrieve.search_data import SearchData
from seek.retrieve.signals.query import semantic_weight
from seek.retrieve.types import Hit, SearchResult
from seek.settings import Settings
from seek.store.corpus_table import CorpusTable, repo_filter
from seek.store.table import sql_quote
from seek.text import keyword_query
from seek.untrusted import check_query

VECTOR_WINDOWS = 3
"""Windows asked of the vector index per wanted chunk (a chunk has ~1.3 windows, and the
files of the top windows are fetched whole anyway)."""
POOL_FILES = 24
"""Files a filtered question's pool holds (a whole-corpus one: ``WHOLE_CORPUS``). A filtered
question's two lists name ~21 files; a whole-corpus question's named 80 and more (every
repository's copy of the code) and its pool cost 3 x a filtered one's. 24 by fused rank:
whole-corpus CPU -37 %, filtered NDCG@10 0.876 as before, whole-corpus NDCG 0.504 -> 0.542
(docs/research/bench-rounds.md, "Scale, round three")."""
WHOLE_CORPUS = {"pool_files": 16, "vector_windows": 2, "nprobes": 12, "refine_factor": None}
"""A question without a filter takes a smaller pool and a cheaper IVF-PQ pass (the pool's
similarities are exact anyway; the pass only names files): whole-corpus NDCG@10 0.5416 ->
0.5472, wall p50 70 -> 55 ms at 1M (docs/research/bench-rounds.md, "Scale, round three"); no exact
re-scoring of the pass's candidates (``refine_factor`` None: ranked by their PQ codes, no
read of their vectors) 0.5472 -> 0.5477, CPU p50 -8 ms ("Scale, round four"). A filtered
question keeps ``POOL_FILES``, ``VECTOR_WINDOWS`` and the table's IVF-PQ settings."""
FLAT_MAX_ROWS = 60_000
"""A question whose filter leaves at most this many rows is answered by exact (flat)
vector search over them, as a workspace search is; a wider one uses the IVF-PQ index."""
PATH_VECTORS_KEPT = 20_000


@dataclass(frozen=True, slots=True)
class CorpusHit(Hit):
    repo: str = ""

    def to_json(self) -> dict[str, object]:
        return {"repo": self.repo, **Hit.to_json(self)}


def corpus_filter(repos: Sequence[str] = (), prefixes: Sequence[str] = ()) -> str | None:
    """The SQL prefilter of a question (None: the whole corpus)."""
    parts = []
    if repos:
        parts.append(repo_filter(repos))
    if prefixes:
        ors = " OR ".join(f"starts_with(path, {sql_quote(p)})" for p in prefixes)
        parts.append(f"({ors})")
    return " AND ".join(parts) or None


def pool_files(
    vector_files: Sequence[tuple[str, str]],
    keyword_files: Sequence[tuple[str, str]],
    weight: float,
    rrf_k: int,
    limit: int,
) -> list[tuple[str, str]]:
    """The ``limit`` files a question's pool holds: each retriever's files ranked by their
    best row, fused as the searcher fuses chunks (``weight`` on the vector list), best first.
    """
    lists = [(list(dict.fromkeys(vector_files)), weight),
             (list(dict.fromkeys(keyword_files)), 1.0 - weight)]  # fmt: skip
    scores = fuse(lists, rrf_k)
    return sorted(scores, key=lambda f: -scores[f])[:limit]


class PoolKeywords(Keywords):
    """The keyword hits the corpus's full-text index gave for a question, as the pool's
    keyword retriever (BM25 with statistics of the whole corpus)."""

    def __init__(self, index: LoadedIndex, hits: list[tuple[str, int, float]]) -> None:
        self.index, self.hits = index, hits

    def scored(self, words: str, n: int, paths: list[str] | None = None) -> list[tuple[int, float]]:
        allowed = set(paths) if paths is not None else None
        key = self.index.chunk_of_key
        out = []
        for path, chunk, score in self.hits:
            chunk_id = key.get((path, chunk))
            if chunk_id is not None and (allowed is None or path in allowed):
                out.append((chunk_id, float(score)))
        return out[:n]


def pool_pipeline(
    data: dict[str, Any],
    settings: Settings,
    embedding: IndexEmbedder,
    query_vector: np.ndarray | None,
    keyword_hits: list[tuple[str, int, float]],
    path_vectors: dict[str, np.ndarray],
) -> SearchPipeline:
    """seek's search pipeline over one question's candidate files (``data``, the table's
    columns), with the question's vector and keyword hits already found for the pool."""
    document_prefix = task_prefixes(settings.model or embedding.model_id)[0]
    index = LoadedIndex(SearchData.from_rows(data, pool=True), embedding, document_prefix)
    index.path_vectors.known = path_vectors  # shared between questions, bounded by caller
    given = query_vector if len(index.vectors) else None
    return SearchPipeline(
        index, settings, embedding, lambda _query: given, PoolKeywords(index, keyword_hits)
    )


class CorpusSearcher:
    """Answers questions over a corpus; cheap to keep open (see the module docstring)."""

    def __init__(
        self, location: CorpusLocation, settings: Settings, embedder: Embedder | None = None
    ) -> None:
        self.location = location
        self.settings = settings
        self.table = CorpusTable(location)
        self.model_id = Catalog(location).model()
        if not self.model_id or self.table.open() is None:
            raise CorpusError(f"the corpus {location.uri} has no index yet: "
                              "run `seek corpus index`")  # fmt: skip
        self.table.reader()  # opened here, not by the first questions (a server's threads)
        self.embedding = IndexEmbedder(settings, self.model_id, embedder)
        self._query_vector = QueryEmbedding(
            self.embedding, task_prefixes(settings.model or self.model_id)[1]
        )
        self._path_vectors: dict[str, np.ndarray] = {}
        self._filtered_rows: dict[str, int] = {}
        self._has_ann: bool | None = None

    def refresh(self) -> None:
        """See the latest committed version of the table."""
        self.table.refresh()
        self._filtered_rows.clear()
        self._has_ann = None

    def _exact(self, where: str | None) -> bool:
        """Whether the vector pass over ``where`` is exact (see ``FLAT_MAX_ROWS``)."""
        if self._has_ann is None:  # listing the indexes costs a LanceDB call: once a version
            self._has_ann = self.table.has_vector_index()
        if not self._has_ann:
            return True
        if where is None:
            return False
        rows = self._filtered_rows.get(where)
        if rows is None:
            if len(self._filtered_rows) > 10_000:
                self._filtered_rows.clear()
            rows = self._filtered_rows[where] = self.table.count_rows(where)
        return rows <= FLAT_MAX_ROWS

    def repos(self) -> list[str]:
        return list(Catalog(self.location).repos())

    # -- search ------------------------------------------------------------------------
    def search(
        self,
        query: str,
        k: int = 10,
        *,
        repos: Sequence[str] = (),
        prefixes: Sequence[str] = (),
        disabled: frozenset[str] = frozenset(),
    ) -> SearchResult:
        """The ``k`` best chunks for ``query`` among ``repos`` (all when empty) under the
        path ``prefixes`` (all when empty); hits are :class:`CorpusHit`."""
        query = check_query(query).strip()
        words = keyword_query(query)
        if not query:
            return SearchResult(query, words, [])
        where = corpus_filter(repos, prefixes)
        n = max(self.settings.retrieve_k, 5 * k)
        try:
            return self._search(query, words, k, where, n, disabled)
        except SeekError:
            raise
        except Exception as exc:  # noqa: BLE001 - lance reports damage as many error types
            # one line, not LanceDB's traceback (a data file cut short or replaced); a
            # server answers it as a JSON error
            uri = self.location.uri
            line = self.table.unreadable(f"the corpus {uri}", exc)
            raise CorpusError(f"{line}: `seek corpus index {uri}` rebuilds it") from exc

    def _search(
        self,
        query: str,
        words: str,
        k: int,
        where: str | None,
        n: int,
        disabled: frozenset[str],
    ) -> SearchResult:
        timings: dict[str, float] = {}
        started = time.perf_counter()
        # Both passes run on the store's event loop while this thread embeds the question.
        keyword_job = self.table.keyword_hits(words, n, where)
        q = self._query_vector(query)
        wide = WHOLE_CORPUS if where is None else {}
        windows = wide.get("vector_windows", VECTOR_WINDOWS)
        ann = {k: wide[k] for k in ("nprobes", "refine_factor") if k in wide}
        vector_files = (
            self.table.vector_files(q, windows * n, where, self._exact(where), **ann).result()
            if q is not None
            else []
        )
        keyword_hits = keyword_job.result()
        timings["retrieve_ms"] = (time.perf_counter() - started) * 1000
        weight = semantic_weight(query, sig.QUERY_TYPE_WEIGHTING not in disabled)
        files = pool_files(vector_files, [(r, p) for r, p, _, _ in keyword_hits], weight,
                           self.settings.rrf_k, wide.get("pool_files", POOL_FILES))  # fmt: skip
        if not files:
            return SearchResult(query, words, [], (), timings)
        several = len({r for r, _ in files}) > 1
        name = (lambda r, p: f"{r}/{p}") if several else (lambda r, p: p)
        origin = {name(r, p): (r, p) for r, p in files}
        if len(self._path_vectors) > PATH_VECTORS_KEPT:
            self._path_vectors.clear()
        started = time.perf_counter()
        # While LanceDB reads the pool, this thread embeds its paths (the ranker's path
        # similarity; 0.9 ms a whole-corpus question, docs/research/bench-rounds.md,
        # "Scale, round four").
        data = self.table.fetch_files(files, meanwhile=lambda: self._embed_paths(list(origin), q))
        timings["fetch_ms"] = (time.perf_counter() - started) * 1000
        data["path"] = [name(r, p) for r, p in zip(data.pop("repo"), data["path"], strict=True)]
        pool = pool_pipeline(
            data, self.settings, self.embedding, q,
            [(name(r, p), c, s) for r, p, c, s in keyword_hits], self._path_vectors,
        )  # fmt: skip
        found = pool.search(query, k, disabled=disabled)
        timings.update(found.timings_ms)

        def with_repo(hit: Hit) -> CorpusHit:
            repo, path = origin[hit.path]
            return CorpusHit(path, hit.start_line, hit.end_line, hit.score, hit.content, repo)

        return replace(
            found,
            hits=[with_repo(h) for h in found.hits],
            context_hits=[with_repo(h) for h in found.context_hits],
            timings_ms=timings,
        )

    def _embed_paths(self, paths: list[str], q: np.ndarray | None) -> None:
        """Unit embeddings of the pool's paths into the cache the pool's ranker reads (its
        :class:`~seek.retrieve.embedding.PathVectors` shares it), as that ranker would make them."""
        if q is not None:
            document_prefix = task_prefixes(self.settings.model or self.model_id)[0]
            vectors = PathVectors(self.embedding, document_prefix, len(q))
            vectors.known = self._path_vectors
            vectors(paths)
