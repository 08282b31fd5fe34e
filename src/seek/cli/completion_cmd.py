"""``seek completion bash|zsh|fish``: the shell completion script (click's own), to source
from the shell's start-up file."""

from __future__ import annotations

import click
from click.shell_completion import get_completion_class

from seek.cli import cli

SHELLS = ("bash", "zsh", "fish")
COMPLETE_VAR = "_SEEK_COMPLETE"


@cli.command("completion")
@click.argument("shell", type=click.Choice(SHELLS))
def completion_command(shell: str) -> None:
    """Print the completion script for SHELL.

    \b
    bash: echo 'eval "$(seek completion bash)"' >> ~/.bashrc
    zsh:  echo 'eval "$(seek completion zsh)"' >> ~/.zshrc
    fish: seek completion fish > ~/.config/fish/completions/seek.fish"""
    completion = get_completion_class(shell)
    assert completion is not None  # click ships all three
    click.echo(completion(cli, {}, "seek", COMPLETE_VAR).source())
