"""``seek config``: every effective setting and where its value came from."""

from __future__ import annotations

import json

import click

from seek.cli import Context, cli
from seek.settings import setting_names, user_config_path
from seek.settings.providers import provider_names
from seek.settings.trust import describe, describe_line


@cli.command("config")
@click.option("--json", "as_json", is_flag=True, help="Print the settings as JSON.")
@click.pass_obj
def config_command(obj: Context, as_json: bool) -> None:
    """Show the effective settings and where each value came from.

    A workspace's own .seek.toml (or [tool.seek] in pyproject.toml) may only tighten until
    you trust it with `seek trust`: its limits and counts stay within yours, its ignores add
    to yours, and settings that need trust are ignored; the "workspace config" line says
    whether it is trusted and which of its settings are ignored."""
    workspace = obj.workspace()
    settings = obj.settings(workspace)
    trust = describe(workspace, user_config_path())
    if as_json:
        shown = {
            name: {
                "value": list(v) if isinstance(v := getattr(settings, name), tuple) else v,
                "source": settings.source_of(name),
            }
            for name in setting_names()
        }
        click.echo(json.dumps({**shown, "workspace_config": trust}, indent=2))
        return
    click.echo(f"# workspace {workspace}")
    click.echo(f"# workspace config: {describe_line(trust)}")
    click.echo(f"# embedding providers: {', '.join(provider_names())}")
    width = max(map(len, setting_names()))
    for name in setting_names():
        value = getattr(settings, name)
        shown = ", ".join(value) if isinstance(value, tuple) else value
        shown = '""' if shown == "" else shown
        click.echo(f"{name:<{width}}  {shown!s:<24}  ({settings.source_of(name)})")
