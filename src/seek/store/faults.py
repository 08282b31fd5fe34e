"""When the index folder cannot be written (issue 31; docs/reliability.md): the one place
that tells a write fault (no space, read-only, quota, permission, I/O error) from any other
failure, and names it.

Writes fail in three voices: Python's ``OSError`` (the manifest, the lock, the search cache),
filelock's (the lock file), and LanceDB's, which reports the OS error inside its own message
(``RuntimeError: lance error: LanceError(IO): No space left on device (os error 28), ...``).
:func:`as_unwritable` reads all three (and the exceptions they were raised from) and returns
one :class:`~seek.errors.IndexUnwritableError` naming the cause and the folder, so that
``seek index`` stops with one line and a search answers from the last complete index with a
note instead of a traceback. Only this module knows LanceDB's message shapes (only ``store/``
may know LanceDB at all: tests/test_boundaries.py).
"""

from __future__ import annotations

import errno
import os
import re
import shutil
from pathlib import Path

from seek.errors import IndexUnwritableError, SeekError
from seek.redact import one_line

CAUSES = {
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EIO: "input/output error",
}
"""The write faults seek degrades on, and the words its messages use for each."""

_STRERRORS = {os.strerror(code).lower(): code for code in CAUSES}
_OS_ERROR = re.compile(r"\(os error (\d+)\)|\[errno (\d+)\]", re.IGNORECASE)
DETAIL_CHARS = 240
"""A cause's detail is cut to this: LanceDB's messages carry a whole path and a Rust source
location, and a message must stay one readable line."""


def fault_errno(exc: BaseException, folder: Path | None = None) -> int | None:
    """The write fault behind ``exc`` (or an exception it was raised from), None when it is
    no write fault. An ``OSError`` naming a file outside ``folder`` is not the index's (a
    workspace file that cannot be read is skipped by the run, not a reason to stop it)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        code = _own_errno(current, folder)
        if code is not None:
            return code
        current = current.__cause__ or current.__context__
    return None


def _own_errno(exc: BaseException, folder: Path | None) -> int | None:
    if isinstance(exc, SeekError):
        return None  # seek's own errors say what they mean already
    if isinstance(exc, OSError) and exc.errno is not None:
        if exc.errno not in CAUSES:
            return None
        name = exc.filename
        if folder is not None and isinstance(name, str | bytes | os.PathLike):
            if not _inside(Path(os.fsdecode(name)), folder):
                return None
        return exc.errno
    text = str(exc)
    for match in _OS_ERROR.finditer(text):
        code = int(match.group(1) or match.group(2))
        if code in CAUSES:
            return code
    lowered = text.lower()
    if "lance" in lowered or "io error" in lowered:
        for words, code in _STRERRORS.items():
            if words in lowered:
                return code
    return None


def _inside(path: Path, folder: Path) -> bool:
    try:
        top = os.path.abspath(folder)
        return os.path.commonpath([os.path.abspath(path), top]) == top
    except (TypeError, ValueError):  # another drive (Windows), a mix of str and bytes
        return False


def unwritable_error(code: int, folder: Path, detail: str) -> IndexUnwritableError:
    cause = CAUSES.get(code, os.strerror(code).lower())
    return IndexUnwritableError(
        f"{cause} writing the index in {folder}: {detail}; searches keep the last complete "
        "index, and the next run resumes where this one stopped",
        code,
        str(folder),
    )


def as_unwritable(exc: BaseException, folder: Path) -> IndexUnwritableError | None:
    """``exc`` as the one error seek reports for a write fault in ``folder`` (None: it is
    another failure, to be raised as it is)."""
    if isinstance(exc, IndexUnwritableError):
        return exc
    code = fault_errno(exc, folder)
    if code is None:
        return None
    return unwritable_error(code, folder, one_line(str(exc), DETAIL_CHARS) or type(exc).__name__)


def existing_folder(folder: Path) -> Path:
    """``folder`` or, before its first run, the nearest folder above it that exists (where
    it will be created, and what its free space and permissions are)."""
    current = folder
    while not current.exists() and current.parent != current:
        current = current.parent
    return current


def free_bytes(folder: Path) -> int:
    """Bytes free for an unprivileged writer in ``folder``'s file system."""
    return shutil.disk_usage(existing_folder(folder)).free


def probe(folder: Path) -> IndexUnwritableError | None:
    """Why ``folder`` cannot be written, seen without writing (``seek status``): a read-only
    file system, no write permission, or no byte free. A quota or an I/O error shows only
    when a write is tried."""
    where = existing_folder(folder)
    try:
        flags = os.statvfs(where).f_flag
    except (OSError, AttributeError):  # no statvfs (Windows): the access check alone
        flags = 0
    if flags & getattr(os, "ST_RDONLY", 1):
        return unwritable_error(errno.EROFS, folder, f"{where} is mounted read-only")
    if not os.access(where, os.W_OK):
        return unwritable_error(errno.EACCES, folder, f"{where} is not writable by this user")
    try:
        free = free_bytes(folder)
    except OSError as exc:
        return as_unwritable(exc, folder)
    if free == 0:
        return unwritable_error(errno.ENOSPC, folder, "0 bytes free")
    return None
