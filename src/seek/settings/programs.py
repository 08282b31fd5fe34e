"""The programs seek starts (``git``, ``seek``), found on ``PATH`` but never in a workspace
(issue 43, finding 2). It sits with the settings because, like the trust rules, it decides
what a workspace may make seek do.

Why: seek runs inside cloned repositories (``cd repo && seek status``, an agent's
``seek mcp``), and a bare program name is looked up in places a repository controls:
Windows tries the current folder before ``PATH`` (``CreateProcess``, and ``shutil.which``
unless ``NoDefaultCurrentDirectoryInExePath`` is set), and on every system an empty or
relative ``PATH`` entry (``""``, ``"."``, ``"bin"``) names a folder relative to the current
one. A ``git.exe`` committed at a repository's root would run.

So every program seek starts is looked up here and started by its absolute path: only
absolute ``PATH`` entries count, and none that is the current folder or lies beneath a
folder the caller names (the workspace, a clone). The answer is kept per process (a search
asks once, the servers once at start): a lookup is a handful of ``stat`` calls, never on a
query's path.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path

__all__ = ["find_program"]


def find_program(
    name: str,
    beneath: Sequence[Path] = (),
    *,
    path: str | None = None,
    cwd: Path | None = None,
) -> str | None:
    """The absolute path of the program ``name`` on ``path`` (default ``$PATH``), skipping
    relative and empty entries, the current folder ``cwd`` and every folder beneath one of
    ``beneath``; None when there is none."""
    search = os.environ.get("PATH", os.defpath) if path is None else path
    here = os.getcwd() if cwd is None else str(cwd)
    return _lookup(name, search, here, tuple(str(b) for b in beneath), os.name == "nt")


@functools.lru_cache(maxsize=64)
def _lookup(
    name: str, search: str, here: str, beneath: tuple[str, ...], windows: bool
) -> str | None:
    banned = [_real(here), *(_real(b) for b in beneath)]
    for entry in search.split(os.pathsep):
        entry = entry.strip('"') if windows else entry  # Windows allows quoted entries
        if not entry or not os.path.isabs(entry):
            continue  # "" and "." mean the current folder, "bin" one beneath it
        folder = _real(entry)
        if folder == banned[0] or any(_inside(folder, b) for b in banned[1:]):
            continue
        for candidate in _names(name, windows):
            found = os.path.join(folder, candidate)
            if os.path.isfile(found) and (windows or os.access(found, os.X_OK)):
                return found
    return None


def _names(name: str, windows: bool) -> list[str]:
    """``git`` -> ``git`` (POSIX) or ``git.COM``, ``git.EXE``... as ``PATHEXT`` lists them."""
    if not windows:
        return [name]
    exts = [e for e in os.environ.get("PATHEXT", ".COM;.EXE;.BAT;.CMD").split(";") if e]
    if os.path.splitext(name)[1].upper() in (e.upper() for e in exts):
        return [name]
    return [name + ext for ext in exts]


def _real(folder: str) -> str:
    return os.path.normcase(os.path.realpath(folder))


def _inside(folder: str, top: str) -> bool:
    return folder == top or folder.startswith(top.rstrip(os.sep) + os.sep)
