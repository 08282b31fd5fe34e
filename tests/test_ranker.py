"""The learned ranker: file features, the model file, the final order, and search with it."""

import json
import math

import numpy as np
import pytest
from conftest import SMALL_PROJECT, HashEmbedder

from seek.index.indexer import index_workspace
from seek.retrieve import Searcher
from seek.retrieve.ranker import (
    BUILTIN_RANKER,
    FEATURES,
    Corpus,
    Ranker,
    Retrieval,
    features,
    ranked_pool,
)

COL = {name: i for i, name in enumerate(FEATURES)}


def corpus_of(paths, contents):
    by_path = {}
    for i, path in enumerate(paths):
        by_path.setdefault(path, []).append(i)
    return Corpus(paths, contents, {p: np.array(c) for p, c in by_path.items()})


PATHS = ["src/retry.py", "src/retry.py", "docs/retry.md", "tests/test_retry.py", "src/http.py"]
CONTENTS = [
    "def configure_retries(policy):\n    return RetryPolicy(policy)",
    "class RetryPolicy:\n    backoff = 2",
    "# Retries\nConfigure the backoff policy.",
    "def test_retries():\n    configure_retries(None)",
    "def send(request):\n    return connection.write(request)",
]


def test_one_row_per_file_in_order_of_its_best_candidate():
    corpus = corpus_of(PATHS, CONTENTS)
    pool = [(1, 0.9), (4, 0.8), (0, 0.5), (2, 0.4)]
    retrieval = Retrieval(
        similarities=np.array([0.5, 0.7, 0.2, 0.1, 0.3]),
        vector_ranks={1: 1, 0: 2, 4: 3},
        keyword_ranks={0: 1, 2: 2},
        keyword_scores={0: 4.0, 2: 2.0},
    )
    files, rows = features("how is the retry backoff policy configured", pool, retrieval, corpus)
    assert files == ["src/retry.py", "src/http.py", "docs/retry.md"]
    assert rows.shape == (3, len(FEATURES))
    retry, http, docs = rows
    assert retry[COL["best_fused_share"]] == pytest.approx(1.0)
    assert retry[COL["sum_fused_share"]] == pytest.approx((0.9 + 0.5) / 0.9)
    assert retry[COL["log_candidates"]] == pytest.approx(math.log(2))
    assert http[COL["best_inv_rank"]] == pytest.approx(0.5)
    assert retry[COL["best_dense"]] == pytest.approx(0.7)
    assert http[COL["best_dense_gap"]] == pytest.approx(0.3 - 0.7)
    assert retry[COL["best_bm25_share"]] == pytest.approx(1.0)
    assert docs[COL["best_bm25_inv_rank"]] == pytest.approx(0.5)
    assert http[COL["best_bm25_inv_rank"]] == 0.0
    # retry, backoff, polici, configur: the file's two chunks hold all four, one chunk three
    assert retry[COL["file_coverage"]] == pytest.approx(1.0)
    assert retry[COL["best_coverage"]] == pytest.approx(0.75)
    assert http[COL["best_coverage"]] == 0.0
    assert retry[COL["path_coverage"]] > 0 and http[COL["path_coverage"]] == 0
    assert docs[COL["non_code"]] == 1.0 and retry[COL["non_code"]] == 0.0
    assert retry[COL["symbol_query"]] == 0.0


def test_path_similarity_uses_the_index_embedder_and_the_query_vector():
    unit = {"src/retry.py": [1.0, 0.0], "src/http.py": [0.0, 1.0]}
    corpus = Corpus(
        PATHS, CONTENTS, corpus_of(PATHS, CONTENTS).chunks_of_path,
        lambda paths: np.array([unit[p] for p in paths]),
    )  # fmt: skip
    retrieval = Retrieval(np.zeros(5), {}, {}, {}, query_vector=np.array([0.6, 0.8]))
    files, rows = features("retry", [(0, 1.0), (4, 0.5)], retrieval, corpus)
    assert files == ["src/retry.py", "src/http.py"]
    assert rows[:, COL["path_dense"]] == pytest.approx([0.6, 0.8])
    assert rows[:, COL["path_dense_gap"]] == pytest.approx([-0.2, 0.0])
    assert rows[:, COL["mean_file_dense"]] == pytest.approx([0.0, 0.0])


def test_symbol_questions_see_definitions_and_test_files_their_penalty():
    corpus = corpus_of(PATHS, CONTENTS)
    pool = [(3, 1.0), (1, 0.8)]
    files, rows = features("RetryPolicy", pool, Retrieval(None, {}, {}, {}), corpus)
    assert files == ["tests/test_retry.py", "src/retry.py"]
    test_file, source = rows
    assert source[COL["defines_query_name"]] == 1.0
    assert test_file[COL["defines_query_name"]] == 0.0
    assert test_file[COL["log_path_penalty"]] < 0 == source[COL["log_path_penalty"]]
    assert source[COL["symbol_query"]] == 1.0
    assert source[COL["best_dense"]] == 0.0  # no vectors: dense features are 0


def test_empty_pool_has_no_rows():
    files, rows = features("anything", [], Retrieval(None, {}, {}, {}), corpus_of([], []))
    assert files == [] and rows.shape == (0, len(FEATURES))


def test_final_order_puts_each_files_best_chunk_first_then_the_rest():
    paths = ["a.py", "a.py", "b.py", "c.py"]
    pool = [(0, 0.9), (1, 0.8), (2, 0.7), (3, 0.6)]
    ranked = ranked_pool(pool, ["a.py", "b.py", "c.py"], np.array([0.5, 0.9, 0.1]), paths)
    assert [i for i, _ in ranked] == [2, 0, 3, 1]
    assert [p for _, p in ranked] == pytest.approx([0.9, 0.5, 0.1, 0.25])


def linear_spec(weights, bias):
    return {
        "features": list(FEATURES),
        "mean": [0.0] * len(FEATURES),
        "scale": [1.0] * len(FEATURES),
        "layers": [{"weights": [[w] for w in weights], "bias": [bias]}],
    }


def test_a_linear_model_is_a_logistic_regression(tmp_path):
    weights = [0.0] * len(FEATURES)
    weights[COL["best_dense"]] = 2.0
    path = tmp_path / "ranker.json"
    path.write_text(json.dumps(linear_spec(weights, -1.0)))
    rows = np.zeros((2, len(FEATURES)))
    rows[1, COL["best_dense"]] = 1.0
    probabilities = Ranker.load(path).probabilities(rows)
    assert probabilities == pytest.approx([1 / (1 + math.exp(1)), 1 / (1 + math.exp(-1))])


def test_a_hidden_layer_uses_relu():
    spec = {
        "features": list(FEATURES),
        "mean": [1.0] * len(FEATURES),
        "scale": [2.0] * len(FEATURES),
        "layers": [
            {"weights": [[1.0, -1.0]] + [[0.0, 0.0]] * (len(FEATURES) - 1), "bias": [0, 0]},
            {"weights": [[1.0], [1.0]], "bias": [0.0]},
        ],
    }
    rows = np.zeros((1, len(FEATURES)))
    rows[0, 0] = 5.0  # standardised: (5 - 1) / 2 = 2 -> hidden (2, relu(-2) = 0) -> logit 2
    assert Ranker(spec).logits(rows) == pytest.approx([2.0])


def test_a_model_trained_on_other_features_is_refused():
    spec = linear_spec([0.0] * len(FEATURES), 0.0)
    spec["features"] = ["something_else"]
    with pytest.raises(ValueError, match="rebuild"):
        Ranker(spec)


def test_the_built_in_ranker_ships_calibrated_and_loads():
    spec = json.loads(BUILTIN_RANKER.read_text())
    assert spec["features"] == list(FEATURES)
    assert "cv" in spec["training"]
    ranker = Ranker(spec)
    assert ranker.probabilities(np.zeros((1, len(FEATURES)))).shape == (1,)


@pytest.fixture
def indexed(make_tree, settings_for):
    root = make_tree(SMALL_PROJECT)
    embedder = HashEmbedder()
    index_workspace(root, settings_for(), embedder=embedder)
    return root, embedder


def test_search_scores_are_probabilities_with_the_ranker(indexed, settings_for):
    root, embedder = indexed
    result = Searcher.open(root, settings_for(), embedder=embedder).search("Router", k=4)
    assert result.hits[0].path == "src/router.py"
    assert all(0.0 <= h.score <= 1.0 for h in result.hits)
    assert "ranker_ms" in result.timings_ms


def test_the_ranker_can_be_switched_off(indexed, settings_for):
    root, embedder = indexed
    off = Searcher.open(root, settings_for(ranker_model="off"), embedder=embedder)
    assert off.pipeline.ranker() == (None, "")
    result = off.search("Router", k=4)
    assert "ranker_ms" not in result.timings_ms
    on = Searcher.open(root, settings_for(), embedder=embedder)
    disabled = on.search("Router", k=4, disabled=frozenset({"learned_ranker"}))
    assert [h.score for h in disabled.hits] == [h.score for h in result.hits]


def test_a_missing_or_broken_ranker_file_means_fused_order_with_a_note(
    indexed, settings_for, tmp_path
):
    root, embedder = indexed
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"features": ["old"], "layers": []}))
    for path in (tmp_path / "nowhere.json", broken):
        settings = settings_for(ranker_model=str(path))
        result = Searcher.open(root, settings, embedder=embedder).search("Router", k=4)
        assert result.hits and "ranker_ms" not in result.timings_ms
        assert any("could not be loaded" in note for note in result.notes)
