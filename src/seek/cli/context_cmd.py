"""``seek context``: the prompt blocks for a question (stdout) and the report line (stderr);
``seek context --diff [REF] [--staged]``: the review context of a change (issue 44
deliver 5, :mod:`seek.change.review`), printed the same way."""

from __future__ import annotations

import json

import click

from seek.cli import Context, cli
from seek.untrusted import MAX_BUDGET_CHARS, MAX_SNIPPETS, printable_text
from seek.workspace import resolve_workspace


@cli.command("context")
@click.argument("question", required=False)
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option(
    "--diff",
    is_flag=True,
    help="Review context for what changed since REF (QUESTION's place; default HEAD): "
    "the changed definitions, their uses, tests and callees.",
)
@click.option("--staged", is_flag=True, help="With --diff: compare REF with git's index.")
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
    snippets: int | None, threshold: float | None, as_json: bool, diff: bool, staged: bool,
) -> None:  # fmt: skip
    """Print the labelled code blocks a chat model needs to answer QUESTION.

    With --diff, QUESTION is a git revision REF (default HEAD) and the blocks are what a
    review of the change since REF needs: use it before reviewing or committing, instead of
    `git diff` and grep."""
    from seek.workspace import context

    root = resolve_workspace(obj.workspace(path))
    if diff or staged:
        if snippets is not None or threshold is not None:
            raise click.UsageError("--snippets and --threshold are for questions, not --diff")
        _review(obj, root, question or "HEAD", staged, budget, as_json)
        return
    if question is None:
        raise click.UsageError("Missing argument 'QUESTION' (or give --diff).")
    result = context(root, question, obj.settings(root), budget=budget, snippets=snippets,
                     threshold=threshold)  # fmt: skip
    _print(result, as_json)


def _review(obj: Context, root, ref: str, staged: bool, budget: int | None, as_json: bool) -> None:
    from seek.workspace import Workspaces

    result = Workspaces(live=False, settings=obj.settings(root)).review(root, ref, staged, budget)
    _print(result, as_json)


def _print(result, as_json: bool) -> None:
    """A context's or a review's blocks (JSON, or the prompt and the context line)."""
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
        return
    if result.blocks:
        click.echo(printable_text(result.prompt()))  # the blocks are workspace text
    click.echo(result.context_line(), err=True)
