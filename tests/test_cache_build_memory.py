"""The search cache built with less memory (issue 14, "Indexing memory"): the postings and
word sets gathered in int32 blocks, the vectors normalized in place, the text written in
pieces, the written vectors stacked block by block - each gives exactly what the plain
way gives, and the lean builds stay lean."""

import tracemalloc
from collections import Counter

import numpy as np
import pytest

from seek.index import written
from seek.retrieve import bm25, search_cache
from seek.retrieve.bm25 import Postings, tokens
from seek.retrieve.ranker import chunk_words
from seek.retrieve.search_data import SearchData
from seek.retrieve.wordsets import WordSets

TEXTS = [
    "class HttpClient: def send(self, request): return self.session.send(request)",
    "",
    "retry retry retries retried the and of HTTPServer2Handler maxFileBytes MAX_FILE_BYTES",
    "x_" + "a" * 39 + " = " + "b" * 40 + " café naïve 😀 Ünïcode_Wörds",
    "configure_retries(policy, max_attempts=3) RetryPolicy policy policy",
    "a b c d e f g h i j k l m n o p q r s t u v w x y z " * 3,
]


def reference_postings(texts: list[str]) -> dict:
    """The postings by definition: per term, (document, count) ascending; per document, its
    token count."""
    counts = [Counter(tokens(text)) for text in texts]
    terms = sorted(set().union(*counts))
    return {
        "terms": terms,
        "postings": [[(d, c[t]) for d, c in enumerate(counts) if t in c] for t in terms],
        "lengths": [sum(c.values()) for c in counts],
    }


def as_reference(p: Postings) -> dict:
    return {
        "terms": list(p.terms),
        "postings": [
            list(zip(p.docs[a:b].tolist(), p.freqs[a:b].astype(int).tolist(), strict=True))
            for a, b in zip(p.starts[:-1].tolist(), p.starts[1:].tolist(), strict=True)
        ],
        "lengths": p.lengths.astype(int).tolist(),
    }


def arrays_equal(a: object, b: object, names: list[str]) -> None:
    for name in names:
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), name
        else:
            assert list(x) == list(y), name


@pytest.mark.parametrize("block", [1, 2, 7, 1 << 20])
def test_postings_in_blocks_are_the_postings(monkeypatch, block):
    whole = Postings.build(TEXTS)
    monkeypatch.setattr(bm25, "CODE_BLOCK", block)
    blocked = Postings.build(TEXTS)
    assert as_reference(blocked) == reference_postings(TEXTS)
    arrays_equal(blocked, whole, ["terms", "starts", "docs", "freqs", "lengths"])
    assert blocked.docs.dtype == np.int32 and blocked.starts.dtype == np.int64
    assert blocked.freqs.dtype == np.float32 and blocked.lengths.dtype == np.float32
    empty = Postings.build(["", "the and"])  # no documents with tokens at all
    assert list(empty.terms) == [] and empty.lengths.tolist() == [0.0, 0.0]
    assert empty.starts.tolist() == [0] and len(empty.docs) == 0


@pytest.mark.parametrize("block", [1, 3, 1 << 20])
def test_word_sets_in_blocks_are_each_chunks_words(monkeypatch, block):
    whole = WordSets.build(TEXTS)
    monkeypatch.setattr(bm25, "CODE_BLOCK", block)
    blocked = WordSets.build(TEXTS)
    arrays_equal(blocked, whole, ["words", "starts", "ids"])
    for i, text in enumerate(TEXTS):
        assert blocked.of(i) == chunk_words(text)
        ids = blocked.ids[blocked.starts[i] : blocked.starts[i + 1]]
        assert np.all(np.diff(ids) > 0)  # each word once, ascending
    none = WordSets.build(["", "  "])
    assert none.starts.tolist() == [0, 0, 0] and len(none.ids) == 0


def test_text_written_in_pieces_is_the_joined_text(tmp_path, monkeypatch):
    texts = ["plain", "", "café", "😀 emoji", "\ud800 lone surrogate", "\udc00", "end\n"] * 3
    monkeypatch.setattr(search_cache, "TEXT_PIECE", 2)
    search_cache._write_text(tmp_path / "t", texts)
    assert (tmp_path / "t").read_bytes() == "".join(texts).encode("utf-8", "surrogatepass")


def test_written_vectors_are_stacked_block_by_block():
    rng = np.random.default_rng(1)
    blocks = [rng.random((n, 3), dtype=np.float32) for n in (2, 0, 5)]
    expected = np.concatenate(blocks)
    kept = list(blocks)
    got = written._stack(kept)
    assert kept == [] and got.dtype == np.float32 and np.array_equal(got, expected)
    assert written._stack([]).shape == (0, 0)


def rows(shuffled: bool) -> dict:
    rng = np.random.default_rng(3)
    keys = [("a.py", 0, 0), ("a.py", 0, 1), ("a.py", 1, 0), ("b.py", 0, 0), ("b.py", 0, 1)]
    if shuffled:
        keys = [keys[i] for i in (3, 0, 4, 2, 1)]
    return {
        "path": [k[0] for k in keys], "chunk": [k[1] for k in keys],
        "start_line": [k[1] * 10 for k in keys], "end_line": [k[1] * 10 + 9 for k in keys],
        "part": [k[2] for k in keys],
        "content": [f"{k[0]} chunk {k[1]} def fooBar_{k[1]}()" for k in keys],
        "keywords": [f"{k[0]} foo bar {k[1]}" if k[2] == 0 else "" for k in keys],
        "vectors": rng.normal(size=(len(keys), 4)).astype(np.float32) * 3,
    }  # fmt: skip


@pytest.mark.parametrize("shuffled", [False, True])
def test_a_consumed_table_gives_the_same_search_data(shuffled):
    kept = rows(shuffled)
    original = kept["vectors"].copy()
    plain = SearchData.from_rows(kept)
    assert np.array_equal(kept["vectors"], original)  # not consumed: left as it was
    handed = rows(shuffled)
    consumed = SearchData.from_rows(handed, consume=True)
    assert handed == {}  # let go of before the postings are built
    arrays_equal(consumed, plain, ["paths", "chunk_numbers", "starts", "ends", "contents",
                                   "vectors", "chunk_first_row"])  # fmt: skip
    assert consumed.vectors.tobytes() == plain.vectors.tobytes()
    arrays_equal(consumed.postings, plain.postings, ["terms", "starts", "docs", "freqs", "lengths"])
    assert consumed.word_sets is not None and plain.word_sets is not None
    arrays_equal(consumed.word_sets, plain.word_sets, ["words", "starts", "ids"])


def test_the_cache_build_stays_lean():
    """Peak Python memory of the postings and word sets of 20,000 chunks (400,000 tokens),
    per token, once the stemmers' caches are warm: the builds before this change peaked at
    ~88 and ~165 bytes a token, these at ~54 and ~64."""
    rng = np.random.default_rng(0)
    vocabulary = [f"name{i}" for i in range(20_000)] + [f"camelCase{i}Word" for i in range(5_000)]
    picks = rng.integers(0, len(vocabulary), size=400_000).tolist()
    texts = [" ".join(vocabulary[i] for i in picks[j : j + 20]) for j in range(0, len(picks), 20)]
    Postings.build(vocabulary)
    WordSets.build(vocabulary)
    for build, most in ((Postings.build, 65), (WordSets.build, 90)):
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            build(texts)
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
        assert peak / len(picks) < most, (build, peak / len(picks))
