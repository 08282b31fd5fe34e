"""seek: answers questions about a codebase with the code itself.

The library API::

    from seek import load_settings, index_workspace, workspace_status
    report = index_workspace("path/to/repo", load_settings())
    print(report.summary())
"""

from seek.errors import SeekError
from seek.indexer import IndexReport, Progress, index_workspace
from seek.settings import Settings, load_settings
from seek.status import WorkspaceStatus, workspace_status

__version__ = "0.2.0"

__all__ = [
    "IndexReport",
    "Progress",
    "SeekError",
    "Settings",
    "WorkspaceStatus",
    "__version__",
    "index_workspace",
    "load_settings",
    "workspace_status",
]
