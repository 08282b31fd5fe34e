"""Walk a workspace and decide which files to index (reference §1 with seek.md §4).

Per entry, in order: symlink (never followed) -> always-excluded paths (``.git``,
submodules as path prefixes, the index folder) -> ignore rules -> name allowlist ->
``stat`` size between 1 byte and ``max_file_bytes``. Every file left out is counted by
reason; nothing is dropped silently.
"""

from __future__ import annotations

import os
import re
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from seek.scan.allowlist import is_indexable_name
from seek.scan.ignore import RULE_FILES, IgnoreRules

# Reasons a file is left out; ``binary`` and ``no_chunks`` are found when reading.
IGNORED = "ignored"
NOT_ALLOWLISTED = "not_allowlisted"
NOT_A_FILE = "not_a_file"  # a FIFO, socket or device: never opened
TOO_BIG = "too_big"
EMPTY = "empty"
SYMLINK = "symlink"
UNREADABLE = "unreadable"
BINARY = "binary"
NO_CHUNKS = "no_chunks"
BAD_NAME = "bad_name"  # not valid UTF-8: cannot be stored, shown or searched as text
MISSING = "missing"  # single-file checks only: the path is not a file (any more)

ALWAYS_EXCLUDED_NAMES = frozenset({".git", ".gitignore"})
EXAMPLES_PER_REASON = 5

_SUBMODULE_PATH = re.compile(r"^\s*path\s*=\s*(.+?)\s*$")


@dataclass(frozen=True, slots=True)
class ScannedFile:
    rel: str
    """Workspace-relative path with ``/`` separators."""
    size: int
    mtime_ns: int


@dataclass(slots=True)
class ScanResult:
    files: list[ScannedFile] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    """A few paths per reason, so a report can name them (unreadable ones above all)."""

    def skip(self, reason: str, rel: str) -> None:
        self.skipped[reason] += 1
        shown = self.examples.setdefault(reason, [])
        if len(shown) < EXAMPLES_PER_REASON:
            shown.append(printable(rel))


def printable(rel: str) -> str:
    """A path that can be written as UTF-8 (undecodable bytes shown as \\xNN)."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def has_bad_name(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def submodule_paths(root: Path) -> tuple[str, ...]:
    """Submodule folders declared in the root ``.gitmodules`` (relative, ``/``-separated)."""
    try:
        text = (root / ".gitmodules").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ()
    paths = []
    for line in text.splitlines():
        match = _SUBMODULE_PATH.match(line)
        if match:
            paths.append(match.group(1).strip("/"))
    return tuple(p for p in paths if p)


def scan_workspace(
    root: Path,
    *,
    max_file_bytes: int,
    ignored_globs: tuple[str, ...] = (),
    exclude_dirs: tuple[Path, ...] = (),
) -> ScanResult:
    """List the indexable files under ``root`` and count the others by reason."""
    result = ScanResult()
    submodules = submodule_paths(root)
    excluded = {os.path.realpath(p) for p in exclude_dirs}
    stack: list[tuple[str, str, IgnoreRules]] = [
        (str(root), "", IgnoreRules.for_root(root, ignored_globs))
    ]
    while stack:
        folder, folder_rel, rules = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            result.skip(UNREADABLE, folder_rel + "/" if folder_rel else "./")
            continue
        if folder_rel:
            names = {e.name for e in entries if e.name in RULE_FILES}
            if names:
                rules = rules.child(folder_rel, names)
        subfolders: list[tuple[str, str, IgnoreRules]] = []
        for entry in entries:
            rel = f"{folder_rel}/{entry.name}" if folder_rel else entry.name
            if has_bad_name(entry.name):
                result.skip(BAD_NAME, rel)
                continue
            try:
                if entry.is_symlink():
                    result.skip(SYMLINK, rel)
                    continue
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                result.skip(UNREADABLE, rel)
                continue
            if _left_out(entry.name, rel, entry.path, is_dir, submodules, excluded, rules):
                result.skip(IGNORED, rel + "/" if is_dir else rel)
                continue
            if is_dir:
                subfolders.append((entry.path, rel, rules))
                continue
            if not entry.is_file(follow_symlinks=False):
                result.skip(NOT_A_FILE, rel)  # sockets, fifos, devices
                continue
            if not is_indexable_name(entry.name):
                result.skip(NOT_ALLOWLISTED, rel)
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # vanished between listing and stat: not a file any more
            except OSError:
                result.skip(UNREADABLE, rel)
                continue
            if st.st_size == 0:
                result.skip(EMPTY, rel)
            elif st.st_size > max_file_bytes:
                result.skip(TOO_BIG, rel)
            else:
                result.files.append(ScannedFile(rel, st.st_size, st.st_mtime_ns))
        stack.extend(reversed(subfolders))
    return result


def _left_out(
    name: str,
    rel: str,
    path: str | Path,
    is_dir: bool,
    submodules: tuple[str, ...],
    excluded: set[str],
    rules: IgnoreRules,
) -> bool:
    """Always excluded (``.git``, a submodule, the index folder) or ignored by the rules."""
    return (
        name in ALWAYS_EXCLUDED_NAMES
        or _in_submodule(rel, submodules)
        or (is_dir and bool(excluded) and os.path.realpath(path) in excluded)
        or rules.is_ignored(rel, is_dir)
    )


def _in_submodule(rel: str, submodules: tuple[str, ...]) -> bool:
    return any(rel == sub or rel.startswith(sub + "/") for sub in submodules)


def check_file(
    root: Path,
    rel: str,
    *,
    max_file_bytes: int,
    ignored_globs: tuple[str, ...] = (),
    exclude_dirs: tuple[Path, ...] = (),
) -> ScannedFile | str:
    """Judge one path exactly as :func:`scan_workspace` would: its :class:`ScannedFile`, or
    the reason it is left out (:data:`MISSING` when it is not a regular file)."""
    parts = [p for p in rel.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        return MISSING
    if has_bad_name(rel):
        return BAD_NAME
    submodules = submodule_paths(root)
    excluded = {os.path.realpath(p) for p in exclude_dirs}
    rules = IgnoreRules.for_root(root, ignored_globs)
    path = root
    for depth, name in enumerate(parts):
        path = path / name
        sub_rel = "/".join(parts[: depth + 1])
        last = depth == len(parts) - 1
        try:
            if path.is_symlink():
                return SYMLINK
            st = path.stat()
        except FileNotFoundError:
            return MISSING
        except OSError:
            return UNREADABLE
        is_dir = stat.S_ISDIR(st.st_mode)
        if is_dir == last:  # a folder where a file was named, or a file midway
            return MISSING
        if _left_out(name, sub_rel, path, is_dir, submodules, excluded, rules):
            return IGNORED
        if is_dir:
            rules = rules.child(sub_rel)
    if not stat.S_ISREG(st.st_mode):
        return NOT_A_FILE
    if not is_indexable_name(parts[-1]):
        return NOT_ALLOWLISTED
    if st.st_size == 0:
        return EMPTY
    if st.st_size > max_file_bytes:
        return TOO_BIG
    return ScannedFile("/".join(parts), st.st_size, st.st_mtime_ns)
