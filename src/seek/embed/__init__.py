"""Embedding providers behind one protocol.

An :class:`Embedder` turns texts into an ``(n, dims)`` float32 array. ``model_id`` names the
vectors' source; it is stamped into the manifest so a model change forces a rebuild.
Providers register in :data:`PROVIDERS` (name -> factory taking :class:`Settings`); the
built-in ones register exactly as a third party would.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from seek.errors import SettingsError
from seek.settings import Settings


class Embedder(Protocol):
    model_id: str
    """Stable name of the model (goes into the manifest)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts``, shape ``(len(texts), dims)``, float32."""
        ...


# Task prefixes by model name (reference §3.5): (name contains, document, query).
TASK_PREFIXES: tuple[tuple[str, str, str], ...] = (
    ("nomic-embed", "search_document: ", "search_query: "),
    ("e5-", "passage: ", "query: "),
)


def task_prefixes(model_name: str) -> tuple[str, str]:
    """(document prefix, query prefix) for a model name; first match wins."""
    lowered = model_name.lower()
    for needle, document, query in TASK_PREFIXES:
        if needle in lowered:
            return document, query
    return "", ""


PROVIDERS: dict[str, Callable[[Settings], Embedder]] = {}


def register_provider(name: str, factory: Callable[[Settings], Embedder]) -> None:
    PROVIDERS[name] = factory


def model_id_for(settings: Settings) -> str:
    """The model id an index built with these settings will carry, without loading it."""
    if settings.provider == "local":
        from seek.embed.local import local_model_id

        return local_model_id(settings)
    return f"{settings.provider}/{settings.model}"


BUILTIN_PROVIDER_MODULES = {
    "local": "seek.embed.local",
    "ollama": "seek.embed.http",
    "openai": "seek.embed.http",
}


def make_embedder(settings: Settings) -> Embedder:
    if settings.provider not in PROVIDERS:
        module = BUILTIN_PROVIDER_MODULES.get(settings.provider)
        if module is not None:
            importlib.import_module(module)  # registers itself
        if settings.provider not in PROVIDERS:
            raise SettingsError(
                f"embedding provider {settings.provider!r} is not available in this version "
                "of seek (available: " + ", ".join(sorted(PROVIDERS) or ["local"]) + ")"
            )
    return PROVIDERS[settings.provider](settings)
