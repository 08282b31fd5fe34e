"""The built-in model read without model2vec (issue 14) gives model2vec's vectors exactly, as
seek uses it (the table in float32), for one question and for an indexing batch."""

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
    "zzqqxj qqzzv",
]


@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("copies", [1, StaticModel.BULK])  # a question; an indexing batch
def test_vectors_equal_model2vec(normalize, copies):
    model2vec = pytest.importorskip("model2vec")
    folder = BUILTIN_MODELS_DIR / BUILTIN_MODEL_NAME
    theirs = model2vec.StaticModel.from_pretrained(str(folder), normalize=normalize)
    theirs.embedding = np.asarray(theirs.embedding, dtype=np.float32)
    ours = StaticModel(folder)
    ours.normalize = normalize
    texts = TEXTS * copies
    expected = theirs.encode(texts, batch_size=len(texts), use_multiprocessing=False)
    got = ours.encode(texts, batch_size=len(texts))
    assert got.dtype == expected.dtype == np.float32 and got.shape == expected.shape
    assert np.array_equal(got, expected)
    assert (ours._embedding32 is not None) == (len(texts) >= StaticModel.BULK)
