"""The store's files on a local disk: replaced whole, measured, fingerprinted (issue 29: each
in one place, for the manifest, the corpus's objects, the table's health check and ``seek
status``)."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path


def write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data``: readers see the old bytes or the new ones, never half
    (a temporary file beside it, synced, then renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with tmp.open("wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        # A full disk or a failed sync: the old file stays whole, and no half-written
        # temporary file is left to take the space the next run needs (issue 31).
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise


def _file_stats(folder: Path) -> Iterator[tuple[str, os.stat_result]]:
    """Every file under ``folder`` with its own stat (a link's, not its target's); files that
    vanish while it is walked (a writer's lock note, a compacted fragment) are not an error,
    nor folders it cannot list (``os.walk`` skips them)."""
    for parent, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(parent, name)
            try:
                yield path, os.stat(path, follow_symlinks=False)
            except OSError:
                continue


def folder_size(folder: Path) -> int:
    """Bytes under ``folder``."""
    return sum(info.st_size for _, info in _file_stats(folder))


def files_state(folder: Path) -> frozenset[tuple[str, int, int]]:
    """(path, size, modification time) of every file under ``folder``; empty when none."""
    return frozenset((path, info.st_size, info.st_mtime_ns) for path, info in _file_stats(folder))
