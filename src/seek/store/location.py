"""Where an index lives: a workspace's in ``<home>/<name>-<hash>`` keyed by its resolved
path; a corpus's database wherever its :class:`DatabaseLocation` says."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from seek.settings import Settings
from seek.store.private import default_home


def seek_home(settings: Settings) -> Path:
    """``home`` setting (``SEEK_HOME``), else the OS cache dir (``~/.cache/seek`` on Linux)."""
    if settings.home:
        return Path(settings.home).expanduser().resolve()
    return default_home()


def index_dir_for(workspace: Path, settings: Settings) -> Path:
    """One folder per workspace: its name plus a short hash of its resolved absolute path, so
    two workspaces with the same name never share an index."""
    resolved = workspace.resolve()
    digest = hashlib.sha1(os.fsencode(resolved)).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", resolved.name) or "root"
    return seek_home(settings) / f"{name}-{digest}"


class DatabaseLocation(Protocol):
    """Where a corpus's LanceDB database lives (a folder or S3) and how to reach it, as
    :class:`seek.store.corpus_table.CorpusTable` needs it (issue 17, "Corpus"). The store only
    reads it: the corpus implements it (:class:`seek.corpus.location.CorpusLocation`) and keeps
    the parsing of URIs and settings and the words its messages use."""

    @property
    def db_uri(self) -> str:
        """The database: a folder, or ``s3://bucket/prefix/lancedb``."""
        ...

    @property
    def is_s3(self) -> bool: ...

    @property
    def env(self) -> Mapping[str, str]:
        """The settings it was made from: no message may repeat their secrets."""
        ...

    def storage_options(self) -> dict[str, str]:
        """LanceDB's ``storage_options`` (empty for a folder)."""
        ...

    def server(self) -> str:
        """What a message names the S3 server by (no credentials)."""
        ...

    def no_bucket(self) -> str:
        """What a missing bucket is told as."""
        ...

    def access_denied(self) -> str:
        """What refused credentials are told as."""
        ...
