"""Embedding providers behind one protocol.

An :class:`Embedder` turns texts into an ``(n, dims)`` float32 array. ``model_id`` names the
vectors' source; it is stamped into the manifest so a model change forces a rebuild.
Providers register in :data:`PROVIDERS` (name -> factory taking :class:`Settings`), loaded
on first use from two places that work the same way (design "Providers through an open
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

import importlib
import importlib.metadata
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # the CLI builds --provider's choices from here: no numpy at start-up
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
ENTRY_POINT_GROUP = "seek.embedders"


def register_provider(name: str, factory: Callable[[Settings], Embedder]) -> None:
    PROVIDERS[name] = factory


@lru_cache(maxsize=1)
def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    """Installed third-party providers (read once per process)."""
    found = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    return {point.name: point for point in found}


def provider_names() -> list[str]:
    """Every embedding provider this installation offers, built in, registered or installed."""
    return sorted({*BUILTIN_PROVIDER_MODULES, *PROVIDERS, *_entry_points()})


def _load_provider(name: str) -> None:
    if name in PROVIDERS:
        return
    if name in BUILTIN_PROVIDER_MODULES:
        importlib.import_module(BUILTIN_PROVIDER_MODULES[name])  # registers itself
    elif name in _entry_points():
        try:
            register_provider(name, _entry_points()[name].load())
        except Exception as exc:  # a broken plugin is a one-line error, not a traceback
            raise SettingsError(
                f"embedding provider {name!r} could not be loaded from its package: {exc}"
            ) from exc


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
    _load_provider(settings.provider)
    if settings.provider not in PROVIDERS:
        raise SettingsError(
            f"embedding provider {settings.provider!r} is not available "
            "(available: " + ", ".join(provider_names()) + ")"
        )
    return PROVIDERS[settings.provider](settings)
