"""``seek search`` and ``seek related``: ranked chunks, printed as text, JSON, JSON lines or
vimgrep lines (see :mod:`seek.cli.output`)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from seek.cli import Context, cli, default_workspace, git_root
from seek.cli.output import format_options, print_result, workspace_file
from seek.retrieve.scope import CONTENT_KINDS, Scope
from seek.untrusted import CLI_MAX_K, MAX_FOCUS
from seek.workspace import resolve_workspace

K_OPTION = click.option(
    "-k", "k", type=click.IntRange(1, CLI_MAX_K), default=10, show_default=True,
    help="How many chunks to return.",
)  # fmt: skip


def _inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def workspace_and_prefixes(obj: Context, paths: tuple[str, ...]) -> tuple[Path, tuple[str, ...]]:
    """The workspace a search runs in and the workspace-relative files or folders it is
    limited to. The workspace is ``-C``, else the git root above the current folder when it
    holds every PATH, else the git root above the first PATH (or that folder itself).

    From a folder outside any git repository (``~``, ``/tmp``), a PATH inside a repository
    searches that repository: the current folder would hold every PATH, but indexing all of
    it (a home folder) to answer about one project is never what was meant."""
    absolute = [Path(os.path.realpath(p)) for p in paths]
    for given, path in zip(paths, absolute, strict=True):
        if not path.exists():
            raise click.BadParameter(f"{given} does not exist", param_hint="PATH")
    if obj.path:
        root = resolve_workspace(obj.path)
    else:
        here = git_root(Path.cwd())
        root = resolve_workspace(here or Path.cwd())
        if absolute:
            first = absolute[0] if absolute[0].is_dir() else absolute[0].parent
            if not all(_inside(p, root) for p in absolute):
                root = resolve_workspace(default_workspace(first))
            elif here is None and (theirs := git_root(first)) is not None:
                project = resolve_workspace(theirs)
                if all(_inside(p, project) for p in absolute):
                    root = project
    prefixes = []
    for given, path in zip(paths, absolute, strict=True):
        if not _inside(path, root):
            raise click.BadParameter(
                f"{given} is outside the workspace {root}: search it on its own",
                param_hint="PATH",
            )
        if path != root:
            prefixes.append(path.relative_to(root).as_posix())
    return root, tuple(prefixes)


@cli.command("search")
@click.argument("query")
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@K_OPTION
@click.option(
    "--content",
    type=click.Choice(CONTENT_KINDS),
    default="code",
    show_default=True,
    help="Which files: code, docs (prose), config (configuration and data), or all.",
)
@click.option(
    "--focus",
    multiple=True,
    metavar="FILE",
    help="A file the question is about (repeatable): searched in its own passes.",
)
@click.option(
    "--no-rerank",
    is_flag=True,
    help="Keep the fused order: skip the learned ranker (scores are then fused scores).",
)
@format_options
@click.pass_obj
def search_command(
    obj: Context, query: str, paths: tuple[str, ...], k: int, content: str,
    focus: tuple[str, ...], no_rerank: bool, fmt: str, as_json: bool, max_lines: int | None,
) -> None:  # fmt: skip
    """Find the chunks of code that answer QUERY (the index is updated first if needed).

    Each PATH (a file or folder; several allowed) limits the search to files under it; a
    PATH outside the current workspace is searched as its own workspace. Scores are the
    learned ranker's probability that the chunk's file answers the question (0-1), or
    fused scores with --no-rerank."""
    from seek.workspace import search

    if len(focus) > MAX_FOCUS:
        raise click.BadParameter(f"at most {MAX_FOCUS} files", param_hint="--focus")
    root, prefixes = workspace_and_prefixes(obj, paths)
    result = search(
        root,
        query,
        obj.settings(root),
        k=k,
        focus=tuple(workspace_file(root, f) for f in focus),
        rerank=not no_rerank,
        scope=Scope(prefixes, content),
    )
    print_result(result, "json" if as_json else fmt, root, max_lines)


@cli.command("related")
@click.argument("location", metavar="PATH:LINE")
@K_OPTION
@format_options
@click.pass_obj
def related_command(
    obj: Context, location: str, k: int, fmt: str, as_json: bool, max_lines: int | None
) -> None:
    """The code most like the chunk at PATH:LINE, in other files ("who else does this?").

    The chunk holding that line is matched by meaning (its embedding) and by the names it
    uses (BM25 over its identifiers); chunks of the same file are left out. Scores are fused
    reciprocal-rank scores."""
    name, sep, line_text = location.rpartition(":")
    if not sep or not name or not line_text.isdigit() or int(line_text) < 1:
        raise click.BadParameter("expected PATH:LINE, e.g. src/app.py:42", param_hint="PATH:LINE")
    if not Path(name).exists() and obj.path:
        name = str(Path(obj.path) / name)  # a workspace-relative name with -C
    from seek.workspace import related

    root, _ = workspace_and_prefixes(obj, (name,))
    result = related(root, workspace_file(root, name), int(line_text), obj.settings(root), k=k)
    print_result(result, "json" if as_json else fmt, root, max_lines)
