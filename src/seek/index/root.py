"""The workspace a command names: an existing folder, resolved (seek.md §3). Its own module
so that the CLI can check it without importing the indexer."""

from __future__ import annotations

from pathlib import Path

from seek.errors import WorkspaceError


def resolve_workspace(path: Path | str) -> Path:
    root = Path(path).expanduser()
    if not root.exists():
        raise WorkspaceError(f"workspace {root} does not exist")
    if not root.is_dir():
        raise WorkspaceError(f"workspace {root} is not a folder")
    return root.resolve()
