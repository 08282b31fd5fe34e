"""``seek install`` / ``seek uninstall``: seek's MCP server entry and instructions block in
the coding agents' user config files (issue 15).

    changes = plan(home, [BY_NAME["claude"]], command="/usr/local/bin/seek")
    for change in changes: print(change.diff())
    apply(changes)

Safety: each file is parsed and edited in place (see :mod:`.edit`), so other keys, comments
and formatting stay; the file is copied to ``<name>.seek-backup`` before seek first changes
it (that copy is never overwritten, so it holds the file as it was before seek); a second
install changes nothing; uninstall removes exactly what install added, and deletes a file
install created. A file that cannot be parsed is left alone, with the reason (one line), and
the other agents' files are still written (issue 27, finding 6).

Writing (:func:`apply`): a symlinked file (``~/.claude.json`` kept in a dotfiles repository)
is written through the link: the target is replaced, the link stays. The write is atomic (a
temporary file in the target's folder, renamed over it) and keeps the file's mode. The file
is read again just before the write: when an agent changed it since :func:`plan` read it,
seek's edit is made again on the new text (the agent's change is kept), and a file that
changes while seek writes it is left alone with a message (there is no lock that every
agent honours, so the last check is as close to the rename as it can be).
"""

from __future__ import annotations

import difflib
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from seek.errors import SeekError
from seek.install.agents import AGENTS, BY_NAME, SERVER_NAME, Agent, detected
from seek.install.edit import EditError, remove_block, remove_entry, set_block, set_entry
from seek.settings.programs import find_program

__all__ = ["AGENTS", "BY_NAME", "Agent", "Change", "apply", "detected", "plan", "seek_command"]

KINDS = ("mcp", "instructions")
BACKUP_SUFFIX = ".seek-backup"


@dataclass
class Change:
    agent: Agent
    kind: str
    """``mcp`` or ``instructions``."""
    path: Path
    before: str | None
    """The file's text now (None: it does not exist)."""
    after: str | None
    """The text seek would write (None: delete the file)."""
    error: str = ""
    remove: bool = False
    command: str = ""

    @property
    def changed(self) -> bool:
        return not self.error and self.before != self.after

    def diff(self) -> str:
        old = (self.before or "").splitlines(keepends=True)
        new = (self.after or "").splitlines(keepends=True)
        name = str(self.path)
        lines = difflib.unified_diff(
            old,
            new,
            fromfile=name if self.before is not None else "/dev/null",
            tofile=name if self.after is not None else "/dev/null",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def instructions_text() -> str:
    return files("seek.install").joinpath("instructions.md").read_text(encoding="utf-8")


def seek_command() -> str:
    """The absolute path of the running ``seek`` executable (the one agents should start),
    else the one on PATH outside the current folder (:mod:`seek.settings.programs`, issue 43)."""
    beside = Path(sys.executable).parent / ("seek.exe" if os.name == "nt" else "seek")
    if beside.is_file():
        return str(beside.absolute())
    found = find_program("seek", (Path.cwd(),))
    if found:
        return found
    raise SeekError("cannot find the `seek` executable: install seek, or put it on PATH")


def _read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise EditError(f"cannot read it ({exc})") from exc


def _created_by_seek(path: Path, text: str, fmt: str) -> bool:
    """After an uninstall: is what is left the empty file that install started from?"""
    if Path(str(path) + BACKUP_SUFFIX).exists():
        return False  # the file existed before seek touched it
    stripped = text.strip()
    return stripped == "" or (fmt in ("json", "jsonc") and stripped == "{}")


def _change(agent: Agent, kind: str, path: Path, remove: bool, command: str) -> Change:
    try:
        before = _read(path)
    except EditError as exc:
        return Change(agent, kind, path, None, None, str(exc), remove, command)
    text = before or ""
    fmt = agent.fmt if kind == "mcp" else "md"
    try:
        if remove and not text.strip():
            after: str | None = text  # nothing there to remove
        elif kind == "mcp" and remove:
            after = remove_entry(text, fmt, agent.servers, SERVER_NAME)
        elif kind == "mcp":
            after = set_entry(text, fmt, agent.servers, SERVER_NAME, agent.entry(command))
        elif remove:
            after = remove_block(text)
        else:
            after = set_block(text, instructions_text())
    except EditError as exc:
        return Change(agent, kind, path, before, before, f"left unchanged: {exc}", remove, command)
    if before is None and after == text:
        after = None  # nothing to remove from a file that does not exist
    elif remove and after != text and _created_by_seek(path, after, fmt) and not path.is_symlink():
        after = None  # a link is someone's dotfile: it stays, emptied
    return Change(agent, kind, path, before, after, "", remove, command)


def plan(
    home: Path, agents: list[Agent], *, command: str, kinds: tuple[str, ...] = KINDS,
    remove: bool = False,
) -> list[Change]:  # fmt: skip
    """What install (or uninstall, with ``remove``) would do to each agent's files."""
    changes = []
    for agent in agents:
        for kind in kinds:
            path = agent.config(home) if kind == "mcp" else None
            if kind == "instructions" and agent.instructions is not None:
                path = agent.instructions(home)
            if path is not None:
                changes.append(_change(agent, kind, path, remove, command))
    return changes


def apply(changes: list[Change]) -> list[Change]:
    """Write the changed files (backing each up before seek first changes it). A file that
    cannot be written gets its ``error`` set and the others are still written; the changes
    that failed are returned."""
    failed = []
    for change in changes:
        if not change.changed:
            continue
        try:
            _write(change)
        except (OSError, EditError) as exc:
            change.error = f"left unchanged: {exc}"
            failed.append(change)
    return failed


def _write(change: Change) -> None:
    path = change.path
    target = Path(os.path.realpath(path))  # through a symlink: the link itself stays
    if _read(target) != change.before:  # an agent wrote it since the plan: edit the new text
        fresh = _change(change.agent, change.kind, path, change.remove, change.command)
        if fresh.error:
            raise EditError(fresh.error.removeprefix("left unchanged: "))
        change.before, change.after = fresh.before, fresh.after
        if not change.changed:
            return
    if change.before is not None:
        backup = Path(str(path) + BACKUP_SUFFIX)
        if not backup.exists():
            shutil.copy2(target, backup)
    if change.after is None:
        path.unlink(missing_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = target.stat().st_mode & 0o7777 if target.exists() else None
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(change.after.encode("utf-8"))
        if mode is not None:
            os.chmod(tmp, mode)
        if _read(target) != change.before:
            raise EditError("it changed while seek was writing it: run the command again")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
