"""One writer per index: an OS file lock (released by the kernel when its holder dies, so a
crashed writer never leaves a stale lock) plus a note saying who holds it.

Taking the lock is also where an index folder is made private, and releasing it where its
files are tightened (issue 43, finding 8; :mod:`seek.store.private`): every write of a
workspace's index passes here, once per run, and no read does."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from pathlib import Path
from types import TracebackType

import filelock

from seek.errors import IndexLockedError
from seek.store.private import (
    PRIVATE_FILE,
    private_folder,
    private_home,
    private_opener,
    tighten_tree,
)

LOCK_NAME = "writer.lock"
HOLDER_NAME = "writer.json"
PROBE_GRACE_S = 0.25
"""How long a writer waits for the lock before it is refused. :func:`is_locked` (``seek
status``, and every search's freshness check) tests the lock by taking it for an instant;
a writer starting in that instant (``seek watch`` saving a file while an agent searches)
must not fail for it. A real writer holds the lock far longer, so a second writer is still
refused, a quarter of a second later."""


def _unwritable(exc: OSError, index_dir: Path) -> Exception:
    from seek.store.faults import as_unwritable

    return as_unwritable(exc, index_dir) or exc


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
    probe = filelock.FileLock(str(index_dir / LOCK_NAME), mode=PRIVATE_FILE)
    try:
        probe.acquire(timeout=0)
    except filelock.Timeout:
        return True
    except OSError:  # a read-only or full index folder: filelock opens the file to write
        return _held_read_only(index_dir / LOCK_NAME)
    probe.release()
    return False


def _held_read_only(path: Path) -> bool:
    """The same question without writing (issue 31: a search on a read-only index folder
    died on the probe): a shared lock on a read-only descriptor conflicts with the writer's
    exclusive one. Where that cannot be asked, no writer is assumed: none could have
    created its lock here either."""
    try:
        import fcntl
    except ImportError:  # Windows
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing the descriptor releases a shared lock it took
    return False


class WriterLock:
    """``with WriterLock(dir, "seek index"):`` - raises IndexLockedError when another writer
    holds it (after ``PROBE_GRACE_S``, or ``wait_s`` when longer)."""

    def __init__(self, index_dir: Path, command: str, wait_s: float = 0.0) -> None:
        self.index_dir = index_dir
        self.command = command
        self.wait_s = wait_s
        self._lock = filelock.FileLock(str(index_dir / LOCK_NAME), mode=PRIVATE_FILE)

    def __enter__(self) -> WriterLock:
        try:
            # SEEK_HOME and the index folder 0700 before anything is written in them.
            private_home(self.index_dir.parent)
            private_folder(self.index_dir)
            self._lock.acquire(timeout=max(self.wait_s, PROBE_GRACE_S), poll_interval=0.01)
        except filelock.Timeout:
            raise IndexLockedError(
                f"the index is being written by {describe_holder(self.index_dir)}; "
                "wait for it to finish or stop it"
            ) from None
        except OSError as exc:  # a read-only, full or forbidden folder: say so in one line
            raise _unwritable(exc, self.index_dir) from exc
        holder = {
            "pid": os.getpid(),
            "command": self.command or " ".join(sys.argv[:2]),
            "host": socket.gethostname(),
            "since": time.time(),
        }
        path = self.index_dir / HOLDER_NAME
        try:
            with open(path, "w", encoding="utf-8", opener=private_opener) as fh:
                fh.write(json.dumps(holder))
        except OSError as exc:  # a full disk: no half-written note, no lock kept
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
            self._lock.release()
            raise _unwritable(exc, self.index_dir) from exc
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            (self.index_dir / HOLDER_NAME).unlink(missing_ok=True)
        except OSError:  # the note is a courtesy: the lock below is what must go
            pass
        try:
            # What this run wrote, LanceDB's files included, 0600 (while no one else writes).
            tighten_tree(self.index_dir)
        finally:
            self._lock.release()
