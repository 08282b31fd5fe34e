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


def test_uninstall_gives_back_the_text_around_the_block_exactly(home):
    """The user wrote around seek's block after the install (above it, and a section below
    it): uninstall takes out the block and nothing else, every blank line of theirs kept
    (issue 27). Mutation this pins (edit.py ``remove_block``): ``if not after and
    before.endswith(...)`` -> ``if before.endswith(...)`` (a blank line above eaten)."""
    rules = BY_NAME["claude"].instructions(home)
    rules.parent.mkdir(parents=True)
    rules.write_text("# My rules\n\nBe terse.\n")
    run("install", "--agent", "claude", "--type", "instructions", "-y")
    text = rules.read_text()
    start, end = text.index(START_MARKER), text.index(END_MARKER) + len(END_MARKER) + 1
    above = "Intro line.\n\n" + text[:start] + "\n"
    below = "\n\n## Mine\n\nKeep this.\n\n"
    rules.write_text(above + text[start:end] + below)
    run("install", "--agent", "claude", "--type", "instructions", "-y")  # in place, unchanged
    assert rules.read_text() == above + text[start:end] + below
    run("uninstall", "--agent", "claude", "--type", "instructions", "-y")
    assert rules.read_text() == above + below


@pytest.mark.parametrize(
    ("before", "after"),
    [("", "\nafter\n"), ("# R\n\n", "# S\n"), ("# R\n\n\n", "\n\n# S\n"), ("x\n", "")],
)
def test_remove_block_keeps_what_surrounds_it(before, after):
    from seek.install.edit import remove_block, set_block

    block = set_block("", "Use seek.")
    assert remove_block(before + block + after) == before + after
    # a second install replaces the block in place, whatever surrounds it
    replaced = set_block(before + block + after, "Use seek often.")
    assert replaced == before + set_block("", "Use seek often.") + after


def test_with_duplicate_keys_install_edits_the_one_parsers_read(home):
    """JSON parsers keep the last of duplicate keys, so that is the one install must edit:
    editing the first would write an entry no agent ever reads (issue 27). Mutation this
    pins (jsonc.py ``Node.member``): ``found[-1]`` -> ``found[0]``."""
    config = BY_NAME["claude"].config(home)
    original = (
        '{\n  "mcpServers": {"stale": {"command": "gone"}},\n  "theme": "dark",\n'
        '  "mcpServers": {\n    "other": {"command": "other"}\n  }\n}\n'
    )
    config.write_text(original)
    run("install", "--agent", "claude", "--type", "mcp", "-y")
    read = json.loads(config.read_text())["mcpServers"]  # what an agent reads: the last
    assert set(read) == {"other", "seek"}
    assert_points_at_seek(BY_NAME["claude"], read["seek"])
    assert config.read_text().startswith('{\n  "mcpServers": {"stale": {"command": "gone"}},\n')
    run("uninstall", "--agent", "claude", "--type", "mcp", "-y")
    assert config.read_text() == original

    servers = '{"seek": {"command": "/old/seek"}, "b": 1, "seek": {"command": "/older"}}'
    text = '{"mcpServers": ' + servers + "}"
    new = set_entry(text, "json", ("mcpServers",), "seek", {"command": "/new/seek"})
    assert json.loads(new)["mcpServers"]["seek"] == {"command": "/new/seek"}
    assert new.startswith('{"mcpServers": {"seek": {"command": "/old/seek"}, "b": 1, "seek": ')
    assert remove_entry(new, "json", ("mcpServers",), "seek") == (
        '{"mcpServers": {"seek": {"command": "/old/seek"}, "b": 1}}'
    )


SEEK_ENTRY = {"command": "/bin/seek", "args": ["mcp"]}


@pytest.mark.parametrize(
    ("before", "added"),
    [("", ""), ('model = "o3"', "\n\n"), ('model = "o3"\n', "\n"),
     ('model = "o3"\n\n[profile]\nx = 1\n', "\n")],
)  # fmt: skip
def test_a_toml_entry_is_appended_as_its_own_table_after_one_blank_line(before, added):
    """Codex's TOML: seek's entry goes after the user's text as ``[mcp_servers.seek]``, one
    blank line between (none in an empty file), and a changed entry is replaced in place
    (mutation testing of ``_toml_set``: the separator's cases, ``==`` -> ``!=``)."""
    table = '[mcp_servers.seek]\ncommand = "/bin/seek"\nargs = ["mcp"]\n'
    installed = set_entry(before, "toml", ("mcp_servers",), "seek", SEEK_ENTRY)
    assert installed == before + added + table
    assert set_entry(installed, "toml", ("mcp_servers",), "seek", SEEK_ENTRY) is installed
    new_path = {**SEEK_ENTRY, "command": "/new/seek"}
    moved = set_entry(installed, "toml", ("mcp_servers",), "seek", new_path)
    assert moved == installed.replace('"/bin/seek"', '"/new/seek"')


def test_a_toml_entry_written_another_way_is_removed_and_the_rest_kept():
    """An entry the user (or another tool) wrote inline is removed structurally, and a
    table left empty goes with it; a table after seek's own keeps its bytes (mutation
    testing of ``_toml_remove``: its fallback and the empty-table clean-up were unseen)."""
    path = ("mcp_servers",)
    inline = '[mcp_servers]\nother = {command = "o"}\nseek = {command = "/x", args = ["mcp"]}\n'
    assert remove_entry(inline, "toml", path, "seek") == '[mcp_servers]\nother = {command = "o"}\n'
    alone = 'model = "o3"\n[mcp_servers]\nseek = {command = "/x", args = ["mcp"]}\n'
    assert tomlkit.parse(remove_entry(alone, "toml", path, "seek")).unwrap() == {"model": "o3"}
    nested = 'model = "o3"\n\n[a.b.seek]\ncommand = "/x"\n'
    assert remove_entry(nested, "toml", ("a", "b"), "seek") == 'model = "o3"\n'
    deep = '[a]\nkeep = 1\n[a.b]\nseek = {command = "/x"}\n'
    assert tomlkit.parse(remove_entry(deep, "toml", ("a", "b"), "seek")).unwrap() == {
        "a": {"keep": 1}}  # fmt: skip
    followed = '[mcp_servers.seek]\ncommand = "/x"\n  [other]\n  x = 1\n'
    assert remove_entry(followed, "toml", path, "seek") == "  [other]\n  x = 1\n"


@pytest.mark.parametrize("value", ["1", '"seek"', "[1, 2]"])
def test_a_toml_file_whose_servers_key_is_not_a_table_is_refused_not_crashed(value):
    """``mcp_servers = 1``: install says the file has another shape (and the caller leaves
    it alone); uninstall finds nothing of seek's. Never a traceback."""
    from seek.install.edit import EditError

    text = f"mcp_servers = {value}\n"
    with pytest.raises(EditError):
        set_entry(text, "toml", ("mcp_servers",), "seek", SEEK_ENTRY)
    assert remove_entry(text, "toml", ("mcp_servers",), "seek") == text
    with pytest.raises(EditError):  # a deeper path through the same value
        set_entry(text, "toml", ("mcp_servers", "local"), "seek", SEEK_ENTRY)


def test_a_malformed_json_file_is_reported_with_its_line_and_column():
    """The message a user gets for a broken agent config names where to look (mutation
    testing of ``_Parser.fail``: the line and column were never checked)."""
    from seek.install.jsonc import JsonSyntaxError

    cases = [('{\n  "a": 1,\n  "b" 2\n}', "line 3 column 7: expected ':'"),
             ('{"a": [1, 2,]}', "line 1 column 13: trailing comma"),
             ("{\n\n   x", "line 3 column 4: expected a quoted key or '}'"),
             ("\n{ x", "line 2 column 3: expected a quoted key or '}'")]  # fmt: skip
    for text, where in cases:
        with pytest.raises(JsonSyntaxError) as caught:
            parse(text)
        assert str(caught.value) == where


def test_markers_quoted_in_the_users_text_do_not_move_the_block():
    """seek's end marker quoted above or below the block (notes about seek) is not the
    block's end, a block without its end marker is refused with what to do, and text
    without a final newline gets a blank line before the block (mutation testing of
    ``_block_span`` and ``set_block``: the end looked for from the file's start or from its
    end, the message, the separator)."""
    from seek.install.edit import EditError, remove_block, set_block

    block = set_block("", "Use seek.")
    above, below = "Quote: <!-- seek:end -->\n\n", "\nAfter: <!-- seek:end -->\n"
    assert remove_block(above + block + below) == above + below
    with pytest.raises(EditError) as caught:
        remove_block("x\n<!-- seek:start -->\nbody\n")
    assert str(caught.value) == f"{START_MARKER} without {END_MARKER}: fix or remove the marker"
    assert set_block("A", "Use seek.") == "A\n\n" + block


def test_json_removal_where_the_path_is_missing_or_nested():
    """Uninstall from a file without seek's servers object (or with another type there)
    changes nothing, and a nested servers object loses only seek's member (mutation testing
    of ``remove_member``: ``or`` -> ``and`` crashed, ``chain[-1]`` -> ``chain[+1]``)."""
    for text in ('{"theme": "dark"}', '{"mcpServers": []}'):
        assert remove_entry(text, "json", ("mcpServers",), "seek") == text
    nested = '{"a": {"b": {"seek": 1, "x": 2}}}'
    assert remove_entry(nested, "json", ("a", "b"), "seek") == '{"a": {"b": {"x": 2}}}'


def test_a_toml_table_the_user_added_after_seeks_keeps_its_blank_line():
    """Uninstall cuts seek's table out of the middle; the blank line above the user's table
    stays (mutation testing of ``_toml_remove``: ``not after and`` -> ``or``)."""
    installed = set_entry('model = "o3"\n', "toml", ("mcp_servers",), "seek", SEEK_ENTRY)
    edited = installed + "\n[other]\nx = 1\n"
    assert remove_entry(edited, "toml", ("mcp_servers",), "seek") == (
        'model = "o3"\n\n[other]\nx = 1\n'
    )


def test_removing_the_only_member_keeps_a_comment_inside_the_braces():
    """VS Code's JSON with comments: a comment after seek's servers object, inside the
    file's braces, stays when uninstall empties the file (mutation testing of ``_cut``:
    the text after the member dropped or cut one character short)."""
    text = '{\n  "servers": {"seek": {"command": "x"}} // mine\n}\n'
    assert remove_entry(text, "jsonc", ("servers",), "seek") == "{ // mine\n}\n"
    bare = '// top\n{\n  "servers": {"seek": {"command": "x"}}\n}\n'
    assert remove_entry(bare, "jsonc", ("servers",), "seek") == "// top\n{}\n"
