"""A tiny ONNX cross-encoder built here (no download, no randomness): its logit is the sum of
per-token weights over the attention mask, so the right order is known in advance.

With ``token_types=True`` the model also takes ``token_type_ids`` and adds ``TYPE_WEIGHT`` per
token of type 1, and the tokenizer gets BERT's pair template (``[CLS] A [SEP] B:1 [SEP]:1``):
that shows whether the passage is fed as the second segment.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

VOCAB = ["[PAD]", "[CLS]", "[SEP]", "[UNK]", "retry", "policy", "cache", "http", "word"]
WEIGHTS = {"retry": 2.0, "policy": 1.0, "cache": -6.0}
TYPE_WEIGHT = 10.0


def _tokenizer(token_types: bool) -> Tokenizer:
    vocab = {word: i for i, word in enumerate(VOCAB)}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    if token_types:
        tokenizer.post_processor = processors.BertProcessing(("[SEP]", 2), ("[CLS]", 1))
    return tokenizer


def _graph(token_types: bool) -> onnx.GraphProto:
    weights = np.array([WEIGHTS.get(w, 0.0) for w in VOCAB], dtype=np.float32)
    nodes = [
        helper.make_node("Gather", ["w", "input_ids"], ["per_token"]),
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["per_token", "mask_f"], ["masked"]),
        helper.make_node(
            "ReduceSum", ["masked", "axes"], ["token_sum" if token_types else "logits"], keepdims=1
        ),
    ]
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["rows", "width"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["rows", "width"]),
    ]
    initializers = [
        helper.make_tensor("w", TensorProto.FLOAT, [len(VOCAB)], weights),
        helper.make_tensor("axes", TensorProto.INT64, [1], [1]),
    ]
    if token_types:
        nodes += [
            helper.make_node("Cast", ["token_type_ids"], ["types_f"], to=TensorProto.FLOAT),
            helper.make_node("ReduceSum", ["types_f", "axes"], ["type_sum"], keepdims=1),
            helper.make_node("Mul", ["type_sum", "type_weight"], ["type_part"]),
            helper.make_node("Add", ["token_sum", "type_part"], ["logits"]),
        ]
        inputs.append(
            helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["rows", "width"])
        )
        initializers.append(helper.make_tensor("type_weight", TensorProto.FLOAT, [], [TYPE_WEIGHT]))
    return helper.make_graph(
        nodes,
        "tiny-cross-encoder",
        inputs,
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["rows", 1])],
        initializers,
    )


def build_model(folder: Path, token_types: bool = False) -> Path:
    """Write ``model.onnx`` and ``tokenizer.json`` into ``folder`` (created) and return it."""
    folder.mkdir(parents=True, exist_ok=True)
    _tokenizer(token_types).save(str(folder / "tokenizer.json"))
    model = helper.make_model(_graph(token_types), opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(folder / "model.onnx"))
    return folder
