"""One query, four front-ends, one answer (issue 18): the library, ``seek search --json``,
the MCP ``search`` tool and ``POST /v1/search`` all go through :mod:`seek.workspace`, so
they give the same hits, notes and ``calibrated`` flag, a team server's hits included."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest
from click.testing import CliRunner
from conftest import SMALL_PROJECT
from mcp.client.client import Client
from seek_server import running

import seek.cli.search_cmd  # noqa: F401 - registers the commands
from seek import index_workspace
from seek.cli import cli
from seek.mcp import build_server, format_hits
from seek.retrieve import Hit, SearchResult
from seek.serving.config import ServeConfig
from seek.settings import load_settings
from seek.workspace import search
from seek.workspace.team import with_team_hits

pytestmark = pytest.mark.slow

QUERY = "how are retries configured?"


def comparable(data: dict) -> dict:
    """What must agree: the hits (paths, lines, scores, text), notes and calibration."""
    return {key: data[key] for key in ("query", "hits", "notes", "calibrated")}


async def mcp_search(server) -> str:
    """The tool's text through the SDK's own client, connected in process."""
    async with Client(server) as client:
        result = await client.call_tool("search", {"query": QUERY, "k": 5})
    return "\n".join(part.text for part in result.content)


def test_library_cli_mcp_and_http_give_the_same_answer(make_tree, seek_home, monkeypatch):
    shared = make_tree({"lib/retry_policy.py": "def retry_policy(attempts):\n    return 3\n"},
                       "shared")  # fmt: skip
    local = make_tree(SMALL_PROJECT, "mine")
    monkeypatch.setenv("SEEK_HOME", str(seek_home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(seek_home))
    index_workspace(shared, load_settings(shared))  # the team's first answer within its 8 s
    with running(ServeConfig(workspaces=(shared,))) as team_url:
        team = {"team_url": team_url, "team_timeout_s": 120}  # 120: a loaded test machine
        library = search(local, QUERY, load_settings(local, overrides=team), k=5)
        found = [hit.path for hit in library.hits if hit.path.startswith("team:")]
        assert found == ["team:shared/lib/retry_policy.py"], library.notes
        assert library.calibrated  # the learned ranker ran, and the team merge kept the flag

        # --content all: the CLI searches code only unless told otherwise
        sets = [f"--set=team_url={team_url}", "--set=team_timeout_s=120"]
        printed = CliRunner().invoke(
            cli, [*sets, "search", "--json", "--content", "all", "-k", "5", QUERY, str(local)]
        )
        assert printed.exit_code == 0, printed.output
        from_cli = json.loads(printed.output)

        from_mcp = anyio.run(mcp_search, build_server(local, team))

        with running(ServeConfig(workspaces=(local,), overrides=team)) as url:
            answer = httpx.post(f"{url}/v1/search", json={"query": QUERY, "k": 5}, timeout=60)
        assert answer.status_code == 200, answer.text
        from_http = answer.json()

    expected = comparable(library.to_json())
    assert comparable(from_cli) == expected
    assert comparable(from_http) == expected
    assert from_mcp == format_hits(library)


def test_team_hits_keep_the_local_results_other_fields():
    """A defect: with_team_hits rebuilt the result and lost ``calibrated`` (true -> false
    whenever team_url was set) and the chunk stage's ``context_hits``."""
    from concurrent.futures import Future

    local = Hit("a.py", 1, 2, 0.9, "x")
    result = SearchResult("q", "q", [local], (), {"total": 1.0}, True, [local])
    pending: Future = Future()
    pending.set_result(([Hit("team:t/b.py", 1, 1, 0.5, "y")], ""))
    merged = with_team_hits(result, pending)
    assert merged.calibrated is True
    assert merged.context_hits == [local]
    assert [hit.path for hit in merged.hits] == ["a.py", "team:t/b.py"]
