"""The ``seek`` command line. Commands hold no logic: they parse, call the library, and turn
a :class:`SeekError` into one line on stderr with exit code 1 (usage errors exit 2; a
cancelled index run exits 130)."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import click

from seek import __version__
from seek.errors import SeekError
from seek.settings import Settings, load_settings


class Context:
    """What every command needs: the workspace and its settings (loaded on demand)."""

    def __init__(self, path: str | None, overrides: dict[str, str]) -> None:
        self.path = path
        self.overrides = overrides

    def workspace(self, path: str | None = None) -> Path:
        chosen = path or self.path
        if chosen:
            return Path(chosen)
        return default_workspace(Path.cwd())

    def settings(self, workspace: Path, **flags: object) -> Settings:
        overrides: dict[str, object] = dict(self.overrides)
        overrides.update({k: v for k, v in flags.items() if v is not None})
        return load_settings(workspace if workspace.is_dir() else None, overrides=overrides)


def default_workspace(cwd: Path) -> Path:
    """The git root above ``cwd``, else ``cwd`` itself."""
    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return cwd
    return Path(top.stdout.strip()) if top.returncode == 0 and top.stdout.strip() else cwd


def _parse_sets(values: tuple[str, ...]) -> dict[str, str]:
    overrides = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"expected NAME=VALUE, got {item!r}", param_hint="--set")
        overrides[name.strip().replace("-", "_")] = value
    return overrides


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="seek")
@click.option(
    "-C",
    "--path",
    "path",
    type=click.Path(file_okay=False),
    default=None,
    help="Workspace folder (default: the git root above the current folder, else the folder).",
)
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="NAME=VALUE",
    help="Override a setting for this command (repeatable); see `seek config`.",
)
@click.option(
    "--provider",
    type=click.Choice(["local", "ollama", "openai"]),
    default=None,
    help="Embedding provider (default: local, the built-in model).",
)
@click.option("--model", default=None, help="Embedding model name (or a Model2Vec folder).")
@click.option("--url", "base_url", default=None, help="Embedding server address.")
@click.option(
    "--api-key-env",
    default=None,
    metavar="NAME",
    help="Environment variable holding the server's API key (the key is never stored).",
)
@click.option("-v", "--verbose", is_flag=True, help="Log what happens (to stderr).")
@click.pass_context
def cli(
    ctx: click.Context,
    path: str | None,
    sets: tuple[str, ...],
    provider: str | None,
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    verbose: bool,
) -> None:
    """seek: answers questions about a codebase with the code itself."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="seek: %(levelname)s: %(message)s",
    )
    overrides = _parse_sets(sets)
    flags = {"provider": provider, "model": model, "base_url": base_url, "api_key_env": api_key_env}
    overrides.update({name: value for name, value in flags.items() if value is not None})
    ctx.obj = Context(path, overrides)


def main() -> None:
    from seek.cli import (  # noqa: F401 - importing registers the commands
        ask_cmd,
        config_cmd,
        context_cmd,
        index_cmd,
        install_cmd,
        models_cmd,
        search_cmd,
        serve_cmd,
        watch_cmd,
    )

    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("seek: aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except SeekError as exc:
        click.echo(f"seek: error: {exc}", err=True)
        sys.exit(1)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
