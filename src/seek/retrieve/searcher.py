"""An index loaded into memory, searched by vectors and keywords, then ranked.

Vector search runs on an in-memory float32 matrix of every window (exact cosine, one
matrix-vector product: measured faster than LanceDB's flat search, with perfect recall); the
keyword pass is BM25 over the keyword column, in memory with LanceDB's tokens and scores
(:mod:`.bm25`), or LanceDB's own on a helper thread for very large indexes. What a search
reads comes from the search cache (:mod:`.search_cache`) when it is current, else from the
table (and the cache is written again).
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import numpy as np

from seek.embed import Embedder, model_id_for, task_prefixes
from seek.errors import DamagedIndexError, SeekError
from seek.retrieve import chunks as chunk_stage
from seek.retrieve import lead_in
from seek.retrieve import signals as sig
from seek.retrieve.bm25 import Bm25
from seek.retrieve.embedding import IndexEmbedder, PathVectors
from seek.retrieve.fusion import fuse
from seek.retrieve.ranker import (
    BUILTIN_RANKER,
    POOL,
    Corpus,
    Ranker,
    Retrieval,
    features,
    load_ranker,
    ranked_pool,
)
from seek.retrieve.scope import EVERYTHING, Scope
from seek.retrieve.search_cache import (
    SearchData,
    cache_key,
    last_complete_key,
    load_cache,
    write_cache,
)
from seek.retrieve.signals import SIGNALS
from seek.retrieve.types import Hit, SearchResult
from seek.retrieve.versions import demote_older
from seek.settings import Settings
from seek.store import ChunkTable, LocalIndexStore, index_dir_for, load_manifest
from seek.store.table import KEYWORD_INDEX_MIN_CHUNKS
from seek.text import keyword_query
from seek.untrusted import check_query

log = logging.getLogger(__name__)

HYBRID, BM25_ONLY, VECTOR_ONLY = "hybrid", "bm25", "vector"
MODES = (HYBRID, BM25_ONLY, VECTOR_ONLY)
CANDIDATES_PER_RESULT = 5
"""Each retriever contributes ``5 x k`` candidates."""
WINDOW_BEST_WEIGHT = 0.3
"""A chunk's vector score = 0.3 x its best window + 0.7 x its windows' mean. Dev-set NDCG@10
for weights 1.0 (best window only) / 0.7 / 0.5 / 0.3 / 0.0 (mean only):
0.856 / 0.860 / 0.861 / 0.862 / 0.857; leave-one-repository-out CV picks 0.3 in every fold."""


KEYWORDS_IN_MEMORY_MAX_CHUNKS = KEYWORD_INDEX_MIN_CHUNKS - 1
"""Up to this many chunks (250,000) the keyword pass runs in memory on the search cache's
postings, and the table has no full-text index; above, it runs on LanceDB's full-text index
(see docs/research/bench-rounds.md, "Keyword search in memory")."""

SCOPE_FILTER_PATHS = 500
"""On LanceDB's keyword index, a search limited to at most this many files filters BM25 by
path; a wider one fetches ``SCOPE_OVERFETCH`` times the rows and keeps those in scope (in
memory, only the scope's chunks are scored)."""
SCOPE_OVERFETCH = 4
FIRST_FILES_MARGIN = 2
"""Files weighed by the chunk stage beyond the ``k`` a search shows (see
:meth:`Searcher._first_files_ranked`): room for hits that take in their next chunk."""


def damaged(root: Path, exc: BaseException) -> DamagedIndexError:
    detail = " ".join(str(exc).split())[:160] or type(exc).__name__
    return DamagedIndexError(
        f"the index of {root} is damaged ({detail}): run `seek index` to repair it"
    )


# One small pool for every searcher's keyword pass (searchers come and go as indexes change;
# a pool each would leave idle threads behind).
_KEYWORD_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="seek-bm25")


class Searcher:
    """An index loaded into memory for fast repeated searches."""

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
            self._load(data)
        except Exception as exc:  # lance reports damage as many error types
            raise damaged(root, exc) from exc

    @classmethod
    def open(cls, root: Path | str, settings: Settings, embedder: Embedder | None = None):
        return cls(Path(root).resolve(), settings, embedder)

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

    def _load(self, data: SearchData) -> None:
        self.paths = data.paths
        self.starts = data.starts
        self.ends = data.ends
        self.contents = data.contents
        self.chunk_numbers = data.chunk_numbers
        self.stems = [p.rpartition("/")[2].split(".", 1)[0].lower() for p in self.paths]
        self.stem_groups = sig.chunks_by_stem(self.stems)
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
        self.path_vectors = PathVectors(self._embedding, self.document_prefix, dims)
        self.corpus = Corpus(
            self.paths, self.contents, self.chunks_of_path, self.path_vectors, data.word_sets
        )
        self._chunk_of_key: dict[tuple[str, int], int] | None = None
        self._ranker: tuple[str, tuple[Ranker | None, str]] | None = None

    @property
    def chunk_of_key(self) -> dict[tuple[str, int], int]:
        """Chunk id of each (path, number in file): only LanceDB's keyword hits need it."""
        if self._chunk_of_key is None:
            keys = zip(self.paths, self.chunk_numbers.tolist(), strict=True)
            self._chunk_of_key = {key: n for n, key in enumerate(keys)}
        return self._chunk_of_key

    # -- retrievers ----------------------------------------------------------------------
    def query_vector(self, query: str) -> np.ndarray | None:
        embedder = self._embedding.get()
        if embedder is None or not len(self.vectors):
            return None
        q = embedder.embed([self.query_prefix + query])[0].astype(np.float32)
        return q / max(float(np.linalg.norm(q)), 1e-12)

    def chunk_similarities(self, q: np.ndarray) -> np.ndarray:
        """Each chunk's similarity to the query: a blend of its best window and its windows'
        mean, so a chunk that is on topic throughout beats one with a single lucky window."""
        sims = self.vectors @ q
        best = np.maximum.reduceat(sims, self.chunk_first_row)
        mean = np.add.reduceat(sims, self.chunk_first_row) / self.chunk_rows
        return WINDOW_BEST_WEIGHT * best + (1.0 - WINDOW_BEST_WEIGHT) * mean

    def vector_candidates(
        self, similarities: np.ndarray | None, n: int, chunk_ids: np.ndarray | None = None
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

    def keyword_scored(
        self, words: str, n: int, paths: list[str] | None = None
    ) -> list[tuple[int, float]]:
        """The ``n`` best BM25 matches as ``(chunk_id, BM25 score)``, best first, optionally
        only in ``paths``: in memory (:mod:`.bm25`), or by LanceDB's full-text index for an
        index of more than ``KEYWORDS_IN_MEMORY_MAX_CHUNKS`` chunks."""
        if not words:
            return []
        if self.keywords_in_memory:
            allowed = None
            if paths is not None:
                ids = [self.chunks_of_path[p] for p in paths if p in self.chunks_of_path]
                allowed = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
            return self.bm25.top(words, n, allowed)
        try:
            hits = self.table.keyword_scores(words, n, paths=paths)
        except Exception as exc:  # lance reports damage as many error types
            raise damaged(self.root, exc) from exc
        scored = [(self.chunk_of_key.get((path, chunk)), score) for path, chunk, score in hits]
        return [(i, float(score)) for i, score in scored if i is not None]

    def keyword_candidates(self, words: str, n: int, paths: list[str] | None = None) -> list[int]:
        return [i for i, _ in self.keyword_scored(words, n, paths)]

    def _keyword_passes(
        self, words: str, n: int, focus_paths: list[str], scope_paths: list[str] | None = None
    ) -> tuple[list[tuple[int, float]], list[int]]:
        if scope_paths is None:
            whole = self.keyword_scored(words, n)
        elif self.keywords_in_memory:  # exact: only the scope's chunks are scored
            whole = self.keyword_scored(words, n, scope_paths)
        elif not scope_paths:
            whole = []
        elif len(scope_paths) <= SCOPE_FILTER_PATHS:
            whole = self.keyword_scored(words, n, scope_paths)
        else:  # a long IN list costs more than fetching extra rows and dropping them
            allowed = set(scope_paths)
            more = self.keyword_scored(words, n * SCOPE_OVERFETCH)
            whole = [(i, s) for i, s in more if self.paths[i] in allowed][:n]
        focus = (
            self.keyword_candidates(words, self.settings.focus_k, focus_paths)
            if focus_paths
            else []
        )
        return whole, focus

    @property
    def keywords_in_memory(self) -> bool:
        return len(self.paths) <= KEYWORDS_IN_MEMORY_MAX_CHUNKS

    def has_keywords(self) -> bool:
        """In memory always; LanceDB's full-text index can be missing (a run that died)."""
        if self.keywords_in_memory:
            return True
        try:
            return self.table.has_keyword_index()
        except Exception as exc:  # lance reports damage as many error types
            raise damaged(self.root, exc) from exc

    # -- search ----------------------------------------------------------------------------
    def search(
        self,
        query: str,
        k: int = 10,
        *,
        focus: tuple[str, ...] = (),
        disabled: frozenset[str] = frozenset(),
        mode: str = HYBRID,
        scope: Scope = EVERYTHING,
    ) -> SearchResult:
        """The ``k`` best chunks for ``query``.

        ``focus`` names workspace-relative files the question is about (open files, the
        previous answer's sources): they get two extra passes of their own. ``disabled``
        switches ranking signals off; ``mode`` limits retrieval to one retriever; ``scope``
        limits the files hits may come from. With the
        learned ranker on, each hit's score is its probability of answering the question.
        """
        ranker, ranker_note = (None, "") if sig.LEARNED_RANKER in disabled else self.ranker()
        pool_size = max(k, POOL) if ranker is not None else k
        query = query.strip()
        pool, retrieval, result = self.candidates(
            query, pool_size, k=k, focus=focus, disabled=disabled, mode=mode, scope=scope
        )
        if ranker_note:
            result = result.with_notes_first([ranker_note])
        chunker = None
        if ranker is not None and pool:
            started = time.perf_counter()
            files, rows = features(query, pool, retrieval, self.corpus)
            probabilities = ranker.probabilities(rows)
            if sig.OLDER_COPIES not in disabled:
                probabilities = demote_older(query, files, probabilities, self.corpus.older())
            chunker = None if sig.CHUNK_RANKER in disabled else self.chunker()
            if chunker is None:
                pool = ranked_pool(pool, files, probabilities, self.paths)
            result.timings_ms["ranker_ms"] = (time.perf_counter() - started) * 1000
            if chunker is not None:
                started = time.perf_counter()
                lead_in_on = sig.LEAD_IN not in disabled
                pool, for_context = self._first_files_ranked(
                    query, pool, files, probabilities, retrieval, chunker, k, lead_in_on
                )
                context_hits = [self.hit(i, score) for i, score in for_context[:k]]
                result = replace(result, context_hits=context_hits)
                result.timings_ms["chunks_ms"] = (time.perf_counter() - started) * 1000
        if chunker is not None and sig.LEAD_IN not in disabled:
            hits = self.lead_in_hits(pool, k)
        else:
            hits = [self.hit(i, score) for i, score in pool[:k]]
        return replace(result, hits=hits, calibrated=ranker is not None and bool(pool))

    def lead_in_hits(self, order: list[tuple[int, float]], k: int) -> list[Hit]:
        """The first ``k`` hits of ``order``, a hit that ends with the doc comment of the next
        definition running on through it (:mod:`.lead_in`)."""
        hits = []
        chosen = lead_in.with_lead_ins(
            order, self.paths, self.starts, self.ends, self.contents, self.chunks_of_path, k
        )
        for chunk_id, score, joined in chosen:
            hit = self.hit(chunk_id, score)
            if joined is not None:
                content = lead_in.joined_content(
                    hit.content, self.ends[chunk_id], self.contents[joined], self.starts[joined]
                )
                hit = replace(hit, end_line=self.ends[joined] + 1, content=content)
            hits.append(hit)
        return hits

    def _first_files_ranked(
        self,
        query: str,
        pool: list[tuple[int, float]],
        files: list[str],
        probabilities: np.ndarray,
        retrieval: Retrieval,
        chunker: chunk_stage.ChunkRanker,
        k: int,
        lead_in_on: bool,
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        """:meth:`_rank_chunks`' two orders, as far as the ``k`` hits need them: the chunk
        stage weighs only the ``FIRST_FILES_MARGIN + max(k, TOP_FILES)`` most probable files
        (and files as probable as the last) when that decides the ``k`` hits exactly. A
        chunk scores at most its file's probability (rest weights of at most 1), so every
        entry that scores more than the best file left out is where the whole order puts
        it: the returned orders are those entries, and when the hits (lead-ins included)
        and context hits cannot be taken from them alone, everything is weighed. Weighing
        every chunk of twenty files for ten hits was most of a whole-corpus question's
        time (seek.corpus.search)."""
        keep = max(k, chunk_stage.TOP_FILES) + FIRST_FILES_MARGIN
        bounded = max(chunker.rest_weight, chunker.context_rest_weight) <= 1.0
        if len(files) > keep and bounded:
            p = np.asarray(probabilities, dtype=np.float64)
            floor = float(np.sort(p)[::-1][keep - 1])
            kept = p >= floor
            if not kept.all():
                cut = float(p[~kept].max())
                row_of = {path: row for row, path in enumerate(files)}
                some = [(i, s) for i, s in pool if kept[row_of[self.paths[i]]]]
                order, for_context = self._rank_chunks(
                    query, pool, files, probabilities, retrieval, chunker, some
                )
                order = [(i, s) for i, s in order if s > cut]
                for_context = [(i, s) for i, s in for_context if s > cut]
                hits = len(self.lead_in_hits(order, k)) if lead_in_on else min(len(order), k)
                if hits >= k and len(for_context) >= k:
                    return order, for_context
        return self._rank_chunks(query, pool, files, probabilities, retrieval, chunker)

    def _rank_chunks(
        self,
        query: str,
        pool: list[tuple[int, float]],
        files: list[str],
        probabilities: np.ndarray,
        retrieval: Retrieval,
        chunker: chunk_stage.ChunkRanker,
        some: list[tuple[int, float]] | None = None,
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        """The chunk stage (:mod:`.chunks`): the right part of each ranked file first; the
        order for a search, and the one for ``seek context`` (more parts of likely files)."""
        chosen = chunk_stage.candidates(
            pool if some is None else some, files, probabilities, self.corpus,
            retrieval.similarities,
        )  # fmt: skip
        rows = chunk_stage.features(query, chosen, pool, retrieval, self.corpus)
        p_chunk = chunker.probabilities(rows)
        return (
            chunk_stage.ordered(chosen, p_chunk, probabilities, chunker.rest_weight, chunker.power),
            chunk_stage.ordered(
                chosen,
                p_chunk,
                probabilities,
                chunker.context_rest_weight,
                chunker.context_power,
            ),
        )

    def chunker(self) -> chunk_stage.ChunkRanker | None:
        """The built-in chunk stage, with the learned ranker only (it ranks the ranker's
        files); None when its model file is missing or stale (results then keep the
        ranker's order of each file's fused candidates)."""
        if self.settings.ranker_model == "off":
            return None
        try:
            return chunk_stage.load_chunker(str(chunk_stage.BUILTIN_CHUNKER))
        except (OSError, ValueError, KeyError):
            return None

    def hit(self, chunk_id: int, score: float) -> Hit:
        """Chunk ``chunk_id`` as a hit (1-based lines)."""
        return Hit(
            self.paths[chunk_id],
            self.starts[chunk_id] + 1,
            self.ends[chunk_id] + 1,
            round(score, 6),
            self.contents[chunk_id],
        )

    def ranker(self) -> tuple[Ranker | None, str]:
        """The learned ranker of the settings (None when switched off or unusable, with a
        note saying why in the second case)."""
        choice = self.settings.ranker_model
        if choice == "off":
            return None, ""
        if self._ranker is not None and self._ranker[0] == choice:
            return self._ranker[1]  # resolving the path cost more than the ranker's features
        path = Path(choice).expanduser() if choice else BUILTIN_RANKER
        try:
            found: tuple[Ranker | None, str] = (load_ranker(str(path.resolve())), "")
        except (OSError, ValueError, KeyError) as exc:
            return (
                None,
                f"The ranker {path} could not be loaded ({exc}), so results are in fused order.",
            )
        self._ranker = (choice, found)
        return found

    def candidates(
        self,
        query: str,
        n_best: int,
        *,
        k: int | None = None,
        focus: tuple[str, ...] = (),
        disabled: frozenset[str] = frozenset(),
        mode: str = HYBRID,
        scope: Scope = EVERYTHING,
    ) -> tuple[list[tuple[int, float]], Retrieval, SearchResult]:
        """The ``n_best`` chunks by fused score and signals, as ``(chunk_id, score)``; what the
        retrievers saw; and a result (no hits yet) with the notes and timings so far. Each
        retriever contributes ``5 x k`` candidates (``k`` = the results wanted, default
        ``n_best``): the ranker's larger pool re-orders those, it does not fetch more."""
        if mode not in MODES:
            raise SeekError(f"mode must be one of {', '.join(MODES)}")
        unknown = disabled - set(SIGNALS)
        if unknown:
            raise SeekError(f"unknown signals: {', '.join(sorted(unknown))}")
        timings: dict[str, float] = {}
        notes: list[str] = []
        query = check_query(query).strip()
        words = keyword_query(query)
        n = max(self.settings.retrieve_k, CANDIDATES_PER_RESULT * (k or n_best))
        empty = Retrieval(None, {}, {}, {})
        if not query or not self.paths:
            return [], empty, SearchResult(query, words, [], tuple(notes), timings)

        started = time.perf_counter()
        scope_paths = (
            None if scope.everything else [p for p in self.chunks_of_path if scope.keeps(p)]
        )
        scope_ids = (
            np.concatenate([self.chunks_of_path[p] for p in scope_paths] or [np.array([], int)])
            if scope_paths is not None
            else None
        )
        focus_paths = [p for p in dict.fromkeys(focus) if p in self.chunks_of_path]
        focus_paths = [p for p in focus_paths if scope.keeps(p)][: self.settings.focus_files]
        # LanceDB's keyword passes (which release the GIL) run on a helper thread while this
        # one embeds the query and multiplies the vector matrix; in memory they take less
        # than the hand-over, so they run here, after the vectors.
        keyword_job: Future | None = None
        if mode != VECTOR_ONLY and not self.keywords_in_memory:
            keyword_job = _KEYWORD_POOL.submit(
                self._keyword_passes, words, n, focus_paths, scope_paths
            )
        q: np.ndarray | None = None
        if mode != BM25_ONLY:
            try:
                q = self.query_vector(query)
            except SeekError as exc:
                notes.append(f"The embedder failed ({exc}), so only keywords were matched.")
            if self._embedding.embedder is None:
                notes.append(
                    f"The index was built with {self.model_id}, not "
                    f"{model_id_for(self.settings)}, so only keywords were matched."
                )
        similarities = self.chunk_similarities(q) if q is not None else None
        vector_ids = self.vector_candidates(similarities, n, scope_ids)
        focus_vector_ids: list[int] = []
        if focus_paths:
            focus_ids = np.concatenate([self.chunks_of_path[p] for p in focus_paths])
            focus_vector_ids = self.vector_candidates(
                similarities, self.settings.focus_k, focus_ids
            )
        timings["vector_ms"] = (time.perf_counter() - started) * 1000
        if keyword_job is not None and not self.has_keywords():
            notes.append("The keyword index is missing, so only vectors were matched: "
                         "`seek index` rebuilds it.")  # fmt: skip
        keyword_scored: list[tuple[int, float]] = []
        focus_keyword_ids: list[int] = []
        if keyword_job is not None:
            keyword_scored, focus_keyword_ids = keyword_job.result()
        elif mode != VECTOR_ONLY:
            keyword_scored, focus_keyword_ids = self._keyword_passes(
                words, n, focus_paths, scope_paths
            )
        keyword_ids = [i for i, _ in keyword_scored]
        timings["keyword_ms"] = (time.perf_counter() - started) * 1000

        started = time.perf_counter()
        if mode == HYBRID:
            weight = sig.semantic_weight(query, sig.QUERY_TYPE_WEIGHTING not in disabled)
        else:
            weight = 1.0 if mode == VECTOR_ONLY else 0.0
        scores = fuse(
            [
                (vector_ids, weight),
                (keyword_ids, 1.0 - weight),
                (focus_vector_ids, weight),
                (focus_keyword_ids, 1.0 - weight),
            ],
            self.settings.rrf_k,
        )
        pool = self._rank(scores, query, n_best, disabled, mode) if scores else []
        timings["rank_ms"] = (time.perf_counter() - started) * 1000
        retrieval = Retrieval(
            similarities,
            {chunk_id: rank for rank, chunk_id in enumerate(vector_ids, 1)},
            {chunk_id: rank for rank, chunk_id in enumerate(keyword_ids, 1)},
            dict(keyword_scored),
            q,
        )
        return pool, retrieval, SearchResult(query, words, [], tuple(notes), timings)

    def _rank(
        self, scores: dict[int, float], query: str, k: int, disabled: frozenset[str], mode: str
    ) -> list[tuple[int, float]]:
        if sig.FILE_COHERENCE not in disabled:
            sig.file_coherence(scores, self.paths)
        best = max(scores.values())  # boosts are in units of the best score before them
        if sig.is_symbol_query(query):
            if sig.DEFINITION_BOOST not in disabled:
                sig.symbol_query_boost(
                    scores, query, best, self.contents, self.stems, self.stem_groups
                )
        else:
            if sig.STEM_BOOST not in disabled:
                sig.stem_boost(scores, query, best, self.paths)
            if sig.EMBEDDED_IDENTIFIER_BOOST not in disabled:
                sig.embedded_identifier_boost(
                    scores, query, best, self.contents, self.stems, self.stem_groups
                )
        if sig.PATH_PENALTIES not in disabled and mode != VECTOR_ONLY:
            sig.apply_path_penalties(scores, self.paths)
        if sig.NON_CODE_PENALTY not in disabled:
            sig.apply_non_code_penalty(scores, self.paths)
        return sig.select_top(scores, self.paths, k, saturate=sig.FILE_SATURATION not in disabled)
