"""The commits that shaped a definition or a file (issue 44 deliver 6, `seek history`), from
git, with nothing stored in the index.

A definition's lines are followed with ``git log -L START,END:PATH``, where START and END are
its span *as of HEAD* (git reads ``-L`` ranges in the starting revision): the definition is
found again in HEAD's version of the file by kind and qualified name
(:func:`seek.change.definitions.definitions_of`), so an edited working tree does not shift
the range onto other code. A file is followed with ``git log --follow``. git is run as in
:mod:`seek.change.git` (found outside the workspace, no external diff, no text conversion,
no fsmonitor hook), newest first, at most ``limit`` commits.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from seek.change.definitions import definitions_of
from seek.change.git import ChangeError, git_program, run_git, show_blobs
from seek.graph import Definition

_RECORD, _FIELD = "\x1e", "\x1f"


@dataclass(frozen=True)
class Commit:
    """One commit of a subject's history; ``patch`` its hunks for the subject (when asked)."""

    hash: str
    date: str  # ISO 8601, the author's date
    author: str
    subject: str
    patch: str = ""

    def to_json(self) -> dict[str, str]:
        row = {"hash": self.hash, "date": self.date, "author": self.author,
               "subject": self.subject}  # fmt: skip
        if self.patch:
            row["patch"] = self.patch
        return row


def head_span(root: Path, definition: Definition) -> tuple[int, int] | None:
    """``definition``'s lines in HEAD's version of its file; None when HEAD has none like it
    (added since, or the file is new)."""
    git = git_program(root)
    blob = show_blobs(git, root, [f"HEAD:./{definition.path}"]).get(f"HEAD:./{definition.path}")
    if blob is None:
        return None
    for found in definitions_of(definition.path, blob):
        if (found.kind, found.qualified) == (definition.kind, definition.qualified):
            return found.line, found.end_line
    return None


def history(
    root: Path, path: str, span: tuple[int, int] | None, limit: int, patch: bool = False
) -> list[Commit]:
    """The commits that changed ``path`` (``span``: only those lines, as of HEAD), newest
    first, at most ``limit``."""
    if path.startswith("-") or any(c in path for c in "\n\r\0"):
        raise ChangeError(f"not a workspace file: {path!r}")
    git = git_program(root)
    args = ["log", f"-n{limit}", "--no-ext-diff", "--no-textconv", "--no-color",
            f"--format={_RECORD}%H{_FIELD}%aI{_FIELD}%an{_FIELD}%s{_FIELD}"]  # fmt: skip
    if span is not None:
        args += [f"-L{span[0]},{span[1]}:./{path}", *(() if patch else ("-s",))]
    else:
        args += ["--follow", *(("-p",) if patch else ()), "--", f"./{path}"]
    commits = []
    for record in run_git(git, root, args).split(_RECORD)[1:]:
        fields = record.split(_FIELD, 4)
        if len(fields) == 5:
            full, date, author, subject, rest = fields
            commits.append(Commit(full, date, author, subject, rest.strip("\n") if patch else ""))
    return commits
