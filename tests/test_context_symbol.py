"""Each `seek context` block names its enclosing symbol (issue 28 deliver 2), by the rule and
from the source search hits are named by, for the block's own lines: the library, the CLI,
MCP and HTTP, on a small project indexed for real (tree-sitter, LanceDB)."""

import json
from dataclasses import replace

import anyio
import httpx
import pytest
from cli_in_process import run_cli
from mcp.client.client import Client
from seek_server import running
from test_hit_symbol import SCRIPT

from seek.mcp import build_server
from seek.retrieve.context import Block, build_context, format_block
from seek.retrieve.types import Hit, SearchResult, Symbol
from seek.serving.config import ServeConfig


def method(name, word):
    """A method of about 1,000 characters: four of them make a class wider than the
    3,000 characters a block may widen to, so a block inside one stays that method."""
    body = "".join(f"        {word}s['{word}_{i}'] = self.{word}_total + {i} * {word}_size\n"
                   for i in range(18))  # fmt: skip
    head = f"    def {name}(self, {word}_size):\n        {word}s = {{}}\n"
    return f"{head}{body}        return {word}s\n\n"


SESSION = (
    '"""Sessions."""\n\nimport json\n\n\n'  # lines 1-5
    "class Session:\n"  # 6
    + method("open", "otter")  # 7-27
    + method("request", "zebra")  # 29-49
    + method("close", "heron")  # 51-71
    + method("retry", "bison")  # 73-93
)
REQUEST = {"name": "request", "kind": "method", "container": "Session", "line": 29, "end_line": 49}
SESSION_CLASS = {"name": "Session", "kind": "class", "container": None, "line": 6, "end_line": 93}


@pytest.fixture
def project(make_tree):
    return make_tree({"src/session.py": SESSION, "src/script.py": SCRIPT})


def code_blocks(result):
    return [b for b in result.blocks if b.kind == "code"]


def test_a_block_inside_a_method_names_it_and_file_level_code_names_none(project, library):
    found = library.context(project, "zebra", threshold=0.5)
    block = code_blocks(found)[0]
    assert (block.path, block.symbol) == ("src/session.py", Symbol(**REQUEST))
    heading = found.prompt().splitlines()[0]
    assert heading == f"src/session.py (lines {block.start + 1}-{block.end + 1}) · Session.request"
    data = found.to_json()
    assert data["blocks"][0]["symbol"] == REQUEST
    script = library.context(project, "walrus", threshold=0.5)
    assert [(b.path, b.symbol) for b in code_blocks(script)] == [("src/script.py", None)]
    assert script.prompt().splitlines()[0] == "src/script.py (lines 1-8)"  # the §8.4 heading
    assert script.to_json()["blocks"][0]["symbol"] is None


def test_a_block_merged_from_several_methods_names_their_class(project, library):
    """The block's lines, not its hits': every hit names a method, the merged block the
    class holding most of its lines; the imports block names nothing."""
    found = library.context(project, "zebra", threshold=0.0)
    merged = next(b for b in code_blocks(found) if b.path == "src/session.py")
    assert merged.end - merged.start > 40  # more than two methods
    assert merged.symbol == Symbol(**SESSION_CLASS)
    assert all(b.symbol is None for b in found.blocks if b.kind == "imports")


def test_naming_leaves_the_chosen_blocks_and_their_sizes_as_they_were(project, library):
    """The budget counts content only: the same blocks, lines and text with names as
    without (a result no searcher named), at budgets that fit the blocks exactly (a budget
    that counted the names would leave the last one out)."""
    settings = library.settings(project)
    found = library.search(project, "zebra walrus state", k=settings.rerank_top)
    assert found.symbols is not None
    bare_found = replace(found, symbols=None)
    named_blocks = 0
    for threshold in (0.0, 0.5):
        whole = build_context(project, bare_found, settings, budget=12_000, threshold=threshold)
        sizes = [len(b.content) for b in whole.blocks]
        for budget in [sum(sizes[: n + 1]) for n in range(len(sizes))] + [400]:
            named, bare = (
                build_context(project, result, settings, budget=budget, threshold=threshold)
                for result in (found, bare_found)
            )
            for a, b in ((named.blocks, bare.blocks), (named.over_budget, bare.over_budget)):
                assert [(x.path, x.start, x.end, x.content, x.kind) for x in a] == [
                    (x.path, x.start, x.end, x.content, x.kind) for x in b
                ]
            assert not any(b.symbol for b in bare.blocks)
            named_blocks += sum(b.symbol is not None for b in named.blocks)
    assert named_blocks >= 4


EVIL = Symbol("run\x1b]0;owned\x07", "function", "Job\u202e", 1, 2)


def test_a_hostile_team_symbol_is_escaped_in_the_prompt_and_exact_in_json(project, settings_for):
    """A team block keeps the symbol its server sent; its name is workspace text."""
    team = Hit("team:shared/a.py", 1, 2, 0.5, "def run():\n    pass", symbol=EVIL)
    found = build_context(project, SearchResult("q", "q", [team]), settings_for())
    assert [(b.kind, b.symbol) for b in found.blocks] == [("team", EVIL)]
    heading = found.prompt().splitlines()[0]
    assert heading == "team:shared/a.py (lines 1-2) · Job\\u202e.run\\x1b]0;owned\\x07"
    assert found.to_json()["blocks"][0]["symbol"]["name"] == EVIL.name
    assert found.to_json()["blocks"][0]["symbol"]["container"] == EVIL.container
    imports = Block("a.py", 0, 0, "import os", 0.5, "imports")
    assert format_block(imports).splitlines()[0] == "a.py (lines 1-1)"


# -- the front-ends ----------------------------------------------------------------------


def session_heading(text):
    return next(line for line in text.splitlines() if line.startswith("src/session.py (lines "))


@pytest.mark.slow
def test_the_cli_names_the_symbol_in_text_and_json(project, in_home):
    assert session_heading(run_cli(project, "context", "zebra", "--threshold", "0.5")).endswith(
        ") · Session.request"
    )
    data = json.loads(run_cli(project, "context", "zebra", "--threshold", "0.5", "--json"))
    assert data["blocks"][0]["symbol"] == REQUEST
    assert session_heading(data["prompt"]).endswith(") · Session.request")


@pytest.mark.slow
def test_mcp_and_http_context_name_the_symbol(project, in_home):
    """At the default settings (the real local model) the best block is the zebra chunk
    merged with the next one, lines 22-58: most of it is ``request`` (29-49)."""

    async def call(server):
        async with Client(server) as client:
            return await client.call_tool("context", {"question": "zebra"})

    answer = anyio.run(call, build_server(project))
    text = "\n".join(part.text for part in answer.content)
    assert session_heading(text) == "src/session.py (lines 22-58) · Session.request"
    config = ServeConfig(workspaces=(project,), overrides={"home": str(in_home)})
    with running(config) as url:
        found = httpx.post(f"{url}/v1/context", json={"question": "zebra"}, timeout=120)
        assert found.status_code == 200, found.text
    data = found.json()
    first = data["blocks"][0]
    assert (first["path"], first["start_line"], first["end_line"]) == ("src/session.py", 22, 58)
    assert first["symbol"] == REQUEST
    assert session_heading(data["prompt"]).endswith(") · Session.request")
    assert all("symbol" in b for b in data["near_misses"])
