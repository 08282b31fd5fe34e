"""seek: answers questions about a codebase with the code itself.

The library API::

    from seek import load_settings, index_workspace, Workspaces
    report = index_workspace("path/to/repo", load_settings())
    print(report.summary())
    result = Workspaces().search(Path("path/to/repo").resolve(), "how are retries set?")
"""

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
from seek.lazy import lazy_names

# The rest loads on first use, so that importing a low layer (``seek.retrieve``,
# ``seek.chunk``) does not pull in the indexer, the network client or the servers.
_LAZY = {
    "IndexReport": "seek.indexer",
    "Progress": "seek.indexer",
    "Settings": "seek.settings",
    "WorkspaceStatus": "seek.status",
    "Workspaces": "seek.workspace",
    "index_workspace": "seek.indexer",
    "load_settings": "seek.settings",
    "workspace_status": "seek.status",
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
