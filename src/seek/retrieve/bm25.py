"""Keyword search in memory: BM25 over the keyword column, scored as LanceDB scores it.

The search cache (:mod:`seek.store.search_cache`) keeps each chunk's keyword tokens as
postings, so a search process answers keyword queries without opening LanceDB (whose
full-text query has a fixed cost of a few milliseconds, and whose import alone costs more
than a whole search). The tokens and the formula are LanceDB's own, so the hits and their
scores are the same (``tests/test_bm25.py`` compares them on a real table):

- tokens: LanceDB's ``simple`` tokenizer (runs of letters and digits; ``_`` splits), tokens of
  40 characters or more dropped, lower-cased, Snowball English stem, then the stem dropped
  when it is one of tantivy's English stop words (the stop filter runs after the stemmer);
- a document is one chunk's keyword column (the first window's row); rows without tokens
  are not documents (they count neither in ``N`` nor in the mean length);
- score = sum over the query's tokens (repeats count again) of
  ``idf * (k1 + 1) * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` with
  ``idf = ln(1 + (N - n + 0.5) / (n + 0.5))``, ``k1 = 1.2``, ``b = 0.75``, in float32.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import count

import numpy as np

from seek.retrieve.signals.names import english_stem

K1 = np.float32(1.2)
B = np.float32(0.75)
MAX_TOKEN_CHARS = 40
"""LanceDB's ``max_token_length``: longer tokens are not indexed."""
_TOKEN = re.compile(r"[^\W_]+")
STOP_STEMS = frozenset(
    "i me my myself we our ours ourselves you your yours yourself yourselves he him his "
    "himself she her hers herself it its itself they them their theirs themselves what which "
    "who whom this that these those am is are was were be been being have has had having do "
    "does did doing a an the and but if or because as until while of at by for with about "
    "against between into through during before after above below to from up down in out on "
    "off over under again further then once here there when where why how all any both each "
    "few more most other some such no nor not only own same so than too very s t can will "
    "just don should now d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma "
    "mightn mustn needn shan shouldn wasn weren won wouldn".split()
)
"""tantivy's English stop words (the NLTK list; words with apostrophes never reach it)."""


def _term(token: str) -> str | None:
    if len(token) >= MAX_TOKEN_CHARS:
        return None
    stem = english_stem(token.lower())
    return None if stem in STOP_STEMS else stem


def tokens(text: str) -> list[str]:
    """The indexed tokens of ``text``, in order, repeats kept."""
    out = []
    for token in _TOKEN.findall(text):
        term = _term(token)
        if term is not None:
            out.append(term)
    return out


@dataclass(frozen=True)
class Postings:
    """Per term, the documents holding it and how often; per document, its token count.

    ``terms[i]``'s postings are ``docs[starts[i]:starts[i + 1]]`` (ascending chunk ids) with
    frequencies ``freqs[...]``."""

    terms: Sequence[str]
    starts: np.ndarray  # int64, len(terms) + 1
    docs: np.ndarray  # int32
    freqs: np.ndarray  # float32
    lengths: np.ndarray  # float32, one per chunk (0: not a document)

    @classmethod
    def build(cls, keyword_texts: Sequence[str]) -> Postings:
        """Postings of one keyword text per chunk (chunk ids are the positions).

        Vectorised: each distinct raw token is stemmed once, and the (term, chunk) pairs are
        counted by numpy (a Python loop per token cost ~1 s for 9,500 chunks)."""
        raw_code: defaultdict[str, int] = defaultdict(count().__next__)
        codes = Codes()
        per_doc: list[int] = []
        for text in keyword_texts:
            found = split_tokens(text)
            codes.extend(map(raw_code.__getitem__, found))
            per_doc.append(len(found))
        code = codes.array()
        term_ids: dict[str, int] = {}
        raw_term = np.array(
            [_term_id(_term(raw), term_ids) for raw in raw_code], dtype=np.int32
        ).reshape(-1)
        n_docs = len(per_doc)
        width = max(n_docs, 1)
        doc_of = np.repeat(np.arange(n_docs, dtype=np.int32), per_doc)
        term_of = raw_term[code] if len(code) else doc_of
        del code
        keep = term_of >= 0
        doc_of, term_of = doc_of[keep], term_of[keep]
        del keep
        lengths = np.bincount(doc_of, minlength=n_docs).astype(np.float32)
        # Terms in sorted order, so a cache's term list is the same for the same rows.
        terms = sorted(term_ids)
        rank = np.empty(len(terms), dtype=np.int64)
        rank[[term_ids[t] for t in terms]] = np.arange(len(terms))
        keys = rank[term_of] if len(term_of) else term_of.astype(np.int64)
        del term_of
        keys *= width
        keys += doc_of
        del doc_of
        keys.sort()  # in place: the same order as a stable sort, for integers
        pairs, freqs = sorted_counts(keys)
        del keys
        sizes = np.bincount(pairs // width, minlength=len(terms))
        starts = np.zeros(len(terms) + 1, dtype=np.int64)
        np.cumsum(sizes, out=starts[1:])
        return cls(
            terms,
            starts,
            (pairs % width).astype(np.int32),
            freqs.astype(np.float32),
            lengths,
        )


CODE_BLOCK = 1 << 16
"""Codes gathered in a Python list before they move to an int32 array (8 bytes a code in
the list, 4 in the array)."""


class Codes:
    """A growing sequence of small non-negative integers (a token's or an identifier's
    number), held as int32 blocks: the postings and word sets of a whole index were built
    from one Python list of ~2M codes and int64 copies of it, ~100 MB each at the peak of a
    cold index of abseil-cpp (issue 14)."""

    def __init__(self) -> None:
        self._blocks: list[np.ndarray] = []
        self._list: list[int] = []

    def extend(self, codes: Iterable[int]) -> None:
        self._list.extend(codes)
        if len(self._list) >= CODE_BLOCK:
            self._blocks.append(np.array(self._list, dtype=np.int32))
            self._list.clear()

    def array(self) -> np.ndarray:
        """Every code, in order, as one int32 array; this object is emptied."""
        blocks, self._blocks = self._blocks, []
        blocks.append(np.array(self._list, dtype=np.int32))
        self._list = []
        return np.concatenate(blocks)


def sorted_counts(ordered: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of an ascending int64 array and how often each occurs. The caller
    sorts (numpy 2's hash-based ``np.unique`` took ~1 s for the 600,000 keys of
    laravel-framework), in place where it can: a sorted copy is one more array at the
    peak."""
    if not len(ordered):
        return ordered, ordered
    firsts = np.flatnonzero(_run_starts(ordered))
    return ordered[firsts], np.diff(firsts, append=len(ordered))


def sorted_unique(ordered: np.ndarray) -> np.ndarray:
    """The distinct values of an ascending array (:func:`sorted_counts` without counts)."""
    return ordered[_run_starts(ordered)] if len(ordered) else ordered


def _run_starts(ordered: np.ndarray) -> np.ndarray:
    new = np.empty(len(ordered), dtype=bool)
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    return new


def split_tokens(text: str) -> list[str]:
    """The simple tokenizer's raw tokens (the keyword column is ASCII words and spaces, for
    which splitting at ``_`` and white space is the same and faster)."""
    if text.isascii() and text.replace("_", "").replace(" ", "").isalnum():
        return text.replace("_", " ").split()
    return _TOKEN.findall(text)


def _term_id(term: str | None, ids: dict[str, int]) -> int:
    return -1 if term is None else ids.setdefault(term, len(ids))


class Bm25:
    """BM25 over :class:`Postings`, held in memory for a loaded index."""

    def __init__(self, postings: Postings) -> None:
        self.postings = postings
        self.term_ids = {term: i for i, term in enumerate(postings.terms)}
        lengths = postings.lengths
        self.num_docs = int(np.count_nonzero(lengths))
        avgdl = np.float32(lengths.sum(dtype=np.float64) / max(self.num_docs, 1))
        # The per-document part of the denominator, computed once per index.
        self.norms = K1 * (np.float32(1.0) - B + B * lengths / max(avgdl, np.float32(1e-9)))

    def scores(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """``(chunk ids, scores)`` of every chunk sharing a token with ``query``."""
        p = self.postings
        total = np.zeros(len(p.lengths), dtype=np.float32)
        matched = np.zeros(len(p.lengths), dtype=bool)
        n_docs = np.float32(self.num_docs)
        for term in tokens(query):
            i = self.term_ids.get(term)
            if i is None:
                continue
            lo, hi = int(p.starts[i]), int(p.starts[i + 1])
            docs, tf = p.docs[lo:hi], p.freqs[lo:hi]
            n = np.float32(hi - lo)
            idf = np.log(np.float32(1.0) + (n_docs - n + np.float32(0.5)) / (n + np.float32(0.5)))
            total[docs] += idf * ((K1 + np.float32(1.0)) * tf / (tf + self.norms[docs]))
            matched[docs] = True
        ids = np.flatnonzero(matched)
        return ids, total[ids]

    def top(self, query: str, n: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """The ``n`` best ``(chunk id, score)``, best first (ties: lower chunk id first),
        optionally only among the chunk ids in ``allowed``."""
        ids, scores = self.scores(query)
        if allowed is not None and len(ids):
            keep = np.zeros(len(self.postings.lengths), dtype=bool)
            keep[allowed] = True
            inside = keep[ids]
            ids, scores = ids[inside], scores[inside]
        if n <= 0 or not len(ids):
            return []
        if len(ids) > n:
            part = np.argpartition(-scores, n - 1)[:n]
            ids, scores = ids[part], scores[part]
        order = np.lexsort((ids, -scores))
        return [(int(ids[i]), float(scores[i])) for i in order]
