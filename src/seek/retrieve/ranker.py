"""The learned ranker: re-orders the top candidates and gives each a calibrated probability.

The hand-tuned signals (:mod:`.signals`) produce a fused score; the ranker looks at the files
of the top ``POOL`` candidates again with what the fused score throws away - each
retriever's rank and raw score, the question's similarity to the file's path and to all its
chunks, how much of the question the chunk, the file and its path contain, definitions -
and a logistic regression trained on judged questions (``bench/train/train_ranker.py``, see
MODELS.md) turns them into ``P(the file answers the question)``. The probability is
calibrated, so ``rerank_threshold`` (0.08) means the same for every question.

The model is a JSON file (feature names, standardisation, layers); evaluation is numpy only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from seek.retrieve.signals.definitions import defines
from seek.retrieve.signals.names import path_matches, query_keywords
from seek.retrieve.signals.penalties import is_non_code, path_penalty
from seek.retrieve.signals.query import embedded_identifiers, is_symbol_query, symbol_names
from seek.retrieve.versions import older_copies
from seek.retrieve.wordsets import WordSets, identifier_words, may_hold
from seek.text import IDENTIFIER

POOL = 30
"""Candidates the ranker re-orders (the fused top 30 nearly always holds a relevant chunk)."""
BUILTIN_RANKER = Path(__file__).resolve().parent.parent / "models" / "ranker.json"


@dataclass(frozen=True)
class Retrieval:
    """What the retrievers saw for one question, beyond the fused scores."""

    similarities: np.ndarray | None
    """Every chunk's dense similarity to the question (None when vectors were not used)."""
    vector_ranks: Mapping[int, int]
    """1-based rank of each chunk in the dense list."""
    keyword_ranks: Mapping[int, int]
    """1-based rank of each chunk in the BM25 list."""
    keyword_scores: Mapping[int, float]
    """BM25 score of each chunk in the BM25 list."""
    query_vector: np.ndarray | None = None
    """The question's unit embedding (None when vectors were not used)."""


FEATURES: tuple[str, ...] = (
    # The file's candidates, from the fused order
    "best_fused_share",  # the file's best fused score / the pool's best
    "sum_fused_share",
    "best_inv_rank",  # 1 / the fused rank of the file's best candidate
    "best_log_rank",
    "log_candidates",  # how many of the pool's candidates the file holds
    # Dense similarity
    "best_dense",  # the best candidate's similarity to the question
    "best_dense_gap",  # ... minus the pool's best
    "mean_dense",
    "file_dense",  # the best similarity over every chunk of the file
    "mean_file_dense",  # the mean similarity over every chunk of the file
    "path_dense",  # the question's similarity to the file's path (embedded like a chunk)
    "path_dense_gap",  # ... minus the best in the pool
    "best_dense_inv_rank",
    # Keywords
    "best_bm25_inv_rank",
    "best_bm25_share",  # BM25 score / the best BM25 score
    "best_coverage",  # share of the question's words found in one candidate
    "best_coverage_idf",  # the same, each word weighted by its rarity in the pool
    "file_coverage",  # share of the question's words found anywhere in the file
    "path_coverage",  # share of the question's words in the file and folder name
    "defines_query_name",
    # The file and the question
    "log_path_penalty",
    "non_code",
    "log_file_chunks",
    "symbol_query",
    "question_words",  # log of the question's keyword count
)


@lru_cache(maxsize=8192)
def chunk_words(content: str) -> frozenset[str]:
    """Stemmed words of a chunk: identifiers whole and split, lower-cased."""
    return frozenset().union(*map(identifier_words, set(IDENTIFIER.findall(content))))


@dataclass(frozen=True)
class Corpus:
    """What the features read from the loaded index."""

    paths: Sequence[str]
    contents: Sequence[str]
    chunks_of_path: Mapping[str, np.ndarray]
    """Each file's chunk ids, increasing (file order: the chunk stage binary-searches them)."""
    path_vectors: Callable[[Sequence[str]], np.ndarray] | None = None
    """Unit embeddings of paths, by the index's embedder."""
    word_sets: WordSets | None = None
    """Every chunk's :func:`chunk_words`, precomputed (the search cache's); None: from the
    text when asked."""
    _file_words: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)
    _words: dict[int, frozenset[str]] = field(default_factory=dict, repr=False)
    _older: dict[str, dict[str, str]] = field(default_factory=dict, repr=False)
    _kept: dict[tuple[str, str], Any] = field(default_factory=dict, repr=False)

    def older(self) -> dict[str, str]:
        """Files under an older copy of the code (:mod:`.versions`), found once per index."""
        if "paths" not in self._older:
            self._older["paths"] = older_copies(self.chunks_of_path)
        return self._older["paths"]

    def words(self, chunk_id: int) -> frozenset[str]:
        """:func:`chunk_words` of a chunk."""
        if self.word_sets is not None:
            return self.word_sets.of(chunk_id)
        found = self._words.get(chunk_id)
        if found is None:
            found = self._words[chunk_id] = chunk_words(self.contents[chunk_id])
        return found

    def words_among(self, chunk_id: int, wanted: frozenset[str]) -> frozenset[str]:
        """``words(chunk_id) & wanted``. Without precomputed word sets (a corpus question's
        pool, met once) a chunk that lacks every wanted stem's probe
        (:func:`~seek.retrieve.wordsets.may_hold`) is not tokenized: tokenizing every chunk
        of a pool's files was most of a whole-corpus question's time."""
        if self.word_sets is not None:
            return self.word_sets.of(chunk_id) & wanted
        maybe = may_hold(self.contents[chunk_id], wanted)
        return self.words(chunk_id) & maybe if maybe else maybe

    def file_words_among(self, path: str, wanted: frozenset[str]) -> frozenset[str]:
        """``file_words(path) & wanted``, tokenizing as :meth:`words_among` does."""
        if self.word_sets is not None:
            return self.file_words(path) & wanted
        found: frozenset[str] = frozenset()
        for chunk_id in self.chunks_of_path[path].tolist():
            if len(found) == len(wanted):
                break
            found |= self.words_among(chunk_id, wanted - found)
        return found

    def file_positions(self) -> np.ndarray:
        """Each chunk's place in its file (0 for the first), found once per index."""
        found = self._kept.get(("", "file_positions"))
        if found is None:
            found = np.zeros(len(self.paths), dtype=np.int64)
            for ids in self.chunks_of_path.values():
                found[ids] = np.arange(len(ids))
            self._kept[("", "file_positions")] = found
        return found

    def kept(self, path: str, kind: str, make: Callable[[Corpus, str], Any]) -> Any:
        """``make(self, path)``, computed once per file and ``kind`` while the index is
        loaded (per-file arrays a stage reads for each question)."""
        key = (kind, path)
        found = self._kept.get(key)
        if found is None:
            found = self._kept[key] = make(self, path)
        return found

    def file_words(self, path: str) -> frozenset[str]:
        """Stemmed words of every chunk of a file, kept while the index is loaded (the union
        over a large file's chunks was most of the ranker's time when made per question)."""
        words = self._file_words.get(path)
        if words is None:
            chunks = self.chunks_of_path[path]
            words = frozenset().union(*(self.words(i) for i in chunks.tolist()))
            self._file_words[path] = words
        return words


def files_in_pool(pool: Sequence[tuple[int, float]], paths: Sequence[str]) -> dict[str, list[int]]:
    """Pool positions of each file's candidates, files in order of their best candidate."""
    files: dict[str, list[int]] = {}
    for position, (chunk_id, _) in enumerate(pool):
        files.setdefault(paths[chunk_id], []).append(position)
    return files


def features(
    query: str,
    pool: Sequence[tuple[int, float]],
    retrieval: Retrieval,
    corpus: Corpus,
) -> tuple[list[str], np.ndarray]:
    """The pool's files (in order of their best candidate) and one row of :data:`FEATURES`
    each. Almost every judged answer is a whole file, and a second chunk of a file already
    shown adds little, so the ranker orders files."""
    files = files_in_pool(pool, corpus.paths)
    out = np.zeros((len(files), len(FEATURES)), dtype=np.float64)
    if not files:
        return [], out
    keywords = query_keywords(query)
    symbol = is_symbol_query(query)
    names = symbol_names(query) if symbol else embedded_identifiers(query)
    ids = np.array([chunk_id for chunk_id, _ in pool], dtype=np.int64)
    fused = np.array([score for _, score in pool]) / max(max(s for _, s in pool), 1e-12)
    sims = retrieval.similarities
    dense = sims[ids] if sims is not None else np.zeros(len(ids))
    best_bm25 = max(retrieval.keyword_scores.values(), default=0.0) or 1.0
    words = list(keywords)
    wanted = frozenset(words)
    hits = [[w in found for w in words] for found in
            (corpus.words_among(i, wanted) for i in ids.tolist())]  # fmt: skip
    # A word found in every candidate says little: weight each by its rarity in the pool.
    doc_freq = [sum(column) for column in zip(*hits, strict=True)] if hits else []
    idf = [math.log((len(ids) + 1) / (df + 0.5)) for df in doc_freq]
    idf_total = sum(idf) or 1.0
    q = retrieval.query_vector
    if q is not None and corpus.path_vectors is not None:
        path_dense = corpus.path_vectors(list(files)) @ q
    else:
        path_dense = np.zeros(len(files))

    def coverage(found: frozenset[str]) -> float:
        return sum(1 for w in keywords if w in found) / len(keywords) if keywords else 0.0

    # The pool's positions grouped by file: per-file maxima and sums are one ``reduceat``
    # each (the same reductions as per file, so the same numbers).
    groups = list(files.values())
    order = np.array([p for positions in groups for p in positions], dtype=np.int64)
    counts = np.array([len(positions) for positions in groups], dtype=np.int64)
    starts = np.zeros(len(groups), dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    firsts = np.array([positions[0] for positions in groups], dtype=np.int64)
    id_list = ids.tolist()

    def per_file_max(values: np.ndarray) -> np.ndarray:
        return np.maximum.reduceat(values[order], starts)

    def per_file_sum(values: np.ndarray) -> np.ndarray:
        # ``reduceat`` adds three or more values in another order than ``sum``: those
        # (rare) files are summed on their own, so every bit stays as it was.
        sums = np.add.reduceat(values[order], starts)
        for g in np.flatnonzero(counts > 2).tolist():
            sums[g] = values[groups[g]].sum()
        return sums

    dense_best = per_file_max(dense)
    out[:, 0] = per_file_max(fused)
    out[:, 1] = per_file_sum(fused)
    out[:, 2] = 1.0 / (firsts + 1)
    out[:, 3] = [math.log2(p + 1) for p in firsts.tolist()]
    out[:, 4] = [math.log(n) for n in counts.tolist()]
    out[:, 5] = dense_best
    out[:, 6] = dense_best - dense.max()
    # ``mean`` as numpy makes it: the sum in the values' type, divided in float64, rounded
    # back (a no-op for the float64 similarities a searcher gives).
    out[:, 7] = (per_file_sum(dense).astype(np.float64) / counts).astype(dense.dtype)
    file_chunks = [corpus.chunks_of_path[path] for path in files]
    sizes = np.array([len(c) for c in file_chunks], dtype=np.int64)
    if sims is not None:
        at = np.zeros(len(files), dtype=np.int64)
        np.cumsum(sizes[:-1], out=at[1:])
        file_sims = sims[np.concatenate(file_chunks)]
        out[:, 8] = np.maximum.reduceat(file_sims, at)
        ends = (at + sizes).tolist()
        # ``mean`` without its wrapper: the same sum, divided the same way
        out[:, 9] = [
            np.add.reduce(file_sims[a:b]) / (b - a) for a, b in zip(at.tolist(), ends, strict=True)
        ]
    out[:, 10] = path_dense
    out[:, 11] = path_dense - path_dense.max()
    for column, ranks in ((12, retrieval.vector_ranks), (13, retrieval.keyword_ranks)):
        found = np.array([ranks.get(i, 0) for i in id_list], dtype=np.int64)
        out[:, column] = per_file_max(np.where(found > 0, 1.0 / np.maximum(found, 1), 0.0))
    keyword_scores = np.array([retrieval.keyword_scores.get(i, 0.0) for i in id_list])
    out[:, 14] = per_file_max(keyword_scores) / best_bm25
    if words:
        out[:, 15] = per_file_max(np.array([sum(row) / len(words) for row in hits]))
        idf_coverage = [sum(i for i, hit in zip(idf, row, strict=True) if hit) / idf_total
                        for row in hits]  # fmt: skip
        out[:, 16] = per_file_max(np.array(idf_coverage, dtype=np.float64))
    out[:, 17] = [coverage(corpus.file_words_among(path, wanted)) for path in files]
    if keywords:
        out[:, 18] = [path_matches(keywords, path) / len(keywords) for path in files]
    if names:
        contents = corpus.contents
        out[:, 19] = [
            any(defines(contents[id_list[p]], m) for p in positions for m in names)
            for positions in groups
        ]
    out[:, 20] = [math.log(path_penalty(path)) for path in files]
    out[:, 21] = [is_non_code(path) for path in files]
    out[:, 22] = [math.log(n) for n in sizes.tolist()]
    out[:, 23] = float(symbol)
    out[:, 24] = math.log1p(len(keywords))
    return list(files), out


SECOND_CHUNK_DECAY = 0.5
"""A file's further candidates follow all first ones, at half its probability each step."""


def ranked_pool(
    pool: Sequence[tuple[int, float]],
    files: Sequence[str],
    probabilities: np.ndarray,
    paths: Sequence[str],
) -> list[tuple[int, float]]:
    """Each file's best candidate in order of the file's probability, then the files' other
    candidates (each scored ``p x 0.5^n`` for its n-th place in the file), best first."""
    by_file = files_in_pool(pool, paths)
    first: list[tuple[int, float]] = []
    rest: list[tuple[int, float]] = []
    for path, probability in zip(files, probabilities, strict=True):
        for n, position in enumerate(by_file[path]):
            entry = (pool[position][0], float(probability) * SECOND_CHUNK_DECAY**n)
            (rest if n else first).append(entry)
    first.sort(key=lambda item: -item[1])
    rest.sort(key=lambda item: -item[1])
    return first + rest


class Ranker:
    """A trained model over :data:`FEATURES`: standardise, hidden layers (ReLU), sigmoid."""

    feature_names: tuple[str, ...] = FEATURES

    def __init__(self, spec: Mapping) -> None:
        if tuple(spec["features"]) != self.feature_names:
            raise ValueError("the ranker was trained on other features; rebuild it")
        self.mean = np.asarray(spec["mean"], dtype=np.float64)
        self.scale = np.asarray(spec["scale"], dtype=np.float64)
        self.layers = [
            (np.asarray(layer["weights"], dtype=np.float64), np.asarray(layer["bias"]))
            for layer in spec["layers"]
        ]

    @classmethod
    def load(cls, path: Path) -> Ranker:
        return cls(json.loads(path.read_text(encoding="utf-8")))

    def logits(self, rows: np.ndarray) -> np.ndarray:
        x = (rows - self.mean) / self.scale
        for i, (weights, bias) in enumerate(self.layers):
            x = x @ weights + bias
            if i < len(self.layers) - 1:
                x = np.maximum(x, 0.0)
        return x.reshape(len(rows))

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-self.logits(rows)))


@lru_cache(maxsize=4)
def load_ranker(path: str) -> Ranker:
    return Ranker.load(Path(path))
