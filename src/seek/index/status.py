"""What an index holds, read from its manifest; the database is opened only to check that it
agrees (a damaged index shows as the next run's rebuild reason), and not even then when the
table's files are as the search cache recorded them (``table_unchanged``: a deleted,
truncated or replaced file shows without LanceDB, whose import alone took ~2 s of a
``seek status``). The trust state of the workspace's settings file rides along, so every
front-end's status says which of its settings are ignored."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seek.embed import model_id_for
from seek.index.rules import chunking_spec, damage_reason, rebuild_reason
from seek.settings import Settings, user_config_path
from seek.settings.trust import describe as describe_trust
from seek.store import describe_holder, index_dir_for, is_locked, load_manifest
from seek.store.faults import free_bytes, probe
from seek.store.files import folder_size


@dataclass(slots=True)
class WorkspaceStatus:
    workspace: Path
    index_dir: Path
    exists: bool
    files: int
    chunks: int
    model: str
    configured_model: str
    dimensions: int
    updated_at: int | None
    size_bytes: int
    writer: str
    rebuild_reason: str
    interrupted: bool
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_examples: dict[str, list[str]] = field(default_factory=dict)
    stale: str = ""
    """Why the index cannot be brought up to date now (its folder cannot be written: issue
    31); searches answer from the last complete index meanwhile. "" when it can."""
    free_bytes: int | None = None
    """Free space in the index folder's file system (None: unknown)."""
    update_fault: dict[str, Any] | None = None
    """A server's failed updates: reason, since, failures, retry_in_s
    (:mod:`seek.workspace.live`)."""
    workspace_config: dict[str, Any] | None = None
    """The trust state of the workspace's own settings file (seek.md section 3: which of its
    settings are ignored until ``seek trust``); None when it has none."""

    def to_json(self) -> dict[str, Any]:
        return {
            "workspace": str(self.workspace),
            "index": str(self.index_dir),
            "exists": self.exists,
            "files": self.files,
            "chunks": self.chunks,
            "model": self.model,
            "configured_model": self.configured_model,
            "dimensions": self.dimensions,
            "updated_at": self.updated_at,
            "size_bytes": self.size_bytes,
            "writer": self.writer or None,
            "rebuild_reason": self.rebuild_reason or None,
            "interrupted": self.interrupted,
            "skipped": self.skipped,
            "skipped_examples": self.skipped_examples,
            "stale": self.stale or None,
            "free_bytes": self.free_bytes,
            "update_fault": self.update_fault,
            "workspace_config": self.workspace_config,
        }


def workspace_status(root: Path, settings: Settings) -> WorkspaceStatus:
    index_dir = index_dir_for(root, settings)
    manifest = load_manifest(index_dir)
    configured = model_id_for(settings)
    writer = describe_holder(index_dir) if is_locked(index_dir) else ""
    reason = rebuild_reason(manifest, configured, chunking_spec(settings))
    if not reason and not writer:  # a running writer's rows and stamps may differ a moment
        reason = damage_reason(index_dir, manifest)  # LanceDB only when the table changed
    unwritable = probe(index_dir)  # looked at, never written (a read-only folder: issue 31)
    try:
        free: int | None = free_bytes(index_dir)
    except OSError:
        free = None
    return WorkspaceStatus(
        workspace=root,
        index_dir=index_dir,
        exists=manifest.has_index,
        files=sum(1 for s in manifest.files.values() if not s.skip),
        chunks=sum(s.chunks for s in manifest.files.values()),
        model=manifest.model,
        configured_model=configured,
        dimensions=manifest.dimensions,
        updated_at=manifest.updated_at,
        size_bytes=folder_size(index_dir),
        writer=writer,
        rebuild_reason=reason,
        interrupted=manifest.run_open,
        skipped=dict(manifest.skipped),
        skipped_examples=dict(manifest.skipped_examples),
        stale=str(unwritable) if unwritable is not None else "",
        free_bytes=free,
        workspace_config=describe_trust(root, user_config_path()),
    )
