"""seek's own folders are the user's alone: ``SEEK_HOME`` and every index folder 0700, the
files in them 0600 (issue 43, finding 8; docs/security.md, "Files seek writes").

Why: an index holds copies of the code (chunk texts, the search cache) and of chat sessions,
whatever the permissions of the sources; under the usual umask 022 they were 0644 in 0755
folders, readable by every user of the machine.

How, and why this way: LanceDB writes its own files (fragments, manifests, versions) with
the process's umask, from its own threads. A process-wide ``umask(077)`` around a write
would race with every other thread of ``seek serve`` (one resets it while another writes)
and would tighten files seek writes elsewhere on purpose (a corpus a team shares). So the
*folder* is the barrier: an index folder is made (or tightened to) 0700 before anything is
written into it, and a file inside a 0700 folder cannot be opened by another user whatever
its own mode, from the moment it exists. Files are then tightened to 0600 once per write
(:func:`tighten_tree` when the writer lock is released: one walk, never on a read), so a
folder copied or loosened later still exposes nothing.

``SEEK_HOME`` is made 0700 when seek creates it. An existing one is tightened only when it
is seek's default folder (``~/.cache/seek``): a folder the user named with ``SEEK_HOME``
may be shared on purpose or hold other things (``/tmp``, their home folder), so it is left
as it is, and the index folders in it are what is made private.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import platformdirs

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
OTHERS = 0o077
"""Group and other permission bits: none of them may be set on what seek keeps."""


def private_folder(folder: Path) -> Path:
    """``folder`` made 0700 if absent (its missing parents too: ``Path.mkdir`` would make
    them with the umask's mode), or tightened to 0700 (issue 43)."""
    missing = []
    while not folder.exists() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    for made in reversed(missing):
        try:
            made.mkdir(mode=PRIVATE_DIR)
        except FileExistsError:  # another process made it meanwhile
            pass
    folder = missing[0] if missing else folder
    _tighten(folder, PRIVATE_DIR)
    return folder


def default_home() -> Path:
    """Where indexes live unless ``SEEK_HOME`` says otherwise (``~/.cache/seek`` on Linux)."""
    return Path(platformdirs.user_cache_dir("seek", appauthor=False))


def private_home(home: Path) -> None:
    """``SEEK_HOME``: made 0700 if absent; an existing one tightened only when it is
    :func:`default_home` (see the module's notes)."""
    if not home.exists():
        private_folder(home)
    elif home == default_home() and home.is_dir() and not home.is_symlink():
        _tighten(home, PRIVATE_DIR)


def tighten_tree(folder: Path) -> None:
    """Every folder under ``folder`` 0700 and every file 0600 (owner bits kept otherwise);
    links are left alone (their target is not seek's). Files that vanish while it walks
    (a compacted fragment) are not an error."""
    for parent, dirs, files in os.walk(folder):
        for name in dirs:
            _tighten(Path(parent, name), PRIVATE_DIR)
        for name in files:
            _tighten(Path(parent, name), PRIVATE_FILE)


def write_private(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in a file created 0600 (a temporary beside it, renamed
    over it)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def private_opener(path: str, flags: int) -> int:
    """``open(path, "wb", opener=private_opener)``: a new file is created 0600 (no extra
    call: the mode is given to ``open(2)``)."""
    return os.open(path, flags, PRIVATE_FILE)


def _tighten(path: Path, most: int) -> None:
    """Drop group and other bits of ``path`` (at most ``most``), with one ``lstat`` and a
    ``chmod`` only when something is to drop."""
    try:
        info = os.lstat(path)
    except OSError:
        return
    if stat.S_ISLNK(info.st_mode) or not info.st_mode & OTHERS:
        return
    try:
        os.chmod(path, stat.S_IMODE(info.st_mode) & most)
    except OSError:  # another user's file in a shared folder: nothing seek can do
        pass
