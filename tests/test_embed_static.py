"""The built-in model read without model2vec (issue 14) gives model2vec's vectors exactly."""

import numpy as np
import pytest

from seek.embed.local import BUILTIN_MODEL_NAME, BUILTIN_MODELS_DIR, StaticModel

TEXTS = [
    "where is the configuration file parsed",
    "search_document: src/app.py\ndef parse(path):\n    return json.loads(open(path).read())",
    "",
    "   ",
    "ünïcödé ✓ 日本語 emoji 🚀 and mixed CamelCaseIdentifiers_with_underscores",
    "x" * 20_000,  # longer than max_length tokens: cut and truncated
    "zzqqxj qqzzv",  # unknown-ish pieces
]


@pytest.mark.parametrize("normalize", [True, False])
def test_vectors_equal_model2vec(normalize):
    model2vec = pytest.importorskip("model2vec")
    folder = BUILTIN_MODELS_DIR / BUILTIN_MODEL_NAME
    theirs = model2vec.StaticModel.from_pretrained(str(folder), normalize=normalize)
    ours = StaticModel(folder)
    ours.normalize = normalize
    expected = theirs.encode(TEXTS, batch_size=3, use_multiprocessing=False)
    got = ours.encode(TEXTS, batch_size=3)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert np.array_equal(got, expected)
