"""The chunk stage (issue 13): chunk features, the model file, the final order, and search
and context with it."""

import json

import numpy as np
import pytest
from conftest import HashEmbedder

from seek.index.indexer import index_workspace
from seek.retrieve import Searcher
from seek.retrieve import chunks as stage
from seek.retrieve.context import build_context
from seek.retrieve.ranker import Corpus, Retrieval
from seek.retrieve.signals.names import english_stem

COL = {name: i for i, name in enumerate(stage.CHUNK_FEATURES)}


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("func (v *Viper) findConfigFile() (string, error) {", ["find", "config", "file"]),
        ("    public Document clean(Document dirtyDocument) {", ["clean"]),
        ("SPDLOG_INLINE void registry::drop_all() {", ["drop", "all"]),
        ("def parse_size(text):", ["parse", "size"]),
        ("export class Immer implements ProducersFns {", ["immer"]),
    ],
)
def test_definition_names_are_found_in_several_languages(line, words):
    defined, comments = stage.chunk_parts(line + "\n    body()\n}")
    assert {english_stem(w) for w in words} <= defined
    assert "bodi" not in defined and not comments


def test_comment_words_are_kept_apart_from_code():
    defined, comments = stage.chunk_parts("// Reloads the settings\nx = load()\n")
    assert {english_stem("reloads"), english_stem("settings")} <= comments
    assert "load" not in comments and not defined


def test_each_files_best_chunk_takes_the_files_probability_and_the_rest_follow():
    chosen = [(10, 0), (11, 0), (20, 1), (21, 1)]
    p_chunk = np.array([0.2, 0.9, 0.6, 0.1])
    p_file = np.array([0.8, 0.5])
    order = stage.ordered(chosen, p_chunk, p_file, rest_weight=0.5, power=1.0)
    # File 0 is sure of its part (0.9), so its other part comes after file 1's doubtful one.
    assert [c for c, _ in order] == [11, 20, 21, 10]
    scores = dict(order)
    assert scores[11] == pytest.approx(0.8) and scores[20] == pytest.approx(0.5)
    assert scores[10] == pytest.approx(0.8 * 0.5 * 0.2 * (1 - 0.9))
    assert scores[21] == pytest.approx(0.5 * 0.5 * 0.1 * (1 - 0.6))
    # A large weight lets the second part of a sure file pass a doubtful file.
    bold = stage.ordered(chosen, p_chunk, np.array([0.95, 0.05]), rest_weight=4.0)
    assert [c for c, _ in bold][:2] == [11, 10]


def test_top_files_weigh_every_chunk_the_others_their_candidates():
    paths = ["a.py"] * 3 + ["b.py"] * 3
    contents = ["def one(): pass", "def two(): pass", "def three(): pass"] * 2
    chunks_of = {"a.py": np.array([0, 1, 2]), "b.py": np.array([3, 4, 5])}
    corpus = Corpus(paths, contents, chunks_of)
    pool = [(1, 1.0), (4, 0.5)]
    saved = stage.TOP_FILES
    stage.TOP_FILES = 1
    try:
        chosen = stage.candidates(pool, ["a.py", "b.py"], np.array([0.9, 0.1]), corpus, None)
    finally:
        stage.TOP_FILES = saved
    assert sorted(chosen) == [(0, 0), (1, 0), (2, 0), (4, 1)]
    retrieval = Retrieval(np.array([0.1, 0.5, 0.3, 0.0, 0.2, 0.0]), {}, {}, {1: 3.0})
    rows = stage.features("where is two defined", chosen, pool, retrieval, corpus)
    by_chunk = {c: rows[i] for i, (c, _) in enumerate(chosen)}
    assert by_chunk[1][COL["dense_gap"]] == pytest.approx(0.0)
    assert by_chunk[0][COL["dense_gap"]] == pytest.approx(-0.4)
    assert by_chunk[1][COL["dense_inv_rank"]] == 1.0 and by_chunk[2][COL["dense_inv_rank"]] == 0.5
    # "two" is a name chunk 1 defines ("defined" is not): half of the question's words.
    assert by_chunk[1][COL["definition_coverage"]] == pytest.approx(0.5)
    assert by_chunk[0][COL["definition_coverage"]] == 0.0
    assert by_chunk[1][COL["in_pool"]] == 1.0 and by_chunk[0][COL["in_pool"]] == 0.0
    assert by_chunk[1][COL["bm25_share"]] == 1.0
    assert by_chunk[0][COL["first_chunk"]] == 1.0 and by_chunk[2][COL["position"]] == 1.0


def test_the_built_in_chunker_loads_and_names_its_training():
    spec = json.loads(stage.BUILTIN_CHUNKER.read_text())
    assert spec["features"] == list(stage.CHUNK_FEATURES)
    assert spec["training"]["cv"]["chosen"]["rest_weight"] == spec["rest_weight"]
    chunker = stage.load_chunker(str(stage.BUILTIN_CHUNKER))
    assert 0 < chunker.context_rest_weight and chunker.rest_weight <= chunker.context_rest_weight
    p = chunker.probabilities(np.zeros((2, len(stage.CHUNK_FEATURES))))
    assert p.shape == (2,) and np.all((p > 0) & (p < 1))


BIG_FILE = "\n\n".join(
    f"def step_{i}(value):\n    '''Stage {i} of the pipeline.'''\n"
    + "\n".join(f"    value = value + {i * j}" for j in range(30))
    + "\n    return value"
    for i in range(6)
) + (
    "\n\n\ndef parse_size(text):\n    '''Turn 10mb or 3 kb into a number of bytes.'''\n"
    "    units = {'kb': 1024, 'mb': 1024 ** 2}\n    return int(text[:-2]) * units[text[-2:]]\n"
)


@pytest.fixture
def big(make_tree, settings_for):
    root = make_tree({"src/pipeline.py": BIG_FILE, "src/other.py": "def other():\n    pass\n"})
    embedder = HashEmbedder()
    index_workspace(root, settings_for(), embedder=embedder)
    return root, embedder


def test_search_runs_the_chunk_stage_and_it_can_be_switched_off(big, settings_for):
    root, embedder = big
    searcher = Searcher.open(root, settings_for(), embedder=embedder)
    result = searcher.search("parse_size: turn 10mb or 3 kb into a number of bytes", k=5)
    assert "chunks_ms" in result.timings_ms
    assert result.context_hits and result.context_hits[0].path == result.hits[0].path
    first = result.hits[0]
    assert first.path == "src/pipeline.py" and "parse_size" in first.content
    off = searcher.search(
        "turn a size like 10mb into bytes", k=5, disabled=frozenset({"chunk_ranker"})
    )
    assert "chunks_ms" not in off.timings_ms and not off.context_hits


def test_context_takes_the_chunk_stages_context_order(big, settings_for):
    root, embedder = big
    settings = settings_for()
    result = Searcher.open(root, settings, embedder=embedder).search(
        "parse_size: turn 10mb or 3 kb into a number of bytes", k=settings.rerank_top
    )
    context = build_context(root, result, settings)
    assert any("def parse_size" in b.content for b in context.blocks)
    assert context.candidates == min(settings.rerank_top, len(result.context_hits))


def test_more_similar_counts_each_files_more_similar_chunks_ties_and_nan_included():
    rng = np.random.default_rng(3)
    for trial in range(200):
        n_file = rng.integers(1, 7, size=rng.integers(1, 5))
        sims = rng.choice([-0.5, -0.0, 0.0, 0.25, 0.5, 0.7], size=int(n_file.sum()))
        if trial % 10 == 0:
            sims[rng.integers(len(sims))] = np.nan
        ends = np.repeat(np.cumsum(n_file), n_file)
        sizes = np.repeat(n_file, n_file)
        expected = [
            int(np.count_nonzero(sims[end - n : end] > x))
            for x, end, n in zip(sims, ends, sizes, strict=True)
        ]
        assert stage.more_similar(sims, n_file).tolist() == expected


def _ordered_by_loops(chosen, p_chunk, p_file, rest_weight, power):
    """The chunk stage's order as it was written before issue 14 (one chunk at a time)."""
    best = {}
    for (chunk_id, row), p in zip(chosen, p_chunk, strict=True):
        if row not in best or p > best[row][1]:
            best[row] = (chunk_id, float(p))
    scored = []
    for (chunk_id, row), p in zip(chosen, p_chunk, strict=True):
        if best[row][0] == chunk_id:
            scored.append((chunk_id, float(p_file[row]), 1))
        else:
            doubt = (1.0 - best[row][1]) ** power if power else 1.0
            scored.append((chunk_id, float(p_file[row]) * rest_weight * float(p) * doubt, 0))
    scored.sort(key=lambda item: (-item[1], -item[2]))
    return [(chunk_id, score) for chunk_id, score, _ in scored]


@pytest.mark.parametrize("power", [0.0, 0.5])
def test_ordered_matches_the_chunk_at_a_time_order_with_ties(power):
    rng = np.random.default_rng(5)
    for _ in range(300):
        size = int(rng.integers(1, 12))
        rows = rng.integers(0, 4, size=size)
        chosen = [(int(10 * i + 3), int(r)) for i, r in enumerate(rows)]
        p_chunk = rng.choice([0.0, 0.1, 0.5, 0.9], size=size)
        p_file = rng.choice([0.0, 0.3, 0.6], size=4)
        got = stage.ordered(chosen, p_chunk, p_file, 0.1, power)
        assert got == _ordered_by_loops(chosen, p_chunk, p_file, 0.1, power)


def test_a_pool_without_word_sets_gets_the_same_features_from_the_questions_words_only():
    """A corpus question's pool (no word sets, made for one question) looks up only the
    question's words in its top files; an index's corpus keeps every word of a file."""
    from seek.retrieve.wordsets import WordSets

    paths = ["a.py"] * 3 + ["b.py"] * 2
    contents = [
        "# Parse the size\ndef parse_size(text): return int(text)",
        "def render(size): return str(size)",
        "class Sizer:\n    def size(self): return parse_size('1')",
        "// size of the cache\nfunction cacheSize() { return 1 }",
        "function unrelated() { return 2 }",
    ]
    chunks_of = {"a.py": np.array([0, 1, 2]), "b.py": np.array([3, 4])}
    chosen = [(0, 0), (1, 0), (2, 0), (3, 1), (4, 1)]
    pool = [(0, 1.0), (3, 0.6)]
    retrieval = Retrieval(np.array([0.4, 0.1, 0.3, 0.35, 0.05]), {}, {}, {0: 2.0, 3: 1.0})
    question = "where is the size parsed"
    pooled = Corpus(paths, contents, chunks_of)
    kept = Corpus(paths, contents, chunks_of, word_sets=WordSets.build(contents))
    rows = stage.features(question, chosen, pool, retrieval, pooled)
    assert rows[:, COL["coverage"]].max() > 0  # the question's words were found
    np.testing.assert_array_equal(rows, stage.features(question, chosen, pool, retrieval, kept))
