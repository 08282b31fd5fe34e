"""Public cross-encoders seek knows how to fetch, where pulled ones live, and what the
``reranker_model`` setting names.

seek never downloads anything on its own: ``seek models pull NAME`` (:mod:`seek.rerank.pull`) is the
only code that goes online, and only when asked. A pulled model is a folder
``<home>/models/<name>/`` (``home`` as for indexes: ``$SEEK_HOME`` or the OS cache folder)
holding ``model.onnx``, ``tokenizer.json`` and ``source.json`` (repository, commit, licence,
sizes, SHA-256, date), the layout :class:`seek.rerank.local.CrossEncoder` reads.

The catalogue is short on purpose: cross-encoders with an ONNX export and a ``tokenizer.json``
on the Hugging Face hub, under a licence that allows any use (all Apache-2.0), and small
enough for a laptop CPU. Each entry fetches the full-precision export ``onnx/model.onnx``
(the accuracy the model cards report; quantized variants trade some of it for speed), always
from ``main``, recording the commit it got. If a repository moves its files, the pull fails
with a one-line 404 naming the URL, and this table needs updating. The size is a hint for the
user (about, in MB), not a check; the checks are the byte count, the hub's own SHA-256 when
it sends one, and a test score (see :mod:`seek.rerank.pull`).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from seek.errors import ModelError, RerankerUnavailable
from seek.settings import Settings
from seek.store.location import seek_home

log = logging.getLogger(__name__)

MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
SOURCE_FILE = "source.json"


@dataclass(frozen=True, slots=True)
class HubModel:
    name: str
    """seek's short name: the folder name and what ``reranker_model`` may say."""
    repo: str
    """``owner/name`` on the hub."""
    onnx_file: str
    """Path of the ONNX export inside the repository (saved as ``model.onnx``)."""
    licence: str
    size_mb: int
    """About how much the download weighs."""
    about: str
    revision: str = "main"

    def files(self) -> dict[str, str]:
        """Local file name -> path in the repository."""
        return {MODEL_FILE: self.onnx_file, TOKENIZER_FILE: TOKENIZER_FILE}


KNOWN: dict[str, HubModel] = {
    m.name: m
    for m in (
        HubModel(
            "ms-marco-minilm-l6",
            "cross-encoder/ms-marco-MiniLM-L6-v2",
            "onnx/model.onnx",
            "Apache-2.0",
            91,
            "MiniLM (BERT), 6 layers, 22M parameters, trained on MS MARCO; the fastest",
        ),
        HubModel(
            "jina-reranker-tiny",
            "jinaai/jina-reranker-v1-tiny-en",
            "onnx/model.onnx",
            "Apache-2.0",
            130,
            "JinaBERT, 4 layers, 33M parameters",
        ),
        HubModel(
            "mxbai-rerank-xsmall",
            "mixedbread-ai/mxbai-rerank-xsmall-v1",
            "onnx/model.onnx",
            "Apache-2.0",
            280,
            "DeBERTa-v3 xsmall, 70M parameters; the slowest of the three",
        ),
    )
}


def known_names() -> str:
    return ", ".join(KNOWN)


def known_model(name: str) -> HubModel:
    """The catalogue entry; an unknown name is a :class:`ModelError` listing the known ones."""
    try:
        return KNOWN[name]
    except KeyError:
        raise ModelError(f"unknown model {name!r}; known: {known_names()}") from None


def models_dir(settings: Settings) -> Path:
    """Where pulled models live: ``<home>/models`` (beside the indexes, which are named
    ``<workspace>-<hash>``, so the two never meet)."""
    return seek_home(settings) / "models"


def is_model_folder(folder: Path) -> bool:
    return (folder / MODEL_FILE).is_file() and (folder / TOKENIZER_FILE).is_file()


def pulled_models(settings: Settings) -> dict[str, Path]:
    """Name -> folder of every model under :func:`models_dir`, pulled or put there by hand.
    Dot-folders are pulls in progress (or left by a killed one) and are not models."""
    root = models_dir(settings)
    if not root.is_dir():
        return {}
    return {
        p.name: p
        for p in sorted(root.iterdir())
        if not p.name.startswith(".") and p.is_dir() and is_model_folder(p)
    }


def read_source(folder: Path) -> dict:
    """``source.json`` of a pulled model, or ``{}`` (hand-made folders have none)."""
    try:
        data = json.loads((folder / SOURCE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _looks_like_path(value: str) -> bool:
    return "/" in value or "\\" in value or value.startswith(("~", "."))


_warned: set[str] = set()


def _unavailable(message: str) -> RerankerUnavailable:
    # Logged once per message: `seek serve` builds a context per request.
    if message not in _warned:
        _warned.add(message)
        log.warning("%s; results keep retrieval order", message)
    return RerankerUnavailable(message)


def resolve_reranker(settings: Settings) -> Path | None:
    """The cross-encoder folder that ``reranker_model`` names; ``None`` when it is empty.

    - A value with a path separator, or starting with ``~`` or ``.``, is a folder.
    - A bare name is a model under :func:`models_dir` (``seek models pull NAME``) when that
      folder exists, else a folder relative to the current directory (as before names
      existed), so ``reranker_model = "ms-marco-minilm-l6"`` works from any directory.

    Raises :class:`RerankerUnavailable` (and logs why, once) when the folder does not exist;
    for a known name that is not pulled yet, the message gives the command that pulls it.
    """
    value = settings.reranker_model.strip()
    if not value:
        return None
    if not _looks_like_path(value):
        pulled = models_dir(settings) / value
        if pulled.is_dir():
            return pulled
    folder = Path(value).expanduser().resolve()
    if folder.is_dir():
        return folder
    if value in KNOWN:
        raise _unavailable(
            f"reranker_model {value!r} is not pulled yet (`seek models pull {value}`)"
        )
    raise _unavailable(
        f"reranker_model {value!r} is neither a folder nor a model in {models_dir(settings)}"
    )
