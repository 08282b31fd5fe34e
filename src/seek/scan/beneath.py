"""Reading a workspace file by its relative path without ever leaving the workspace.

Each folder on the way is opened relative to the previous one with ``O_NOFOLLOW``, and the
file itself with ``O_NOFOLLOW | O_NONBLOCK``, so a symlink swapped in anywhere on the path
after a check (a ``git pull`` can replace a file by a link) fails with ``ELOOP`` instead of
reading what it points at; a FIFO does not block and fails as not a regular file.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
ESCAPES = frozenset({errno.ELOOP, errno.ENOTDIR, errno.EINVAL, errno.EXDEV})
"""errnos that mean the path is no longer a plain file inside the workspace."""


def read_beneath(root: Path, rel: str) -> bytes:
    """The bytes of ``root/rel``; OSError with an errno in ``ESCAPES`` when a part of the path
    is a symlink, ``..`` or not a regular file."""
    parts = rel.split("/")
    if not rel or any(part in ("", ".", "..") for part in parts):
        raise OSError(errno.EXDEV, "not a path inside the workspace", rel)
    fd = os.open(root, DIR_FLAGS)
    try:
        for part in parts[:-1]:
            next_fd = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = next_fd
        file_fd = os.open(parts[-1], FILE_FLAGS, dir_fd=fd)
    finally:
        os.close(fd)
    try:
        if not stat.S_ISREG(os.fstat(file_fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", rel)
        with os.fdopen(file_fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(file_fd)
