"""seek: answers questions about a codebase with the code itself.

The library API::

    from seek import load_settings, index_workspace, workspace_status
    report = index_workspace("path/to/repo", load_settings())
    print(report.summary())
"""

from seek._version import __version__
from seek.errors import (
    ApiError,
    ChatError,
    DamagedIndexError,
    EmbeddingError,
    IndexLockedError,
    IndexMismatchError,
    ModelError,
    RerankerUnavailable,
    SeekError,
    SettingsError,
    WorkspaceError,
)
from seek.indexer import IndexReport, Progress, index_workspace
from seek.settings import Settings, load_settings
from seek.status import WorkspaceStatus, workspace_status

__all__ = [
    "ApiError",
    "ChatError",
    "DamagedIndexError",
    "EmbeddingError",
    "IndexLockedError",
    "IndexMismatchError",
    "IndexReport",
    "ModelError",
    "Progress",
    "RerankerUnavailable",
    "SeekError",
    "Settings",
    "SettingsError",
    "WorkspaceError",
    "WorkspaceStatus",
    "__version__",
    "index_workspace",
    "load_settings",
    "workspace_status",
]
