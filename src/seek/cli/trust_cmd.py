"""``seek trust``: trust a workspace's own settings file, list and revoke trust (seek.md §3,
:mod:`seek.settings.trust`)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from seek.cli import Context, cli
from seek.errors import SettingsError
from seek.settings import user_config_path
from seek.settings.trust import (
    CHANGED,
    CONFIG_NAMES,
    TRUSTED,
    WorkspaceConfig,
    read_config,
    read_store,
    revoke,
    store_path,
    trust,
    workspace_config,
)
from seek.untrusted import printable

NOT_IN_FORCE = "not in force"
"""``--list``: the file is there, but the other settings file of its folder is the one seek
reads (issue 43 finding 3)."""


def _targets(obj: Context, path: str | None) -> tuple[Path, list[Path]]:
    """The workspace folder and the settings files ``path`` names: the file itself, else
    the folder's ``.seek.toml`` and ``pyproject.toml`` (which may not exist: a revoke after
    the workspace was deleted)."""
    chosen = Path(path) if path else obj.workspace()
    if chosen.is_file() or (chosen.name in CONFIG_NAMES and not chosen.is_dir()):
        if chosen.name not in CONFIG_NAMES:
            raise SettingsError(
                f"{printable(str(chosen))} is not a .seek.toml or pyproject.toml: seek reads "
                "no other settings file"
            )
        folder = chosen.absolute().parent.resolve()
        return folder, [folder / chosen.name]
    folder = chosen.resolve()
    return folder, [folder / name for name in CONFIG_NAMES]


def _state(entry_path: str, sha256: str) -> str:
    path = Path(entry_path)
    if not path.is_file():
        return "missing"
    try:
        found = read_config(path)
        in_force = workspace_config(path.parent)
    except SettingsError:
        return CHANGED  # no longer parses: it was edited
    if found is None or found.sha256 != sha256:
        return CHANGED
    return TRUSTED if in_force is not None and in_force.key() == found.key() else NOT_IN_FORCE


@cli.command("trust")
@click.argument("path", required=False, type=click.Path())
@click.option("--list", "list_", is_flag=True, help="List the trusted files and their state.")
@click.option("--revoke", is_flag=True, help="Forget the trust given to PATH's settings files.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def trust_command(obj: Context, path: str | None, list_: bool, revoke: bool, as_json: bool) -> None:
    """Trust the exact content of a workspace's .seek.toml or [tool.seek] (PATH: the
    workspace, default the current one, or the file), whichever seek reads there.

    Until you trust it, a workspace's own settings file may only tighten: its chunking,
    ignores, result counts and budgets stay within your own values (its ignored_globs add to
    yours), and settings that can send code or secrets to an address (provider, base_url,
    api_key_env, team_url, chat_*...), load a model or file, or write outside the workspace
    (home) are ignored with a warning. Review the file, then run `seek trust`. The file's
    path and SHA-256 are recorded beside your config.toml; an edit, or a switch to the
    folder's other settings file, needs trusting again. seek mcp, serve, ui and watch never
    trust a file on their own."""
    if list_ and revoke:
        raise click.UsageError("--list and --revoke cannot be used together")
    store = store_path(user_config_path())
    if list_:
        _list(store, as_json)
    elif revoke:
        _revoke(obj, store, path, as_json)
    else:
        _trust(obj, store, path, as_json)


def _list(store: Path, as_json: bool) -> None:
    entries = sorted(read_store(store, strict=True).values(), key=lambda e: e.path)
    rows = [
        {"path": e.path, "sha256": e.sha256, "trusted_at": e.trusted_at,
         "state": _state(e.path, e.sha256)}
        for e in entries
    ]  # fmt: skip
    if as_json:
        click.echo(json.dumps({"store": str(store), "trusted": rows}, indent=2))
        return
    if not rows:
        click.echo(f"No trusted files ({store}).")
        return
    for row in rows:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["trusted_at"]))
        click.echo(f"{row['state']:<9} {row['sha256'][:12]}  {when}  {printable(row['path'])}")


def _revoke(obj: Context, store: Path, path: str | None, as_json: bool) -> None:
    _, files = _targets(obj, path)
    gone = revoke(store, files)
    if as_json:
        click.echo(json.dumps({"revoked": gone}, indent=2))
        return
    for name in gone:
        click.echo(f"Revoked trust in {printable(name)}.")
    if not gone:
        shown = " or ".join(printable(str(f)) for f in files)
        click.echo(f"Nothing to revoke: {shown} was not trusted.")


def _in_force(folder: Path, files: list[Path]) -> WorkspaceConfig:
    """The settings file seek reads in ``folder``, the only one ``seek trust`` records: a
    file it does not read (a ``pyproject.toml`` that ``.seek.toml`` shadows) would otherwise
    apply unreviewed the day the other is deleted (issue 43 finding 3)."""
    config = workspace_config(folder)
    if config is None:
        raise SettingsError(
            f"no .seek.toml or [tool.seek] in pyproject.toml in {printable(str(folder))}: "
            "nothing to trust"
        )
    if len(files) == 1 and config.key() != str(files[0]):  # a file was named
        if read_config(files[0]) is None:
            raise SettingsError(f"no [tool.seek] in {printable(str(files[0]))}: nothing to trust")
        raise SettingsError(
            f"{printable(str(files[0]))} is not in force: seek reads "
            f"{printable(config.label)} in that folder; review and trust that one"
        )
    return config


def _trust(obj: Context, store: Path, path: str | None, as_json: bool) -> None:
    folder, files = _targets(obj, path)
    config = _in_force(folder, files)
    trust(store, config)
    held = config.needs_trust()
    if as_json:
        click.echo(json.dumps({"trusted": [
            {"path": config.key(), "sha256": config.sha256, "applies": held}
        ]}, indent=2))  # fmt: skip
        return
    what = (
        f"its {', '.join(held)} now apply"
        if held
        else "nothing in it needed trust (every setting it sets is safe)"
    )
    click.echo(
        f"Trusted {printable(config.label)} (sha256 {config.sha256[:12]}): {what}; its limits "
        "and counts now apply as written. An edit needs `seek trust` again."
    )
