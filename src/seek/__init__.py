"""seek: answers questions about a codebase with the code itself.

The library API::

    from seek import load_settings, index_workspace, Workspaces
    report = index_workspace("path/to/repo", load_settings())
    print(report.summary())
    result = Workspaces().search(Path("path/to/repo").resolve(), "how are retries set?")
"""

import importlib
from collections.abc import Callable
from typing import Any

from seek._version import __version__
from seek.errors import (
    ApiError,
    ChatError,
    CorpusError,
    CorpusLockedError,
    DamagedIndexError,
    EmbeddingError,
    IndexLockedError,
    IndexMismatchError,
    IndexUnwritableError,
    ModelError,
    RerankerUnavailable,
    SeekError,
    SettingsError,
    WorkspaceError,
)


# Names of a package that load on first use (PEP 562), so that importing a light module of a
# package, or the package for one name, does not import its heavy modules.
def lazy_names(
    package: str, names: dict[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``names`` maps each name to the module
    that defines it; a loaded name is kept in ``namespace`` (the package's globals)."""

    def __getattr__(name: str) -> object:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(names[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *names})

    return __getattr__, __dir__


# The rest loads on first use, so that importing a low layer (``seek.retrieve``,
# ``seek.chunk``) does not pull in the indexer, the network client or the servers.
_LAZY = {
    "IndexReport": "seek.index.indexer",
    "Progress": "seek.index.indexer",
    "Settings": "seek.settings",
    "WorkspaceStatus": "seek.index.status",
    "Workspaces": "seek.workspace",
    "index_workspace": "seek.index.indexer",
    "load_settings": "seek.settings",
    "workspace_status": "seek.index.status",
}


__getattr__, __dir__ = lazy_names("seek", _LAZY, globals())

__all__ = [
    "ApiError",
    "ChatError",
    "CorpusError",
    "CorpusLockedError",
    "DamagedIndexError",
    "EmbeddingError",
    "IndexLockedError",
    "IndexMismatchError",
    "IndexReport",
    "IndexUnwritableError",
    "ModelError",
    "Progress",
    "RerankerUnavailable",
    "SeekError",
    "Settings",
    "SettingsError",
    "WorkspaceError",
    "WorkspaceStatus",
    "Workspaces",
    "__version__",
    "index_workspace",
    "load_settings",
    "workspace_status",
]
