"""``seek search``: ranked chunks for a question, as text or JSON."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from seek.cli import Context, cli
from seek.indexer import resolve_workspace
from seek.retrieve import search
from seek.untrusted import printable

SNIPPET_LINES = 3
SNIPPET_WIDTH = 100


def snippet(content: str) -> list[str]:
    """The first few non-blank lines, shortened, for a glance at the hit."""
    lines = [line.rstrip() for line in content.split("\n") if line.strip()][:SNIPPET_LINES]
    return [
        line if len(line) <= SNIPPET_WIDTH else line[: SNIPPET_WIDTH - 1] + "…" for line in lines
    ]


def relative_focus(root: Path, files: tuple[str, ...]) -> tuple[str, ...]:
    """Focus files as workspace-relative paths (given relative to the cwd or the workspace)."""
    out = []
    for name in files:
        candidate = Path(name)
        absolute = candidate if candidate.is_absolute() else Path.cwd() / candidate
        if not absolute.exists() and (root / candidate).exists():
            absolute = root / candidate
        try:
            out.append(Path(os.path.realpath(absolute)).relative_to(root).as_posix())
        except ValueError:
            out.append(candidate.as_posix())  # outside the workspace: matches nothing
    return tuple(out)


@cli.command("search")
@click.argument("query")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option(
    "-k",
    "k",
    type=click.IntRange(1, 100),
    default=10,
    show_default=True,
    help="How many chunks to return.",
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
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def search_command(
    obj: Context,
    query: str,
    path: str | None,
    k: int,
    focus: tuple[str, ...],
    no_rerank: bool,
    as_json: bool,
) -> None:
    """Find the chunks of code that answer QUERY (the index is updated first if needed).

    Scores are the learned ranker's probability that the chunk's file answers the question
    (0-1), or fused scores with --no-rerank."""
    root = resolve_workspace(obj.workspace(path))
    result = search(
        root,
        query,
        obj.settings(root),
        k=k,
        focus=relative_focus(root, focus),
        rerank=not no_rerank,
    )
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
        return
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    if not result.hits:
        click.echo("No matching code.")
        return
    for rank, hit in enumerate(result.hits, 1):
        where = f"{printable(hit.path)}:{hit.start_line}-{hit.end_line}"
        click.echo(f"{rank:>2}  {where}  {hit.score:.4f}")
        for line in snippet(hit.content):
            click.echo(f"      {line}")
