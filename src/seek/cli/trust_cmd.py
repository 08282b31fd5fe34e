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
    TRUSTED,
    WorkspaceConfig,
    config_files,
    read_config,
    read_store,
    revoke,
    store_path,
    trust,
)
from seek.untrusted import printable

CONFIG_NAMES = (".seek.toml", "pyproject.toml")


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
    except SettingsError:
        return CHANGED  # no longer parses: it was edited
    return TRUSTED if found is not None and found.sha256 == sha256 else CHANGED


@cli.command("trust")
@click.argument("path", required=False, type=click.Path())
@click.option("--list", "list_", is_flag=True, help="List the trusted files and their state.")
@click.option("--revoke", is_flag=True, help="Forget the trust given to PATH's settings files.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def trust_command(obj: Context, path: str | None, list_: bool, revoke: bool, as_json: bool) -> None:
    """Trust the exact content of a workspace's .seek.toml or [tool.seek] (PATH: the
    workspace, default the current one, or the file).

    A workspace's own settings file may set only safe settings (chunking, ignores, result
    counts, budgets...) until you trust it: settings that can send code or secrets to an
    address (provider, base_url, api_key_env, team_url, chat_*...), load a model or file, or
    write outside the workspace (home) are ignored with a warning. Review the file, then run
    `seek trust`. Its SHA-256 is recorded beside your config.toml; an edit needs trusting
    again. seek mcp, serve, ui and watch never trust a file on their own."""
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


def _trust(obj: Context, store: Path, path: str | None, as_json: bool) -> None:
    folder, files = _targets(obj, path)
    if len(files) > 1:  # a folder: the settings files it has
        files = config_files(folder)
    found: list[WorkspaceConfig] = [c for f in files if (c := read_config(f)) is not None]
    if not found:
        raise SettingsError(
            f"no .seek.toml or [tool.seek] in pyproject.toml in {printable(str(folder))}: "
            "nothing to trust"
        )
    for config in found:
        trust(store, config)
    if as_json:
        click.echo(json.dumps({"trusted": [
            {"path": c.key(), "sha256": c.sha256, "applies": c.needs_trust()}
            for c in found
        ]}, indent=2))  # fmt: skip
        return
    for config in found:
        held = config.needs_trust()
        what = (
            f"its {', '.join(held)} now apply"
            if held
            else "nothing in it needed trust (every setting it sets is safe)"
        )
        click.echo(
            f"Trusted {printable(config.label)} (sha256 {config.sha256[:12]}): {what}. "
            "An edit needs `seek trust` again."
        )
