"""How ``seek search`` and ``seek related`` print hits: ``--format text|json|jsonl|vimgrep``
and ``--max-lines`` (issue 15).

- ``text``: rank, ``path:start-end``, score, the qualified name of the hit's enclosing
  definition when it has one (``Session.request``), then the chunk's first lines (3 by
  default) from its first line with a word in it, control characters escaped
  (``untrusted.printable_text``);
- ``json``: one object (the result's JSON, see the README's schema), hit contents cut to
  ``--max-lines`` when given;
- ``jsonl``: one hit object per line (notes go to stderr);
- ``vimgrep``: ``path:line:col:text`` per hit, the line and column of the chunk's first
  line with a word in it, and that line's text; the path is relative to the current folder when
  the file is under it (absolute otherwise), so ``vim -q`` / ``:cfile`` and editors'
  problem matchers open it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import click

from seek.retrieve.types import Hit, SearchResult
from seek.untrusted import printable, printable_text

FORMATS = ("text", "json", "jsonl", "vimgrep")
TEXT_LINES = 3
SNIPPET_WIDTH = 100
_WORD = re.compile(r"\w")


def first_line(lines: list[str]) -> int:
    """Where a glance at a chunk starts: its first line with a word in it. A chunk often
    begins with the end of the code before it (``}``, ``});``), which says nothing about
    the hit; a chunk of punctuation only starts at its first non-blank line."""
    for i, line in enumerate(lines):
        if _WORD.search(line):
            return i
    return next((i for i, line in enumerate(lines) if line.strip()), 0)


def snippet(content: str, lines: int = TEXT_LINES) -> list[str]:
    """The first few non-blank lines from :func:`first_line`, shortened, for a glance."""
    rows = content.split("\n")
    kept = [line.rstrip() for line in rows[first_line(rows) :] if line.strip()][:lines]
    return [
        line if len(line) <= SNIPPET_WIDTH else line[: SNIPPET_WIDTH - 1] + "…" for line in kept
    ]


def cut(content: str, max_lines: int | None) -> str:
    return content if max_lines is None else "\n".join(content.split("\n")[:max_lines])


def editor_path(root: Path, path: str) -> str:
    absolute = root / path
    try:
        return absolute.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(absolute)


def vimgrep_line(root: Path, hit: Hit) -> str:
    lines = hit.content.split("\n")
    offset = first_line(lines)
    text = lines[offset] if lines else ""
    column = len(text) - len(text.lstrip()) + 1
    where = printable(editor_path(root, hit.path))
    return f"{where}:{hit.start_line + offset}:{column}:{printable(text.strip())}"


def print_result(result: SearchResult, fmt: str, root: Path, max_lines: int | None) -> None:
    if fmt == "json":
        data = result.to_json()
        for hit in data["hits"]:
            hit["content"] = cut(hit["content"], max_lines)
        click.echo(json.dumps(data, indent=2))
        return
    for note in result.notes:
        click.echo(f"note: {printable(note)}", err=True)
    if fmt == "jsonl":
        for hit in result.hits:
            data = hit.to_json()
            data["content"] = cut(hit.content, max_lines)
            click.echo(json.dumps(data))
    elif fmt == "vimgrep":
        for hit in result.hits:
            click.echo(vimgrep_line(root, hit))
    elif not result.hits:
        click.echo("No matching code.")
    else:
        for rank, hit in enumerate(result.hits, 1):
            where = f"{printable(hit.path)}:{hit.start_line}-{hit.end_line}"
            symbol = f"  {printable(hit.symbol.qualified)}" if hit.symbol else ""
            click.echo(f"{rank:>2}  {where}  {hit.score:.4f}{symbol}")
            for line in snippet(hit.content, TEXT_LINES if max_lines is None else max_lines):
                click.echo(f"      {printable_text(line)}")


def format_options(command):  # a click decorator
    command = click.option(
        "--max-lines",
        type=click.IntRange(1),
        default=None,
        help="Lines of each hit to print (text: 3 non-blank lines; json/jsonl: all).",
    )(command)
    command = click.option("--json", "as_json", is_flag=True, help="Same as --format json.")(
        command
    )
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        default="text",
        show_default=True,
        help="text; json (one object); jsonl (a hit per line); vimgrep (path:line:col:text).",
    )(command)


def workspace_file(root: Path, name: str) -> str:
    """A file named relative to the current folder or the workspace, as a workspace-relative
    path (a name outside the workspace is kept as given: it matches nothing)."""
    candidate = Path(name)
    absolute = candidate if candidate.is_absolute() else Path.cwd() / candidate
    if not absolute.exists() and (root / candidate).exists():
        absolute = root / candidate
    try:
        return Path(os.path.realpath(absolute)).relative_to(root).as_posix()
    except ValueError:
        return candidate.as_posix()
