"""The coding agents ``seek install`` knows, as data: one row per agent (issue 15).

Each row names the user-level MCP config file, the format and the keys that hold servers,
the shape of seek's entry, the instructions file (None where the agent has no user-level
instructions file), and the folders whose presence means the agent is installed.
``checked`` says which version of the agent's documentation the row follows.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SERVER_NAME = "seek"


@dataclass(frozen=True)
class Agent:
    name: str
    label: str
    config: Callable[[Path], Path]
    """The MCP config file, given the home folder."""
    fmt: str
    """``json`` (strict), ``jsonc`` (comments and trailing commas allowed) or ``toml``."""
    servers: tuple[str, ...]
    """The keys of the object that holds one entry per server."""
    entry: Callable[[str], dict]
    """seek's entry, given the absolute path of the ``seek`` executable."""
    instructions: Callable[[Path], Path] | None
    detect: Callable[[Path], tuple[Path, ...]]
    checked: str


def _stdio(command: str) -> dict:
    return {"type": "stdio", "command": command, "args": ["mcp"]}


def _plain(command: str) -> dict:
    return {"command": command, "args": ["mcp"]}


def _home(*parts: str) -> Callable[[Path], Path]:
    return lambda home: home.joinpath(*parts)


def _homes(*paths: str) -> Callable[[Path], tuple[Path, ...]]:
    return lambda home: tuple(home / p for p in paths)


def xdg_config(home: Path) -> Path:
    """``$XDG_CONFIG_HOME`` when it is set under this home (tests use a temporary home),
    else ``~/.config``."""
    value = os.environ.get("XDG_CONFIG_HOME", "")
    if value and Path(value).is_absolute() and Path(value).is_relative_to(home):
        return Path(value)
    return home / ".config"


def vscode_user_dir(home: Path) -> Path:
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Code" / "User"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", home / "AppData" / "Roaming")) / "Code" / "User"
    return xdg_config(home) / "Code" / "User"


def opencode_config(home: Path) -> Path:
    folder = xdg_config(home) / "opencode"
    jsonc_file = folder / "opencode.jsonc"
    return jsonc_file if jsonc_file.exists() else folder / "opencode.json"


AGENTS: tuple[Agent, ...] = (
    Agent(
        "claude", "Claude Code", _home(".claude.json"), "json", ("mcpServers",), _stdio,
        _home(".claude", "CLAUDE.md"), _homes(".claude", ".claude.json"),
        "code.claude.com/docs/en/mcp (user scope: top-level mcpServers of ~/.claude.json; the "
        "add-json stdio example carries type) + docs/claude-code/memory (user memory), 2026-11-30",
    ),
    Agent(
        "codex", "Codex CLI", _home(".codex", "config.toml"), "toml", ("mcp_servers",), _plain,
        _home(".codex", "AGENTS.md"), _homes(".codex"),
        "openai/codex docs/config.md @6fb1cc7 ([mcp_servers.NAME] command/args/env) + "
        "developers.openai.com/codex/guides/agents-md (global AGENTS.md), 2026-11-30",
    ),
    Agent(
        "cursor", "Cursor", _home(".cursor", "mcp.json"), "json", ("mcpServers",), _plain,
        None, _homes(".cursor"),
        "cursor.com/docs/mcp (global ~/.cursor/mcp.json, mcpServers command/args/env); Cursor "
        "rules docs: User Rules live in Settings, no file, 2026-11-30",
    ),
    Agent(
        "gemini", "Gemini CLI", _home(".gemini", "settings.json"), "json", ("mcpServers",),
        _plain, _home(".gemini", "GEMINI.md"), _homes(".gemini"),
        "google-gemini/gemini-cli docs/tools/mcp-server.md @42391f5 (mcpServers: command, "
        "optional args/env) + docs/cli/gemini-md.md @ae364ac (global GEMINI.md), 2026-11-30",
    ),
    Agent(
        "vscode", "VS Code (Copilot agent mode)", lambda h: vscode_user_dir(h) / "mcp.json",
        "jsonc", ("servers",), _stdio, None, lambda h: (vscode_user_dir(h),),
        "code.visualstudio.com/docs/copilot/reference/mcp-configuration (user mcp.json)",
    ),
    Agent(
        "copilot", "GitHub Copilot CLI", _home(".copilot", "mcp-config.json"), "json",
        ("mcpServers",), lambda c: {"type": "local", **_plain(c), "tools": ["*"]},
        _home(".copilot", "copilot-instructions.md"), _homes(".copilot"),
        "docs.github.com Copilot CLI 'add MCP servers' (mcp-config.json, 2025-2026)",
    ),
    Agent(
        "windsurf", "Windsurf", _home(".codeium", "windsurf", "mcp_config.json"), "json",
        ("mcpServers",), _plain, _home(".codeium", "windsurf", "memories", "global_rules.md"),
        _homes(".codeium/windsurf"),
        "docs.windsurf.com/windsurf/cascade/mcp (Claude Desktop schema) + cascade/memories "
        "(global_rules.md; memories under ~/.codeium/windsurf/memories/), 2026-11-30",
    ),
    Agent(
        "zed", "Zed", lambda h: xdg_config(h) / "zed" / "settings.json", "jsonc",
        ("context_servers",), lambda c: {**_plain(c), "env": {}}, None,
        lambda h: (xdg_config(h) / "zed",),
        "zed.dev/docs/ai/mcp (custom context_servers: command/args, 2025-2026)",
    ),
    Agent(
        "opencode", "OpenCode", opencode_config, "jsonc", ("mcp",),
        lambda c: {"type": "local", "command": [c, "mcp"], "enabled": True},
        lambda h: xdg_config(h) / "opencode" / "AGENTS.md",
        lambda h: (xdg_config(h) / "opencode",),
        "opencode.ai/docs/mcp-servers (v1 config: mcp.NAME, type local)",
    ),
    Agent(
        "kiro", "Kiro", _home(".kiro", "settings", "mcp.json"), "json", ("mcpServers",),
        lambda c: {**_plain(c), "disabled": False}, _home(".kiro", "steering", "seek.md"),
        _homes(".kiro"),
        "kiro.dev/docs/mcp/configuration (user ~/.kiro/settings/mcp.json; global steering)",
    ),
)  # fmt: skip

BY_NAME = {agent.name: agent for agent in AGENTS}


def detected(home: Path) -> list[Agent]:
    """The agents whose folders exist under ``home``."""
    return [a for a in AGENTS if any(p.exists() for p in a.detect(home))]
