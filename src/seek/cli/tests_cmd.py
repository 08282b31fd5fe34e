"""``seek tests SUBJECT`` and ``seek tests --changed [REF] [--staged]`` (issue 44 deliver 3):
the tests that reach a definition, a file's definitions, or what the working tree changed
since REF, printed as the other graph commands print (:mod:`seek.cli.graph_cmd`: text,
JSON, JSON lines, vimgrep); ``--command`` prints one command line that runs them instead.
"""

from __future__ import annotations

import click

from seek.cli import Context, cli
from seek.cli.graph_cmd import _root, _subject, _workspaces, graph_options, show
from seek.untrusted import MAX_DEPTH, printable


@cli.command("tests")
@click.argument("subject", metavar="NAME|PATH:LINE|PATH", required=False)
@click.option(
    "--changed",
    "ref",
    is_flag=False,
    flag_value="HEAD",
    default=None,
    metavar="[REF]",
    help="The tests of every definition changed since REF (default HEAD).",
)
@click.option("--staged", is_flag=True, help="With --changed: what is staged, not the files.")
@click.option(
    "--depth",
    type=click.IntRange(1, MAX_DEPTH),
    default=None,
    help="Steps from the subject through its users (default 4).",
)
@click.option(
    "--command",
    "as_command",
    is_flag=True,
    help="Print one command line that runs the tests instead.",
)
@graph_options
@click.pass_obj
def tests_command(
    obj: Context, subject: str | None, ref: str | None, staged: bool, depth: int | None,
    as_command: bool, fmt: str, as_json: bool, limit: int | None,
) -> None:  # fmt: skip
    """The tests that reach a definition (NAME, or PATH:LINE of it) or a file's definitions
    (PATH), or with --changed every definition changed since REF, through calls, helpers,
    fixtures and setUp/beforeEach hooks: nearest first, each with the id its runner takes
    (pytest node id, go test -run, vitest/jest -t, cargo, JUnit, RSpec, ExUnit)."""
    if (subject is None) == (ref is None):
        raise click.UsageError("name a SUBJECT or --changed [REF], not both")
    if staged and ref is None:
        raise click.UsageError("--staged goes with --changed")
    if ref is not None:
        root = _root(obj)
    else:
        root, subject = _subject(obj, subject or "", files=True)
    result = _workspaces(obj, root).tests(root, subject, ref, staged, depth, limit)
    if not as_command:
        show(result, fmt, as_json, root)
        return
    from seek.change.runners import command

    line = command(result.rows)
    for note in result.notes:
        click.echo(f"note: {printable(note)}", err=True)
    if line is None:
        frameworks = sorted({row["framework"] for row in result.rows})
        why = "no test found" if not frameworks else "tests of " + ", ".join(frameworks)
        raise click.ClickException(f"no one command runs them ({why})")
    click.echo(line)
