"""A local cross-encoder reranker run with onnxruntime on the CPU (reference §7).

A model is a folder with ``model.onnx`` (inputs ``input_ids`` and ``attention_mask``, int64
``[rows, width]``, optionally ``token_type_ids``; one logit per row) and ``tokenizer.json``
(Hugging Face ``tokenizers``). Each row is ``[CLS] query [SEP] passage [SEP]`` with the query
cut to 64 tokens and the row to 512; the score is ``sigmoid(logit)``, an absolute
probability, so a threshold means the same whatever the other candidates are. When the model
takes ``token_type_ids``, ``passage [SEP]`` gets the type the tokenizer's own pair template
gives a second segment (1 for BERT cross-encoders such as ms-marco-MiniLM, which were trained
that way); a tokenizer without a post-processor says nothing, so every token is type 0.

Sessions are a pool of ``min(3, max(1, cores // 4))``, created together on the first call,
scoring contiguous slices of the passages in parallel (onnxruntime releases the GIL), and
dropped after 5 idle minutes. A model that fails to load marks the reranker unavailable
for the process (logged once); callers then fall back to retrieval order.
"""

from __future__ import annotations

import logging
import math
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

import numpy as np

from seek.errors import RerankerUnavailable

log = logging.getLogger(__name__)

MAX_QUERY_TOKENS = 64
MAX_TOKENS = 512
IDLE_SHUTDOWN_S = 300.0
# Special token ids used when the tokenizer names none of the usual ones (reference §7.2).
DEFAULT_PAD, DEFAULT_CLS, DEFAULT_SEP = 0, 1, 2


def pool_size(cores: int | None = None) -> int:
    return min(3, max(1, (cores or os.cpu_count() or 1) // 4))


def _special_id(tokenizer, names: Sequence[str], default: int) -> int:
    for name in names:
        token_id = tokenizer.token_to_id(name)
        if token_id is not None:
            return token_id
    return default


def _pair_type_id(tokenizer) -> int:
    """The token type the tokenizer's post-processor gives a pair's second segment; 0 when it
    has none (without one, ``tokenizers`` still numbers a pair 0/1, which a model trained with
    a single token type could not take)."""
    if tokenizer.post_processor is None:
        return 0
    return tokenizer.encode("a", "b").type_ids[-1]


class CrossEncoder:
    def __init__(self, folder: Path, workers: int | None = None) -> None:
        self.folder = folder
        self.workers = workers or pool_size()
        self._sessions: list = []
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._broken: str = ""
        self._pair_type = 0
        self._tokenizer = None

    # -- loading --------------------------------------------------------------------------------
    def _load(self) -> list:
        with self._lock:
            if self._broken:
                raise RerankerUnavailable(self._broken)
            if not self._sessions:
                try:
                    import onnxruntime
                    from tokenizers import Tokenizer

                    self._tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
                    self._tokenizer.no_padding()
                    self._tokenizer.no_truncation()
                    self._pair_type = _pair_type_id(self._tokenizer)
                    options = onnxruntime.SessionOptions()
                    options.intra_op_num_threads = 1
                    model = str(self.folder / "model.onnx")
                    self._sessions = [
                        onnxruntime.InferenceSession(
                            model, options, providers=["CPUExecutionProvider"]
                        )
                        for _ in range(self.workers)
                    ]
                except Exception as exc:  # any loader failure means "unavailable"
                    self._broken = f"the reranker in {self.folder} could not be loaded ({exc})"
                    log.warning("%s; results keep retrieval order", self._broken)
                    raise RerankerUnavailable(self._broken) from exc
            self._restart_idle_timer()
            return self._sessions

    def _restart_idle_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = threading.Timer(IDLE_SHUTDOWN_S, self.shutdown)
        self._timer.daemon = True
        self._timer.start()

    def shutdown(self) -> None:
        """Drop the sessions (the next call loads them again)."""
        with self._lock:
            self._sessions = []
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    @property
    def loaded(self) -> bool:
        return bool(self._sessions)

    # -- scoring --------------------------------------------------------------------------------
    def encode(self, query: str, passages: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(input_ids, attention_mask)`` for the rows (see the module docstring)."""
        ids, mask, _ = self._encode(query, passages)
        return ids, mask

    def _encode(
        self, query: str, passages: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        tok = self._tokenizer
        cls = _special_id(tok, ("[CLS]", "<s>"), DEFAULT_CLS)
        sep = _special_id(tok, ("[SEP]", "</s>"), DEFAULT_SEP)
        pad = _special_id(tok, ("[PAD]", "<pad>"), DEFAULT_PAD)
        q = tok.encode(query, add_special_tokens=False).ids[:MAX_QUERY_TOKENS]
        budget = MAX_TOKENS - len(q) - 3
        rows = [
            [cls, *q, sep, *tok.encode(p, add_special_tokens=False).ids[:budget], sep]
            for p in passages
        ]
        width = max(len(r) for r in rows)
        ids = np.full((len(rows), width), pad, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        types = np.zeros_like(ids)
        types[:, len(q) + 2 :] = self._pair_type * mask[:, len(q) + 2 :]  # passage and last SEP
        return ids, mask, types

    def _run(
        self,
        session,  # an onnxruntime.InferenceSession, imported lazily
        ids: np.ndarray,
        mask: np.ndarray,
        types: np.ndarray,
    ) -> np.ndarray:
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        wanted = {i.name for i in session.get_inputs()}
        logits = session.run(None, {k: v for k, v in feeds.items() if k in wanted})[0]
        return np.asarray(logits, dtype=np.float64).reshape(len(ids), -1)[:, 0]

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Probability that each passage answers the query, in input order."""
        if not passages:
            return []
        sessions = self._load()
        try:
            ids, mask, types = self._encode(query, passages)
            step = math.ceil(len(passages) / len(sessions))
            slices = [
                (s, slice(i, i + step))
                for s, i in zip(sessions, range(0, len(passages), step), strict=False)
            ]
            with ThreadPoolExecutor(max_workers=len(slices)) as pool:
                parts = list(
                    pool.map(
                        lambda job: self._run(job[0], ids[job[1]], mask[job[1]], types[job[1]]),
                        slices,
                    )
                )
        except Exception as exc:  # a scoring failure falls back, logged
            log.warning("the reranker failed (%s); results keep retrieval order", exc)
            raise RerankerUnavailable(str(exc)) from exc
        logits = np.concatenate(parts)
        return [float(1.0 / (1.0 + math.exp(-x))) for x in logits]


@lru_cache(maxsize=4)
def cross_encoder(folder: str) -> CrossEncoder:
    """One reranker per model folder per process."""
    return CrossEncoder(Path(folder))
