"""Embedding providers behind one protocol.

An :class:`Embedder` turns texts into an ``(n, dims)`` float32 array. ``model_id`` names the
vectors' source; it is stamped into the manifest so a model change forces a rebuild.
Providers register in :data:`PROVIDERS` (name -> factory taking :class:`Settings`; the
registry is :mod:`seek.settings.providers`, re-exported here), loaded on first use from two
places that work the same way (design "Providers through an open
registry"):

- the built-ins, ``local``, ``ollama`` and ``openai`` (:data:`BUILTIN_PROVIDER_MODULES`: the
  module registers its factories when imported);
- installed packages declaring an entry point in the ``seek.embedders`` group, named by the
  provider and pointing at its factory::

      [project.entry-points."seek.embedders"]
      myprovider = "my_package.embedder:make_embedder"   # (Settings) -> Embedder

:func:`provider_names` is what settings validation, ``--provider``'s choices and
``seek config`` list. A built-in name wins over an entry point of the same name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # the CLI builds --provider's choices from here: no numpy at start-up
    import numpy as np

from seek.errors import SettingsError
from seek.settings import Settings
from seek.settings.providers import (  # the registry lives with the settings that name it
    BUILTIN_PROVIDER_MODULES,
    PROVIDERS,
    load_provider,
    provider_names,
    register_provider,
)


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


def model_id_for(settings: Settings) -> str:
    """The model id an index built with these settings will carry, without loading it."""
    if settings.provider == "local":
        from seek.embed.local import local_model_id

        return local_model_id(settings)
    return f"{settings.provider}/{settings.model}"


def make_embedder(settings: Settings) -> Embedder:
    load_provider(settings.provider)
    if settings.provider not in PROVIDERS:
        raise SettingsError(
            f"embedding provider {settings.provider!r} is not available "
            "(available: " + ", ".join(provider_names()) + ")"
        )
    return PROVIDERS[settings.provider](settings)


__all__ = [
    "BUILTIN_PROVIDER_MODULES",
    "PROVIDERS",
    "Embedder",
    "load_provider",
    "make_embedder",
    "model_id_for",
    "provider_names",
    "register_provider",
    "task_prefixes",
]
