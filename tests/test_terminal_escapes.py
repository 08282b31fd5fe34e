"""Control characters in file contents and team hits never reach the terminal raw (issue 27
finding 9): every text output of the CLI escapes them, JSON output keeps the exact text. In
process with the built-in model; the chat model and the team server are fakes on 127.0.0.1."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler

import pytest
from click.testing import CliRunner
from local_http import serving

import seek.cli.ask_cmd  # noqa: F401 - registers the commands
import seek.cli.context_cmd  # noqa: F401
import seek.cli.search_cmd  # noqa: F401
from seek.cli import cli
from seek.untrusted import printable, printable_text

# What a hostile file may hold: an OSC that retitles the terminal (ESC ] 0 ; title BEL), a
# clear-screen CSI (ESC [ 2J), an 8-bit CSI (C1), a lone CR that overwrites its line, and a
# right-to-left override that reorders what is shown.
HOSTILE = "\x1b]0;pwned title\x07\x1b[2J\x9b31m\rforged\u202eevil"
RAW = ("\x1b", "\x07", "\x9b", "\r", "\u202e")
EVIL = f'# evil {HOSTILE} banner\ndef evil_banner_title():\n    return "{HOSTILE}"\n'
PLAIN = "def plain_banner_title():\n    banner = 'hello'\n    return banner\n"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    (root / "evil.py").write_text(EVIL, newline="")
    (root / "plain.py").write_text(PLAIN)
    return root


@pytest.fixture
def env(workspace, tmp_path, monkeypatch):
    monkeypatch.setenv("SEEK_HOME", str(tmp_path / "seek-home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.chdir(workspace)
    return workspace


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, ["-C", ".", *args])
    assert result.exit_code == 0, result.output
    return result.output


def assert_escaped(output: str) -> None:
    for char in RAW:
        assert char not in output, (char, output)
    assert "\\x1b]0;pwned title\\x07\\x1b[2J" in output  # shown, as escapes


def team_server(path: str, content: str):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            hit = {"path": path, "start_line": 1, "end_line": 1, "score": 0.5, "content": content}
            body = json.dumps({"workspace": "team", "hits": [hit]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return serving(Handler)


def chat_server(pieces: list[str]):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.end_headers()
            for piece in pieces:
                line = {"message": {"role": "assistant", "content": piece}, "done": False}
                self.wfile.write((json.dumps(line) + "\n").encode())
            self.wfile.write(b'{"message": {"content": ""}, "done": true}\n')

    return serving(Handler)


def test_search_and_related_text_outputs_escape_contents(env):
    for output in (
        run("search", "evil banner title"),
        run("search", "evil banner title", "--max-lines", "5"),
        run("search", "evil banner title", "--format", "vimgrep"),
        run("related", "plain.py:2"),
    ):
        assert_escaped(output)


def test_json_outputs_keep_the_exact_contents(env):
    hits = json.loads(run("search", "evil banner title", "--json"))["hits"]
    assert EVIL.rstrip("\n") in [hit["content"] for hit in hits]
    lines = run("search", "evil banner title", "--format", "jsonl").splitlines()
    assert EVIL.rstrip("\n") in [json.loads(line)["content"] for line in lines]
    blocks = json.loads(run("context", "evil banner title", "--threshold", "0", "--json"))
    assert any(HOSTILE in block["content"] for block in blocks["blocks"])


def test_context_prints_blocks_escaped(env):
    output = run("context", "evil banner title", "--threshold", "0")
    assert "evil.py (lines 1-3)" in output
    assert_escaped(output)


def test_team_hits_are_escaped_in_text_and_exact_in_json(env):
    name = "x\x1b[2J.py"
    with team_server(name, HOSTILE) as url:
        team = [f"--set=team_url={url}", "--set=team_timeout_s=60"]
        text = CliRunner().invoke(cli, [*team, "-C", ".", "search", "plain banner"])
        data = CliRunner().invoke(cli, [*team, "-C", ".", "search", "plain banner", "--json"])
    assert text.exit_code == 0 and data.exit_code == 0, text.output + data.output
    assert "team:team/x\\x1b[2J.py:1-1" in text.output
    assert_escaped(text.output)
    team_hits = [h for h in json.loads(data.output)["hits"] if h["path"].startswith("team:")]
    assert [(h["path"], h["content"]) for h in team_hits] == [(f"team:team/{name}", HOSTILE)]


def test_ask_escapes_the_streamed_answer_and_the_sources(env):
    # A model asked about the file may well repeat its bytes.
    with chat_server(["The banner is ", HOSTILE[:4], HOSTILE[4:], "."]) as url:
        chat = [f"--set=chat_url={url}", "--set=chat_provider=ollama", "--set=chat_model=m"]
        answer = CliRunner().invoke(cli, [*chat, "-C", ".", "ask", "evil banner title"])
    assert answer.exit_code == 0, answer.output
    assert "The banner is \\x1b]0;pwned title\\x07" in answer.output
    assert_escaped(answer.output)


def test_printable_text_keeps_layout_and_escapes_the_rest():
    assert printable_text("a\tb\r\nc\n") == "a\tb\r\nc\n"  # tabs, LF and CRLF kept
    assert printable_text("a\rb\x1b[0m\x00\x7f\u2066") == "a\\rb\\x1b[0m\\x00\\x7f\\u2066"
    assert printable("a\u202eb\u200fc") == "a\\u202eb\\u200fc"  # names: bidi escaped too


def test_mcp_tool_results_escape_contents_and_names(tmp_path, monkeypatch):
    """An agent's UI may print a tool's text as it stands: `seek mcp` escapes control codes
    in contents, file names and the workspace's name as the CLI does (in process, through
    the SDK's client)."""
    import anyio
    from mcp import Client

    from seek.mcp import build_server

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    root = tmp_path / "ws\u202eevil"
    name = "src/\x1b]0;pwned\x07evil.py"
    (root / "src").mkdir(parents=True)
    (root / name).write_text(EVIL, newline="")
    (root / "plain.py").write_text(PLAIN)

    async def calls() -> list[str]:
        server = build_server(root, {"home": str(tmp_path / "seek-home")})
        async with Client(server) as client:
            results = [
                await client.call_tool("search", {"query": "evil banner title"}),
                await client.call_tool("context", {"question": "evil banner title"}),
                await client.call_tool("related", {"path": "plain.py", "line": 1}),
                await client.call_tool("status", {}),
            ]
        assert not any(r.is_error for r in results), results
        return ["\n".join(part.text for part in r.content) for r in results]

    found, context, related, status = anyio.run(calls)
    for output in (found, context, related):
        assert_escaped(output)
        assert "src/\\x1b]0;pwned\\x07evil.py" in output
    assert "ws\\u202eevil" in status
    for char in RAW:
        assert char not in status
