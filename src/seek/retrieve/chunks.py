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
of the dev sets with leave-one-repository-out cross-validation, ``bench/train/train_chunks.py``,
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

from seek.retrieve.ranker import Corpus, Ranker, Retrieval
from seek.retrieve.signals.definitions import defines
from seek.retrieve.signals.names import english_stem, query_keywords
from seek.retrieve.signals.query import embedded_identifiers, is_symbol_query, symbol_names
from seek.retrieve.wordsets import may_hold
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
        frozenset(english_stem(w) for w in names),
        frozenset(english_stem(w) for w in comments),
    )


WORD, DEFINED, COMMENT = 1, 2, 4
"""Bits of :func:`file_parts`'s codes: the chunk holds the word (:func:`ranker.chunk_words`),
in a name it defines, in a comment (:func:`chunk_parts`)."""


def file_parts(
    corpus: Corpus,
    path: str,
    only: frozenset[str] | None = None,
    parsed: frozenset[int] | None = None,
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """For a file's chunks (in file order): per stemmed word, a code per chunk (bits
    ``WORD | DEFINED | COMMENT``), and ``log1p`` of their sizes; kept while the index is
    loaded, so a question's features are array look-ups (one per word and file). ``only``:
    codes for these words alone, and ``parsed``: ``DEFINED`` and ``COMMENT`` bits for these
    chunk ids alone (a corpus question's pool, made for one question: :func:`features`
    reads those bits of the chunks it weighs only, the ``WORD`` bits of every chunk)."""
    chunks = corpus.chunks_of_path[path].tolist()
    places: dict[str, tuple[list[int], list[int], list[int]]] = {}
    lean = only is not None and corpus.word_sets is None
    for n, chunk_id in enumerate(chunks):
        if lean:  # a chunk that cannot hold the words is neither tokenized nor parsed
            wanted = may_hold(corpus.contents[chunk_id], only)  # type: ignore[arg-type]
            if not wanted:
                continue
            kinds = [corpus.words(chunk_id) & wanted]
        else:
            kinds = [corpus.words(chunk_id)]
        if parsed is None or chunk_id in parsed:
            kinds.extend(chunk_parts(corpus.contents[chunk_id]))
        for kind, found in enumerate(kinds):
            for word in found if only is None else only.intersection(found):
                places.setdefault(word, ([], [], []))[kind].append(n)
    codes = {}
    for word, found in places.items():
        code = np.zeros(len(chunks), dtype=np.uint8)
        for bit, rows in zip((WORD, DEFINED, COMMENT), found, strict=True):
            code[rows] |= bit
        codes[word] = code
    log_chars = np.array([math.log1p(len(corpus.contents[i])) for i in chunks], dtype=np.float64)
    return codes, log_chars


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


def more_similar(file_sims: np.ndarray, n_file: np.ndarray) -> np.ndarray:
    """For every chunk of the files whose similarities ``file_sims`` holds one file after
    another (``n_file`` chunks each): how many chunks of its file are more similar. One
    sort for all files: after a (file, similarity) sort, a chunk's count is what follows
    its run of equal values in its file."""
    total = len(file_sims)
    files = np.repeat(np.arange(len(n_file), dtype=np.int64), n_file)
    if np.isnan(file_sims).any():  # NaN is more similar than nothing; sorting cannot say so
        ends = np.cumsum(n_file)[files].tolist()
        starts = (np.cumsum(n_file) - n_file)[files].tolist()
        pairs = zip(file_sims, starts, ends, strict=True)
        return np.array([np.count_nonzero(file_sims[a:b] > x) for x, a, b in pairs])
    order = np.lexsort((file_sims, files))
    ordered_sims, ordered_files = file_sims[order], files[order]
    last = np.ones(total, dtype=bool)  # the last of a run of equal values in a file
    last[:-1] = (ordered_sims[1:] != ordered_sims[:-1]) | (ordered_files[1:] != ordered_files[:-1])
    run_end = np.minimum.accumulate(np.where(last, np.arange(total), total)[::-1])[::-1]
    counts = np.empty(total, dtype=np.int64)
    counts[order] = np.cumsum(n_file)[ordered_files] - 1 - run_end
    return counts


def mean_and_std(values: np.ndarray) -> tuple[float, float]:
    """``values.mean()`` and ``values.std()`` of float64 values to the last bit, without
    numpy's wrappers (they were a good part of the chunk stage): the same sums, same order."""
    size = len(values)
    mean = np.add.reduce(values) / size
    deviations = values - mean
    return float(mean), float(np.sqrt(np.add.reduce(deviations * deviations) / size))


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
    keywords = query_keywords(query)
    symbol = is_symbol_query(query)
    names = symbol_names(query) if symbol else embedded_identifiers(query)
    best_pool = max((s for _, s in pool), default=0.0) or 1.0
    fused = {chunk_id: score / best_pool for chunk_id, score in pool}
    best_bm25 = max(retrieval.keyword_scores.values(), default=0.0) or 1.0
    sims = retrieval.similarities

    words = list(keywords)
    ids = np.array([chunk_id for chunk_id, _ in chosen], dtype=np.int64)
    id_list = ids.tolist()
    dense = sims[ids].astype(np.float64) if sims is not None else np.zeros(len(ids))
    # Files in order of their first row. Per file only what must stay per file to keep every
    # bit as it was (means, deviations, BLAS's sums); the rest is array operations.
    rows = np.array([row for _, row in chosen], dtype=np.int64)
    file_rows, firsts = np.unique(rows, return_index=True)
    by_first = np.argsort(firsts, kind="stable")
    g_of = np.zeros(int(file_rows[-1]) + 1, dtype=np.int64)
    g_of[file_rows[by_first]] = np.arange(len(file_rows))
    group = g_of[rows]
    paths = [corpus.paths[id_list[i]] for i in firsts[by_first].tolist()]
    file_ids = [corpus.chunks_of_path[path] for path in paths]
    n_file = np.array([len(f) for f in file_ids], dtype=np.int64)
    offsets = np.zeros(len(paths), dtype=np.int64)
    np.cumsum(n_file[:-1], out=offsets[1:])
    ends = (offsets + n_file).tolist()
    n = corpus.file_positions()[ids]
    bounds = list(zip(offsets.tolist(), ends, strict=True))
    stats = np.zeros((len(paths), 3))  # mean, std, best similarity
    rank = np.ones(len(chosen))
    if sims is not None:
        file_sims = sims[np.concatenate(file_ids)]
        for g, (a, b) in enumerate(bounds):
            stats[g, :2] = mean_and_std(file_sims[a:b])
        stats[:, 2] = np.maximum.reduceat(file_sims, offsets)
        rank = 1 + more_similar(file_sims, n_file)[offsets[group] + n]
    if corpus.word_sets is None:
        # A corpus question's pool lives for one question: a table of every word of its top
        # files would be most of the question's time (seek.corpus.search), so only its words.
        only, parsed = frozenset(words), frozenset(id_list)
        parts = [file_parts(corpus, path, only, parsed) for path in paths]
    else:
        parts = [corpus.kept(path, "chunk_parts", file_parts) for path in paths]
    columns = np.zeros((5, int(n_file.sum())))  # coverage, idf coverage, defined, comments, size
    columns[4] = np.concatenate([log_chars for _, log_chars in parts])
    if words:
        # Which chunk holds which word, for all files at once: (word, chunk) codes.
        absent = np.zeros(int(n_file.max()), dtype=np.uint8)
        none = [absent[:size] for size in n_file.tolist()]
        codes = np.concatenate(
            [codes.get(w, no) for w in words for (codes, _), no in zip(parts, none, strict=True)]
        ).reshape(len(words), len(columns[0]))
        found = np.stack([(codes & bit) != 0 for bit in (WORD, DEFINED, COMMENT)])
        found = found.astype(np.float64)  # (kind, word, chunk)
        # Rarity within the file: a word in every chunk of the file does not pick one out.
        idf = np.log((n_file + 1) / (np.add.reduceat(found[0], offsets, axis=1) + 0.5)).T.copy()
        columns[[0, 2, 3]] = found.sum(axis=1) / len(words)
        for g, (a, b) in enumerate(bounds):  # BLAS's sums on a contiguous copy, as before
            file_found = np.ascontiguousarray(found[0, :, a:b])
            columns[1, a:b] = idf[g] @ file_found / (float(idf[g].sum()) or 1.0)
    best_cov = np.maximum.reduceat(columns[0], offsets)[group]
    best_idf = np.maximum.reduceat(columns[1], offsets)[group]
    per_chunk = columns[:, offsets[group] + n]
    mean, std, best = stats[group].T
    log_size = np.array([math.log(size) for size in n_file.tolist()])[group]
    spread = std > 1e-9
    out[:, 0] = dense
    out[:, 1] = dense - best
    out[:, 2] = np.where(spread, (dense - mean) / np.where(spread, std, 1.0), 0.0)
    out[:, 3] = 1.0 / rank
    out[:, 4] = per_chunk[0]
    out[:, 5] = per_chunk[0] - best_cov
    out[:, 6] = per_chunk[1]
    out[:, 7] = per_chunk[1] - best_idf
    out[:, 8] = per_chunk[2]
    if names:
        contents = corpus.contents
        out[:, 9] = [any(defines(contents[c], m) for m in names) for c in id_list]
    out[:, 10] = per_chunk[3]
    keyword_scores = retrieval.keyword_scores
    out[:, 11] = [keyword_scores.get(c, 0.0) / best_bm25 for c in id_list]
    out[:, 12] = [fused.get(c, 0.0) for c in id_list]
    out[:, 13] = [c in fused for c in id_list]
    out[:, 14] = per_chunk[4]
    out[:, 15] = n / np.maximum(n_file[group] - 1, 1)  # 0 for a file of one chunk
    out[:, 16] = n == 0
    out[:, 17] = log_size
    out[:, 18] = float(symbol)
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
    if not chosen:
        return []
    ids = np.array([chunk_id for chunk_id, _ in chosen], dtype=np.int64)
    rows = np.array([row for _, row in chosen], dtype=np.int64)
    p = np.asarray(chunk_probabilities, dtype=np.float64)
    place = np.arange(len(ids))
    # A file's best chunk: its most probable, the first of equals.
    by_row = np.lexsort((place, -p, rows))
    firsts = by_row[np.concatenate(([True], rows[by_row][1:] != rows[by_row][:-1]))]
    is_best = np.zeros(len(ids), dtype=bool)
    is_best[firsts] = True
    doubt = np.ones(len(file_probabilities), dtype=np.float64)
    if power:
        for row, best_p in zip(rows[firsts].tolist(), p[firsts].tolist(), strict=True):
            doubt[row] = (1.0 - best_p) ** power
    p_file = np.asarray(file_probabilities, dtype=np.float64)[rows]
    scores = np.where(is_best, p_file, p_file * rest_weight * p * doubt[rows])
    # Best first; ties (two zero probabilities) keep files' first chunks ahead, then the
    # order of ``chosen``.
    ranked = np.lexsort((place, ~is_best, -scores))
    return list(zip(ids[ranked].tolist(), scores[ranked].tolist(), strict=True))


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
