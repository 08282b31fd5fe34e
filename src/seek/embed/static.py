"""Encoding with a Model2Vec static model, the same vectors as ``StaticModel.encode``, faster
and in bounded memory (issue 14: the indexer's largest CPU cost is tokenizing).

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

``tests/test_embed_static.py`` checks that the vectors equal ``StaticModel.encode``'s.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

POOL_TOKENS = 32_768
"""Token rows gathered at once while averaging: 48 MiB of float32 with 384 dimensions."""
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


class StaticEncoder:
    """Encodes like ``model.encode(texts)`` for a loaded ``model2vec.StaticModel``."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.dim = int(model.dim)
        self.max_chars = (
            model.max_length * model.median_token_length if model.max_length is not None else None
        )
        self.unk = model.unk_token_id
        self.plain = _plain_tokenizer(model.tokenizer)
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
        ids = self._tokenize(texts)
        out = self._mean(ids, model.embedding)
        if model.normalize:
            out /= np.linalg.norm(out, axis=1, keepdims=True) + 1e-32
        return out

    def _tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        plain_rows: list[int] = []
        other_rows: list[int] = []
        if self.plain is None:
            other_rows = list(range(len(texts)))
        else:
            for row, text in enumerate(texts):
                (other_rows if _NOT_PLAIN.search(text) else plain_rows).append(row)
        ids: list[list[int]] = [[] for _ in texts]
        for tokenizer, rows in ((self.plain, plain_rows), (self.model.tokenizer, other_rows)):
            if not rows:
                continue
            batch = [texts[row] for row in rows]
            encodings = tokenizer.encode_batch_fast(batch, add_special_tokens=False)
            for row, encoding in zip(rows, encodings, strict=True):
                ids[row] = encoding.ids
        if self.unk is not None:
            unk = self.unk
            ids = [[i for i in row if i != unk] if unk in row else row for row in ids]
        return ids

    def _mean(self, ids: list[list[int]], embedding: np.ndarray) -> np.ndarray:
        """Each row's mean embedding, by groups of equal length (one gather per group)."""
        dtype = np.float32 if embedding.dtype == np.int8 else embedding.dtype
        out = np.zeros((len(ids), self.dim), dtype=dtype)
        by_length: dict[int, list[int]] = defaultdict(list)
        for row, row_ids in enumerate(ids):
            if row_ids:
                by_length[len(row_ids)].append(row)
        for length, rows in by_length.items():
            step = max(1, POOL_TOKENS // length)
            for start in range(0, len(rows), step):
                part = rows[start : start + step]
                matrix = np.array([ids[row] for row in part], dtype=np.int64)
                out[part] = embedding[matrix].mean(axis=1)
        return out.astype(np.float32, copy=False)
