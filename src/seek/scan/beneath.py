"""Reading a workspace file by its relative path without ever leaving the workspace.

Each folder on the way is opened relative to the previous one with ``O_NOFOLLOW``, and the
file itself with ``O_NOFOLLOW | O_NONBLOCK``, so a symlink swapped in anywhere on the path
after a check (a ``git pull`` can replace a file by a link) fails with ``ELOOP`` instead of
reading what it points at; a FIFO does not block and fails as not a regular file. Every read
of a workspace file goes through here: indexed files, ``seek context``'s, ignore files
(issue 43 findings 4 and 9c).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

ROOT_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
"""The root itself is the user's choice (``seek -C ~/link-to-project``): a link there is
followed; nothing beneath it is."""
DIR_FLAGS = ROOT_FLAGS | getattr(os, "O_NOFOLLOW", 0)
FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
ESCAPES = frozenset({errno.ELOOP, errno.ENOTDIR, errno.EINVAL, errno.EXDEV})
"""errnos that mean the path is no longer a plain file inside the workspace."""


def read_beneath(root: Path, rel: str, limit: int | None = None) -> bytes:
    """The bytes of ``root/rel``; OSError with an errno in ``ESCAPES`` when a part of the path
    is a symlink, ``..`` or not a regular file, and ``EFBIG`` when it holds more than
    ``limit`` bytes (never read past that: a file may grow while it is read)."""
    parts = rel.split("/")
    if not rel or any(part in ("", ".", "..") for part in parts):
        raise OSError(errno.EXDEV, "not a path inside the workspace", rel)
    fd = os.open(root, ROOT_FLAGS)
    try:
        for part in parts[:-1]:
            next_fd = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = next_fd
        file_fd = os.open(parts[-1], FILE_FLAGS, dir_fd=fd)
    finally:
        os.close(fd)
    try:
        st = os.fstat(file_fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", rel)
        if limit is not None and st.st_size > limit:
            raise OSError(errno.EFBIG, f"over {limit} bytes", rel)
        with os.fdopen(file_fd, "rb", closefd=False) as handle:
            data = handle.read() if limit is None else handle.read(limit + 1)
        if limit is not None and len(data) > limit:
            raise OSError(errno.EFBIG, f"over {limit} bytes", rel)
        return data
    finally:
        os.close(file_fd)
