"""The search pipeline over a loaded index (seek.md §5 "Retrieval"; design.md "Layout as
seek grows"): the two retrievers (:mod:`.retrievers`), fused by reciprocal rank
(:mod:`.fusion`), the code-aware signals (:mod:`.signals`), then the learned ranker
(:mod:`.ranker`), the chunk stage (:mod:`.chunks`) and lead-ins (:mod:`.lead_in`).

A workspace's :class:`~.searcher.Searcher` and a corpus question's pool
(:mod:`seek.corpus.search`) each build one over their :class:`~.loaded.LoadedIndex`, with
the retrievers that fit where their rows came from.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from seek.embed import model_id_for
from seek.errors import SeekError
from seek.retrieve import chunks as chunk_stage
from seek.retrieve import lead_in
from seek.retrieve import signals as sig
from seek.retrieve.embedding import IndexEmbedder
from seek.retrieve.fusion import fuse
from seek.retrieve.loaded import LoadedIndex
from seek.retrieve.ranker import (
    BUILTIN_RANKER,
    POOL,
    Ranker,
    Retrieval,
    features,
    load_ranker,
    ranked_pool,
)
from seek.retrieve.retrievers import Keywords, vector_candidates
from seek.retrieve.scope import EVERYTHING, Scope
from seek.retrieve.signals.boosts import file_coherence, stem_boost
from seek.retrieve.signals.definitions import (
    embedded_identifier_boost,
    graph_definition_boost,
    symbol_query_boost,
)
from seek.retrieve.signals.penalties import apply_non_code_penalty, apply_path_penalties, select_top
from seek.retrieve.signals.query import is_symbol_query, last_segment, semantic_weight
from seek.retrieve.types import Hit, SearchResult, Symbol
from seek.retrieve.versions import demote_older
from seek.settings import Settings
from seek.text import keyword_query
from seek.untrusted import check_query

HYBRID, BM25_ONLY, VECTOR_ONLY = "hybrid", "bm25", "vector"
MODES = (HYBRID, BM25_ONLY, VECTOR_ONLY)
CANDIDATES_PER_RESULT = 5
"""Each retriever contributes ``5 x k`` candidates."""
FIRST_FILES_MARGIN = 2
"""Files weighed by the chunk stage beyond the ``k`` a search shows (see
:meth:`SearchPipeline._first_files_ranked`): room for hits that take in their next chunk."""

# One small pool for every searcher's keyword pass (searchers come and go as indexes change;
# a pool each would leave idle threads behind).
_KEYWORD_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="seek-bm25")

Order = list[tuple[int, float]]
"""``(chunk_id, score)``, best first."""


@dataclass(frozen=True, slots=True)
class RankedFiles:
    """The learned ranker's verdict on one question's pool: what the chunk stage orders."""

    query: str
    pool: Order
    files: list[str]
    probabilities: np.ndarray
    retrieval: Retrieval
    chunker: chunk_stage.ChunkRanker


class SearchPipeline:
    """Retrieval, fusion, signals and ranking over one loaded index.

    ``query_vector`` gives the question's unit embedding (None: keywords only);
    ``embedding`` is the index's embedder: a result says so when there is none (the
    settings name another model than the index's)."""

    def __init__(
        self,
        index: LoadedIndex,
        settings: Settings,
        embedding: IndexEmbedder,
        query_vector: Callable[[str], np.ndarray | None],
        keywords: Keywords,
        definitions: Callable[[str], list[tuple[str, Symbol]]] | None = None,
    ) -> None:
        self.index, self.settings, self.embedding = index, settings, embedding
        self.query_vector, self.keywords = query_vector, keywords
        self.definitions = definitions
        """Every definition of a name the code graph knows, as (path, symbol)
        (:meth:`seek.retrieve.symbols.HitSymbols.defined`; None: no graph evidence)."""
        self._ranker: tuple[str, tuple[Ranker | None, str]] | None = None

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
            corpus = self.index.corpus
            files, rows = features(query, pool, retrieval, corpus)
            probabilities = ranker.probabilities(rows)
            if sig.OLDER_COPIES not in disabled:
                probabilities = demote_older(query, files, probabilities, corpus.older())
            chunker = None if sig.CHUNK_RANKER in disabled else self.chunker()
            if chunker is None:
                pool = ranked_pool(pool, files, probabilities, self.index.paths)
            result.timings_ms["ranker_ms"] = (time.perf_counter() - started) * 1000
            if chunker is not None:
                started = time.perf_counter()
                lead_in_on = sig.LEAD_IN not in disabled
                ranked = RankedFiles(query, pool, files, probabilities, retrieval, chunker)
                pool, for_context = self._first_files_ranked(ranked, k, lead_in_on)
                context_hits = [self.index.hit(i, score) for i, score in for_context[:k]]
                result = replace(result, context_hits=context_hits)
                result.timings_ms["chunks_ms"] = (time.perf_counter() - started) * 1000
        if chunker is not None and sig.LEAD_IN not in disabled:
            hits = self.lead_in_hits(pool, k)
        else:
            hits = [self.index.hit(i, score) for i, score in pool[:k]]
        return replace(result, hits=hits, calibrated=ranker is not None and bool(pool))

    def lead_in_hits(self, order: Order, k: int) -> list[Hit]:
        """The first ``k`` hits of ``order``, a hit that ends with the doc comment of the next
        definition running on through it (:mod:`.lead_in`)."""
        index = self.index
        hits = []
        chosen = lead_in.with_lead_ins(
            order, index.paths, index.starts, index.ends, index.contents, index.chunks_of_path, k
        )
        for chunk_id, score, joined in chosen:
            hit = index.hit(chunk_id, score)
            if joined is not None:
                content = lead_in.joined_content(
                    hit.content, index.ends[chunk_id], index.contents[joined], index.starts[joined]
                )
                hit = replace(hit, end_line=index.ends[joined] + 1, content=content)
            hits.append(hit)
        return hits

    def _first_files_ranked(
        self, ranked: RankedFiles, k: int, lead_in_on: bool
    ) -> tuple[Order, Order]:
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
        chunker, files = ranked.chunker, ranked.files
        bounded = max(chunker.rest_weight, chunker.context_rest_weight) <= 1.0
        if len(files) > keep and bounded:
            p = np.asarray(ranked.probabilities, dtype=np.float64)
            floor = float(np.sort(p)[::-1][keep - 1])
            kept = p >= floor
            if not kept.all():
                cut = float(p[~kept].max())
                row_of = {path: row for row, path in enumerate(files)}
                paths = self.index.paths
                some = [(i, s) for i, s in ranked.pool if kept[row_of[paths[i]]]]
                order, for_context = self._rank_chunks(ranked, some)
                order = [(i, s) for i, s in order if s > cut]
                for_context = [(i, s) for i, s in for_context if s > cut]
                hits = len(self.lead_in_hits(order, k)) if lead_in_on else min(len(order), k)
                if hits >= k and len(for_context) >= k:
                    return order, for_context
        return self._rank_chunks(ranked)

    def _rank_chunks(self, ranked: RankedFiles, some: Order | None = None) -> tuple[Order, Order]:
        """The chunk stage (:mod:`.chunks`): the right part of each ranked file first; the
        order for a search, and the one for ``seek context`` (more parts of likely files).
        ``some``: only these candidates of the pool are weighed."""
        query, pool, probabilities = ranked.query, ranked.pool, ranked.probabilities
        retrieval, chunker, corpus = ranked.retrieval, ranked.chunker, self.index.corpus
        chosen = chunk_stage.candidates(
            pool if some is None else some, ranked.files, probabilities, corpus,
            retrieval.similarities,
        )  # fmt: skip
        rows = chunk_stage.features(query, chosen, pool, retrieval, corpus)
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

    # -- retrieval and fusion --------------------------------------------------------------
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
    ) -> tuple[Order, Retrieval, SearchResult]:
        """The ``n_best`` chunks by fused score and signals, as ``(chunk_id, score)``; what the
        retrievers saw; and a result (no hits yet) with the notes and timings so far. Each
        retriever contributes ``5 x k`` candidates (``k`` = the results wanted, default
        ``n_best``): the ranker's larger pool re-orders those, it does not fetch more."""
        if mode not in MODES:
            raise SeekError(f"mode must be one of {', '.join(MODES)}")
        unknown = disabled - set(sig.SIGNALS)
        if unknown:
            raise SeekError(f"unknown signals: {', '.join(sorted(unknown))}")
        index, keywords = self.index, self.keywords
        timings: dict[str, float] = {}
        notes: list[str] = []
        query = check_query(query).strip()
        words = keyword_query(query)
        n = max(self.settings.retrieve_k, CANDIDATES_PER_RESULT * (k or n_best))
        empty = Retrieval(None, {}, {}, {})
        if not query or not index.paths:
            return [], empty, SearchResult(query, words, [], tuple(notes), timings)

        started = time.perf_counter()
        scope_paths = (
            None if scope.everything else [p for p in index.chunks_of_path if scope.keeps(p)]
        )
        scope_ids = index.chunks_in(scope_paths) if scope_paths is not None else None
        focus_paths = [p for p in dict.fromkeys(focus) if p in index.chunks_of_path]
        focus_paths = [p for p in focus_paths if scope.keeps(p)][: self.settings.focus_files]
        # LanceDB's keyword passes (which release the GIL) run on a helper thread while this
        # one embeds the query and multiplies the vector matrix; in memory they take less
        # than the hand-over, so they run here, after the vectors.
        keyword_job: Future | None = None
        if mode != VECTOR_ONLY and not keywords.in_memory:
            keyword_job = _KEYWORD_POOL.submit(
                self._keyword_passes, words, n, focus_paths, scope_paths
            )
        q: np.ndarray | None = None
        if mode != BM25_ONLY:
            try:
                q = self.query_vector(query)
            except SeekError as exc:
                notes.append(f"The embedder failed ({exc}), so only keywords were matched.")
            if self.embedding.embedder is None:
                notes.append(
                    f"The index was built with {self.embedding.model_id}, not "
                    f"{model_id_for(self.settings)}, so only keywords were matched."
                )
        similarities = index.chunk_similarities(q) if q is not None else None
        vector_ids = vector_candidates(similarities, n, scope_ids)
        focus_vector_ids: list[int] = []
        if focus_paths:
            focus_ids = index.chunks_in(focus_paths)
            focus_vector_ids = vector_candidates(similarities, self.settings.focus_k, focus_ids)
        timings["vector_ms"] = (time.perf_counter() - started) * 1000
        if keyword_job is not None and not keywords.available():
            notes.append("The keyword index is missing, so only vectors were matched: "
                         "`seek index` rebuilds it.")  # fmt: skip
        keyword_scored: Order = []
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
            weight = semantic_weight(query, sig.QUERY_TYPE_WEIGHTING not in disabled)
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
        pool = self._rank(scores, query, n_best, disabled, mode, scope) if scores else []
        timings["rank_ms"] = (time.perf_counter() - started) * 1000
        retrieval = Retrieval(
            similarities,
            {chunk_id: rank for rank, chunk_id in enumerate(vector_ids, 1)},
            {chunk_id: rank for rank, chunk_id in enumerate(keyword_ids, 1)},
            dict(keyword_scored),
            q,
        )
        return pool, retrieval, SearchResult(query, words, [], tuple(notes), timings)

    def _located(
        self, defined: list[tuple[str, Symbol]]
    ) -> list[tuple[int, str, str | None, bool]]:
        """(chunk id, kind, container, whether it has lines past its first) of each
        definition: the chunk holding its first line (a file the loaded rows do not hold,
        the definitions being a run newer, is skipped)."""
        index = self.index
        out = []
        for path, symbol in defined:
            ids = index.chunks_of_path.get(path)
            if ids is None:
                continue
            line = symbol.line - 1  # the rows' lines are 0-based
            holding = (c for c in ids.tolist() if index.starts[c] <= line <= index.ends[c])
            chunk_id = next(holding, None)
            if chunk_id is not None:
                out.append((chunk_id, symbol.kind, symbol.container, symbol.end_line > symbol.line))
        return out

    def _keyword_passes(
        self, words: str, n: int, focus_paths: list[str], scope_paths: list[str] | None = None
    ) -> tuple[Order, list[int]]:
        """The keyword list of the whole index (or of the scope), and of the focus files."""
        if scope_paths is None:
            whole = self.keywords.scored(words, n)
        else:
            whole = self.keywords.in_scope(words, n, scope_paths)
        focus = (
            self.keywords.candidates(words, self.settings.focus_k, focus_paths)
            if focus_paths
            else []
        )
        return whole, focus

    def _rank(
        self,
        scores: dict[int, float],
        query: str,
        k: int,
        disabled: frozenset[str],
        mode: str,
        scope: Scope = EVERYTHING,
    ) -> Order:
        """The signals over the fused scores, then the top ``k`` (file saturation)."""
        paths, contents = self.index.paths, self.index.contents
        stems, stem_groups = self.index.stems, self.index.stem_groups
        if sig.FILE_COHERENCE not in disabled:
            file_coherence(scores, paths)
        best = max(scores.values())  # boosts are in units of the best score before them
        candidates = set(scores)
        if is_symbol_query(query):
            if sig.DEFINITION_BOOST not in disabled:
                found = symbol_query_boost(scores, query, best, contents, stems, stem_groups)
                if not found and self.definitions is not None:
                    located = self._located(self.definitions(last_segment(query)))
                    graph_definition_boost(scores, query, best, located, stems)
        else:
            if sig.STEM_BOOST not in disabled:
                stem_boost(scores, query, best, paths)
            if sig.EMBEDDED_IDENTIFIER_BOOST not in disabled:
                embedded_identifier_boost(scores, query, best, contents, stems, stem_groups)
        if not scope.everything:  # a definition pulled in from outside what may be returned
            for chunk_id in scores.keys() - candidates:
                if not scope.keeps(paths[chunk_id]):
                    del scores[chunk_id]
        if sig.PATH_PENALTIES not in disabled and mode != VECTOR_ONLY:
            apply_path_penalties(scores, paths)
        if sig.NON_CODE_PENALTY not in disabled:
            apply_non_code_penalty(scores, paths)
        return select_top(scores, paths, k, saturate=sig.FILE_SATURATION not in disabled)
