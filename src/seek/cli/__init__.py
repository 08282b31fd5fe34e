"""The ``seek`` command line. Commands hold no logic: they parse, call the library, and turn
a :class:`SeekError` into one line on stderr with exit code 1 (usage errors exit 2; a
cancelled index run exits 130)."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import click

from seek._version import __version__
from seek.errors import SeekError
from seek.redact import redact, redact_logs
from seek.settings import Settings, load_settings
from seek.settings.providers import provider_names


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


def git_root(folder: Path) -> Path | None:
    """The top of the git work tree holding ``folder``, or None outside one (or without a
    ``git`` on PATH outside ``folder``: :mod:`seek.settings.programs`, issue 43)."""
    from seek.settings.programs import find_program

    git = find_program("git", (folder.absolute(),))
    if git is None:
        return None
    try:
        top = subprocess.run(
            [git, "rev-parse", "--show-toplevel"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return Path(top.stdout.strip()) if top.returncode == 0 and top.stdout.strip() else None


def default_workspace(cwd: Path) -> Path:
    """The git root above ``cwd``, else ``cwd`` itself."""
    return git_root(cwd) or cwd


def _parse_sets(values: tuple[str, ...]) -> dict[str, str]:
    overrides = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"expected NAME=VALUE, got {item!r}", param_hint="--set")
        overrides[name.strip().replace("-", "_")] = value
    return overrides


def _global_options() -> list[click.Option]:
    """The options every command takes (before or after the command's name)."""
    return [
        click.Option(
            ["-C", "--path", "path"],
            type=click.Path(file_okay=False),
            default=None,
            help="Workspace folder (default: the git root above the current folder, else the "
            "folder).",
        ),
        click.Option(
            ["--set", "sets"],
            multiple=True,
            metavar="NAME=VALUE",
            help="Override a setting for this command (repeatable); see `seek config`.",
        ),
        click.Option(
            ["--provider"],
            type=click.Choice(provider_names()),
            default=None,
            help="Embedding provider (default: local, the built-in model).",
        ),
        click.Option(
            ["--model"], default=None, help="Embedding model name (or a Model2Vec folder)."
        ),
        click.Option(["--url", "base_url"], default=None, help="Embedding server address."),
        click.Option(
            ["--api-key-env"],
            default=None,
            metavar="NAME",
            help="Environment variable holding the server's API key (the key is never stored).",
        ),
        click.Option(["-v", "--verbose"], is_flag=True, help="Log what happens (to stderr)."),
    ]


def _apply_globals(
    ctx: click.Context, path: str | None, sets: tuple[str, ...], provider: str | None,
    model: str | None, base_url: str | None, api_key_env: str | None, verbose: bool,
) -> None:  # fmt: skip
    """Fold global options into the shared :class:`Context` (a later value wins)."""
    obj = ctx.find_object(Context)
    if obj is None:  # only ``seek --help`` style paths get here before the group runs
        return
    if path is not None:
        obj.path = path
    obj.overrides.update(_parse_sets(sets))
    flags = {"provider": provider, "model": model, "base_url": base_url, "api_key_env": api_key_env}
    obj.overrides.update({name: value for name, value in flags.items() if value is not None})
    if verbose:
        logging.getLogger().setLevel(logging.INFO)


class _AfterCommand(click.Option):
    """A global option repeated on a command: it updates the shared context, not the
    command's arguments (so ``seek index --provider ollama`` works like
    ``seek --provider ollama index``)."""

    def __init__(self, option: click.Option) -> None:
        super().__init__(
            [*option.opts, *option.secondary_opts, f"global_{option.name}"],
            type=option.type, multiple=option.multiple, is_flag=option.is_flag,
            default=None if not option.is_flag else False, metavar=option.metavar,
            help=option.help, expose_value=False, callback=self._store,
        )  # fmt: skip
        self.global_name = option.name

    def _store(self, ctx: click.Context, param: click.Parameter, value: object) -> None:
        if value in (None, False, ()):
            return
        values = {"path": None, "sets": (), "provider": None, "model": None, "base_url": None,
                  "api_key_env": None, "verbose": False}  # fmt: skip
        values[self.global_name] = value
        _apply_globals(ctx, **values)


class SeekGroup(click.Group):
    """Adds the global options to every command it holds (and to the commands of its
    sub-groups), except where the command has an option of the same name (``seek ask
    --model`` is the chat model)."""

    group_class = type  # sub-groups are SeekGroups too

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        _add_globals(cmd)
        super().add_command(cmd, name)


def _add_globals(cmd: click.Command) -> None:
    taken = {opt for param in cmd.params for opt in getattr(param, "opts", [])}
    for option in _global_options():
        if not taken & set(option.opts):
            cmd.params.append(_AfterCommand(option))
    if isinstance(cmd, click.Group):
        for sub in cmd.commands.values():
            _add_globals(sub)


@click.group(cls=SeekGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="seek")
@click.pass_context
def cli(ctx: click.Context, **options: object) -> None:
    """seek: answers questions about a codebase with the code itself.

    The global options below may also follow the command (`seek index --provider ollama`)."""
    logging.basicConfig(
        level=logging.WARNING,
        format="seek: %(levelname)s: %(message)s",
    )
    redact_logs()  # no log line shows a credential (issue 27, finding 10)
    ctx.obj = Context(None, {})
    _apply_globals(ctx, **options)  # type: ignore[arg-type]


cli.params.extend(_global_options())


COMMAND_MODULES = {
    "ask": "ask_cmd", "completion": "completion_cmd", "config": "config_cmd",
    "context": "context_cmd", "corpus": "corpus_cmd", "index": "index_cmd", "status": "index_cmd",
    "install": "install_cmd", "uninstall": "install_cmd", "models": "models_cmd",
    "search": "search_cmd", "related": "search_cmd", "mcp": "serve_cmd", "serve": "serve_cmd",
    "trust": "trust_cmd", "ui": "serve_cmd", "watch": "watch_cmd",
    "def": "graph_cmd", "refs": "graph_cmd", "callers": "graph_cmd", "callees": "graph_cmd",
    "outline": "graph_cmd", "map": "graph_cmd", "changed": "graph_cmd",
    "history": "graph_cmd", "impact": "graph_cmd", "tests": "tests_cmd",
}  # fmt: skip
"""The module that registers each command: a command imports only its own (`seek search`
does not load the servers, the installer or the model hub client)."""
_VALUE_OPTIONS = frozenset({"-C", "--path", "--set", "--provider", "--model", "--url",
                            "--api-key-env"})  # fmt: skip


def command_name(args: list[str]) -> str | None:
    """The command named on a command line (None: none, e.g. ``seek --help``)."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return args[i + 1] if i + 1 < len(args) else None
        if arg in _VALUE_OPTIONS:
            i += 2
        elif arg.startswith("-"):
            i += 1
        else:
            return arg
    return None


def load_commands(args: list[str]) -> None:
    """Register the command ``args`` name, or every command (help, completion, a typo)."""
    import importlib
    import os

    module = COMMAND_MODULES.get(command_name(args) or "")
    if module is None or os.environ.get("_SEEK_COMPLETE"):
        names = sorted(set(COMMAND_MODULES.values()))
    else:
        names = [module]
    for name in names:
        importlib.import_module(f"seek.cli.{name}")


def main() -> None:
    from seek.store.threads import one_blas_thread

    one_blas_thread()
    load_commands(sys.argv[1:])
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("seek: aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except SeekError as exc:
        click.echo(f"seek: error: {redact(str(exc))}", err=True)
        sys.exit(1)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
