"""A corpus question's pool is read once: its words are looked up for the question's words
only (stem probes), the chunk stage parses names and comments of the chunks it weighs only
and weighs only the files the first hits can come from. Each shortcut must give what the
whole computation gives (issue 17, whole-corpus questions at 1M chunks)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from conftest import HashEmbedder

from seek.index.indexer import index_workspace
from seek.retrieve import Searcher
from seek.retrieve import chunks as stage
from seek.retrieve import pipeline as pipeline_module
from seek.retrieve.ranker import Corpus, Retrieval, chunk_words, features
from seek.retrieve.signals.names import english_stem, query_keywords, stem_probe
from seek.retrieve.wordsets import WordSets, may_hold
from seek.text import IDENTIFIER, split_identifier

SOURCE = Path(__file__).resolve().parent.parent / "src" / "seek"
QUESTIONS = (
    "where is the size parsed",
    "how are retries configured for the http client",
    "which function renders the search results as json",
    "how does the server refuse a request body that is too large",
    "where are embeddings cached between runs",
    "happily relational dying lying studies",
)


def source_chunks() -> tuple[list[str], list[str]]:
    """Real code: seek's own modules cut at blank lines into chunks (paths, contents)."""
    paths, contents = [], []
    for path in sorted(SOURCE.rglob("*.py"))[:40]:
        for block in path.read_text(encoding="utf-8").split("\n\n"):
            if block.strip():
                paths.append(str(path.relative_to(SOURCE)))
                contents.append(block)
    return paths, contents


@pytest.fixture(scope="module")
def code() -> tuple[list[str], list[str]]:
    return source_chunks()


def test_every_word_starts_with_its_stems_probe(code):
    words = {"dying", "lying", "tying", "happy", "relational", "possibility", "organization"}
    for content in code[1]:
        for token in set(IDENTIFIER.findall(content)):
            words.add(token.lower())
            words.update(split_identifier(token))
    assert len(words) > 2000
    broken = [w for w in words if not w.startswith(stem_probe(english_stem(w)))]
    assert broken == []
    assert stem_probe("die") == "d" and stem_probe("happi") == "happ"


def test_the_probe_filter_keeps_every_wanted_word_a_text_holds(code):
    rng = random.Random(7)
    _, contents = code
    checked = 0
    for content in rng.sample(contents, 300):
        every = chunk_words.__wrapped__(content)
        for question in QUESTIONS:
            wanted = frozenset(query_keywords(question))
            if every:
                wanted |= frozenset(rng.sample(sorted(every), min(2, len(every))))
            maybe = may_hold(content, wanted)
            assert every & wanted <= maybe  # the probe filter keeps every word held
            checked += bool(every & wanted)
    assert checked > 100


def test_a_pools_ranker_and_chunk_features_equal_the_whole_computation(code):
    """Pool corpora (no word sets: probe filter, names and comments of the weighed chunks
    only) against an index's corpus (every word kept), on real code."""
    paths, contents = code
    rng = np.random.default_rng(11)
    chunks_of: dict[str, list[int]] = {}
    for i, path in enumerate(paths):
        chunks_of.setdefault(path, []).append(i)
    ids_of = {p: np.array(c, dtype=np.int64) for p, c in chunks_of.items()}
    kept = Corpus(paths, contents, ids_of, word_sets=WordSets.build(contents))
    files = list(ids_of)
    for trial in range(12):
        pooled = Corpus(paths, contents, ids_of)  # one question's pool
        question = QUESTIONS[trial % len(QUESTIONS)]
        picked = rng.choice(len(files), size=8, replace=False)
        candidates = [int(rng.choice(ids_of[files[f]])) for f in picked]
        pool = [(c, float(s)) for c, s in zip(candidates, np.linspace(1, 0.3, 8), strict=True)]
        sims = rng.uniform(-0.2, 0.8, size=len(paths))
        retrieval = Retrieval(sims, {c: r for r, c in enumerate(candidates, 1)}, {},
                              {candidates[0]: 3.0, candidates[3]: 1.5})  # fmt: skip
        names, rows = features(question, pool, retrieval, pooled)
        names_kept, rows_kept = features(question, pool, retrieval, kept)
        assert names == names_kept
        np.testing.assert_array_equal(rows, rows_kept)
        p_file = rng.uniform(0, 1, size=len(names))
        chosen = stage.candidates(pool, names, p_file, pooled, sims)
        assert len(chosen) > len(pool)  # the top files bring chunks of their own
        np.testing.assert_array_equal(
            stage.features(question, chosen, pool, retrieval, pooled),
            stage.features(question, chosen, pool, retrieval, kept),
        )


def many_modules(count: int) -> dict[str, str]:
    topics = ("parse size", "render json", "retry request", "cache embedding", "refuse body")
    files = {}
    for i in range(count):
        topic = topics[i % len(topics)].split()
        files[f"pkg/mod_{i}.py"] = "\n\n".join(
            f"# {topic[0].title()} the {topic[1]} of step {j}.\n# Returns the value.\n"
            f"def {topic[0]}_{topic[1]}_{i}_{j}(value):\n"
            + "\n".join(f"    value = value + {i * j + n}" for n in range(8))
            + "\n    return value"
            for j in range(4)
        )
    return files


def test_the_chunk_stage_weighs_the_first_files_and_the_hits_stay_the_same(
    make_tree, settings_for, monkeypatch
):
    root = make_tree(many_modules(24))
    embedder = HashEmbedder()
    index_workspace(root, settings_for(), embedder=embedder)
    searcher = Searcher.open(root, settings_for(), embedder=embedder)
    weighed: list[int] = []
    pipeline = pipeline_module.SearchPipeline
    rank_chunks, first_files = pipeline._rank_chunks, pipeline._first_files_ranked

    def spy(self, ranked, some=None):
        weighed.append(some is not None)
        return rank_chunks(self, ranked, some)

    def prefixes(self, ranked, k, lead_in_on):
        # Both orders are the start of the whole computation's.
        got = first_files(self, ranked, k, lead_in_on)
        whole = rank_chunks(self, ranked)
        for part, full in zip(got, whole, strict=True):
            assert len(part) >= k and part == full[: len(part)]
        return got

    monkeypatch.setattr(pipeline, "_rank_chunks", spy)
    monkeypatch.setattr(pipeline, "_first_files_ranked", prefixes)
    questions = ("parse the size of a step", "render json", "how is a request retried",
                 "cache the embedding of step 2", "refuse a body")  # fmt: skip
    for k in (1, 2, 3, 4, 6):
        for question in questions:
            fast = searcher.search(question, k)
            with monkeypatch.context() as patch:
                patch.setattr(pipeline_module, "FIRST_FILES_MARGIN", 10_000)
                whole = searcher.search(question, k)
            assert fast.hits == whole.hits and fast.context_hits == whole.context_hits
            assert len(fast.hits) == k
    assert any(weighed)  # the shortcut was taken, not only the whole computation
