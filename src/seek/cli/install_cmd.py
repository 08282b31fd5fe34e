"""``seek install`` / ``seek uninstall``: configure seek in the coding agents on this machine
(see :mod:`seek.install`)."""

from __future__ import annotations

from pathlib import Path

import click

from seek.cli import cli

TYPES = {"mcp": ("mcp",), "instructions": ("instructions",), "all": ("mcp", "instructions")}


def _options(command):  # a click decorator
    from seek.install import AGENTS

    names = [a.name for a in AGENTS]
    command = click.option("-y", "--yes", is_flag=True, help="Do not ask: every agent found.")(
        command
    )
    command = click.option("--dry-run", is_flag=True, help="Print the diff; write nothing.")(
        command
    )
    command = click.option(
        "--type",
        "kind",
        type=click.Choice(list(TYPES)),
        default="all",
        show_default=True,
        help="The MCP server entry, the instructions block, or both.",
    )(command)
    return click.option(
        "--agent",
        "agent_names",
        multiple=True,
        type=click.Choice(names),
        help="An agent to configure (repeatable; default: the agents found on this machine).",
    )(command)


def _choose(agent_names: tuple[str, ...], yes: bool, verb: str):
    from seek.install import AGENTS, BY_NAME, detected

    if agent_names:
        return [BY_NAME[n] for n in dict.fromkeys(agent_names)]
    found = detected(Path.home())
    if not found:
        known = ", ".join(a.name for a in AGENTS)
        raise click.UsageError(
            f"no coding agent found in {Path.home()}; name one with --agent ({known})"
        )
    if yes:
        return found
    click.echo("Coding agents found: " + ", ".join(f"{a.name} ({a.label})" for a in found))
    answer = click.prompt(
        f"Agents to {verb} (comma-separated)", default=",".join(a.name for a in found)
    )
    chosen = [n.strip() for n in answer.split(",") if n.strip()]
    unknown = [n for n in chosen if n not in BY_NAME]
    if unknown:
        raise click.UsageError(f"unknown agent(s): {', '.join(unknown)}")
    return [BY_NAME[n] for n in dict.fromkeys(chosen)]


def _run(agent_names: tuple[str, ...], kind: str, dry_run: bool, yes: bool, remove: bool) -> None:
    from seek.install import apply, plan, seek_command

    agents = _choose(agent_names, yes, "remove seek from" if remove else "configure")
    command = "" if remove else seek_command()
    changes = plan(Path.home(), agents, command=command, kinds=TYPES[kind], remove=remove)
    if not dry_run:
        apply(changes)  # a file that cannot be written gets its error; the others are written
    failed = False
    for change in changes:
        where = f"{change.agent.label}: {change.path}"
        if change.error:
            failed = True
            click.echo(f"seek: {where}: {change.error}", err=True)
        elif not change.changed:
            click.echo(f"{where}: unchanged ({change.kind})")
        elif dry_run:
            click.echo(change.diff(), nl=False)
        else:
            action = "removed" if remove else "added"
            click.echo(f"{where}: {change.kind} {action}")
    if failed:
        raise click.exceptions.Exit(1)


@cli.command("install")
@_options
def install_command(agent_names: tuple[str, ...], kind: str, dry_run: bool, yes: bool) -> None:
    """Add seek's MCP server and instructions to your coding agents' user config.

    The MCP entry starts this `seek` (its absolute path) with `mcp`; the instructions tell
    the agent when to use seek instead of grep. Files are edited in place (other settings
    and comments kept) and backed up to FILE.seek-backup before seek first changes them."""
    _run(agent_names, kind, dry_run, yes, remove=False)


@cli.command("uninstall")
@_options
def uninstall_command(agent_names: tuple[str, ...], kind: str, dry_run: bool, yes: bool) -> None:
    """Remove what `seek install` added (and files it created)."""
    _run(agent_names, kind, dry_run, yes, remove=True)
