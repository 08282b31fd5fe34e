"""Which embedding providers a setting may name (design "Providers through an open registry").

Providers register in :data:`PROVIDERS` (name -> factory taking the settings and returning an
:class:`seek.embed.Embedder`), loaded on first use from two places that work the same way:

- the built-ins, ``local``, ``ollama`` and ``openai`` (:data:`BUILTIN_PROVIDER_MODULES`: the
  module registers its factories when imported);
- installed packages declaring an entry point in the ``seek.embedders`` group, named by the
  provider and pointing at its factory.

The registry sits here, below :mod:`seek.embed`, because validating ``provider`` is part of
reading settings: settings must not import the embedders (they import settings).
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from seek.errors import SettingsError

Factory = Callable[[Any], Any]
"""``(Settings) -> Embedder``; typed loosely so this module needs neither."""

BUILTIN_PROVIDER_MODULES = {
    "local": "seek.embed.local",
    "ollama": "seek.embed.http",
    "openai": "seek.embed.http",
}

PROVIDERS: dict[str, Factory] = {}
ENTRY_POINT_GROUP = "seek.embedders"


def register_provider(name: str, factory: Factory) -> None:
    PROVIDERS[name] = factory


@lru_cache(maxsize=1)
def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    """Installed third-party providers (read once per process)."""
    found = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    return {point.name: point for point in found}


def provider_names() -> list[str]:
    """Every embedding provider this installation offers, built in, registered or installed."""
    return sorted({*BUILTIN_PROVIDER_MODULES, *PROVIDERS, *_entry_points()})


def load_provider(name: str) -> None:
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
