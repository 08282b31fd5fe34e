"""The cross-encoder code against a tiny ONNX model built here (random-free, no download):
its logit is the sum of per-token weights, so the right order is known in advance."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

from seek.rerank import MAX_QUERY_TOKENS, MAX_TOKENS, CrossEncoder, pool_size
from seek.retrieve.context import RERANKER_UNAVAILABLE, build_context
from seek.retrieve.types import Hit, SearchResult

VOCAB = ["[PAD]", "[CLS]", "[SEP]", "[UNK]", "retry", "policy", "cache", "http", "word"]
WEIGHTS = {"retry": 2.0, "policy": 1.0, "cache": -6.0}


def build_model(folder):
    folder.mkdir(parents=True, exist_ok=True)
    vocab = {word: i for i, word in enumerate(VOCAB)}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(folder / "tokenizer.json"))
    weights = np.array([WEIGHTS.get(w, 0.0) for w in VOCAB], dtype=np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("Gather", ["w", "input_ids"], ["per_token"]),
            helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["per_token", "mask_f"], ["masked"]),
            helper.make_node("ReduceSum", ["masked", "axes"], ["logits"], keepdims=1),
        ],
        "tiny-cross-encoder",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["rows", "width"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["rows", "width"]),
        ],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["rows", 1])],
        [
            helper.make_tensor("w", TensorProto.FLOAT, [len(VOCAB)], weights),
            helper.make_tensor("axes", TensorProto.INT64, [1], [1]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(folder / "model.onnx"))
    return folder


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
    assert [b.path for b in out.near_misses] == ["c.py"]  # sigmoid(-10) < 0.08
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
