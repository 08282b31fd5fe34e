"""``seek install`` / ``seek uninstall`` on a temporary HOME, for every agent (issue 15)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tomlkit
from click.testing import CliRunner

import seek.cli.install_cmd  # noqa: F401 - registers the commands
from seek.cli import cli
from seek.install import AGENTS, BY_NAME, seek_command
from seek.install.edit import END_MARKER, START_MARKER, remove_entry, set_entry
from seek.install.jsonc import parse

NAMES = [a.name for a in AGENTS]


@pytest.fixture
def home(tmp_path, monkeypatch):
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return folder


def run(*args: str, ok: bool = True):
    result = CliRunner().invoke(cli, list(args))
    if ok:
        assert result.exit_code == 0, result.output
    return result


def original_config(agent) -> str:
    """A user's existing config: another server, other settings, comments where allowed."""
    key = agent.servers[0]
    if agent.fmt == "toml":
        return f'model = "o3"\n\n# my servers\n[{key}.other]\ncommand = "other"\n'
    if agent.fmt == "jsonc":
        return (
            "// my settings\n{\n"
            '  "theme": "One Dark", // keep this comment\n'
            f'  "{key}": {{\n'
            "    /* another server */\n"
            '    "other": {"command": "other", "args": []},\n'
            "  },\n}\n"
        )
    return f'{{\n  "theme": "dark",\n  "{key}": {{\n    "other": {{"command": "other"}}\n  }}\n}}\n'


def read_entry(agent, path: Path):
    text = path.read_text()
    if agent.fmt == "toml":
        data = tomlkit.parse(text).unwrap()
    elif agent.fmt == "jsonc":
        data = parse(text, comments=True).value
    else:
        data = json.loads(text)
    return data[agent.servers[0]]


def assert_points_at_seek(agent, entry):
    command = seek_command()
    assert Path(command).is_absolute()
    if agent.name == "opencode":
        assert entry["command"] == [command, "mcp"] and entry["type"] == "local"
    else:
        assert entry["command"] == command and entry["args"] == ["mcp"]


@pytest.mark.parametrize("name", NAMES)
def test_install_twice_then_uninstall_restores_the_bytes(home, name):
    agent = BY_NAME[name]
    config = agent.config(home)
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(original_config(agent))
    rules = agent.instructions(home) if agent.instructions else None
    if rules is not None:
        rules.parent.mkdir(parents=True, exist_ok=True)
        rules.write_text("# My rules\n\nBe terse.\n")
    before = {p: p.read_bytes() for p in (config, rules) if p is not None}

    run("install", "--agent", name, "-y")
    servers = read_entry(agent, config)
    assert_points_at_seek(agent, servers["seek"])
    assert servers["other"]["command"] == "other"  # the user's server is kept
    if agent.fmt == "jsonc":
        assert "// keep this comment" in config.read_text()
    if agent.fmt == "toml":
        assert "# my servers" in config.read_text()
    if rules is not None:
        text = rules.read_text()
        assert text.startswith("# My rules\n\nBe terse.\n")
        assert START_MARKER in text and END_MARKER in text and "seek search" in text
    assert Path(str(config) + ".seek-backup").read_bytes() == before[config]

    after_first = {p: p.read_bytes() for p in before}
    again = run("install", "--agent", name, "-y")
    assert "unchanged" in again.output
    assert {p: p.read_bytes() for p in before} == after_first

    run("uninstall", "--agent", name, "-y")
    assert {p: p.read_bytes() for p in before} == before


@pytest.mark.parametrize("name", NAMES)
def test_install_creates_files_and_uninstall_deletes_them(home, name):
    agent = BY_NAME[name]
    run("install", "--agent", name, "-y")
    config = agent.config(home)
    assert_points_at_seek(agent, read_entry(agent, config)["seek"])
    if agent.instructions:
        assert START_MARKER in agent.instructions(home).read_text()
    run("uninstall", "--agent", name, "-y")
    assert not config.exists()
    if agent.instructions:
        assert not agent.instructions(home).exists()


@pytest.mark.parametrize("name", NAMES)
def test_malformed_file_is_left_alone_with_a_message(home, name):
    agent = BY_NAME[name]
    config = agent.config(home)
    config.parent.mkdir(parents=True, exist_ok=True)
    broken = '[mcp_servers\ncommand = "x"\n' if agent.fmt == "toml" else '{"mcpServers": {'
    config.write_text(broken)
    result = run("install", "--agent", name, "--type", "mcp", "-y", ok=False)
    assert result.exit_code == 1
    assert f"{config}: left unchanged:" in result.output
    assert config.read_text() == broken
    assert not Path(str(config) + ".seek-backup").exists()


@pytest.mark.parametrize("name", NAMES)
def test_dry_run_prints_the_diff_and_writes_nothing(home, name):
    agent = BY_NAME[name]
    result = run("install", "--agent", name, "--dry-run")
    assert f"+++ {agent.config(home)}" in result.output
    assert '"seek"' in result.output or "[mcp_servers.seek]" in result.output
    assert list(home.rglob("*")) == []


def test_type_instructions_only_and_detection(home):
    (home / ".gemini").mkdir()
    (home / ".codex").mkdir()
    run("install", "--type", "instructions", "-y")  # the agents found: codex and gemini
    assert START_MARKER in (home / ".gemini" / "GEMINI.md").read_text()
    assert START_MARKER in (home / ".codex" / "AGENTS.md").read_text()
    assert not (home / ".gemini" / "settings.json").exists()
    assert not (home / ".claude.json").exists()
    asked = CliRunner().invoke(cli, ["install", "--type", "mcp"], input="gemini\n")
    assert asked.exit_code == 0, asked.output
    assert "Coding agents found: codex (Codex CLI), gemini (Gemini CLI)" in asked.output
    assert (home / ".gemini" / "settings.json").exists()
    assert not (home / ".codex" / "config.toml").exists()


def test_uninstall_where_nothing_was_installed_changes_nothing(home):
    (home / ".gemini").mkdir()
    (home / ".gemini" / "GEMINI.md").write_text("")
    result = run("uninstall", "--agent", "claude", "--agent", "gemini", "-y")
    assert result.output.count("unchanged") == 4
    assert sorted(p.name for p in home.rglob("*")) == [".gemini", "GEMINI.md"]


def test_no_agent_found_is_a_usage_error(home):
    result = run("install", "-y", ok=False)
    assert result.exit_code == 2 and "no coding agent found" in result.output


def test_a_changed_entry_is_replaced_in_place():
    old = (
        '{\n  "mcpServers": {\n    "seek": {"command": "/old/seek", "args": ["mcp"]},\n'
        '    "b": 1\n  }\n}\n'
    )
    new = set_entry(old, "json", ("mcpServers",), "seek", {"command": "/new/seek"})
    assert json.loads(new)["mcpServers"] == {"seek": {"command": "/new/seek"}, "b": 1}
    assert new.endswith('    "b": 1\n  }\n}\n')
    assert remove_entry(new, "json", ("mcpServers",), "seek") == (
        '{\n  "mcpServers": {\n    "b": 1\n  }\n}\n'
    )


def test_the_real_entry_point_installs_for_claude(tmp_path):
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("XDG_CONFIG_HOME", None)
    args = [sys.executable, "-m", "seek", "install", "--agent", "claude", "-y"]
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    entry = json.loads((tmp_path / ".claude.json").read_text())["mcpServers"]["seek"]
    assert entry == {"type": "stdio", "command": seek_command(), "args": ["mcp"]}


def test_a_symlinked_config_is_written_through_the_link(home, tmp_path):
    """Issue 27 finding 6a: ``~/.claude.json`` kept in a dotfiles repository stays a link."""
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "claude.json"
    original = original_config(BY_NAME["claude"])
    target.write_text(original)
    target.chmod(0o600)
    link = home / ".claude.json"
    link.symlink_to(target)

    run("install", "--agent", "claude", "--type", "mcp", "-y")
    assert link.is_symlink() and link.readlink() == target
    servers = json.loads(target.read_text())["mcpServers"]
    assert_points_at_seek(BY_NAME["claude"], servers["seek"])
    assert servers["other"] == {"command": "other"}
    assert target.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in dotfiles.iterdir()] == ["claude.json"]  # no temporary file left
    assert Path(str(link) + ".seek-backup").read_text() == original

    run("uninstall", "--agent", "claude", "--type", "mcp", "-y")
    assert link.is_symlink() and target.read_text() == original


def test_a_link_to_a_file_seek_created_is_emptied_not_deleted(home, tmp_path):
    target = tmp_path / "dotfiles" / "mcp.json"
    target.parent.mkdir()
    link = home / ".cursor" / "mcp.json"
    link.parent.mkdir()
    link.symlink_to(target)  # dangling: the dotfiles repository has no such file yet
    run("install", "--agent", "cursor", "-y")
    assert link.is_symlink() and "seek" in json.loads(target.read_text())["mcpServers"]
    run("uninstall", "--agent", "cursor", "-y")
    assert link.is_symlink() and json.loads(target.read_text()) == {}


def test_a_hostile_file_is_one_line_for_its_agent_and_the_others_are_installed(home):
    """Issue 27 finding 6b: an invalid escape or 5,000-deep nesting in one agent's file."""
    bad = {
        "claude": '{"a":"\\q"}',
        "gemini": "[" * 5000 + "]" * 5000,
        "cursor": '{"mcpServers":' * 5000 + "{}" + "}" * 5000,
        "zed": '{"context_servers": {"\\x": 1}}',
        "codex": "a = " + "[" * 5000 + "]" * 5000 + "\n",
    }
    for name, text in bad.items():
        path = BY_NAME[name].config(home)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    args = [f"--agent={name}" for name in (*bad, "windsurf")]
    result = run("install", *args, "--type", "mcp", "-y", ok=False)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    lines = result.output.splitlines()
    for name, text in bad.items():
        path = BY_NAME[name].config(home)
        said = [line for line in lines if f"{path}: left unchanged:" in line]
        assert len(said) == 1 and len(said[0]) < 300, result.output
        assert path.read_text() == text
    assert_points_at_seek(
        BY_NAME["windsurf"],
        read_entry(BY_NAME["windsurf"], BY_NAME["windsurf"].config(home))["seek"],
    )


def test_an_agents_write_between_plan_and_apply_is_kept(home):
    """Issue 27 finding 6c: the agent added a server after seek read the file."""
    from seek.install import apply, plan

    agent = BY_NAME["claude"]
    config = agent.config(home)
    config.write_text('{"mcpServers": {}}\n')
    changes = plan(home, [agent], command="/opt/seek", kinds=("mcp",))
    config.write_text('{"mcpServers": {"mine": {"command": "mine"}}}\n')
    assert apply(changes) == []
    servers = json.loads(config.read_text())["mcpServers"]
    assert servers["mine"] == {"command": "mine"}
    assert servers["seek"]["command"] == "/opt/seek"


def test_a_file_changed_while_seek_writes_it_is_left_alone(home, monkeypatch):
    import seek.install as install

    agent = BY_NAME["claude"]
    config = agent.config(home)
    config.write_text("{}\n")
    changes = install.plan(home, [agent], command="/opt/seek", kinds=("mcp",))
    real_mkstemp = install.tempfile.mkstemp

    def agent_writes_meanwhile(**kwargs):
        made = real_mkstemp(**kwargs)
        config.write_text('{"agent": "wrote this"}\n')
        return made

    monkeypatch.setattr(install.tempfile, "mkstemp", agent_writes_meanwhile)
    failed = install.apply(changes)
    assert failed == changes and "changed while seek was writing it" in failed[0].error
    assert config.read_text() == '{"agent": "wrote this"}\n'
    assert sorted(p.name for p in home.iterdir()) == [".claude.json", ".claude.json.seek-backup"]
