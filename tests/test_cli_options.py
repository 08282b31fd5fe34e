"""Global options after the command, and shell completion (issue 15)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import seek.cli.completion_cmd  # noqa: F401 - registers the commands
import seek.cli.config_cmd  # noqa: F401
from seek.cli import cli


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("SEEK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in [n for n in os.environ if n.startswith("SEEK_") and n != "SEEK_HOME"]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def settings_shown(*args: str) -> dict:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_global_options_work_after_the_command(isolated):
    before = settings_shown("--provider", "ollama", "--set", "snippets=4", "config", "--json")
    after = settings_shown("config", "--json", "--provider", "ollama", "--set", "snippets=4")
    assert before == after
    assert after["provider"]["value"] == "ollama" and after["provider"]["source"] == "flag"
    assert after["snippets"]["value"] == 4
    url = settings_shown("config", "--url", "http://127.0.0.1:9", "--json")
    assert url["base_url"]["value"] == "http://127.0.0.1:9"


def test_a_commands_own_option_wins_over_the_global_one():
    import seek.cli.ask_cmd  # noqa: F401

    ask = cli.commands["ask"]
    models = [p for p in ask.params if "--model" in getattr(p, "opts", [])]
    assert len(models) == 1 and models[0].help.startswith("Chat model")


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completion_completes_commands_and_options():
    bin_dir = Path(sys.executable).parent
    script = (
        'eval "$(seek completion bash)"\n'
        'COMP_WORDS=(seek ins); COMP_CWORD=1; _seek_completion seek; echo "${COMPREPLY[@]}"\n'
        "COMPREPLY=(); COMP_WORDS=(seek index --prov); COMP_CWORD=2; _seek_completion seek; "
        'echo "${COMPREPLY[@]}"\n'
    )
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env,
                         timeout=60, check=True).stdout.splitlines()  # fmt: skip
    assert out == ["install", "--provider"]


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_completion_scripts(shell):
    result = CliRunner().invoke(cli, ["completion", shell])
    assert result.exit_code == 0 and "_SEEK_COMPLETE" in result.output


def test_each_command_loads_only_its_own_module():
    """`seek search` imports search_cmd alone (issue 14); help and typos load every command."""
    from seek.cli import COMMAND_MODULES, cli, command_name, load_commands

    assert command_name(["-C", "search", "--set", "k=v", "-v", "status", "x"]) == "status"
    assert command_name(["--path=/x", "search", "q"]) == "search"
    assert command_name(["--help"]) is None and command_name(["--", "index"]) == "index"
    load_commands([])
    assert set(cli.commands) == set(COMMAND_MODULES)
