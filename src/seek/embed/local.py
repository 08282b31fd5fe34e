"""The built-in local embedder: a Model2Vec static model shipped inside the package.

Loading takes about half a second and encoding needs no server, key or download. The model
is a folder (``model`` setting: a path, or empty for the built-in one), so a better model is a
drop-in replacement.
"""

from __future__ import annotations

import json
import logging
import statistics
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from seek.embed import register_provider
from seek.errors import EmbeddingError
from seek.settings import Settings

log = logging.getLogger(__name__)

BUILTIN_MODEL_NAME = "minilm-code"
BUILTIN_MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
ENCODE_BATCH = 1024


def model_folder(settings: Settings) -> Path:
    if not settings.model:
        return BUILTIN_MODELS_DIR / BUILTIN_MODEL_NAME
    candidate = Path(settings.model).expanduser()
    if candidate.is_dir():
        return candidate
    builtin = BUILTIN_MODELS_DIR / settings.model
    return builtin if builtin.is_dir() else candidate


def local_model_id(settings: Settings) -> str:
    """``local/<folder name>``; a different model must live in a differently named folder."""
    return f"local/{model_folder(settings).name}"


class LocalEmbedder:
    """Model2Vec static embeddings, loaded lazily on first use."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.model_id = f"local/{folder.name}"
        self._model = None
        self._lock = threading.Lock()

    def _load(self):  # model2vec's StaticModel
        with self._lock:
            if self._model is None:
                if not (self.folder / "config.json").is_file():
                    raise EmbeddingError(
                        f"no embedding model in {self.folder} (expected a Model2Vec folder with "
                        "config.json, model.safetensors and tokenizer.json)"
                    )
                try:
                    model = load_static_model(self.folder)
                except Exception as exc:
                    raise EmbeddingError(
                        f"cannot load the embedding model in {self.folder}: {exc}"
                    ) from exc
                if not isinstance(model, StaticModel):
                    # Stored as float16 to keep the package small; numpy averages float16 in
                    # software, float32 is ~1.5x faster to encode for 30 MB of memory.
                    model.embedding = np.asarray(model.embedding, dtype=np.float32)
                self._model = model
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        model = self._load()
        if not texts:
            return np.zeros((0, model.dim), dtype=np.float32)
        # One thread: the indexer already embeds beside its chunking thread, and model2vec's
        # joblib fan-out polls with sleeps that cost more than it saves on flush-sized batches.
        vectors = model.encode(
            list(texts),
            batch_size=ENCODE_BATCH,
            show_progress_bar=False,
            use_multiprocessing=False,
        )
        return np.asarray(vectors, dtype=np.float32)


class StaticModel:
    """model2vec's ``StaticModel`` for the plain layout (one ``embeddings`` tensor, no
    vocabulary quantisation), read without importing model2vec: its loader imports
    ``huggingface_hub`` (and ``joblib``, ``tqdm``), ~0.8 s of a ``seek search`` process
    for a folder on disk. ``encode`` repeats model2vec 0.10's steps exactly (cut each text
    at ``max_length x`` the median token length, tokenize without special tokens or padding,
    drop unknown tokens, truncate to ``max_length`` tokens, mean of the token vectors, unit
    length when ``normalize``); ``tests/test_embed_static.py`` checks the vectors are equal.

    Averaging is in float32 (as model2vec does on seek's float32 copy of the table), but the
    float32 copy of the table (47 MB for the built-in model) is made only for a batch of at
    least ``BULK`` texts: a search embeds one question, whose few rows are converted alone
    (same values: float16 to float32 is exact)."""

    BULK = 64

    def __init__(self, folder: Path) -> None:
        from safetensors import safe_open
        from tokenizers import Tokenizer

        with safe_open(str(folder / "model.safetensors"), framework="numpy") as tensors:
            if set(tensors.keys()) != {"embeddings"}:
                raise _OtherLayout
            self.embedding = tensors.get_tensor("embeddings")
        self._embedding32: np.ndarray | None = None
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        vocab = tokenizer.get_vocab()
        if len(vocab) != len(self.embedding):
            raise _OtherLayout
        padding = tokenizer.padding
        if padding is not None:  # model2vec keeps the pad token but never pads
            tokenizer.enable_padding(pad_id=padding["pad_id"], pad_token=padding["pad_token"],
                                     pad_type_id=padding["pad_type_id"], length=0)  # fmt: skip
        unk = getattr(tokenizer.model, "unk_token", None)
        if not hasattr(tokenizer.model, "unk_token"):  # a unigram model names its id
            unk_id = json.loads(tokenizer.to_str())["model"].get("unk_id")
        else:
            unk_id = tokenizer.token_to_id(unk) if unk is not None else None
        self.unk_id = unk_id
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

    def encode(self, sentences: list[str], batch_size: int = ENCODE_BATCH, **_: object):
        if self.max_length is not None:
            cut = self.max_length * self.median_token_length
            sentences = [s[:cut] for s in sentences]
        batches = [self._batch(sentences[i : i + batch_size])
                   for i in range(0, len(sentences), batch_size)]  # fmt: skip
        return np.concatenate(batches, axis=0)

    def _batch(self, sentences: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch_fast(sentences, add_special_tokens=False)
        ids = [e.ids for e in encodings]
        if self.unk_id is not None:
            ids = [[t for t in row if t != self.unk_id] for row in ids]
        table = self.embedding
        if len(sentences) >= self.BULK:
            if self._embedding32 is None:
                self._embedding32 = np.asarray(self.embedding, dtype=np.float32)
            table = self._embedding32
        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        buckets: dict[int, list[int]] = {}
        for i, row in enumerate(ids):
            if row:
                buckets.setdefault(len(row), []).append(i)
        for indices in buckets.values():
            matrix = np.array([ids[i] for i in indices], dtype=np.int64)
            out[indices] = table[matrix].astype(np.float32, copy=False).mean(axis=1)
        if self.normalize:
            out32 = out.astype(np.float32)
            norm = np.linalg.norm(out32, axis=1, keepdims=True) + 1e-32
            return (out32 / norm).astype(out.dtype)
        return out


class _OtherLayout(Exception):
    """A Model2Vec folder this reader does not handle: model2vec loads it."""


def load_static_model(folder: Path):
    """The folder's model: :class:`StaticModel` for the plain layout, else model2vec's."""
    try:
        return StaticModel(folder)
    except (_OtherLayout, FileNotFoundError, KeyError):
        from model2vec import StaticModel as Model2VecModel

        return Model2VecModel.from_pretrained(str(folder))


@lru_cache(maxsize=4)
def _shared_embedder(folder: Path) -> LocalEmbedder:
    """One loaded model per folder per process (a server or a benchmark indexes many times)."""
    return LocalEmbedder(folder)


register_provider("local", lambda settings: _shared_embedder(model_folder(settings).resolve()))
