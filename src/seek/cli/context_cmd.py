"""``seek context``: the prompt blocks for a question (stdout) and the report line (stderr)."""

from __future__ import annotations

import json

import click

from seek.cli import Context, cli
from seek.untrusted import MAX_BUDGET_CHARS, MAX_SNIPPETS, printable_text
from seek.workspace import resolve_workspace


@cli.command("context")
@click.argument("question")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option(
    "--budget",
    type=click.IntRange(0, MAX_BUDGET_CHARS),
    default=None,
    help="Characters of code at most (default: prompt_budget_chars, 12,000).",
)
@click.option(
    "--snippets",
    type=click.IntRange(1, MAX_SNIPPETS),
    default=None,
    help="Code blocks at most (default: snippets, 6).",
)
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1),
    default=None,
    help="Minimum score of a block (default: rerank_threshold, 0.08).",
)
@click.option("--json", "as_json", is_flag=True, help="Print blocks and report as JSON.")
@click.pass_obj
def context_command(
    obj: Context, question: str, path: str | None, budget: int | None,
    snippets: int | None, threshold: float | None, as_json: bool,
) -> None:  # fmt: skip
    """Print the labelled code blocks a chat model needs to answer QUESTION."""
    from seek.workspace import context

    root = resolve_workspace(obj.workspace(path))
    result = context(root, question, obj.settings(root), budget=budget, snippets=snippets,
                     threshold=threshold)  # fmt: skip
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
        return
    if result.blocks:
        click.echo(printable_text(result.prompt()))  # the blocks are workspace text
    click.echo(result.context_line(), err=True)
