"""Odd input from files, users and terminals (issue 12, defects 5, 7, 11, 14)."""

import logging
import os
import subprocess
import sys

import pytest
from conftest import HashEmbedder

from seek.index.indexer import index_workspace
from seek.mcp import format_hits
from seek.retrieve import Searcher
from seek.retrieve.context import Block, format_block
from seek.retrieve.types import Hit, SearchResult
from seek.store import index_dir_for, load_manifest
from seek.untrusted import printable

PY = "def fine():\n    return 1\n"


def seek_cli(home, *args, cwd=None):
    env = {**os.environ, "SEEK_HOME": str(home), "XDG_CONFIG_HOME": str(home / "config")}
    return subprocess.run([sys.executable, "-m", "seek", *args], capture_output=True,
                          env=env, cwd=cwd, timeout=300)  # fmt: skip


def test_reversed_ranges_in_ignore_files_match_nothing_and_warn_once(
    make_tree, settings_for, caplog
):
    """Defect 5: `[z-a]` or `[9-0].py` raised re.error in index, search, serve and mcp."""
    root = make_tree({".gitignore": "*.log\n[z-a]\n[9-0].py\n", "ok.py": PY, "5.py": PY,
                      "x.log": "log\n", "sub/.seekignore": "[b-a]*\n", "sub/b.py": PY})  # fmt: skip
    settings = settings_for(root, ignored_globs=("[z-a].py",))
    with caplog.at_level(logging.WARNING, logger="seek.scan.ignore"):
        index_workspace(root, settings, embedder=HashEmbedder())
        index_workspace(root, settings, embedder=HashEmbedder())
    files = load_manifest(index_dir_for(root, settings)).files
    assert set(files) == {"ok.py", "5.py", "sub/b.py"}
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 4, warnings  # once each, although the rules were read twice
    assert any(".gitignore line 2" in w and "[z-a]" in w for w in warnings)
    assert any(".gitignore line 3" in w for w in warnings)
    assert any(".seekignore line 1" in w for w in warnings)
    assert Searcher.open(root, settings, HashEmbedder()).search("fine", 3).hits


def test_control_characters_in_names_are_escaped_in_text_output():
    """Defect 11: a file name with CR/LF could forge result lines."""
    name = "a\r\n 2  forged.py:1-1  0.9999\x1b[2J\u2028.py"
    assert printable(name) == "a\\r\\n 2  forged.py:1-1  0.9999\\x1b[2J\\u2028.py"
    assert printable("plain/ünïcode.py") == "plain/ünïcode.py"
    assert printable("bad\udcffname.py") == "bad\\udcffname.py"
    hits = [Hit(name, 1, 2, 0.5, "def fine():\n    return 1")]
    assert format_hits(SearchResult("q", "q", hits)).split("\n")[0] == (
        f"1. {printable(name)}:1-2 (score 0.5000)"
    )
    assert format_block(Block(name, 0, 1, "x", 0.5)).split("\n")[0] == (
        f"{printable(name)} (lines 1-2)"
    )


@pytest.mark.slow
def test_cli_search_output_keeps_one_line_per_hit_for_hostile_names(make_tree, seek_home):
    root = make_tree({"a\n 2  forged.py:1-1  0.9999\n.py": "def forged_name():\n    pass\n"})
    out = seek_cli(seek_home, "search", "forged_name", "-k", "1", cwd=root)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.decode().splitlines()
    assert lines[0].startswith(" 1  a\\n 2  forged.py:1-1  0.9999\\n.py:1-2")
    assert not any(line.startswith(" 2 ") for line in lines)


@pytest.mark.slow
def test_cli_query_with_undecodable_bytes_is_one_line(make_tree, seek_home):
    """Defect 7: `seek search $'\\xff\\xfe parse'` ended in a traceback."""
    root = make_tree({"ok.py": PY})
    out = seek_cli(seek_home, "search", b"\xff\xfe parse", cwd=root)
    assert out.returncode == 1
    err = out.stderr.decode()
    assert "not valid Unicode" in err and "Traceback" not in err and err.count("\n") == 1


@pytest.mark.slow
def test_serve_banner_brackets_ipv6(make_tree, seek_home):
    """Defect 14: the banner printed `http://::1:PORT` (and, since issue 43, the port it
    really listens on, not the ``0`` it was asked for)."""
    root = make_tree({"ok.py": PY})
    env = {**os.environ, "SEEK_HOME": str(seek_home), "XDG_CONFIG_HOME": str(seek_home)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "seek", "serve", "--host", "::1", "--port", "0"],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        banner = proc.stderr.readline()
    finally:
        proc.kill()
        proc.communicate()
    port = banner.partition("on http://[::1]:")[2].partition(" ")[0]
    assert port.isdigit() and int(port) > 0, banner
