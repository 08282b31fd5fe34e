"""Every search hit names its enclosing symbol (issue 28 deliver 2): the library, the CLI,
MCP and HTTP, on small real projects with real tree-sitter and LanceDB."""

import json

import anyio
import httpx
import pytest
from cli_in_process import run_cli
from mcp.client.client import Client
from seek_server import running

from seek.mcp import build_server
from seek.retrieve import Searcher
from seek.retrieve.symbols import SIDECAR
from seek.retrieve.types import Hit, SearchResult, Symbol
from seek.serving.config import ServeConfig
from seek.store.graph_table import GraphTable

BODY = "".join(f"        prepared['zebra_{i}'] = method.upper() + url\n" for i in range(16))
SESSION = (
    '"""Sessions."""\n\nimport json\n\n\n'  # lines 1-5
    "class Session:\n"  # 6
    "    def request(self, method, url):\n"  # 7
    "        prepared = {'method': method}\n" + BODY + "        return json.dumps(prepared)\n"
)  # the method: lines 7-25 of 25
SCRIPT = (
    "import sys\n\nnames = []\n"
    "for argument in sys.argv[1:]:\n"
    "    names.append(argument.upper())\n"
    "    print('walrus', argument)\n"
    "if names:\n"
    "    print('walrus totals', len(names))\n"
)
SHAPES = (  # a class of three methods, between file-level lines
    "LIMIT = 3\n\n\n"  # 1-3
    "class Shapes:\n"  # 4
    "    def circle(self, r):\n        area = 3 * r * r\n        return area\n\n"  # 5-8
    "    def square(self, s):\n        area = s * s\n        return area\n\n"  # 9-12
    "    def line(self, n):\n        size = n\n        return size\n\n\n"  # 13-17
    "print(Shapes().circle(LIMIT))\n"  # 18
)
PROJECT = {
    "src/session.py": SESSION,
    "src/script.py": SCRIPT,
    "src/shapes.py": SHAPES,
    "README.md": "# Demo\n\nThe zebra and the walrus.\n",
}
REQUEST = {"name": "request", "kind": "method", "container": "Session", "line": 7, "end_line": 25}


@pytest.fixture
def project(make_tree):
    return make_tree(PROJECT)


def symbols_by_path(result):
    return {hit.path: hit.symbol for hit in result.hits}


def test_a_hit_in_a_method_names_it_and_file_level_code_names_none(project, library):
    found = symbols_by_path(library.search(project, "zebra walrus", k=10))
    assert found["src/session.py"] == Symbol("request", "method", "Session", 7, 25)
    assert found["src/session.py"].qualified == "Session.request"
    assert found["src/script.py"] is None  # `names = []` is a definition of one line of eight
    assert found["README.md"] is None  # no grammar
    data = library.search(project, "zebra", k=1).to_json()
    assert data["hits"][0]["path"] == "src/session.py"
    assert data["hits"][0]["symbol"] == REQUEST


def test_the_innermost_definition_holding_most_of_the_lines(project, library, settings_for):
    library.search(project, "circle", k=1)  # indexes
    searcher = Searcher.open(project, library.settings(project))

    def named(start, end):
        symbol = searcher.symbols.named([Hit("src/shapes.py", start, end, 1.0, "")])[0].symbol
        return symbol and symbol.qualified

    assert named(10, 11) == "Shapes.square"  # inside a method
    assert named(7, 11) == "Shapes.square"  # the last line of circle, then square
    assert named(5, 17) == "Shapes"  # three methods
    assert named(1, 17) == "Shapes"  # a constant first: the class still holds most
    assert named(16, 18) is None  # file-level code after the class
    assert named(1, 6) is None  # half in the class (4-6): not more than half


def test_an_edit_that_moves_the_function_updates_the_symbol(project, library):
    assert symbols_by_path(library.search(project, "zebra", k=3))["src/session.py"] == (
        Symbol("request", "method", "Session", 7, 25)
    )
    moved = SESSION.replace("class Session:\n", "").replace("\n    ", "\n")
    padding = "".join(f"print('moved {i}')\n" for i in range(3))
    (project / "src/session.py").write_text(padding + moved, encoding="utf-8")
    found = symbols_by_path(library.search(project, "zebra", k=3))
    assert found["src/session.py"] == Symbol("request", "function", None, 9, 27)


def test_a_saved_copy_names_hits_without_reading_the_graph_table(project, library, monkeypatch):
    library.search(project, "zebra", k=1)
    searcher = Searcher.open(project, library.settings(project))
    sidecar = searcher.index_dir / SIDECAR
    assert sidecar.is_file()

    def unread(*args):
        raise AssertionError("the graph table was read")

    monkeypatch.setattr(GraphTable, "load_all", unread)
    monkeypatch.setattr(GraphTable, "definitions", unread)
    again = Searcher.open(project, library.settings(project)).search("zebra", 1)
    assert again.hits[0].symbol == Symbol("request", "method", "Session", 7, 25)


def test_an_index_run_reads_only_the_changed_file_from_the_graph(project, library, monkeypatch):
    library.search(project, "zebra", k=1)
    (project / "src/shapes.py").write_text(SHAPES.replace("LIMIT = 3", "LIMIT = 4"))
    asked = []
    definitions = GraphTable.definitions

    def counted(table, paths):
        asked.append(list(paths))
        return definitions(table, paths)

    monkeypatch.setattr(GraphTable, "load_all", lambda *args: pytest.fail("read all facts"))
    monkeypatch.setattr(GraphTable, "definitions", counted)
    library.index(project)  # brings the saved copy up to date while LanceDB is loaded
    assert asked == [["src/shapes.py"]]
    found = Searcher.open(project, library.settings(project)).search("zebra walrus circle", 10)
    assert asked == [["src/shapes.py"]]  # the search read no graph table
    assert symbols_by_path(found)["src/session.py"].qualified == "Session.request"


def test_a_searcher_saves_a_missing_copy_again(project, library):
    library.search(project, "zebra", k=1)
    searcher = Searcher.open(project, library.settings(project))
    (searcher.index_dir / SIDECAR).unlink()
    found = Searcher.open(project, library.settings(project)).search("zebra", 1)
    assert found.hits[0].symbol == Symbol("request", "method", "Session", 7, 25)
    assert (searcher.index_dir / SIDECAR).is_file()


def test_an_index_without_its_graph_names_no_symbol_and_search_works(project, library):
    library.search(project, "zebra", k=1)
    searcher = Searcher.open(project, library.settings(project))
    GraphTable(searcher.index_dir, searcher.symbols.table_name).drop()
    (searcher.index_dir / SIDECAR).unlink()
    found = Searcher.open(project, library.settings(project)).search("zebra", 3)
    assert found.hits and all(hit.symbol is None for hit in found.hits)
    assert not (searcher.index_dir / SIDECAR).exists()


def test_naming_keeps_the_pipelines_order_and_scores(project, library):
    library.search(project, "zebra", k=1)
    searcher = Searcher.open(project, library.settings(project))
    bare = searcher.pipeline.search("zebra walrus area", 10)
    named = searcher.search("zebra walrus area", 10)
    assert [(h.path, h.start_line, h.end_line, h.score) for h in named.hits] == [
        (h.path, h.start_line, h.end_line, h.score) for h in bare.hits
    ]
    assert any(h.symbol is not None for h in named.hits)


def test_related_hits_name_their_symbol(project, library):
    found = library.related(project, "src/shapes.py", 6, k=10)
    assert symbols_by_path(found)["src/session.py"].qualified == "Session.request"


def test_a_team_hit_keeps_a_well_formed_symbol_only():
    assert Symbol.from_json(REQUEST) == Symbol("request", "method", "Session", 7, 25)
    for bad in (None, "x", {**REQUEST, "line": "7"}, {**REQUEST, "name": ""},
                {**REQUEST, "container": 3}, {**REQUEST, "end_line": True}):  # fmt: skip
        assert Symbol.from_json(bad) is None


# -- the front-ends ----------------------------------------------------------------------


@pytest.mark.slow
def test_the_cli_shows_the_symbol_in_text_and_json_and_not_in_vimgrep(project, in_home):
    head = run_cli(project, "search", "zebra", "-k", "1").splitlines()[0].split()
    assert head[:2] == ["1", "src/session.py:1-25"] and head[-1] == "Session.request"
    hit = json.loads(run_cli(project, "search", "walrus", "-k", "1", "--json"))["hits"][0]
    assert (hit["path"], hit["symbol"]) == ("src/script.py", None)
    assert (
        json.loads(run_cli(project, "search", "zebra", "-k", "1", "--format", "jsonl"))["symbol"]
        == REQUEST
    )
    vimgrep = run_cli(project, "search", "zebra", "-k", "1", "--format", "vimgrep")
    assert vimgrep.endswith('src/session.py:1:1:"""Sessions."""\n')
    near = json.loads(run_cli(project, "related", "src/shapes.py:6", "--json"))
    assert REQUEST in [hit["symbol"] for hit in near["hits"]]


async def mcp_calls(server, calls):
    async with Client(server) as client:
        return [await client.call_tool(name, arguments) for name, arguments in calls]


@pytest.mark.slow
def test_mcp_search_and_related_name_the_symbol(project, in_home):
    search, related = anyio.run(
        mcp_calls, build_server(project),
        [("search", {"query": "zebra", "k": 1}),
         ("related", {"path": "src/shapes.py", "line": 6})],
    )  # fmt: skip
    text = "\n".join(part.text for part in search.content)
    assert text.splitlines()[0].startswith("1. src/session.py:1-25 (score ")
    assert text.splitlines()[0].endswith(") Session.request")
    text = "\n".join(part.text for part in related.content)
    assert any(line.endswith(") Session.request") for line in text.splitlines())


@pytest.mark.slow
def test_http_search_and_related_answer_the_symbol(project, seek_home):
    config = ServeConfig(workspaces=(project,), overrides={"home": str(seek_home)})
    with running(config) as url:
        found = httpx.post(f"{url}/v1/search", json={"query": "zebra", "k": 1}, timeout=120)
        assert found.status_code == 200, found.text
        assert found.json()["hits"][0]["symbol"] == REQUEST
        near = httpx.post(
            f"{url}/v1/related", json={"file": "src/shapes.py", "line": 6}, timeout=120
        )
        assert near.status_code == 200, near.text
        assert REQUEST in [hit["symbol"] for hit in near.json()["hits"]]


def test_definitions_read_from_a_stored_row():
    from seek.index.graph_rows import definitions, file_facts
    from seek.retrieve.symbols import _encoded

    row = file_facts("src/shapes.py", SHAPES.encode())
    written = json.loads(_encoded("src/shapes.py", row[0]))
    assert written == [  # what the index layer's own reader gives
        [d.line, d.end_line, d.name, d.kind, d.container]
        for d in definitions("src/shapes.py", row[0])
    ]
    assert written[:2] == [[1, 1, "LIMIT", "constant", None], [4, 15, "Shapes", "class", None]]
    assert [5, 7, "circle", "method", "Shapes"] in written
    assert _encoded("src/shapes.py", "not json") == ""


def test_a_team_hit_keeps_the_symbol_its_server_named(make_tree, seek_home, monkeypatch):
    from seek import index_workspace, load_settings
    from seek.workspace import search

    shared = make_tree({"lib/retry_policy.py": "def retry_policy(attempts):\n    return 3\n"},
                       "shared")  # fmt: skip
    local = make_tree({"src/other.py": "VALUE = 1\n"}, "mine")
    monkeypatch.setenv("SEEK_HOME", str(seek_home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(seek_home))
    index_workspace(shared, load_settings(shared))
    with running(ServeConfig(workspaces=(shared,))) as team_url:
        team = {"team_url": team_url, "team_timeout_s": 120}  # 120: a loaded test machine
        found = search(local, "retry policy", load_settings(local, overrides=team), k=5)
    hits = [hit for hit in found.hits if hit.path.startswith("team:")]
    assert [hit.path for hit in hits] == ["team:shared/lib/retry_policy.py"], found.notes
    assert hits[0].symbol == Symbol("retry_policy", "function", None, 1, 2)


def test_a_hostile_symbol_name_is_escaped_in_text_output(capsys, tmp_path):
    """A team server (or a file) may name a symbol with terminal control codes: the CLI's
    text and the MCP tools' text show them as escapes, JSON keeps them exactly."""
    from seek.cli.output import print_result
    from seek.mcp import format_hits

    evil = Symbol("run\x1b]0;owned\x07", "function", "Job\u202e", 1, 3)
    hit = Hit("team:shared/a.py", 1, 3, 0.5, "def run():\n    pass\n", symbol=evil)
    result = SearchResult("q", "q", [hit])
    print_result(result, "text", tmp_path, None)
    for text in (capsys.readouterr().out, format_hits(result)):
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
        assert "\\x1b]0;owned\\x07" in text and "\\u202e" in text
    print_result(result, "json", tmp_path, None)
    assert json.loads(capsys.readouterr().out)["hits"][0]["symbol"]["name"] == evil.name
