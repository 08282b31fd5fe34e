"""A damaged index is retried the same way from every front-end (issue 29, "one door"): the
CLI, the MCP ``search`` tool, ``POST /v1/search`` and the page's search all reach the index
through :class:`seek.workspace.Workspaces`, so when a search finds the table gone under a
search cache that still opens, each one repairs the index (an index run rebuilds it), asks
again, and answers with the hits it gave before and the same note."""

from __future__ import annotations

import json
import re
import shutil

import anyio
import httpx
import pytest
from click.testing import CliRunner
from conftest import SMALL_PROJECT
from mcp.client.client import Client
from seek_server import running

import seek.cli.search_cmd  # noqa: F401 - registers the commands
from seek.cli import cli
from seek.index.indexer import index_workspace
from seek.index.rules import damage_reason
from seek.mcp import build_server
from seek.serving.config import ServeConfig
from seek.settings import load_settings
from seek.store import index_dir_for, load_manifest

QUERY = "configure retries"
REPAIRED = "The index was rebuilt before this answer: index damaged: "
MCP_HIT = re.compile(r"^\d+\. (\S+):(\d+)-(\d+) \(score ", re.M)


@pytest.fixture
def workspace(make_tree, seek_home, hash_provider, lance_keywords, monkeypatch):
    """An indexed workspace whose searches read LanceDB's full-text index, as an index of
    more than 250,000 chunks does: the only part of a search that reads the table, so the
    only way damage under a loaded search cache shows."""
    monkeypatch.setattr("seek.retrieve.searcher.KEYWORDS_IN_MEMORY_MAX_CHUNKS", 0)
    monkeypatch.setenv("SEEK_HOME", str(seek_home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(seek_home / "config"))
    root = make_tree(SMALL_PROJECT)
    overrides = {"provider": hash_provider}
    settings = load_settings(root, overrides=overrides)
    index_workspace(root, settings)
    return root, overrides, settings


def damage(root, settings) -> None:
    """Delete the table's version manifests (``_versions``), as a half-copied or half-deleted
    index folder leaves it; the search cache beside it stays, so a search still opens.
    (A cut data file is damage too, but a process that has read the table may answer from
    LanceDB's cache of it; a deleted table folder is not this case: the keyword pass finds
    no keyword index and answers from vectors, with a note that `seek index` rebuilds it.)"""
    index_dir = index_dir_for(root, settings)
    shutil.rmtree(index_dir / "lancedb" / f"{load_manifest(index_dir).table}.lance" / "_versions")
    assert damage_reason(index_dir, load_manifest(index_dir)).startswith("index damaged: ")


def from_json(data: dict) -> tuple[list, list]:
    return [(h["path"], h["start_line"], h["end_line"]) for h in data["hits"]], data["notes"]


def cli_search(root, overrides) -> tuple[list, list]:
    sets = [f"--set={key}={value}" for key, value in overrides.items()]
    printed = CliRunner().invoke(cli, [*sets, "search", "--json", "-k", "5", QUERY, str(root)])
    assert printed.exit_code == 0, printed.output
    return from_json(json.loads(printed.output))


def mcp_text(text: str) -> tuple[list, list]:
    hits = [(path, int(a), int(b)) for path, a, b in MCP_HIT.findall(text)]
    return hits, [line[len("note: ") :] for line in text.splitlines() if line.startswith("note: ")]


async def mcp_search(server) -> tuple[list, list]:
    async with Client(server) as client:
        result = await client.call_tool("search", {"query": QUERY, "k": 5})
    assert not result.is_error, result.content
    return mcp_text("\n".join(part.text for part in result.content))


def http_search(config, route) -> tuple[list, list]:
    with running(config) as url:
        answer = httpx.post(f"{url}{route}", json={"query": QUERY, "k": 5}, timeout=120)
    assert answer.status_code == 200, answer.text
    return from_json(answer.json())


@pytest.mark.parametrize("front_end", ["cli", "mcp", "http", "page"])
def test_a_damaged_index_is_repaired_and_answered_alike(workspace, front_end):
    """The front-end starts on a damaged index (a server's first search loads its searcher
    from the search cache, then reads the table) and is compared with its own answer on the
    clean index."""
    root, overrides, settings = workspace
    config = ServeConfig(workspaces=(root,), overrides=overrides, ui=True)
    ask = {
        "cli": lambda: cli_search(root, overrides),
        "mcp": lambda: anyio.run(mcp_search, build_server(root, overrides)),
        "http": lambda: http_search(config, "/v1/search"),
        "page": lambda: http_search(config, "/ui/api/search"),  # its own k: rerank_top
    }[front_end]
    clean_hits, clean_notes = ask()
    assert clean_hits and clean_notes == []
    damage(root, settings)
    hits, notes = ask()
    assert hits == clean_hits  # the same answer as before the damage
    assert len(notes) == 1 and notes[0].startswith(REPAIRED), notes
    index_dir = index_dir_for(root, settings)
    assert damage_reason(index_dir, load_manifest(index_dir)) == ""  # repaired for good


@pytest.mark.parametrize("live", [False, True], ids=["one-shot", "server"])
def test_the_retry_keeps_the_searchs_scope_and_ranker_switch(workspace, live):
    """The repaired search is the one asked: limited to ``src/`` and without the learned
    ranker (before, a server's retry dropped both, and other searches had no retry)."""
    from seek.retrieve.scope import Scope
    from seek.workspace import Workspaces

    root, overrides, settings = workspace

    def ask():  # a server started now: it loads its searcher from the search cache
        spaces = Workspaces(settings=settings, live=live)
        return spaces.search(root, QUERY, 5, rerank=False, scope=Scope(("src",), "code"))

    clean = ask()
    assert clean.hits and not clean.calibrated and not clean.notes
    damage(root, settings)
    repaired = ask()
    assert repaired.hits == clean.hits and not repaired.calibrated
    assert all(hit.path.startswith("src/") for hit in repaired.hits)
    assert len(repaired.notes) == 1 and repaired.notes[0].startswith(REPAIRED)
