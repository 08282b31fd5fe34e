"""``seek mcp``: the MCP server on stdio for coding agents."""

from __future__ import annotations

import click

from seek.cli import Context, cli


@cli.command("mcp")
@click.pass_obj
def mcp_command(obj: Context) -> None:
    """Serve seek's tools over MCP on stdin/stdout (for Claude Code, Codex, Cursor...)."""
    from seek.mcp import run_stdio

    run_stdio(obj.workspace(), obj.overrides)
