"""The built-in local embedder: a Model2Vec static model shipped inside the package.

Loading takes about half a second and encoding needs no server, key or download. The model
is a folder (``model`` setting: a path, or empty for the built-in one), so a better model is a
drop-in replacement.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from seek.embed.static import StaticEncoder, StaticModel, load_static_model
from seek.errors import EmbeddingError
from seek.settings import Settings
from seek.settings.providers import register_provider

log = logging.getLogger(__name__)

BUILTIN_MODEL_NAME = "minilm-code"
BUILTIN_MODELS_DIR = Path(__file__).resolve().parent.parent / "models"


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
        self._encoder: StaticEncoder | None = None
        self._lock = threading.Lock()

    def _load(self):  # seek.embed.static.StaticModel, or model2vec's for other layouts
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
                    # software, float32 is ~1.5x faster to encode for 30 MB of memory. (seek's
                    # own reader makes that copy only for indexing-sized batches.)
                    model.embedding = np.asarray(model.embedding, dtype=np.float32)
                self._encoder = StaticEncoder(model)
                self._model = model
        return self._model

    def get_ready(self) -> None:
        """Load the model and what the encoder builds for indexing-sized batches (an index
        run calls this on its writer thread while it chunks its first files)."""
        self._load()
        assert self._encoder is not None
        _ = self._encoder.plain

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        model = self._load()
        if not texts:
            return np.zeros((0, model.dim), dtype=np.float32)
        # StaticEncoder: model2vec's vectors, faster (seek.embed.static). One Python thread:
        # the indexer already embeds beside its chunking thread, and model2vec's joblib
        # fan-out polls with sleeps that cost more than it saves on step-sized batches.
        encoder = self._encoder
        assert encoder is not None
        return encoder.encode(list(texts))


@lru_cache(maxsize=4)
def _shared_embedder(folder: Path) -> LocalEmbedder:
    """One loaded model per folder per process (a server or a benchmark indexes many times)."""
    return LocalEmbedder(folder)


register_provider("local", lambda settings: _shared_embedder(model_folder(settings).resolve()))
