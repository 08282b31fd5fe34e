"""Reading and encoding with a Model2Vec static model: the same vectors as model2vec's
``StaticModel.encode``, faster and in bounded memory (issue 14: the indexer's largest CPU cost
is tokenizing; a ``seek search`` process should not pay model2vec's imports).

:class:`StaticModel` reads the plain layout (one ``embeddings`` tensor, no vocabulary
quantisation or weights) without importing model2vec, whose loader imports
``huggingface_hub``, ``joblib`` and ``tqdm`` (~0.8 s of a search process for a folder on
disk); other layouts are loaded by model2vec (:func:`load_static_model`).

What ``StaticModel.encode`` does, and this module repeats exactly: cut each text to
``max_length * median_token_length`` characters, tokenize without special tokens (truncated
to ``max_length`` tokens), drop the unknown token, average the embedding rows of the ids,
normalize when the model says so. Two things differ:

- **Tokenizing plain ASCII code skips the BERT normalizer.** For a text of printable ASCII,
  tabs and line breaks, ``BertNormalizer`` (clean text, Chinese characters, accents,
  lower case) changes nothing but the case and turns tabs and line breaks into spaces,
  which ``BertPreTokenizer`` splits on anyway; a copy of the tokenizer whose normalizer only
  lower-cases gives the same ids about 30% faster. Any other text (non-ASCII, control
  characters) goes through the model's own tokenizer. Only tokenizers of that shape (BERT
  normalizer, BERT pre-tokenizer) get the fast path.
- **Averaging is done in slices of at most ``POOL_TOKENS`` tokens**, so a batch of many
  long texts of the same length (windows of a minified file) never gathers a huge
  ``texts x tokens x dims`` block at once.
- **Averaging is in float32** (as model2vec does on a float32 copy of the table), but a
  float16 table (the built-in model is stored so) is never copied whole: each batch converts
  only the rows of the tokens it uses (a few thousand of the 29,500) and averages those
  (the same values: float16 to float32 is exact, and each mean adds the same float32 rows
  in the same order). A whole float32 copy was 45 MB of every indexing process and 0.05-0.1
  s of CPU for its first batch (issue 14). The fast-path tokenizer is built on the first
  batch of at least ``BULK`` texts (an indexing batch, not a question).

``tests/test_embed_static.py`` checks that the vectors equal ``StaticModel.encode``'s.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

POOL_TOKENS = 4096
"""Token rows gathered at once while averaging: 6 MiB of float32 with 384 dimensions (32,768
made a 48 MiB block, the peak of a small folder's whole index run; the smaller slices cost no
measurable CPU: 1.0-1.1 s for 3,050 windows of tokio either way)."""
TOKENIZE_TEXTS = 128
"""Texts tokenized at once: a tokenizer's encodings (tokens, offsets, masks) of a whole
1,024-window indexing step held ~40 MB; only their ids are kept."""
BULK = 64
"""Texts in one call from which the fast-path tokenizer is built (an indexing batch, not a
question)."""
_NOT_PLAIN = re.compile(r"[^\t\n\r\x20-\x7e]")
"""A character outside printable ASCII, tab and line breaks: the BERT normalizer may do
more than lower-case such a text (remove a control character, strip an accent)."""


def _plain_tokenizer(tokenizer: Any) -> Any | None:
    """A copy of ``tokenizer`` that only lower-cases, when that is equivalent on plain text."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers

    normalizer = tokenizer.normalizer
    if not isinstance(normalizer, normalizers.BertNormalizer):
        return None
    if not isinstance(tokenizer.pre_tokenizer, pre_tokenizers.BertPreTokenizer):
        return None
    plain = Tokenizer.from_str(tokenizer.to_str())
    plain.normalizer = normalizers.Lowercase() if normalizer.lowercase else None
    return plain


class StaticModel:
    """A Model2Vec folder of the plain layout, read without model2vec: the attributes
    :class:`StaticEncoder` uses, named as model2vec's ``StaticModel`` names them."""

    weights = None
    token_mapping = None

    def __init__(self, folder: Path) -> None:
        from safetensors import safe_open
        from tokenizers import Tokenizer

        with safe_open(str(folder / "model.safetensors"), framework="numpy") as tensors:
            if set(tensors.keys()) != {"embeddings"}:
                raise _OtherLayout
            self.embedding = tensors.get_tensor("embeddings")
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        vocab = tokenizer.get_vocab()
        if len(vocab) != len(self.embedding):
            raise _OtherLayout
        padding = tokenizer.padding
        if padding is not None:  # model2vec keeps the pad token but never pads
            tokenizer.enable_padding(pad_id=padding["pad_id"], pad_token=padding["pad_token"],
                                     pad_type_id=padding["pad_type_id"], length=0)  # fmt: skip
        if hasattr(tokenizer.model, "unk_token"):
            unk = tokenizer.model.unk_token
            self.unk_token_id = tokenizer.token_to_id(unk) if unk is not None else None
        else:  # a unigram model names its id
            self.unk_token_id = json.loads(tokenizer.to_str())["model"].get("unk_id")
        self.median_token_length = int(statistics.median(len(token) for token in vocab))
        self.normalize = bool(config.get("normalize", False))
        self.max_length = config.get("max_length", 512)
        if self.max_length is None:
            tokenizer.no_truncation()
        else:
            tokenizer.enable_truncation(self.max_length)
        self.tokenizer = tokenizer

    @property
    def dim(self) -> int:
        return int(self.embedding.shape[1])


class _OtherLayout(Exception):
    """A Model2Vec folder this reader does not handle: model2vec loads it."""


def load_static_model(folder: Path) -> Any:
    """The folder's model: :class:`StaticModel` for the plain layout, else model2vec's."""
    try:
        return StaticModel(folder)
    except (_OtherLayout, FileNotFoundError, KeyError):
        from model2vec import StaticModel as Model2VecModel

        return Model2VecModel.from_pretrained(str(folder))


class StaticEncoder:
    """Encodes like ``model.encode(texts)`` for a :class:`StaticModel` or a loaded
    ``model2vec.StaticModel``."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.dim = int(model.dim)
        self.max_chars = (
            model.max_length * model.median_token_length if model.max_length is not None else None
        )
        self.unk = model.unk_token_id
        self._plain: Any = False  # built on the first bulk batch; None = no fast path
        # Weighted or re-mapped vocabularies are left to model2vec itself.
        self.simple = getattr(model, "weights", None) is None and (
            getattr(model, "token_mapping", None) is None
        )

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        model = self.model
        if not self.simple:
            return np.asarray(
                model.encode(list(texts), show_progress_bar=False, use_multiprocessing=False),
                dtype=np.float32,
            )
        if self.max_chars is not None:
            texts = [text[: self.max_chars] for text in texts]
        bulk = len(texts) >= BULK
        ids = self._tokenize(texts, bulk)
        out = self._mean(ids, self.model.embedding)
        if model.normalize:
            out /= np.linalg.norm(out, axis=1, keepdims=True) + 1e-32
        return out

    @property
    def plain(self) -> Any | None:
        """The lower-casing copy of the model's tokenizer, or None when it has none."""
        if self._plain is False:
            self._plain = _plain_tokenizer(self.model.tokenizer)
        return self._plain

    def _tokenize(self, texts: Sequence[str], bulk: bool) -> list[list[int]]:
        plain_rows: list[int] = []
        other_rows: list[int] = []
        if not bulk or self.plain is None:
            other_rows = list(range(len(texts)))
        else:
            for row, text in enumerate(texts):
                (other_rows if _NOT_PLAIN.search(text) else plain_rows).append(row)
        ids: list[list[int]] = [[] for _ in texts]
        for tokenizer, rows in ((self._plain, plain_rows), (self.model.tokenizer, other_rows)):
            if not rows:
                continue
            for start in range(0, len(rows), TOKENIZE_TEXTS):
                part = rows[start : start + TOKENIZE_TEXTS]
                batch = [texts[row] for row in part]
                encodings = tokenizer.encode_batch_fast(batch, add_special_tokens=False)
                for row, encoding in zip(part, encodings, strict=True):
                    ids[row] = encoding.ids
        if self.unk is not None:
            unk = self.unk
            ids = [[i for i in row if i != unk] if unk in row else row for row in ids]
        return ids

    def _mean(self, ids: list[list[int]], embedding: np.ndarray) -> np.ndarray:
        """Each row's mean embedding, by groups of equal length (one gather per group), in
        float32: from a float32 table directly, from any other through a float32 copy of
        just the rows the batch uses."""
        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        by_length: dict[int, list[int]] = defaultdict(list)
        for row, row_ids in enumerate(ids):
            if row_ids:
                by_length[len(row_ids)].append(row)
        groups: list[tuple[list[int], np.ndarray]] = []
        for length, rows in by_length.items():
            step = max(1, POOL_TOKENS // length)
            for start in range(0, len(rows), step):
                part = rows[start : start + step]
                groups.append((part, np.array([ids[row] for row in part], dtype=np.intp)))
        if embedding.dtype != np.float32 and groups:
            used = np.zeros(len(embedding), dtype=bool)
            for _, matrix in groups:
                used[matrix] = True
            rows_used = np.flatnonzero(used)
            position = np.zeros(len(embedding), dtype=np.intp)
            position[rows_used] = np.arange(len(rows_used))
            embedding = embedding[rows_used].astype(np.float32)
            groups = [(part, position[matrix]) for part, matrix in groups]
        for part, matrix in groups:
            out[part] = embedding[matrix].mean(axis=1)
        return out
