"""seek.embed.static gives model2vec's own vectors (``StaticModel.encode``) for the built-in
model, on the plain-ASCII fast path and on every other kind of text."""

from pathlib import Path

import numpy as np
import pytest
from model2vec import StaticModel

import seek.embed.static as static
from seek.embed.local import BUILTIN_MODEL_NAME, BUILTIN_MODELS_DIR
from seek.embed.static import StaticEncoder

SOURCES = sorted((Path(static.__file__).parent.parent).rglob("*.py"))[:40]
TEXTS = [
    "def main():\n\treturn HTTPServer(port=8080)  # start\r\n",
    "src/app.py\nclass UserAccount:\n    MAX_FILE_BYTES = 1 << 20",
    "",
    "   \n\t  ",
    "ÉCOLE café naïve résumé",  # accents: the BERT normalizer strips them
    "中文字符 and mixed ASCII",  # Chinese characters are split one by one
    "bell\x07 and escape\x1b[0m and form\x0cfeed and del\x7fete",  # control characters
    "nul\x00byte and \ufffd replacement",
    "emoji 🚀 launch() and NBSP\u00a0here",
    "x" * 5000,  # one word far over the token limit
    " ".join(f"word{i}" for i in range(2000)),  # over 512 tokens: truncated
    "[UNK] [CLS] [SEP] [PAD] [MASK]",
]


@pytest.fixture(scope="module")
def model():
    model = StaticModel.from_pretrained(str(BUILTIN_MODELS_DIR / BUILTIN_MODEL_NAME))
    model.embedding = np.asarray(model.embedding, dtype=np.float32)  # as LocalEmbedder does
    return model


def texts():
    code = [path.read_text(encoding="utf-8")[:600] for path in SOURCES]
    return TEXTS + code + [t.upper() for t in code[:5]]


def test_vectors_equal_model2vec(model):
    encoder = StaticEncoder(model)
    assert encoder.plain is not None  # the fast path exists for the built-in model
    sample = texts()
    expected = model.encode(sample, show_progress_bar=False, use_multiprocessing=False)
    got = encoder.encode(sample)
    assert got.dtype == np.float32 and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
    plain = [t for t in sample if not static._NOT_PLAIN.search(t)]
    assert len(plain) > 20 and len(plain) < len(sample)  # both paths were taken


def test_pooling_in_small_slices_changes_nothing(model, monkeypatch):
    sample = texts()
    whole = StaticEncoder(model).encode(sample)
    monkeypatch.setattr(static, "POOL_TOKENS", 7)
    np.testing.assert_array_equal(StaticEncoder(model).encode(sample), whole)


def test_plain_text_rule():
    assert not static._NOT_PLAIN.search("def f(x):\n\treturn x  # ok\r\n")
    for text in ("café", "\x1b", "\x00", "\x7f", "\x0c", "\u00a0"):
        assert static._NOT_PLAIN.search(text), repr(text)


QUESTION_TEXTS = [
    "where is the configuration file parsed",
    "search_document: src/app.py\ndef parse(path):\n    return json.loads(open(path).read())",
    "",
    "   ",
    "ünïcödé ✓ 日本語 emoji 🚀 and mixed CamelCaseIdentifiers_with_underscores",
    "x" * 20_000,  # longer than max_length tokens: cut and truncated
    "zzqqxj qqzzv",
]


@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("copies", [1, static.BULK])  # a question; an indexing batch
def test_read_without_model2vec_gives_its_vectors(normalize, copies):
    """seek's own reader of the built-in model (no model2vec import in a search process)
    gives model2vec's vectors exactly, for a question and for an indexing batch, and keeps
    no float32 copy of the float16 table (45 MB)."""
    folder = BUILTIN_MODELS_DIR / BUILTIN_MODEL_NAME
    theirs = StaticModel.from_pretrained(str(folder), normalize=normalize)
    theirs.embedding = np.asarray(theirs.embedding, dtype=np.float32)
    ours = static.StaticModel(folder)
    assert ours.embedding.dtype == np.float16  # as stored: no copy on load
    ours.normalize = normalize
    encoder = StaticEncoder(ours)
    sample = QUESTION_TEXTS * copies
    expected = theirs.encode(sample, batch_size=len(sample), use_multiprocessing=False)
    got = encoder.encode(sample)
    assert got.dtype == expected.dtype == np.float32 and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
    big = [v for v in vars(encoder).values() if isinstance(v, np.ndarray) and v.size > 1000]
    assert big == []
    assert ours.embedding.dtype == np.float16
