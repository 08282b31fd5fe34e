"""The MCP server through the SDK's own client, over stdio, with the built-in model."""

import os
import sys

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

pytestmark = pytest.mark.slow


async def session_calls(workspace, seek_home, calls, options=()):
    """``seek mcp [OPTIONS]`` started in ``workspace``: its tools, then each call's result."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "seek", "mcp", *options],
        cwd=str(workspace),
        env={**os.environ, "SEEK_HOME": str(seek_home), "XDG_CONFIG_HOME": str(seek_home)},
    )
    results = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            results.append(await session.list_tools())
            for name, arguments in calls:
                results.append(await session.call_tool(name, arguments))
    return results


def text_of(result):
    return "\n".join(part.text for part in result.content)


def test_agent_searches_an_unseen_workspace_in_one_call(make_tree, seek_home):
    root = make_tree(
        {
            "src/retry.py": "def configure_retries(policy):\n    return RetryPolicy(policy)\n",
            "src/http_client.py": (
                "class HttpClient:\n    def send(self, request):\n        return 1\n"
            ),
        }
    )
    tools, found, context, status, empty, missing = anyio.run(
        session_calls, root, seek_home,
        [
            ("search", {"query": "HttpClient"}),
            ("context", {"question": "how does the http client send a request?"}),
            ("status", {}),
            ("search", {"query": "  "}),
            ("search", {"query": "x", "path": str(root / "nope")}),
        ],
    )  # fmt: skip
    names = {tool.name for tool in tools.tools}
    assert {"search", "context", "status"} <= names
    description = next(t.description for t in tools.tools if t.name == "search")
    assert "Find the code that answers a question" in description
    assert not found.is_error
    first = text_of(found).splitlines()[0]
    assert first.startswith("1. src/http_client.py:1-3 (score ")
    assert "class HttpClient:" in text_of(found)
    assert "files 2, chunks 2" in text_of(status)
    assert not context.is_error
    heading = "src/http_client.py (lines 1-3) · HttpClient.send"  # send holds lines 2-3 of 3
    assert f"{heading}\n```py\nclass HttpClient:" in text_of(context)
    assert "weighed 2 candidates" in text_of(context)
    assert empty.is_error and "query is empty" in text_of(empty)
    assert missing.is_error and "does not exist" in text_of(missing)
