"""The ``lancedb`` package without the eager import of its REST namespace client (issue 45,
deliver 5: ``seek corpus refs`` from a cold process).

``import lancedb`` imports ``lance_namespace``, which imports the models of
``lance_namespace_urllib3_client``; importing any submodule runs that package's
``__init__`` first, which imports its nine REST API modules, whose 366 pydantic
``validate_call`` decorators build their schemas at import: ~0.5 s of a cold corpus command
(1.2 s -> 0.7 s for ``import lancedb`` and one table read on the 1M-chunk corpus,
bench/org/scale.py; docs/research/bench-rounds.md measured 1.4 s of 1.76 s under load).
seek never talks to a REST namespace.

So before the package's first import, :func:`defer_namespace_client` registers the client
package as a module whose ``__init__`` has not run: its submodules (the models lancedb
imports) load from its folder as usual, and the first access to a name of the package itself
(``from lance_namespace_urllib3_client import ApiClient``) runs the real ``__init__`` into it,
so whoever uses the REST client still gets all of it. Nothing changes when the package is
imported already, when ``SEEK_LANCEDB=package`` asks for the public package untouched, or
with a release of the client other than those tested (``TESTED_CLIENTS``).
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import types
from pathlib import Path
from typing import Any

CLIENT = "lance_namespace_urllib3_client"
TESTED_CLIENTS = ("0.13.",)
"""Releases of the client whose package ``__init__`` only re-exports its submodules (its
models import nothing from it). Widen after tests/test_lance_client.py passes."""

_guard = threading.RLock()


def _version(folder: Path) -> str | None:
    for entry in folder.parent.glob(f"{CLIENT}-*.dist-info"):
        return entry.name[len(CLIENT) + 1 : -len(".dist-info")]
    return None


def defer_namespace_client(switch: str = "") -> bool:
    """Register the client package un-run (see the module docstring); True when it is.
    ``switch``: the value of ``SEEK_LANCEDB`` (:data:`seek.store.lance.ENV_SWITCH`);
    ``package`` leaves the public package as it is."""
    if switch.strip().lower() == "package":
        return False
    with _guard:
        if CLIENT in sys.modules or "lancedb" in sys.modules:
            return isinstance(sys.modules.get(CLIENT), _Deferred)
        try:
            spec = importlib.util.find_spec(CLIENT)
        except (ImportError, ValueError):
            return False
        if spec is None or spec.loader is None or not spec.submodule_search_locations:
            return False
        folders = list(spec.submodule_search_locations)
        version = _version(Path(folders[0]))
        if version is None or not version.startswith(TESTED_CLIENTS):
            return False
        module = _Deferred(CLIENT)
        module.__spec__, module.__path__, module.__file__ = spec, folders, spec.origin
        module.__package__ = CLIENT
        sys.modules[CLIENT] = module
        return True


class _Deferred(types.ModuleType):
    """The client package before its ``__init__`` ran: the first name asked of it runs it."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        with _guard:
            if type(self) is _Deferred:
                self.__class__ = types.ModuleType  # run once, then a plain module
                spec = self.__spec__
                assert spec is not None and spec.loader is not None
                spec.loader.exec_module(self)
        try:
            return object.__getattribute__(self, name)
        except AttributeError:
            raise AttributeError(f"module {CLIENT!r} has no attribute {name!r}") from None
