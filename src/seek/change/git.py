"""The two sides of every file a change touched, from git (issue 44 deliver 4, `seek
changed [REF] [--staged]`): the files between ``REF`` and the working tree (untracked files
too, as added), or between ``REF`` and the index (``--staged``), restricted to the
workspace's folder, with the bytes of each side.

git is found by :func:`seek.settings.programs.find_program` (never a program inside the
workspace), run with the workspace as its folder and with nothing a repository could make
it run: no external diff or text conversion, no fsmonitor hook. ``REF`` is checked as a commit
before it is used, and can never be read as an option. A side over ``max_bytes`` is left
out, as the indexer leaves such files out; only files the code graph reads are compared.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from seek.change.definitions import FileSide
from seek.chunk.languages import grammar_for_path
from seek.errors import SeekError
from seek.scan.beneath import read_beneath
from seek.settings.programs import find_program
from seek.untrusted import MAX_REF_CHARS

Pair = tuple[FileSide | None, FileSide | None]
_SAFE = ("-c", "core.fsmonitor=false", "-c", "core.quotepath=off")


class ChangeError(SeekError):
    """git is missing, the folder is not in a git work tree, or REF is not a commit."""


def diff_sides(
    root: Path, ref: str = "HEAD", staged: bool = False, max_bytes: int = 0
) -> list[Pair]:
    """``(before, after)`` for each changed file the graph reads (None: added or removed)."""
    git = git_program(root)
    commit = _commit(git, root, ref)
    names = ["diff", "--name-status", "-z", "-M", "--relative", "--no-ext-diff",
             "--no-textconv", *(["--cached"] if staged else []), commit, "--"]  # fmt: skip
    fields = run_git(git, root, names).split("\0")
    entries: list[tuple[str | None, str | None]] = []
    i = 0
    while i < len(fields) - 1:
        status = fields[i]
        if status[:1] in ("R", "C"):
            old, new = fields[i + 1], fields[i + 2]
            entries.append((old if status[0] == "R" else None, new))
            i += 3
            continue
        path = fields[i + 1]
        entries.append((None if status == "A" else path, None if status == "D" else path))
        i += 2
    if not staged:
        others = run_git(git, root, ["ls-files", "--others", "--exclude-standard", "-z"])
        entries.extend((None, path) for path in others.split("\0") if path)
    # only files the graph reads; a name with a line break cannot go through cat-file's lines
    entries = [
        (o, n) for o, n in entries
        if grammar_for_path(n or o or "") is not None and "\n" not in f"{o}{n}"
    ]  # fmt: skip
    olds = show_blobs(git, root, [f"{commit}:./{o}" for o, _ in entries if o])
    staged_news = show_blobs(git, root, [f":./{n}" for _, n in entries if n]) if staged else {}
    pairs: list[Pair] = []
    for old, new in entries:
        before = _side(old, olds.get(f"{commit}:./{old}")) if old else None
        if new is None:
            after = None
        elif staged:
            after = _side(new, staged_news.get(f":./{new}"))
        else:
            after = _side(new, _read(root, new, max_bytes))
        if max_bytes:
            before = before if before is None or len(before.data) <= max_bytes else None
            after = after if after is None or len(after.data) <= max_bytes else None
        if before is not None or after is not None:
            pairs.append((before, after))
    return pairs


def git_program(root: Path) -> str:
    """The absolute path of ``git`` on PATH, never one inside ``root``."""
    git = find_program("git", (root,))
    if git is None:
        raise ChangeError("git is not installed (not on PATH outside the workspace)")
    return git


def _side(path: str, data: bytes | None) -> FileSide | None:
    return None if data is None else FileSide(path, data)


def _read(root: Path, rel: str, max_bytes: int) -> bytes | None:
    try:
        return read_beneath(root, rel, max_bytes or None)
    except OSError:  # a link, not a regular file, too big, or gone since git listed it
        return None


def _commit(git: str, root: Path, ref: str) -> str:
    if (
        not ref
        or len(ref) > MAX_REF_CHARS
        or ref.startswith("-")
        or not ref.isprintable()
        or (any(c.isspace() for c in ref))
    ):
        raise ChangeError(f"not a git revision: {ref!r}")
    found = subprocess.run(
        [git, *_SAFE, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"],
        cwd=root, capture_output=True, text=True,
    )  # fmt: skip
    if found.returncode:
        inside = run_git(git, root, ["rev-parse", "--is-inside-work-tree"], check=False)
        if inside.strip() != "true":
            raise ChangeError(f"{root} is not in a git work tree")
        raise ChangeError(f"{ref!r} is not a commit of this repository")
    return found.stdout.strip()


def run_git(git: str, root: Path, args: list[str], check: bool = True) -> str:
    done = subprocess.run([git, *_SAFE, *args], cwd=root, capture_output=True)
    if check and done.returncode:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ChangeError(f"git {args[0]} failed: {message[-1] if message else done.returncode}")
    return done.stdout.decode("utf-8", "surrogateescape")


def show_blobs(git: str, root: Path, names: list[str]) -> dict[str, bytes]:
    """The bytes of each ``REV:./path`` named, by one ``git cat-file --batch``; names git
    does not have are left out."""
    if not names:
        return {}
    lines = "".join(f"{name}\n" for name in names).encode("utf-8", "surrogateescape")
    done = subprocess.run(
        [git, *_SAFE, "cat-file", "--batch"], cwd=root, capture_output=True, input=lines
    )
    out, found, at = done.stdout, {}, 0
    for name in names:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        at = end + 1
        if len(header) == 3 and header[1] == b"blob":
            size = int(header[2])
            found[name] = out[at : at + size]
            at += size + 1
    return found
