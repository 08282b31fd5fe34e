"""Where a workspace's index lives: ``<home>/<name>-<hash>`` keyed by the resolved path."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import platformdirs

from seek.settings import Settings


def seek_home(settings: Settings) -> Path:
    """``home`` setting (``SEEK_HOME``), else the OS cache dir (``~/.cache/seek`` on Linux)."""
    if settings.home:
        return Path(settings.home).expanduser().resolve()
    return Path(platformdirs.user_cache_dir("seek", appauthor=False))


def index_dir_for(workspace: Path, settings: Settings) -> Path:
    """One folder per workspace: its name plus a short hash of its resolved absolute path, so
    two workspaces with the same name never share an index."""
    resolved = workspace.resolve()
    digest = hashlib.sha1(os.fsencode(resolved)).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", resolved.name) or "root"
    return seek_home(settings) / f"{name}-{digest}"
