"""The cross-encoder code against a tiny ONNX model built here (``tests/tiny_reranker.py``,
random-free, no download): its logit is the sum of per-token weights, so the right order is
known in advance."""

import numpy as np
import pytest
from tiny_reranker import TYPE_WEIGHT, build_model
from tokenizers import Tokenizer

from seek.rerank import MAX_QUERY_TOKENS, MAX_TOKENS, CrossEncoder, pool_size
from seek.retrieve.context import RERANKER_UNAVAILABLE, build_context
from seek.retrieve.types import Hit, SearchResult


@pytest.fixture
def model_dir(tmp_path):
    return build_model(tmp_path / "reranker")


def test_scores_are_sigmoid_probabilities_in_input_order(model_dir):
    reranker = CrossEncoder(model_dir, workers=2)
    passages = ["a.py\nretry policy", "b.py\nhttp word", "c.py\ncache cache", "d.py\nretry"]
    scores = reranker.score("retry", passages)
    logits = [2 + 3, 2, 2 - 12, 2 + 2]  # query "retry" counts in every row
    assert scores == pytest.approx([1 / (1 + np.exp(-x)) for x in logits])
    assert all(0 < s < 1 for s in scores) and reranker.loaded


def test_query_cut_to_64_tokens_and_rows_to_512(model_dir):
    reranker = CrossEncoder(model_dir, workers=1)
    reranker.score("x", ["warm"])  # loads the tokenizer
    ids, mask = reranker.encode(" ".join(["word"] * 100), ["retry " * 1000, "short"])
    assert ids.shape == (2, MAX_TOKENS)
    assert list(ids[0, :3]) == [1, 8, 8] and ids[0, MAX_QUERY_TOKENS + 1] == 2  # CLS, q.., SEP
    assert ids[0, -1] == 2 and mask[1].sum() == 1 + MAX_QUERY_TOKENS + 1 + 1 + 1
    assert ids[1, mask[1].sum() :].tolist() == [0] * (MAX_TOKENS - mask[1].sum())  # padding


def test_idle_shutdown_and_reload(model_dir):
    reranker = CrossEncoder(model_dir, workers=1)
    reranker.score("retry", ["retry"])
    reranker.shutdown()
    assert not reranker.loaded
    assert reranker.score("retry", ["retry"])[0] > 0.9 and reranker.loaded


def test_pool_size():
    assert [pool_size(c) for c in (1, 2, 4, 8, 12, 64)] == [1, 1, 1, 2, 3, 3]


def context_for(settings_for, root, **overrides):
    hits = [
        Hit("a.py", 1, 1, 0.0, "http word"),
        Hit("b.py", 1, 1, 0.0, "retry policy"),
        Hit("c.py", 1, 1, 0.0, "cache cache"),
    ]
    settings = settings_for(widen_chars=0, imports_chars=0, **overrides)
    return build_context(root, SearchResult("retry", "retry", hits), settings)


def test_context_orders_by_probability_with_threshold_and_near_misses(
    model_dir, make_tree, settings_for
):
    root = make_tree({"a.py": "http word\n", "b.py": "retry policy\n", "c.py": "cache cache\n"})
    out = context_for(settings_for, root, reranker_model=str(model_dir))
    assert [b.path for b in out.blocks] == ["b.py", "a.py"]
    assert [b.path for b in out.near_misses] == ["c.py"]  # sigmoid(-10) < 0.01
    assert out.notes == []
    assert "b.py:1-1 0.99, a.py:1-1 0.88" in out.context_line()  # sigmoid(5), sigmoid(2)


def test_a_broken_model_falls_back_to_retrieval_order_with_the_note(
    tmp_path, make_tree, settings_for
):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model.onnx").write_bytes(b"not a model")
    root = make_tree({"a.py": "http word\n", "b.py": "retry policy\n", "c.py": "cache\n"})
    out = context_for(settings_for, root, reranker_model=str(broken))
    assert [b.path for b in out.blocks] == ["a.py", "b.py", "c.py"]
    assert out.notes == [RERANKER_UNAVAILABLE]


def test_passage_is_the_second_segment_when_the_tokenizer_says_so(tmp_path):
    # BERT's pair template types "passage [SEP]" as 1; the model adds TYPE_WEIGHT per such token.
    reranker = CrossEncoder(build_model(tmp_path / "typed", token_types=True), workers=1)
    score = reranker.score("retry", ["http word"])[0]
    logit = 2.0 + 3 * TYPE_WEIGHT  # "http", "word" and the last [SEP] are type 1
    assert score == pytest.approx(1 / (1 + np.exp(-logit)))
    ids, mask, types = reranker._encode("retry", ["http word", "cache"])
    assert types.tolist() == [[0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 0]]  # padding stays 0


def test_without_a_post_processor_every_token_is_type_zero(tmp_path):
    folder = build_model(tmp_path / "typed", token_types=True)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.post_processor = None
    tokenizer.save(str(folder / "tokenizer.json"))
    assert CrossEncoder(folder, workers=1).score("retry", ["http"])[0] == pytest.approx(
        1 / (1 + np.exp(-2.0))
    )
