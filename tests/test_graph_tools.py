"""The code-graph tools (issue 28 deliver 2) through the library facade, the CLI, MCP and
HTTP, on a small real project (Python, TypeScript/JavaScript, Go) with real tree-sitter
and LanceDB."""

import json
import os
import subprocess
import sys

import anyio
import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from seek_server import running

from seek.errors import SeekError
from seek.serving.config import ServeConfig
from seek.workspace import Workspaces, stored_graph

PROJECT = {
    "py/shop/__init__.py": "from .cart import Cart\n",
    "py/shop/cart.py": (
        "from .prices import price_of\n\n\n"
        "class Cart:\n"
        '    """A basket of items."""\n\n'
        "    def __init__(self):\n        self.items = []\n\n"
        "    def total(self):\n        return sum(price_of(i) for i in self.items)\n\n"
        "    def count(self):\n        return len(self.items)\n"
    ),
    "py/shop/prices.py": "TAX = 2\n\n\ndef price_of(item):\n    return item.cost * TAX\n",
    "py/main.py": (
        "from shop import Cart\nfrom shop.prices import price_of\n\n\n"
        "def checkout():\n    cart = Cart()\n    return cart.total()\n\n\n"
        "def quote(item):\n    # price_of in a comment is not a use\n    return price_of(item)\n"
    ),
    "web/src/format.ts": (
        "export function formatPrice(cents: number): string {\n"
        "  return (cents / 100).toFixed(2);\n}\n"
    ),
    "web/src/view.js": (
        "import { formatPrice } from './format';\n\n"
        "export function render(item) {\n  return formatPrice(item.cents);\n}\n"
    ),
    "go/go.mod": "module example.com/shop\n\ngo 1.22\n",
    "go/store/store.go": (
        "package store\n\n// Open opens the store.\nfunc Open(path string) *Store {\n"
        "\treturn &Store{path: path}\n}\n\ntype Store struct {\n\tpath string\n}\n"
    ),
    "go/main.go": (
        'package main\n\nimport "example.com/shop/store"\n\n'
        'func main() {\n\ts := store.Open("db")\n\t_ = s\n}\n'
    ),
}


@pytest.fixture
def project(make_tree):
    return make_tree(PROJECT)


def sites(result):
    return [(r["path"], r["line"]) for r in result.rows]


# -- the library -------------------------------------------------------------------------


def test_defs_refs_callers_callees_outline_and_map_through_the_facade(project, library):
    found = library.defs(project, "price_of")
    assert sites(found) == [("py/shop/prices.py", 4)]
    row = found.rows[0]
    assert (row["end_line"], row["kind"], row["name"], row["container"]) == (
        5, "function", "price_of", None
    )  # fmt: skip
    assert row["signature"] == "def price_of(item):"
    assert sites(library.defs(project, "Cart.total")) == [("py/shop/cart.py", 10)]
    assert sites(library.defs(project, "formatPrice")) == [("web/src/format.ts", 1)]
    assert sites(library.defs(project, "Open")) == [("go/store/store.go", 4)]

    # uses grouped by the definition they are in; the comment is not a use
    uses = library.refs(project, "price_of")
    assert [(r["path"], r["line"], r["container"], r["kind"]) for r in uses.rows] == [
        ("py/main.py", 2, None, "use"),
        ("py/main.py", 12, "quote", "call"),
        ("py/shop/cart.py", 1, None, "use"),
        ("py/shop/cart.py", 11, "Cart.total", "call"),
    ]
    assert uses.rows[1]["text"] == "return price_of(item)"
    # PATH:LINE of a use asks about what is used there
    assert library.refs(project, "py/main.py:12").rows == uses.rows

    callers = library.callers(project, "py/shop/prices.py", 5)  # a line inside price_of
    assert sorted(r["name"] for r in callers.rows) == ["quote", "total"]
    # the answer names the definition the line was taken to mean
    assert (callers.subject["name"], callers.subject["line"]) == ("price_of", 4)
    assert callers.to_json()["subject"] == callers.subject
    assert callers.to_text().splitlines()[0] == (
        "callers of py/shop/prices.py:4-5  function  price_of"
    )
    callees = library.callees(project, "py/main.py", 6)  # inside checkout
    assert sorted((r["name"], r["path"]) for r in callees.rows) == [
        ("Cart", "py/shop/cart.py"), ("total", "py/shop/cart.py"),
    ]  # fmt: skip
    assert callees.subject["name"] == "checkout"
    assert library.refs(project, "py/main.py:12").subject["name"] == "price_of"
    named = library.refs(project, "price_of")  # a name, not a place: no subject
    assert named.subject is None and named.to_json()["subject"] is None
    nowhere = library.callers(project, "py/shop/prices.py", 2)
    assert nowhere.subject is None and nowhere.to_text().startswith("Nothing found.")
    assert "subject" not in library.defs(project, "price_of").to_json()
    assert [r["name"] for r in library.callers(project, "go/store/store.go", 4).rows] == ["main"]
    assert [r["name"] for r in library.callers(project, "web/src/format.ts", 1).rows] == ["render"]

    outline = library.outline(project, "py/shop/cart.py")
    assert [(r["line"], r["kind"], r["container"], r["name"]) for r in outline.rows] == [
        (4, "class", None, "Cart"),
        (7, "method", "Cart", "__init__"),
        (10, "method", "Cart", "total"),
        (13, "method", "Cart", "count"),
    ]
    assert outline.rows[0]["doc"] == "A basket of items."

    overview = library.map(project, budget=60)
    assert overview.text and len(overview.text) <= 60 * 4
    assert set(sites(overview)) <= {(d["path"], d["line"]) for d in _all_defs(library, project)}
    assert f"{overview.rows[0]['line']}: {overview.rows[0]['signature']}" in overview.text
    near = library.map(project, "how is money formatted for display? format", budget=20)
    assert near.rows[0]["name"] == "formatPrice"


def _all_defs(library, root):
    rows = []
    for path in PROJECT:
        rows += library.outline(root, path).rows
    return rows


def test_answers_as_json_and_text_name_their_sites(project, library):
    data = library.refs(project, "formatPrice").to_json()
    assert data["tool"] == "refs" and data["notes"] == [] and data["truncated"] is False
    assert {"path", "line", "column", "kind", "name", "container", "text"} <= set(data["rows"][0])
    assert json.loads(json.dumps(data)) == data
    text = library.refs(project, "formatPrice").to_text()
    assert text.splitlines()[:3] == [
        "web/src/view.js  (file level)",
        "  1:10  import { formatPrice } from './format';",
        "web/src/view.js  render",
    ]
    limited = library.refs(project, "price_of", limit=1)
    assert len(limited.rows) == 1 and limited.truncated
    assert "note: only the first 1 rows" in limited.to_text()


MANY = "".join(f"def step_{n}():\n    return {n}\n\n\n" for n in range(60))


@pytest.mark.parametrize("live", [False, True], ids=["one-shot", "server"])
def test_every_tool_is_truncated_only_when_more_rows_match_than_the_limit(
    make_tree, settings_for, hash_provider, live
):
    """At exactly ``limit`` matching rows an answer is whole (`truncated` false, no "only the
    first N rows" note); at ``limit`` - 1 it is cut and says so; `outline` without a limit
    lists every definition (issue 47, rows 4 and 9)."""
    root = make_tree(
        {**PROJECT, "py/more.py": "def price_of(x):\n    return x\n", "py/many.py": MANY}
    )
    tools = Workspaces(live=live, settings=settings_for(provider=hash_provider))
    asked = {
        "defs": lambda limit: tools.defs(root, "price_of", limit=limit),
        "refs": lambda limit: tools.refs(root, "price_of", limit=limit),
        "refs PATH:LINE": lambda limit: tools.refs(root, "py/shop/prices.py:4", limit=limit),
        "callers": lambda limit: tools.callers(root, "py/shop/prices.py", 5, limit=limit),
        "callees": lambda limit: tools.callees(root, "py/main.py", 6, limit=limit),
        "outline": lambda limit: tools.outline(root, "py/shop/cart.py", limit=limit),
    }
    for tool, ask in asked.items():
        whole = ask(None)
        n = len(whole.rows)
        assert n >= 2 and not whole.truncated, tool
        exact = ask(n)
        assert (exact.rows, exact.truncated) == (whole.rows, False), tool
        assert "only the first" not in exact.to_text(), tool
        cut = ask(n - 1)
        assert (cut.rows, cut.truncated) == (whole.rows[: n - 1], True), tool
        assert f"note: only the first {n - 1} rows" in cut.to_text(), tool
    everything = tools.outline(root, "py/many.py")
    assert [r["name"] for r in everything.rows] == [f"step_{n}" for n in range(60)]
    assert not everything.truncated
    overview = tools.map(root, budget=200)  # the map's rows are those it shows, all of them
    assert len(overview.rows) >= 2 and not overview.truncated


def test_uses_as_text_are_grouped_by_file_and_definition_with_calls_marked(make_tree, library):
    twice = (
        "from shop.prices import price_of\n\n\n"
        "def both(a, b):\n    return price_of(a) + price_of(b)\n"
    )
    root = make_tree({**PROJECT, "py/twice.py": twice})
    assert library.refs(root, "price_of").to_text().splitlines() == [
        "py/main.py  (file level)",
        "  2:25  from shop.prices import price_of",
        "py/main.py  quote",
        "  12:12 call  return price_of(item)",
        "py/shop/cart.py  (file level)",
        "  1:21  from .prices import price_of",
        "py/shop/cart.py  Cart.total",
        "  11:20 call  return sum(price_of(i) for i in self.items)",
        "py/twice.py  (file level)",
        "  1:25  from shop.prices import price_of",
        "py/twice.py  both",  # one heading for the two calls in `both`
        "  5:12 call  return price_of(a) + price_of(b)",
        "  5:26 call  return price_of(a) + price_of(b)",
    ]


def test_every_answer_as_text_and_json(project, library):
    """Definitions as `path:line-end  kind  Container.name` and their signature; the map's
    text as rendered; "Nothing found." for no rows; the notes last, escaped, or left to the
    caller (`notes=False`); JSON with a subject for refs/callers/callees only, the map's
    text for the map only."""
    from seek.workspace.code_graph import GraphResult

    found = library.defs(project, "Cart.total")
    assert found.rows == [
        {
            "path": "py/shop/cart.py", "line": 10, "end_line": 11, "column": 9,  # 1-based
            "kind": "method", "name": "total", "container": "Cart",
            "signature": "def total(self):", "doc": "",
        }
    ]  # fmt: skip
    assert found.to_text() == "py/shop/cart.py:10-11  method  Cart.total\n      def total(self):"
    assert set(found.to_json()) == {"tool", "query", "rows", "notes", "truncated"}
    callers = library.callers(project, "py/shop/prices.py", 5)
    assert callers.to_text().splitlines()[1:] == [
        "py/main.py:10-12  function  quote", "      def quote(item):",
        "py/shop/cart.py:10-11  method  Cart.total", "      def total(self):",
    ]  # fmt: skip
    assert set(callers.to_json()) == {"tool", "query", "rows", "notes", "truncated", "subject"}
    overview = library.map(project, budget=40)
    assert (overview.tool, overview.query, library.map(project, "price").query) == (
        "map", "", "price"
    )  # fmt: skip
    assert overview.to_text() == overview.text.rstrip("\n") and "\n" in overview.to_text()
    assert overview.to_json()["map"] == overview.text and "subject" not in overview.to_json()
    cut = library.refs(project, "price_of", limit=1)
    assert cut.to_text(notes=False).splitlines() == cut.to_text().splitlines()[:-1]
    assert cut.to_text().splitlines()[-1] == (
        "note: only the first 1 rows (ask for more with a limit)"
    )
    noted = GraphResult("defs", "x", [], notes=("one", "two\x1b"))
    assert noted.to_text() == "Nothing found.\nnote: one\nnote: two\\x1b"
    assert noted.to_text(notes=False) == "Nothing found."


def test_a_uses_line_of_text_is_read_beneath_the_root_and_cut(tmp_path):
    from seek.workspace.code_graph import LINE_TEXT_CHARS, Lines

    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("first\n   second  \n" + "x" * 300)  # no final line break
    (root / "b.py").write_bytes(b"ok \xff\n")  # not UTF-8
    (tmp_path / "outside.py").write_text("secret\n")
    lines = Lines()
    assert [lines.get(root, "a.py", n) for n in (1, 2, 3)] == ["first", "second", "x" * 200]
    assert LINE_TEXT_CHARS == 200
    assert [lines.get(root, "a.py", n) for n in (0, 4, -1)] == ["", "", ""]
    assert lines.get(root, "b.py", 1) == "ok \ufffd"
    assert lines.get(root, "../outside.py", 1) == "" and lines.get(root, "gone.py", 1) == ""
    (root / "a.py").write_text("changed\n")
    assert lines.get(root, "a.py", 1) == "first"  # each file read once per answer


def test_the_maps_text_is_printed_as_rendered_but_its_last_line_break(make_tree, library):
    """Only the final line break goes: a last signature ending in `X`, or in a space where a
    long line was cut at 200 characters, stays whole."""
    ends_in_x = make_tree({"a.py": "MAX = 1\nLIMIT = MAX\n"}, "x")
    assert library.map(ends_in_x).to_text() == "a.py:\n  1: MAX = 1\n  2: LIMIT = MAX"
    cut = "V = '" + "a" * 194 + " tail'\n"  # the 200th character is the space
    ends_in_space = make_tree({"a.py": cut}, "space")
    assert library.map(ends_in_space).to_text() == "a.py:\n  1: " + cut[:200]


def test_the_map_shows_neither_fields_nor_tests(make_tree, library):
    test_file = "from shop.prices import price_of\n\n\ndef test_price():\n    assert price_of\n"
    root = make_tree({**PROJECT, "py/tests/test_prices.py": test_file})
    rows = library.map(root, budget=5000).rows
    shown = {(r["path"], r["name"]) for r in rows}
    assert ("go/store/store.go", "Open") in shown and ("py/shop/prices.py", "price_of") in shown
    assert not [r for r in rows if r["kind"] == "field" or "tests/" in r["path"]]
    whole = {(d["path"], d["name"]) for d in _all_defs(library, root)}
    assert ("go/store/store.go", "path") in whole  # the Go struct's field, left out
    assert [r["name"] for r in library.outline(root, "py/tests/test_prices.py").rows] == [
        "test_price"
    ]  # a definition of a test file, left out


def test_a_line_where_two_definitions_start_means_the_outer_one(make_tree, library):
    """`callers a.js:1` where `outer` and the arrow function `inner` inside it both start:
    the definition named first on the line, not the innermost span holding the line."""
    root = make_tree(
        {
            "a.js": "function outer() { const inner = () => helper();\n  return inner();\n}\n\n"
            "function helper() {\n  return 1;\n}\n\nfunction main() {\n  return outer();\n}\n"
        }
    )
    found = library.callers(root, "a.js", 1)
    assert found.subject["name"] == "outer" and [r["name"] for r in found.rows] == ["main"]
    inside = library.callers(root, "a.js", 2)  # a line only `outer` holds
    assert inside.subject["name"] == "outer"
    nowhere = library.callees(root, "a.js", 4)
    assert nowhere.subject is None and nowhere.notes == ("No definition at a.js:4.",)
    uses = library.refs(root, "a.js:4")
    assert (uses.rows, uses.subject, uses.notes) == ([], None, ("No definition at a.js:4.",))


def test_text_from_the_workspace_is_escaped(make_tree, library):
    root = make_tree({"evil.py": "def f():  # \x1b]0;owned\x07\n    return 1\n"})
    text = library.defs(root, "f").to_text()
    assert "\x1b" not in text and "\x07" not in text and "\\x1b]0;owned\\x07" in text


def test_the_subject_line_escapes_a_hostile_file_name(make_tree, library):
    """A cloned repository may name a file with terminal control codes; the line naming the
    definition a PATH:LINE meant prints its path escaped, as the rows do."""
    evil = "ev\x1b]0;owned\x07il.py"
    root = make_tree({evil: "def f():\n    return g()\n\n\ndef g():\n    return 1\n"})
    found = library.callees(root, evil, 2)
    assert found.subject["path"] == evil and [r["name"] for r in found.rows] == ["g"]
    text = found.to_text()
    assert "\x1b" not in text and "\x07" not in text
    assert text.splitlines()[0] == "callees of ev\\x1b]0;owned\\x07il.py:1-2  function  f"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda w, r: w.defs(r, ""), "empty"),
        (lambda w, r: w.defs(r, "x" * 501), "longer than"),
        (lambda w, r: w.defs(r, "a\x00b"), "NUL"),
        (lambda w, r: w.defs(r, "ok", limit=0), "limit"),
        (lambda w, r: w.outline(r, "../secret.py"), "workspace-relative"),
        (lambda w, r: w.outline(r, "/etc/passwd"), "workspace-relative"),
        (lambda w, r: w.callers(r, "py/main.py", 0), "line"),
        (lambda w, r: w.callees(r, "py/main.py", True), "line"),
        (lambda w, r: w.refs(r, "../../x.py:3"), "workspace-relative"),
        (lambda w, r: w.map(r, budget=0), "budget"),
        (lambda w, r: w.map(r, "\ud800"), "Unicode"),
    ],
)
def test_bad_input_is_one_clear_error(project, library, call, message):
    with pytest.raises(SeekError, match=message):
        call(library, project)


def test_the_tools_input_is_normalised_or_refused_with_its_reason():
    """The checks every front end's question goes through (a server's caller is not
    trusted): names and paths trimmed, `./` and `\\` accepted, anything that could climb
    out of the workspace or is not a whole number in range refused, each with its reason."""
    from seek.workspace import code_graph as cg

    assert cg.check_name("  Cart.total \n") == "Cart.total"
    assert cg.check_name("x" * 500) == "x" * 500
    with pytest.raises(SeekError, match="^the name must not contain NUL characters$"):
        cg.check_name("a\x00b")
    for bad, reason in [("", "the name is empty"), ("x" * 501, "the name is longer than 500")]:
        with pytest.raises(SeekError, match=f"^{reason}"):
            cg.check_name(bad)
    for given, path in [
        ("py/main.py", "py/main.py"),
        ("./py/main.py", "py/main.py"),
        ("././main.py", "main.py"),
        (" py\\main.py ", "py/main.py"),
    ]:
        assert cg.check_path(given) == path, given
    for bad in [
        "",
        " ",
        "/",
        "/etc/passwd",
        "../a.py",
        "py/../a.py",
        "py//a.py",
        "py/./a.py",
        "py/",
    ]:
        with pytest.raises(SeekError) as refused:
            cg.check_path(bad)
        assert str(refused.value) == f"{bad!r} is not a workspace-relative file path", bad
    with pytest.raises(SeekError, match="^the path must not contain NUL characters$"):
        cg.check_path("py/a\x00.py")
    assert cg.check_line(1) == 1 and cg.check_line(10**6) == 10**6
    for bad in [0, -1, True, 1.0, "3", None]:
        with pytest.raises(SeekError, match="^the line must be a whole number from 1$"):
            cg.check_line(bad)
    assert cg.parse_location(" py/main.py:12 ") == ("py/main.py", 12)
    assert cg.parse_location("a:b.py:3") == ("a:b.py", 3)
    for not_one in ["py/main.py", "py/main.py:", "py/main.py:x", ":12", "py/main.py:1a"]:
        assert cg.parse_location(not_one) is None, not_one
    assert (cg.check_limit(None), cg.check_limit(1), cg.check_limit(1000)) == (50, 1, 1000)
    for bad in [0, 1001, True, 2.0, "5"]:
        with pytest.raises(SeekError, match="^the limit must be from 1 to 1000$"):
            cg.check_limit(bad)
    assert (cg.check_budget(None), cg.check_budget(1), cg.check_budget(100_000)) == (
        1024, 1, 100_000
    )  # fmt: skip
    for bad in [0, 100_001, False, 3.0]:
        with pytest.raises(SeekError, match="^the budget must be from 1 to 100000 tokens$"):
            cg.check_budget(bad)


def test_a_path_longer_than_the_limit_is_refused(project, library):
    with pytest.raises(SeekError, match="longer than 4096"):
        library.outline(project, "a/" * 2046 + "xy.py")  # 4097 characters
    assert library.outline(project, "a/" * 2046 + "x.py").rows == []  # 4096: a path


def test_an_index_without_its_graph_yet_answers_nothing_with_a_note(
    project, library, settings_for, hash_provider, monkeypatch
):
    """Between an index from an older seek and the run that stores its graph (or while a
    run writes it) the tools answer no rows and say why, not an error."""
    from seek.store import index_dir_for, load_manifest
    from seek.store.graph_table import GraphTable, graph_table_name
    from seek.workspace import code_graph as cg
    from seek.workspace import stored_graph as sg

    library.defs(project, "price_of")  # indexed, graph and all
    settings = settings_for(provider=hash_provider)
    index_dir = index_dir_for(project, settings)
    GraphTable(index_dir, graph_table_name(load_manifest(index_dir).table)).drop()
    assert sg.load_graph(index_dir) == (None, sg.load_graph(index_dir)[1])
    notes: list[str] = []
    assert sg.graph_for(project, settings, None, notes) is None and notes == [sg.NOT_BUILT]
    loaded = []
    monkeypatch.setattr(sg, "load_graph", _counting(loaded, sg.load_graph))
    cache = sg.GraphCache()
    assert sg.graph_for(project, settings, cache, []) is None
    assert cache.get(index_dir) is None and len(loaded) == 2  # no graph is not kept
    monkeypatch.undo()
    outline = sg.file_outline(project, index_dir, "py/main.py", 10, notes := [])
    assert (outline.rows, outline.notes, notes) == ([], (sg.NOT_BUILT,), [sg.NOT_BUILT])
    assert (outline.tool, outline.query, outline.truncated) == ("outline", "py/main.py", False)
    nothing = cg.Lookup(project, None, [sg.NOT_BUILT])
    for answer, tool, query in (
        (cg.defs(nothing, "price_of", 10), "defs", "price_of"),
        (cg.refs(nothing, "py/main.py:12", 10), "refs", "py/main.py:12"),
        (cg.callers(nothing, "py/shop/prices.py", 5, 10), "callers", "py/shop/prices.py:5"),
        (cg.callees(nothing, "py/shop/prices.py", 5, 10), "callees", "py/shop/prices.py:5"),
        (cg.outline(nothing, "py/main.py", 10), "outline", "py/main.py"),
        (cg.repo_map(nothing, "price", 100), "map", "price"),
    ):
        assert (answer.rows, answer.notes, answer.truncated) == ([], (sg.NOT_BUILT,), False)
        assert (answer.tool, answer.query, answer.subject, answer.text) == (tool, query, None, "")
    assert sg.file_definitions(index_dir, ["py/main.py"]) == {}  # no definitions column
    assert sg.file_definitions(index_dir.parent / "never-indexed", ["py/main.py"]) == {}


def test_a_server_keeps_the_graph_until_the_index_changes(
    project, settings_for, hash_provider, monkeypatch
):
    monkeypatch.setattr("seek.workspace.live.FRESHNESS_S", 0.0)
    server = Workspaces(live=True, settings=settings_for(provider=hash_provider))
    assert sites(server.defs(project, "price_of")) == [("py/shop/prices.py", 4)]
    loaded = []
    monkeypatch.setattr(
        "seek.workspace.stored_graph.load_graph",
        _counting(loaded, stored_graph.load_graph),
    )
    server.callers(project, "py/shop/prices.py", 4)
    server.outline(project, "py/main.py")
    assert loaded == []  # the graph of the unchanged index is reused
    (project / "py/shop/prices.py").write_text(
        "TAX = 2\n\n\n\n# moved\ndef price_of(item):\n    return item.cost * TAX\n"
    )
    assert sites(server.defs(project, "price_of")) == [("py/shop/prices.py", 6)]
    assert len(loaded) == 1


def test_a_one_shot_outline_reads_the_files_row_and_answers_as_a_server_does(
    project, library, settings_for, hash_provider, monkeypatch
):
    server = Workspaces(live=True, settings=settings_for(provider=hash_provider))
    paths = [*PROJECT, "py/nowhere.py", "README.md"]
    expected = {p: server.outline(project, p) for p in paths}
    loaded = []
    monkeypatch.setattr(
        "seek.workspace.stored_graph.load_graph",
        _counting(loaded, stored_graph.load_graph),
    )
    for path in paths:
        found = library.outline(project, path)
        assert (found.rows, found.notes) == (expected[path].rows, expected[path].notes), path
    assert any(expected[p].notes for p in paths) and any(expected[p].rows for p in paths)
    assert loaded == []  # no whole graph was assembled


def test_a_one_shot_lookup_decodes_the_files_that_mention_the_name_and_answers_as_a_server_does(
    project, library, settings_for, hash_provider, monkeypatch
):
    """A one-shot call reads the graph lazily (seek.index.graph_rows.StoredFacts): every
    file's definitions, and the facts of the files whose stored text holds the name."""
    from seek.index import graph_rows

    server = Workspaces(live=True, settings=settings_for(provider=hash_provider))
    calls = [
        lambda w: w.defs(project, "price_of"),
        lambda w: w.defs(project, "Cart.total"),
        lambda w: w.refs(project, "price_of"),
        lambda w: w.refs(project, "py/main.py:12"),
        lambda w: w.callers(project, "py/shop/prices.py", 5),
        lambda w: w.callees(project, "py/main.py", 6),
        lambda w: w.callers(project, "go/store/store.go", 4),
        lambda w: w.defs(project, "nowhere"),
        lambda w: w.map(project, "price", budget=200),
    ]
    expected = [call(server) for call in calls]
    assert all(e.rows for e in expected[:7])
    decoded = []
    monkeypatch.setattr(graph_rows, "decode", _counting(decoded, graph_rows.decode))
    sources = len([p for p in PROJECT if not p.endswith("go.mod")])
    for n, call in enumerate(calls):
        decoded.clear()
        found = call(library)
        assert (found.rows, found.text, found.notes) == (
            expected[n].rows, expected[n].text, expected[n].notes
        ), n  # fmt: skip
        files = {args[0] for args in decoded}
        if n == 0:  # the definition's file and the two that import it
            assert files == {"py/shop/prices.py", "py/shop/cart.py", "py/main.py"}
        elif n == len(calls) - 2:
            assert files == set()  # a name nobody writes
        elif n == len(calls) - 1:
            assert len(files) == sources  # the map ranks the whole graph


def _counting(calls, function):
    def counted(*args, **kwargs):
        calls.append(args)
        return function(*args, **kwargs)

    return counted


# -- the command line --------------------------------------------------------------------


def seek(home, cwd, *args):
    env = {**os.environ, "SEEK_HOME": str(home), "XDG_CONFIG_HOME": str(home / "config")}
    return subprocess.run(
        [sys.executable, "-m", "seek", *args], capture_output=True, text=True, env=env,
        cwd=cwd, timeout=300, check=False,
    )  # fmt: skip


@pytest.mark.slow
def test_the_cli_prints_text_json_and_vimgrep(project, seek_home):
    out = seek(seek_home, project, "def", "price_of")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "py/shop/prices.py:4-5  function  price_of",
        "      def price_of(item):",
    ]
    out = seek(seek_home, project, "refs", "price_of", "--json")
    data = json.loads(out.stdout)
    assert [(r["path"], r["line"]) for r in data["rows"]][1] == ("py/main.py", 12)
    out = seek(seek_home, project / "py", "callers", "shop/prices.py:4", "--format", "vimgrep")
    assert sorted(out.stdout.splitlines()) == [
        "main.py:10:5:def quote(item):",
        "shop/cart.py:10:9:def total(self):",
    ]
    out = seek(seek_home, project, "callees", "py/main.py:6", "--format", "jsonl")
    assert {json.loads(line)["name"] for line in out.stdout.splitlines()} == {"Cart", "total"}
    out = seek(seek_home, project, "outline", "py/shop/cart.py", "-n", "2")
    assert out.stdout.splitlines()[0] == "py/shop/cart.py:4-14  class  Cart"
    assert "only the first 2 rows" in out.stderr
    out = seek(seek_home, project, "map", "format", "--budget", "30")
    assert out.stdout.startswith("web/src/format.ts:\n  1: export function formatPrice")
    out = seek(seek_home, project, "callers", "py/main.py:zero")
    assert out.returncode == 2 and "expected PATH:LINE" in out.stderr


# -- MCP ---------------------------------------------------------------------------------


async def mcp_calls(workspace, seek_home, calls):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "seek", "mcp"], cwd=str(workspace),
        env={**os.environ, "SEEK_HOME": str(seek_home), "XDG_CONFIG_HOME": str(seek_home)},
    )  # fmt: skip
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            results = [await session.list_tools()]
            for name, arguments in calls:
                results.append(await session.call_tool(name, arguments))
    return results


def text_of(result):
    return "\n".join(part.text for part in result.content)


@pytest.mark.slow
def test_mcp_tools_say_when_to_use_them_and_answer(project, seek_home):
    tools, defs, refs, callers, outline, overview, outside, bad = anyio.run(
        mcp_calls, project, seek_home, [
            ("defs", {"name": "Open"}),
            ("refs", {"target": "price_of"}),
            ("callers", {"path": str(project / "py/shop/prices.py"), "line": 4}),
            ("outline", {"path": "py/shop/prices.py"}),
            ("map", {"question": "store", "budget": 40}),
            ("outline", {"path": "../../etc/passwd"}),
            ("callers", {"path": "py/main.py", "line": 0}),
        ],
    )  # fmt: skip
    described = {t.name: t.description for t in tools.tools}
    for name in ("defs", "refs", "callers", "callees", "outline", "map"):
        assert name in described
    assert "instead of grep" in described["defs"] and "instead of grep" in described["refs"]
    assert text_of(defs).splitlines()[0] == "go/store/store.go:4-6  function  Open"
    assert "py/main.py  quote\n  12:12 call  return price_of(item)" in text_of(refs)
    about, *found = text_of(callers).splitlines()
    assert about == "callers of py/shop/prices.py:4-5  function  price_of"
    assert {line.split("  ")[-1] for line in found[::2]} == {"quote", "Cart.total"}
    assert text_of(outline).splitlines()[0] == "py/shop/prices.py:1-1  constant  TAX"
    assert text_of(overview).startswith("go/")
    assert outside.is_error and "workspace-relative" in text_of(outside)
    assert bad.is_error


# -- HTTP --------------------------------------------------------------------------------


@pytest.mark.slow
def test_http_routes_answer_as_json(project, seek_home):
    config = ServeConfig(workspaces=(project,), overrides={"home": str(seek_home)})
    with running(config) as url:

        def post(route, body):
            return httpx.post(f"{url}/v1/{route}", json=body, timeout=120)

        found = post("def", {"name": "formatPrice"})
        assert found.status_code == 200, found.text
        assert found.json()["workspace"] == "ws"
        assert [(r["path"], r["line"]) for r in found.json()["rows"]] == [("web/src/format.ts", 1)]
        uses = post("refs", {"file": "py/shop/prices.py", "line": 4}).json()
        assert [(r["path"], r["line"]) for r in uses["rows"]][1] == ("py/main.py", 12)
        assert post("refs", {"name": "price_of"}).json()["rows"] == uses["rows"]
        callers = post("callers", {"file": "go/store/store.go", "line": 5}).json()
        assert [r["name"] for r in callers["rows"]] == ["main"]
        callees = post("callees", {"file": "web/src/view.js", "line": 4}).json()
        assert [r["name"] for r in callees["rows"]] == ["formatPrice"]
        assert callees["subject"]["path"] == "web/src/view.js"
        outline = post("outline", {"file": "py/main.py", "limit": 1}).json()
        assert [r["name"] for r in outline["rows"]] == ["checkout"] and outline["truncated"]
        overview = post("map", {"budget": 50}).json()
        assert overview["map"] and overview["rows"]
        for route, body in [
            ("def", {}),
            ("def", {"name": 3}),
            ("outline", {"file": "../x.py"}),
            ("outline", {"file": "/etc/passwd"}),
            ("callers", {"file": "py/main.py", "line": 0}),
            ("callers", {"file": "py/main.py"}),
            ("map", {"budget": 0}),
            ("refs", {"name": "x", "limit": 100_000}),
        ]:
            answer = post(route, body)
            assert answer.status_code == 400, (route, body, answer.text)
            assert set(answer.json()) == {"error"}
        paths = httpx.get(f"{url}/v1/openapi.json").json()["paths"]
        assert {"/v1/def", "/v1/refs", "/v1/callers", "/v1/callees", "/v1/outline", "/v1/map"} <= (
            set(paths)
        )
