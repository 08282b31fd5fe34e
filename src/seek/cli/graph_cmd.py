"""``seek def``, ``seek refs``, ``seek callers``, ``seek callees``, ``seek outline``,
``seek map``, ``seek impact``, ``seek changed`` and ``seek history``: the code graph stored
with the index (seek.md §2; issues 28 and 44), printed as text, JSON, JSON lines or vimgrep
lines like ``seek search``.

- ``text``: definitions as ``path:line-end_line  kind  Container.name`` and their signature
  line; uses grouped by file and enclosing definition, one ``line:column  text`` each; the
  map as its signatures under each file;
- ``json``: one object, ``{"tool", "query", "rows", "notes", "truncated"}`` (and ``map``);
  a row names its site by ``path`` and ``line`` (1-based), with ``end_line``, ``column``
  (1-based), ``kind``, ``name``, ``container`` and ``signature``/``doc`` or ``text``;
- ``jsonl``: one row per line (notes to stderr);
- ``vimgrep``: ``path:line:column:text`` per row (path as ``seek search`` prints it).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from seek.cli import Context, cli
from seek.cli.graph_args import budget_option, split_location
from seek.cli.output import FORMATS, editor_path, workspace_file
from seek.cli.search_cmd import workspace_and_prefixes
from seek.untrusted import MAX_DEPTH, printable
from seek.workspace.code_graph import MAX_ROWS, GraphResult


def format_option(command):  # a click decorator
    command = click.option("--json", "as_json", is_flag=True, help="Same as --format json.")(
        command
    )
    return click.option(
        "--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
        help="text; json (one object); jsonl (a row per line); vimgrep (path:line:col:text).",
    )(command)  # fmt: skip


def graph_options(command):  # a click decorator: the format and --limit
    return click.option(
        "-n", "--limit", type=click.IntRange(1, MAX_ROWS), default=None,
        help="Most rows to print (default 50; outline: all).",
    )(format_option(command))  # fmt: skip


def _root(obj: Context) -> Path:
    return workspace_and_prefixes(obj, ())[0]


def _location(obj: Context, location: str) -> tuple[Path, str, int]:
    """The workspace, the workspace-relative file and the line of ``PATH:LINE``."""
    name, line = split_location(location)
    root, rel = _file(obj, name)
    return root, rel, line


def _file(obj: Context, name: str) -> tuple[Path, str]:
    if not Path(name).exists() and obj.path:
        name = str(Path(obj.path) / name)  # a workspace-relative name with -C
    if not Path(name).exists():
        raise click.BadParameter(f"{name} does not exist", param_hint="PATH")
    root, _ = workspace_and_prefixes(obj, (name,))
    return root, workspace_file(root, name)


def _subject(obj: Context, subject: str, files: bool = False) -> tuple[Path, str]:
    """The workspace and a tool's subject as the facade takes it: ``PATH:LINE`` with the
    path made workspace-relative, (``files``) an existing file likewise, else a name."""
    name, sep, line_text = subject.rpartition(":")
    if sep and name and line_text.isdigit():
        root, rel, line = _location(obj, subject)
        return root, f"{rel}:{line}"
    if files and (Path(subject).is_file() or (obj.path and (Path(obj.path) / subject).is_file())):
        return _file(obj, subject)
    return _root(obj), subject


def _workspaces(obj: Context, root: Path):
    from seek.workspace import Workspaces

    return Workspaces(live=False, settings=obj.settings(root))


@cli.command("def")
@click.argument("name")
@graph_options
@click.pass_obj
def def_command(obj: Context, name: str, fmt: str, as_json: bool, limit: int | None) -> None:
    """Where NAME is defined (`Container.name` narrows it), best first.

    Faster and more precise than grep: only definitions, not every line that mentions the
    name."""
    root = _root(obj)
    show(_workspaces(obj, root).defs(root, name, limit), fmt, as_json, root)


@cli.command("refs")
@click.argument("target", metavar="NAME|PATH:LINE")
@graph_options
@click.pass_obj
def refs_command(obj: Context, target: str, fmt: str, as_json: bool, limit: int | None) -> None:
    """Who uses NAME, or the definition at PATH:LINE, grouped by the definition each use is
    in (calls and other uses; comments and strings are not uses)."""
    root, target = _subject(obj, target)
    show(_workspaces(obj, root).refs(root, target, limit), fmt, as_json, root)


@cli.command("callers")
@click.argument("location", metavar="PATH:LINE")
@graph_options
@click.pass_obj
def callers_command(
    obj: Context, location: str, fmt: str, as_json: bool, limit: int | None
) -> None:
    """The definitions that call the function at PATH:LINE (the line of its name, a use of
    it, or any line inside it)."""
    root, rel, line = _location(obj, location)
    show(_workspaces(obj, root).callers(root, rel, line, limit), fmt, as_json, root)


@cli.command("callees")
@click.argument("location", metavar="PATH:LINE")
@graph_options
@click.pass_obj
def callees_command(
    obj: Context, location: str, fmt: str, as_json: bool, limit: int | None
) -> None:
    """What the function at PATH:LINE calls, each resolved to its definition."""
    root, rel, line = _location(obj, location)
    show(_workspaces(obj, root).callees(root, rel, line, limit), fmt, as_json, root)


@cli.command("outline")
@click.argument("path", metavar="PATH")
@graph_options
@click.pass_obj
def outline_command(obj: Context, path: str, fmt: str, as_json: bool, limit: int | None) -> None:
    """PATH's definitions with their line spans and signatures, in file order."""
    root, rel = _file(obj, path)
    show(_workspaces(obj, root).outline(root, rel, limit), fmt, as_json, root)


@cli.command("map")
@click.argument("question", required=False, default="")
@budget_option
@format_option
@click.pass_obj
def map_command(obj: Context, question: str, budget: int, fmt: str, as_json: bool) -> None:
    """The repository's most central definitions (PageRank over who uses what), as
    signatures under their files, within --budget; with QUESTION, those near its words."""
    root = _root(obj)
    show(_workspaces(obj, root).map(root, question, budget), fmt, as_json, root)


@cli.command("changed")
@click.argument("ref", required=False, default="HEAD")
@click.option("--staged", is_flag=True, help="Compare REF with git's index, not the files.")
@graph_options
@click.pass_obj
def changed_command(
    obj: Context, ref: str, staged: bool, fmt: str, as_json: bool, limit: int | None
) -> None:
    """The definitions added, modified, removed, renamed or moved since REF (default HEAD):
    in the working tree (new files too), or with --staged in what is staged. Each says
    whether its signature changed and how many definitions call it now; whitespace alone
    changes nothing."""
    root = _root(obj)
    show(_workspaces(obj, root).changed(root, ref, staged, limit), fmt, as_json, root)


@cli.command("impact")
@click.argument("subject", metavar="NAME|PATH:LINE")
@click.option("--depth", type=click.IntRange(1, MAX_DEPTH), default=3, show_default=True,
              help="Steps through users of users.")  # fmt: skip
@graph_options
@click.pass_obj
def impact_command(
    obj: Context, subject: str, depth: int, fmt: str, as_json: bool, limit: int | None
) -> None:
    """What a change to a definition reaches: the definitions that use it, directly (1) and
    through their users up to --depth, each with the use that reaches it, nearest and most
    used first; tests apart; the files that import it."""
    root, subject = _subject(obj, subject)
    show(_workspaces(obj, root).impact(root, subject, depth, limit), fmt, as_json, root)


@cli.command("history")
@click.argument("subject", metavar="NAME|PATH:LINE|PATH")
@click.option("--patch", is_flag=True, help="With each commit's hunks for the subject.")
@graph_options
@click.pass_obj
def history_command(
    obj: Context, subject: str, patch: bool, fmt: str, as_json: bool, limit: int | None
) -> None:
    """The commits that changed a definition's lines (NAME, or PATH:LINE of it) or a file,
    newest first (default 20): hash, date, author and subject line, from git. The lines
    are the definition's as of HEAD."""
    if fmt == "vimgrep":
        raise click.BadParameter(
            "commits have no sites: use text, json or jsonl", param_hint="--format"
        )
    root, subject = _subject(obj, subject, files=True)
    show(_workspaces(obj, root).history(root, subject, limit, patch), fmt, as_json, root)


# -- printing ----------------------------------------------------------------------------


def show(result: GraphResult, fmt: str, as_json: bool, root: Path) -> None:
    if as_json or fmt == "json":
        click.echo(json.dumps(result.to_json(), indent=2))
        return
    if fmt == "text":
        click.echo(result.to_text(notes=False))
    elif fmt == "jsonl":
        for row in result.rows:
            click.echo(json.dumps(row))
    else:
        for row in result.rows:
            where = printable(editor_path(root, row["path"]))
            text = row.get("text", row.get("signature", ""))
            click.echo(f"{where}:{row['line']}:{row['column']}:{printable(text)}")
    for note in result.notes:
        click.echo(f"note: {printable(note)}", err=True)
    if result.truncated:
        click.echo(f"note: only the first {len(result.rows)} rows (see --limit)", err=True)
