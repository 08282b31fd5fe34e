"""Whether a stored index can be updated in place, and which files a run must read again
(seek.md §4 "Indexing": rebuilds on a changed model, chunk settings or index format, and on
a damaged table; reference-workspace-index §4.2: a file is re-read when its size or mtime
changed). Shared by the workspace indexer, ``seek status``, the freshness check before a
search and the corpus builder, so that all four decide alike."""

from __future__ import annotations

from pathlib import Path

from seek.retrieve.search_cache import table_unchanged
from seek.scan import ScannedFile
from seek.settings import Settings, effective_chunk_sizes
from seek.store import ChunkingSpec, ChunkTable, Manifest, Stamp, health
from seek.store.manifest import INDEX_FORMAT


def damage_reason(index_dir: Path, manifest: Manifest) -> str:
    """``index damaged: ...`` when the stored table does not match ``manifest``, else "".
    After an interrupted run the row count is not compared (the next run repairs it).

    A table whose files are exactly those its search cache was derived from
    (:func:`seek.retrieve.search_cache.table_unchanged`) is sound without opening LanceDB:
    a no-change ``seek index`` then never imports it (issue 14; ``seek status`` decides the
    same way)."""
    if not manifest.has_index or table_unchanged(index_dir, manifest) is True:
        return ""
    expected = None if manifest.run_open else sum(s.chunks for s in manifest.files.values())
    problem = health.check(ChunkTable(index_dir, manifest.table), expected)
    return f"index damaged: {problem}" if problem else ""


def chunking_spec(settings: Settings) -> ChunkingSpec:
    max_chars, min_chars, overlap = effective_chunk_sizes(settings)
    return ChunkingSpec(
        max_chars, min_chars, overlap, settings.window_chars, settings.window_overlap_chars
    )


def rebuild_reason(manifest: Manifest, model_id: str, chunking: ChunkingSpec) -> str:
    """Why the stored index cannot be updated in place ("" when it can)."""
    if not manifest.has_index:
        return ""
    if manifest.format != INDEX_FORMAT:
        return f"index format changed ({manifest.format} -> {INDEX_FORMAT})"
    if manifest.model != model_id:
        return f"model changed ({manifest.model} -> {model_id})"
    if manifest.chunking != chunking:
        old, new = manifest.chunking, chunking
        if old is None:
            return "chunk settings unknown"
        diffs = [
            f"{name} {getattr(old, name)} -> {getattr(new, name)}"
            for name in ("max", "min", "overlap", "window", "window_overlap")
            if getattr(old, name) != getattr(new, name)
        ]
        return "chunk settings changed (" + ", ".join(diffs) + ")"
    return ""


def is_stale(stamp: Stamp | None, scanned: ScannedFile) -> bool:
    return stamp is None or stamp.size != scanned.size or stamp.mtime_ns != scanned.mtime_ns


def is_resized(stamp: Stamp | None, scanned: ScannedFile) -> bool:
    """New or of another size: surely embedded (a touched file of the same size may not be)."""
    return stamp is None or stamp.size != scanned.size
