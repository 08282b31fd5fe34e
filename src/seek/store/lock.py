"""One writer per index: an OS file lock (released by the kernel when its holder dies, so a
crashed writer never leaves a stale lock) plus a note saying who holds it."""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path
from types import TracebackType

import filelock

from seek.errors import IndexLockedError

LOCK_NAME = "writer.lock"
HOLDER_NAME = "writer.json"
PROBE_GRACE_S = 0.25
"""How long a writer waits for the lock before it is refused. :func:`is_locked` (``seek
status``, and every search's freshness check) tests the lock by taking it for an instant;
a writer starting in that instant (``seek watch`` saving a file while an agent searches)
must not fail for it. A real writer holds the lock far longer, so a second writer is still
refused, a quarter of a second later."""


def describe_holder(index_dir: Path) -> str:
    try:
        info = json.loads((index_dir / HOLDER_NAME).read_text(encoding="utf-8"))
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info["since"]))
        return f"pid {info['pid']} ({info['command']}) on {info['host']} since {since}"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"


def is_locked(index_dir: Path) -> bool:
    """True when a live process holds the writer lock (used by ``seek status``)."""
    if not (index_dir / LOCK_NAME).exists():
        return False
    probe = filelock.FileLock(str(index_dir / LOCK_NAME))
    try:
        probe.acquire(timeout=0)
    except filelock.Timeout:
        return True
    probe.release()
    return False


class WriterLock:
    """``with WriterLock(dir, "seek index"):`` - raises IndexLockedError when another writer
    holds it (after ``PROBE_GRACE_S``, or ``wait_s`` when longer)."""

    def __init__(self, index_dir: Path, command: str, wait_s: float = 0.0) -> None:
        self.index_dir = index_dir
        self.command = command
        self.wait_s = wait_s
        self._lock = filelock.FileLock(str(index_dir / LOCK_NAME))

    def __enter__(self) -> WriterLock:
        self.index_dir.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire(timeout=max(self.wait_s, PROBE_GRACE_S), poll_interval=0.01)
        except filelock.Timeout:
            raise IndexLockedError(
                f"the index is being written by {describe_holder(self.index_dir)}; "
                "wait for it to finish or stop it"
            ) from None
        holder = {
            "pid": os.getpid(),
            "command": self.command or " ".join(sys.argv[:2]),
            "host": socket.gethostname(),
            "since": time.time(),
        }
        (self.index_dir / HOLDER_NAME).write_text(json.dumps(holder), encoding="utf-8")
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        (self.index_dir / HOLDER_NAME).unlink(missing_ok=True)
        self._lock.release()
