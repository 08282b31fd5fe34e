"""The chunk stage: which part of a ranked file answers the question (issue 13).

The learned ranker (:mod:`.ranker`) orders *files*; a file's first hit used to be whichever
of its chunks the fused order liked best, often the file's header or a neighbour of the
answer. This stage weighs, for the ``TOP_FILES`` most probable files, every chunk of the
file (not only the pool's candidates), and for the other files their pool candidates, with
a second logistic regression over chunk features: the chunk's similarity to the question
against the file's other chunks, how much of the question its words, its *definition names*
and its comments hold (each word weighted by its rarity within the file), whether it defines
the queried symbol, its BM25 and fused standing, its size and position.

It gives ``P(this chunk holds the answer | the file does)`` (fitted on the judged line spans
of the dev sets with leave-one-repository-out cross-validation, ``bench/train_chunks.py``,
MODELS.md). Hits are then ordered by

* a file's best chunk: the file's probability ``p_file`` (so the file ranker's order holds);
* its further chunks: ``p_file x w x p_chunk x (1 - p_best)^u``, in one list with the
  first ones, so the second part of a very likely file can come before a doubtful file when
  the stage is unsure which part answers (``p_best``: the probability of the chunk it put
  first). A search list uses a small ``w`` (the semble benchmark's whole-file answers pay
  for every second part of a file); ``seek context`` a larger one (its blocks are judged by
  whether the lines that answer are among them, and its budget has room).

The scores stay probabilities, which ``seek context`` compares with its threshold.
Evaluation is numpy only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from seek.retrieve import signals as sig
from seek.retrieve.ranker import Corpus, Ranker, Retrieval
from seek.text import IDENTIFIER, split_identifier

BUILTIN_CHUNKER = Path(__file__).resolve().parent.parent / "models" / "chunker.json"
TOP_FILES = 5
"""Files whose every chunk is weighed (the rest keep their pool candidates)."""
MAX_CHUNKS_PER_FILE = 60
"""In a larger file, the 60 chunks most similar to the question (plus its pool candidates)."""
REST_WEIGHT = 0.1
"""``w`` for a search list (the model file's ``rest_weight`` overrides it)."""
UNCERTAINTY_POWER = 0.5
"""``u`` for a search list (the model file's ``uncertainty_power``)."""

CHUNK_FEATURES: tuple[str, ...] = (
    "dense",  # the chunk's similarity to the question
    "dense_gap",  # ... minus the best chunk of its file
    "dense_z",  # ... in standard deviations of its file's chunks
    "dense_inv_rank",  # 1 / its rank by similarity within the file
    "coverage",  # share of the question's words in the chunk
    "coverage_gap",  # ... minus the best chunk of its file
    "idf_coverage",  # the same, each word weighted by its rarity among the file's chunks
    "idf_coverage_gap",
    "definition_coverage",  # share of the question's words in names the chunk defines
    "defines_query_name",  # it defines an identifier the question names
    "comment_coverage",  # share of the question's words in its comments
    "bm25_share",  # its BM25 score / the best in the question's BM25 list
    "fused_share",  # its fused score / the pool's best (0 when not in the pool)
    "in_pool",
    "log_chars",
    "position",  # 0 for the file's first chunk, 1 for its last
    "first_chunk",
    "log_file_chunks",
    "symbol_query",
)

_DEFINED = re.compile(
    r"\b(?:class|struct|interface|enum|trait|type|module|record|object|namespace|def|fn|func"
    r"|function|fun|sub|proc|macro_rules!)\s+(?:\([^)]*\)\s*)?([A-Za-z_][A-Za-z0-9_]*)"
)
_CALLABLE_HEAD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:<[^<>()]*>)?\s*\(")
_NOT_NAMES = frozenset(
    ("if", "for", "while", "switch", "catch", "return", "func", "function", "sizeof", "foreach")
)
"""Words before a bracket that open a statement, not a definition."""
_COMMENT_LINE = re.compile(r"^\s*(?://|#|/\*|\*|--|;;|\"\"\"|''')")


@lru_cache(maxsize=16384)
def chunk_parts(content: str) -> tuple[frozenset[str], frozenset[str]]:
    """Stemmed words of the names a chunk defines, and of its comment lines."""
    names: set[str] = set()
    comments: set[str] = set()
    for line in content.split("\n"):
        if _COMMENT_LINE.match(line):
            for token in IDENTIFIER.findall(line):
                comments.add(token.lower())
                comments.update(split_identifier(token))
            continue
        found = _DEFINED.findall(line)
        if not found and line.rstrip().endswith(("{", "=>")):  # a method opening its body
            head = next(
                (m.group(1) for m in _CALLABLE_HEAD.finditer(line) if m.group(1) not in _NOT_NAMES),
                None,
            )
            if head:
                found.append(head)
        for name in found:
            names.add(name.lower())
            names.update(split_identifier(name))
    return (
        frozenset(sig.english_stem(w) for w in names),
        frozenset(sig.english_stem(w) for w in comments),
    )


def candidates(
    pool: Sequence[tuple[int, float]],
    files: Sequence[str],
    probabilities: np.ndarray,
    corpus: Corpus,
    similarities: np.ndarray | None,
) -> list[tuple[int, int]]:
    """``(chunk_id, file_row)`` to weigh: every chunk of the ``TOP_FILES`` most probable files
    (the most similar ``MAX_CHUNKS_PER_FILE`` of a larger one), the pool's candidates of the
    others."""
    row_of = {path: row for row, path in enumerate(files)}
    top = set(np.argsort(-probabilities, kind="stable")[:TOP_FILES].tolist())
    out: dict[int, int] = {}
    for row in sorted(top):
        ids = corpus.chunks_of_path[files[row]]
        if len(ids) > MAX_CHUNKS_PER_FILE and similarities is not None:
            keep = np.argsort(-similarities[ids], kind="stable")[:MAX_CHUNKS_PER_FILE]
            ids = ids[np.sort(keep)]
        for chunk_id in ids.tolist():
            out[chunk_id] = row
    for chunk_id, _ in pool:
        out.setdefault(chunk_id, row_of[corpus.paths[chunk_id]])
    return list(out.items())


def features(
    query: str,
    chosen: Sequence[tuple[int, int]],
    pool: Sequence[tuple[int, float]],
    retrieval: Retrieval,
    corpus: Corpus,
) -> np.ndarray:
    """One row of :data:`CHUNK_FEATURES` per ``(chunk_id, file_row)``."""
    out = np.zeros((len(chosen), len(CHUNK_FEATURES)), dtype=np.float64)
    if not chosen:
        return out
    keywords = sig.query_keywords(query)
    symbol = sig.is_symbol_query(query)
    names = sig.symbol_names(query) if symbol else sig.embedded_identifiers(query)
    best_pool = max((s for _, s in pool), default=0.0) or 1.0
    fused = {chunk_id: score / best_pool for chunk_id, score in pool}
    best_bm25 = max(retrieval.keyword_scores.values(), default=0.0) or 1.0
    sims = retrieval.similarities

    def coverage(found: frozenset[str]) -> float:
        return sum(1 for w in keywords if w in found) / len(keywords) if keywords else 0.0

    by_file: dict[int, list[int]] = {}
    for i, (_, row) in enumerate(chosen):
        by_file.setdefault(row, []).append(i)
    for positions in by_file.values():
        ids = [chosen[i][0] for i in positions]
        path = corpus.paths[ids[0]]
        file_ids = corpus.chunks_of_path[path]
        order = {int(c): n for n, c in enumerate(file_ids.tolist())}
        n_file = len(file_ids)
        if sims is not None:
            file_sims = sims[file_ids]
            mean, std = float(file_sims.mean()), float(file_sims.std())
            best = float(file_sims.max())
            ranked = np.sort(file_sims)[::-1]
        else:
            mean = std = best = 0.0
            ranked = np.zeros(0)
        # Rarity within the file: a word in every chunk of the file does not pick one out.
        found = corpus.keyword_presence(path, keywords)
        idf = np.log((n_file + 1) / (found.sum(axis=1) + 0.5))
        cov_all = found.sum(axis=0) / len(keywords) if keywords else np.zeros(n_file)
        idf_all = idf @ found / (float(idf.sum()) or 1.0)
        best_cov = float(cov_all.max())
        best_idf = float(idf_all.max())
        for i, chunk_id in zip(positions, ids, strict=True):
            content = corpus.contents[chunk_id]
            defined, comments = chunk_parts(content)
            dense = float(sims[chunk_id]) if sims is not None else 0.0
            rank = int(np.searchsorted(-ranked, -dense, side="left")) + 1 if len(ranked) else 1
            n = order.get(chunk_id, 0)
            out[i] = (
                dense,
                dense - best,
                (dense - mean) / std if std > 1e-9 else 0.0,
                1.0 / rank,
                cov_all[n],
                cov_all[n] - best_cov,
                idf_all[n],
                idf_all[n] - best_idf,
                coverage(defined),
                float(bool(names) and any(sig.defines(content, m) for m in names)),
                coverage(comments),
                retrieval.keyword_scores.get(chunk_id, 0.0) / best_bm25,
                fused.get(chunk_id, 0.0),
                float(chunk_id in fused),
                math.log1p(len(content)),
                n / (n_file - 1) if n_file > 1 else 0.0,
                float(n == 0),
                math.log(n_file),
                float(symbol),
            )
    return out


def ordered(
    chosen: Sequence[tuple[int, int]],
    chunk_probabilities: np.ndarray,
    file_probabilities: np.ndarray,
    rest_weight: float,
    power: float = 0.0,
) -> list[tuple[int, float]]:
    """Each file's most probable chunk at the file's probability, its other chunks at
    ``p_file x rest_weight x p_chunk x (1 - p_best)^power``, all in one list, best first."""
    best: dict[int, tuple[int, float]] = {}
    for (chunk_id, row), p in zip(chosen, chunk_probabilities, strict=True):
        if row not in best or p > best[row][1]:
            best[row] = (chunk_id, float(p))
    scored = []
    for (chunk_id, row), p in zip(chosen, chunk_probabilities, strict=True):
        p_file = float(file_probabilities[row])
        if best[row][0] == chunk_id:
            scored.append((chunk_id, p_file, 1))
        else:
            doubt = (1.0 - best[row][1]) ** power if power else 1.0
            scored.append((chunk_id, p_file * rest_weight * float(p) * doubt, 0))
    # Ties (two zero probabilities) keep files' first chunks ahead.
    scored.sort(key=lambda item: (-item[1], -item[2]))
    return [(chunk_id, score) for chunk_id, score, _ in scored]


class ChunkRanker(Ranker):
    """A :class:`Ranker` over :data:`CHUNK_FEATURES`, with the weight of further chunks."""

    feature_names = CHUNK_FEATURES

    def __init__(self, spec: dict) -> None:
        super().__init__(spec)
        self.rest_weight = float(spec.get("rest_weight", REST_WEIGHT))
        self.power = float(spec.get("uncertainty_power", UNCERTAINTY_POWER))
        self.context_rest_weight = float(spec.get("context_rest_weight", self.rest_weight))
        self.context_power = float(spec.get("context_uncertainty_power", 0.0))


@lru_cache(maxsize=4)
def load_chunker(path: str) -> ChunkRanker:
    import json

    return ChunkRanker(json.loads(Path(path).read_text(encoding="utf-8")))
