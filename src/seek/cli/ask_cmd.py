"""``seek ask``: stream a chat model's answer from the workspace's code, then the sources."""

from __future__ import annotations

import click

from seek.cli import Context, cli
from seek.untrusted import printable, printable_text
from seek.workspace import resolve_workspace


@cli.command("ask")
@click.argument("question")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--model", "chat_model", default=None, help="Chat model (default: chat_model).")
@click.option(
    "--session",
    default=None,
    metavar="NAME",
    help="Remember this question and its sources: follow-ups build on them.",
)
@click.pass_obj
def ask_command(
    obj: Context, question: str, path: str | None, chat_model: str | None, session: str | None
) -> None:
    """Answer QUESTION with your chat model (Ollama or OpenAI-compatible) and seek's context."""
    from seek.chat import ask

    root = resolve_workspace(obj.workspace(path))
    answer = ask(root, question, obj.settings(root), model=chat_model, session=session,
                 on_piece=lambda piece: click.echo(printable_text(piece), nl=False))  # fmt: skip
    click.echo("")
    if answer.context.blocks:
        click.echo("\nSources:")
        for block in answer.context.blocks:
            click.echo(f"  {printable(block.path)} (lines {block.start + 1}-{block.end + 1})")
    click.echo(answer.context.context_line(), err=True)
