"""`seek mcp` against a steered agent and a broken client (issue 12, defects 7, 10, 12, 13):
the SDK's own client over stdio, and raw JSON-RPC lines."""

import json
import os
import queue
import subprocess
import sys
import threading

import anyio
import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

pytestmark = pytest.mark.slow


def server_env(seek_home):
    return {**os.environ, "SEEK_HOME": str(seek_home), "XDG_CONFIG_HOME": str(seek_home)}


async def calls_with(workspace, seek_home, calls, roots=None):
    params = StdioServerParameters(command=sys.executable, args=["-m", "seek", "mcp"],
                                   cwd=str(workspace), env=server_env(seek_home))  # fmt: skip

    async def list_roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=f"file://{folder}") for folder in roots])

    callback = list_roots if roots is not None else None
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, list_roots_callback=callback) as session:
            await session.initialize()
            return [await session.call_tool(name, arguments) for name, arguments in calls]


def text_of(result):
    return "\n".join(part.text for part in result.content)


@pytest.fixture
def folders(make_tree):
    root = make_tree({"a.py": "def a():\n    pass\n", "sub/b.py": "def b():\n    pass\n"})
    other = make_tree({"c.py": "def c():\n    pass\n"}, "other")
    return root, other


def test_paths_outside_the_start_folder_are_refused(folders, seek_home):
    """Defect 12: a prompt-injected agent could index `/`."""
    root, other = folders
    outside, slash, related, sub, default = anyio.run(calls_with, root, seek_home, [
        ("status", {"path": str(other)}),
        ("search", {"query": "x", "path": "/"}),
        ("related", {"path": "/etc/passwd", "line": 1, "workspace": "/"}),
        ("status", {"path": "sub"}),
        ("status", {}),
    ])  # fmt: skip
    assert outside.is_error and "outside" in text_of(outside)
    assert related.is_error and "outside" in text_of(related)
    assert slash.is_error and "outside" in text_of(slash)
    assert not sub.is_error and f"workspace {root / 'sub'}" in text_of(sub)
    assert not default.is_error and f"workspace {root}" in text_of(default)
    assert not (seek_home / "other").exists()


def test_declared_roots_decide_what_may_be_indexed(folders, seek_home):
    root, other = folders
    allowed, refused, default = anyio.run(calls_with, root, seek_home, [
        ("status", {"path": str(other)}),
        ("status", {"path": str(root)}),
        ("status", {}),
    ], [other])  # fmt: skip
    assert not allowed.is_error and f"workspace {other}" in text_of(allowed)
    assert refused.is_error and "outside the client's roots" in text_of(refused)
    assert f"workspace {other}" in text_of(default)


def test_arguments_are_strict_and_questions_capped(folders, seek_home):
    """Defect 10 and 12: `budget: -100` was accepted; a 2 MB query too."""
    root, _ = folders
    answers = anyio.run(calls_with, root, seek_home, [
        ("context", {"question": "x", "budget": -100}),
        ("search", {"query": "x", "k": True}),
        ("search", {"query": "x", "k": "5"}),
        ("search", {"query": "x", "k": 500}),
        ("search", {"query": "a" * 2_001}),
        ("search", {"query": "a\x00b"}),
        ("related", {"path": "a.py", "line": True}),
        ("related", {"path": "a.py", "line": "1"}),
    ])  # fmt: skip
    for answer in answers:
        assert answer.is_error, text_of(answer)


def test_unreadable_lines_get_json_rpc_errors(folders, seek_home):
    """Defects 7 and 13: a lone surrogate left the client waiting forever; malformed lines
    were dropped without an answer."""
    root, _ = folders
    proc = subprocess.Popen([sys.executable, "-m", "seek", "mcp"], cwd=root,
                            env=server_env(seek_home), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # fmt: skip
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()

    def send(text):
        proc.stdin.write(text.encode() + b"\n")
        proc.stdin.flush()

    def answer():
        return json.loads(lines.get(timeout=60))

    try:
        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}))  # fmt: skip
        assert answer()["id"] == 1
        send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        call = {"name": "search", "arguments": {"query": "\\ud800abc"}}
        send('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": '
             + json.dumps(call).replace("\\\\ud800", "\\ud800") + "}")  # fmt: skip
        surrogate = answer()
        send("{nope")
        parse = answer()
        send('{"jsonrpc": "2.0", "id": 4}')
        invalid = answer()
        send('{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}')
        still_serving = answer()
    finally:
        proc.stdin.close()
        proc.kill()
        proc.wait(10)
    assert surrogate["id"] == 2 and surrogate["error"]["code"] == -32602
    assert "lone surrogate" in surrogate["error"]["message"]
    assert parse == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error: the line is not JSON"},
    }
    assert invalid["id"] == 4 and invalid["error"]["code"] == -32600
    assert still_serving["id"] == 5 and "tools" in still_serving["result"]


def test_no_single_line_ends_the_server(folders, seek_home, tmp_path):
    """Issue 27 finding 5: 3,000 '[' on one line ended `seek mcp` with a RecursionError
    traceback. Each hostile line gets its JSON-RPC answer and the next request is served."""
    root, _ = folders
    stderr = (tmp_path / "stderr.txt").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "seek", "mcp"], cwd=root,
                            env=server_env(seek_home), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=stderr)  # fmt: skip
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()

    def send(raw: bytes):
        proc.stdin.write(raw + b"\n")
        proc.stdin.flush()

    def answer():
        return json.loads(lines.get(timeout=60))

    deep_request = (  # under json's recursion limit, over the SDK's: checked for surrogates
        b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"x": '
        + b"[" * 900
        + b"]" * 900
        + b', "s": "\\ud800"}}'
    )
    hostile = {
        "deep arrays": (b"[" * 3000, -32700, None),
        "deep objects": (b'{"a":' * 3000, -32700, None),
        "deep request with a surrogate": (deep_request, -32602, 7),
        "invalid UTF-8": (b'\xff\xfe{"jsonrpc": "2.0", "id": 8}', -32700, None),
        "a 2 MB line": (b"x" * (2 << 20), -32700, None),
    }
    answers = {}
    try:
        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}).encode())  # fmt: skip
        assert answer()["id"] == 1
        send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        for number, (name, (line, _, _)) in enumerate(hostile.items(), 100):
            send(line)
            send(b'{"jsonrpc": "2.0", "id": %d, "method": "tools/list"}' % number)
            answers[name] = (answer(), answer())
    finally:
        proc.stdin.close()
        try:
            proc.wait(30)
        finally:
            proc.kill()
            stderr.close()
    for number, (name, (_, code, request_id)) in enumerate(hostile.items(), 100):
        error, served = answers[name]
        assert error["error"]["code"] == code and error["id"] == request_id, name
        assert served["id"] == number and "tools" in served["result"], name
    assert proc.returncode == 0
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text(errors="replace")


def test_a_line_that_breaks_the_reader_is_still_answered(monkeypatch, caplog):
    # The last guard of finding 5: a failure not foreseen while reading a bad line answers a
    # parse error (and logs one line) instead of ending the server.
    from seek.mcp import stdio as mcp_stdio

    def broken(exc):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(mcp_stdio, "error_for", broken)
    with caplog.at_level("WARNING"):
        answer = mcp_stdio._answer(ValueError("bad line"))
    assert answer.model_dump() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error: the line is not JSON", "data": None},
    }
    assert caplog.messages == ["cannot read a line from the client: answered as a parse error"]
