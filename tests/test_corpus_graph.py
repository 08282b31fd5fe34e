"""The code graph in the corpus (issue 28 deliver 1): a corpus run stores each repository's
graph beside its chunk rows, updates it with edits and removals, repairs it after a killed
run, drops it with a rebuilt or removed repository, fills it for a repository location
before it; `seek corpus def` / `refs` / `callers` / `callees` / `outline` / `map` answer from
it, as the workspace's tools answer over an index of the same tree. Real tree-sitter and
LanceDB, in-process runs (the corpus tests' way)."""

from __future__ import annotations

import json
import pickle

import pytest
from click.testing import CliRunner
from clocks import frozen_clock
from corpus_helpers import REPO_A, REPO_B, add_repos, index, indexed_corpus
from test_corpus_s3 import bucket, s3_endpoint  # noqa: F401 - the S3 server fixtures
from test_graph_index import PROJECT, disk_files

import seek.cli.corpus_cmd  # noqa: F401 - registers `seek corpus`
from seek.cli import cli
from seek.corpus.build import remove_repos
from seek.corpus.catalog import Catalog
from seek.corpus.graph import load_repo_graph, lookup, not_stored
from seek.corpus.location import CorpusError, CorpusLocation
from seek.corpus.work import prepare_batch
from seek.errors import SeekError
from seek.graph import build_graph
from seek.store.corpus_graph import GRAPH_TABLE, CorpusGraph
from seek.store.corpus_table import CorpusTable


def graph_paths(location: CorpusLocation, repo: str) -> list[str]:
    """Every stored row's path of ``repo`` (marker left out), duplicates kept."""
    rows = CorpusGraph(CorpusTable(location)).load_repo(repo)
    return sorted(path for path, *_ in rows or [])


def assert_graph_of_disk(
    location: CorpusLocation, repo: str, root, leave_out: tuple[str, ...] = ()
) -> None:
    """The stored graph of ``repo`` is the one built from its files on disk (less the files
    seek does not index, ``leave_out``)."""
    graph = load_repo_graph(location, repo)
    assert graph is not None
    files = {p: data for p, data in disk_files(root).items() if p not in leave_out}
    assert graph.files == build_graph(files).files
    paths = graph_paths(location, repo)
    assert len(paths) == len(set(paths)), "one row per file"


@pytest.fixture
def repos(make_tree):
    return {"shop": make_tree(PROJECT, "shop"), "beta": make_tree(REPO_B, "beta")}


@pytest.fixture
def location(tmp_path, settings_for, repos) -> CorpusLocation:
    """A corpus in a temporary folder with ``repos`` added and indexed."""
    return indexed_corpus(tmp_path / "corpus", repos, settings_for())


def test_a_corpus_run_stores_each_repositorys_graph(location, repos):
    for name, root in repos.items():
        assert_graph_of_disk(location, name, root)
    assert "README.md" not in load_repo_graph(location, "shop").files
    # Go imports resolve through go.mod, which the row carries (seek does not index go.mod)
    imports = load_repo_graph(location, "shop").files["go/main.go"].imports
    assert [i.files for i in imports] == [("go/store/store.go",)]


def test_a_task_ships_its_graph_rows_back_in_its_result(tmp_path, settings_for, make_tree):
    """What a Ray worker returns: the graph rows travel in the (pickled) BatchResult."""
    from seek.corpus.build import CorpusIndexer
    from seek.corpus.fanout import LocalRunner
    from seek.scan import scan_workspace

    root = make_tree(REPO_A, "alpha")
    indexer = CorpusIndexer(CorpusLocation(str(tmp_path / "c")), settings_for(), LocalRunner())
    files = [(f, None) for f in scan_workspace(root, max_file_bytes=1 << 20).files]
    args = ("alpha", str(root), files, indexer.spec, indexer.settings, indexer.model_id)
    result = pickle.loads(pickle.dumps(prepare_batch(*args)))
    assert sorted(path for path, *_ in result.graph) == [
        "src/http_client.py",
        "src/retry.py",
        "src/router.py",
    ]


def test_edits_and_removals_update_the_graph(location, settings_for, repos):
    shop = repos["shop"]
    prices = "TAX = 3\n\n\ndef price_with_tax(item):\n    return 1\n"
    (shop / "py/shop/prices.py").write_text(prices)
    (shop / "py/shop/gift.py").unlink()
    (shop / "web/src/view.js").write_bytes(b"\x00binary now")  # had rows, now has none
    (shop / "py/shop/coupon.py").write_text("def apply_coupon(cart):\n    return cart.total()\n")
    index(location, settings_for())
    assert_graph_of_disk(location, "shop", shop, leave_out=("web/src/view.js",))
    assert_graph_of_disk(location, "beta", repos["beta"])
    stored = graph_paths(location, "shop")
    assert "py/shop/gift.py" not in stored and "web/src/view.js" not in stored
    assert "py/shop/coupon.py" in stored
    assert lookup(location, "shop", "defs", "price_of").rows == []
    assert [r["path"] for r in lookup(location, "shop", "defs", "price_with_tax").rows] == [
        "py/shop/prices.py"
    ]


def test_a_run_killed_between_rows_and_stamps_is_repaired(
    tmp_path, settings_for, make_tree, monkeypatch
):
    """Rows committed after the last manifest save belong to files without a stamp (a new
    file) or with an older one (a changed file): the next run removes or replaces their
    graph rows as it does their chunk rows."""
    from test_corpus import many_files

    import seek.corpus.build as build

    root = make_tree(many_files("pkg", 30), "big")
    location = CorpusLocation(str(tmp_path / "corpus"))
    add_repos(location, {"big": root})
    # Only the first commit's stamps saved, whatever the clock reads: frozen at 1 s, as on a
    # machine booted a second ago (issue 42: saves were skipped for SAVE_EVERY_S after boot).
    monkeypatch.setattr(build, "SAVE_EVERY_S", 3600.0)
    monkeypatch.setattr(build, "time", frozen_clock(1.0))
    calls = []

    def dies_on_the_fourth(*args):
        calls.append(1)
        if len(calls) == 4:
            raise RuntimeError("the machine went away")
        return prepare_batch(*args)

    def killed_run() -> None:
        calls.clear()
        with pytest.raises(RuntimeError, match="went away"):
            index(location, settings_for(), files_per_task=5, commit_rows=1,
                  task=dies_on_the_fourth)  # fmt: skip

    killed_run()
    stamped = set(Catalog(location).load_manifest("big").files)
    assert 0 < len(stamped) < len(set(graph_paths(location, "big")))  # orphan graph rows
    index(location, settings_for())
    assert_graph_of_disk(location, "big", root)
    # Every file changed: the killed run replaces some files' graph rows, stamps stay old.
    for path in sorted(root.rglob("*.py")):
        path.write_text(path.read_text().replace("def handler_", "def changed_handler_"))
    killed_run()
    index(location, settings_for())
    assert_graph_of_disk(location, "big", root)


def test_a_removed_or_rebuilt_repository_loses_its_graph_and_a_rebuild_refills_it(
    location, settings_for, repos
):
    graph = CorpusGraph(CorpusTable(location))
    stale_row = ("py/gone.py", "[]", json.dumps({"g": "python", "r": [], "i": [], "t": {},
                                                  "b": {}}))  # fmt: skip
    graph.add([("shop", *stale_row)])  # a row no file has: a rebuild must not keep it
    report = index(location, settings_for(window_chars=500))  # another chunking: a rebuild
    assert {r.name: r.rebuild_reason != "" for r in report.repos} == {"shop": True, "beta": True}
    assert_graph_of_disk(location, "shop", repos["shop"])
    remove_repos(location, ["beta"])
    graph = CorpusGraph(CorpusTable(location))  # a reader opened after the removal
    assert graph.load_repo("beta") is None and graph.stored_paths("beta") == set()
    assert graph.load_repo("shop") is not None


def test_a_repository_indexed_before_the_graph_gets_it_on_its_next_run(
    location, settings_for, repos
):
    CorpusTable(location).connect().drop_table(GRAPH_TABLE)  # a corpus of an older seek
    assert load_repo_graph(location, "shop") is None
    result = lookup(location, "shop", "defs", "Cart")
    assert result.rows == [] and "not stored" in result.notes[0]
    report = index(location, settings_for())
    assert sum(r.embedded for r in report.repos) == 0  # nothing embedded again
    for name, root in repos.items():
        assert_graph_of_disk(location, name, root)


def test_a_repository_without_a_stored_graph_is_not_kept_by_a_server(location):
    """A server asked about a repository whose graph is not stored yet answers without one
    and keeps nothing: asked again after the run that stores it, it has it."""
    from seek.corpus.graph import RepoGraphs

    CorpusTable(location).connect().drop_table(GRAPH_TABLE)
    graphs = RepoGraphs(location, lambda: {"shop": 1, "beta": 1})
    assert graphs.get("shop") is None and graphs._kept == {}
    found = lookup(location, "shop", "defs", "Cart", graphs=graphs)
    assert found.rows == [] and found.notes == (not_stored("shop"),)


def test_an_unreadable_corpus_graph_is_one_corpus_error_naming_it(location):
    """A corpus graph table whose data files were cut short: one CorpusError naming the
    repository, the corpus and the cause, not LanceDB's own error (the CLI's and the server's
    answers are in test_corpus_serve_graph.py)."""
    from pathlib import Path

    graph_dir = Path(location.uri) / "lancedb" / f"{GRAPH_TABLE}.lance"
    for data in (graph_dir / "data").iterdir():
        data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])
    with pytest.raises(CorpusError) as raised:
        lookup(location, "shop", "defs", "price_of")
    message = str(raised.value)
    assert message.startswith(f"the code graph of shop stored in the corpus {location.uri} ")
    assert "\n" not in message and raised.value.__cause__ is not None
    what = f"the code graph of shop stored in the corpus {location.uri}"
    # the cause is LanceDB's own error, in one line (credentials masked)
    assert message == CorpusTable(location).unreadable(what, raised.value.__cause__)
    assert "(None)" not in message


def test_corpus_def_and_refs_answer_from_the_stored_graph(location, seek_home, repos, monkeypatch):
    monkeypatch.setenv("SEEK_HOME", str(seek_home))
    runner = CliRunner()
    uri = location.uri
    out = runner.invoke(cli, ["corpus", "def", uri, "price_of", "--repo", "shop", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["repo"] == "shop"
    assert [(r["path"], r["line"], r["kind"], r["repo"]) for r in data["rows"]] == [
        ("py/shop/prices.py", 4, "function", "shop")
    ]
    out = runner.invoke(cli, ["corpus", "refs", uri, "price_of", "--repo", "shop", "--json"])
    assert out.exit_code == 0, out.output
    uses = json.loads(out.output)["rows"]
    assert {(r["path"], r["line"], r["kind"]) for r in uses} == {
        ("py/shop/cart.py", 1, "use"),
        ("py/shop/cart.py", 9, "call"),
    }
    # each use's line, read from the corpus's chunks (no checkout is read)
    lines = (repos["shop"] / "py/shop/cart.py").read_text().split("\n")
    assert {r["text"] for r in uses} == {lines[0].strip(), lines[8].strip()}
    text = runner.invoke(cli, ["corpus", "def", uri, "Cart.total", "--repo", "shop"])
    assert text.exit_code == 0
    assert text.output.startswith("py/shop/cart.py:8-9  method  Cart.total\n")
    # the other repository has its own graph: the same name is not found there
    beta = runner.invoke(cli, ["corpus", "def", uri, "price_of", "--repo", "beta"])
    assert beta.exit_code == 0 and beta.output == "Nothing found.\n"


def test_corpus_graph_lookups_refuse_bad_input_in_one_line(location):
    with pytest.raises(CorpusError, match="no repository 'gamma'"):
        lookup(location, "gamma", "defs", "Cart")
    with pytest.raises(CorpusError, match="bad repository name"):
        lookup(location, "../shop", "defs", "Cart")
    out = CliRunner().invoke(cli, ["corpus", "refs", location.uri, " ", "--repo", "shop"])
    assert out.exit_code == 1 and isinstance(out.exception, SeekError)  # main prints one line
    assert str(out.exception) == "the name is empty"
    with pytest.raises(CorpusError) as unknown:
        lookup(location, "shop", "grep", "x")
    assert str(unknown.value) == (
        "unknown graph tool 'grep': one of defs, refs, callers, callees, outline, map"
    )
    with pytest.raises(SeekError) as nul:
        lookup(location, "shop", "map", "a\x00b")
    assert str(nul.value) == "the question must not contain NUL characters"


QUESTIONS = [  # (tool, target, limit, budget): asked of a corpus and of a workspace index
    ("defs", "Cart", None, None),
    ("refs", "price_of", None, None),
    ("refs", "py/shop/prices.py:4", None, None),
    ("callers", "py/shop/prices.py:5", None, None),  # a line inside price_of
    ("callers", "py/shop/cart.py:9", None, None),  # inside Cart.total: checkout, GiftCart
    ("callers", "go/store/store.go:4", None, None),
    ("callers", "web/src/format.ts:1", None, None),
    ("callers", "py/shop/prices.py:2", None, None),  # no definition there: a note
    ("callees", "py/main.py:5", None, None),
    ("callees", "py/main.py:5", 1, None),  # Cart and Cart.total: one of them
    ("callees", "py/shop/gift.py:6", None, None),
    ("outline", "py/shop/cart.py", None, None),
    ("outline", "py/shop/cart.py", 2, None),
    ("outline", "go/store/store.go", None, None),
    ("outline", "README.md", None, None),  # not a source file: a note
    ("map", "", None, None),
    ("map", "price", None, 40),
]


def workspace_answer(library, root, tool, target, limit, budget):
    """The same question to the workspace facade (``seek def`` etc. in the checkout)."""
    if tool in ("defs", "refs"):
        return getattr(library, tool)(root, target, limit)
    if tool in ("callers", "callees"):
        path, line = target.rsplit(":", 1)
        return getattr(library, tool)(root, path, int(line), limit)
    if tool == "outline":
        return library.outline(root, target, limit)
    return library.map(root, target, budget)


def test_corpus_graph_tools_answer_as_the_workspace_does_over_the_same_tree(
    location, settings_for, repos
):
    """callers, callees, outline and map over a corpus repository are the workspace's own
    functions over its stored graph: the rows (less ``repo``), the notes and the map's text
    equal a workspace index's of the same files."""
    from seek.workspace import Workspaces

    library = Workspaces(live=False, settings=settings_for())
    for tool, target, limit, budget in QUESTIONS:
        ours = lookup(location, "shop", tool, target, limit, budget=budget)
        theirs = workspace_answer(library, repos["shop"], tool, target, limit, budget)
        asked = (tool, target, limit, budget)
        assert all(row.pop("repo") == "shop" for row in ours.rows), asked
        if ours.subject is not None:  # the definition PATH:LINE meant names its repo too
            assert ours.subject.pop("repo") == "shop", asked
        assert ours.to_json() == theirs.to_json(), asked
    # the questions reach rows, truncation and notes (the equality is not of empty answers)
    answers = {(t, g, n): lookup(location, "shop", t, g, n, budget=b) for t, g, n, b in QUESTIONS}
    assert sorted(r["name"] for r in answers["callers", "py/shop/prices.py:5", None].rows) == [
        "total"
    ]
    assert {r["name"] for r in answers["callers", "py/shop/cart.py:9", None].rows} >= {"checkout"}
    assert [r["name"] for r in answers["callers", "go/store/store.go:4", None].rows] == ["main"]
    assert answers["callers", "py/shop/prices.py:2", None].notes == (
        "No definition at py/shop/prices.py:2.",
    )
    assert answers["callers", "py/shop/prices.py:2", None].subject is None
    assert answers["callers", "py/shop/cart.py:9", None].subject["name"] == "total"
    assert answers["callees", "py/main.py:5", 1].truncated
    assert [r["name"] for r in answers["outline", "py/shop/cart.py", None].rows] == [
        "Cart", "__init__", "total",
    ]  # fmt: skip
    assert answers["outline", "py/shop/cart.py", 2].truncated
    assert "not a source file" in answers["outline", "README.md", None].notes[0]
    overview = answers["map", "", None]
    assert overview.rows and overview.to_json()["map"].startswith("py/")
    assert len(answers["map", "price", None].to_json()["map"]) <= 40 * 4
    # another repository has its own graph
    assert lookup(location, "beta", "outline", "py/shop/cart.py").rows == []


def test_seek_corpus_callers_callees_outline_and_map(location, seek_home, monkeypatch):
    """The CLI prints the library's answer (--json: plus ``repo``) and the workspace
    commands' text."""
    monkeypatch.setenv("SEEK_HOME", str(seek_home))
    runner = CliRunner()
    uri = location.uri
    asked = [  # (the command line after URI, the library's question)
        (["callers", "py/shop/prices.py:5"], ("callers", "py/shop/prices.py:5", 50, None)),
        (["callees", "py/main.py:5", "-n", "1"], ("callees", "py/main.py:5", 1, None)),
        (["outline", "py/shop/cart.py"], ("outline", "py/shop/cart.py", None, None)),
        (["outline", "./py/shop/cart.py", "-n", "2"], ("outline", "py/shop/cart.py", 2, None)),
        (["map"], ("map", "", None, None)),
        (["map", "price", "--budget", "40"], ("map", "price", None, 40)),
    ]
    for args, (tool, target, limit, budget) in asked:
        out = runner.invoke(cli, ["corpus", args[0], uri, *args[1:], "--repo", "shop", "--json"])
        assert out.exit_code == 0, (args, out.output)
        library = lookup(location, "shop", tool, target, limit, budget=budget)
        assert json.loads(out.output) == {"repo": "shop", **library.to_json()}, args
    text = runner.invoke(cli, ["corpus", "outline", uri, "py/shop/cart.py", "--repo", "shop"])
    assert text.exit_code == 0
    assert text.output.startswith("py/shop/cart.py:4-9  class  Cart\n      class Cart:\n")
    callers = ["corpus", "callers", uri, "go/store/store.go:4", "--repo", "shop"]
    text = runner.invoke(cli, [*callers, "--this-repo"])
    assert text.exit_code == 0 and text.output.startswith(
        "callers of go/store/store.go:4-6  function  Open\ngo/main.go:5-8  function  main\n"
    )
    # across the corpus (issue 45, the default) the rows stand under their repository
    text = runner.invoke(cli, callers)
    assert text.exit_code == 0 and text.output.startswith(
        "callers of go/store/store.go:4-6  function  Open\n"
        "shop:\n  go/main.go:5-8  function  main\n"
    )
    text = runner.invoke(cli, ["corpus", "map", uri, "--repo", "shop", "--budget", "30"])
    library = lookup(location, "shop", "map", "", budget=30)
    assert text.exit_code == 0 and text.output == library.text.rstrip("\n") + "\n"


def test_corpus_outline_lists_every_definition_without_a_limit(
    tmp_path, make_tree, settings_for, seek_home, monkeypatch
):
    """`seek corpus outline` without `--limit` lists a file's every definition, as `seek
    outline` does; at exactly the limit the answer is whole, one under it is cut (issue 47,
    rows 9 and 4)."""
    monkeypatch.setenv("SEEK_HOME", str(seek_home))
    many = "".join(f"def step_{n}():\n    return {n}\n\n\n" for n in range(60))
    many += "def last():\n    return step_0()\n"  # line 242: in a later chunk of the file
    root = make_tree({"many.py": many}, "many")
    location = indexed_corpus(tmp_path / "corpus", {"many": root}, settings_for())
    names = [*(f"step_{n}" for n in range(60)), "last"]
    found = lookup(location, "many", "outline", "many.py")
    assert [r["name"] for r in found.rows] == names and not found.truncated
    # a use's line is cut from the chunk that holds it, wherever that chunk starts
    uses = lookup(location, "many", "refs", "step_0").rows
    assert [(r["line"], r["text"]) for r in uses] == [(242, "return step_0()")]
    runner = CliRunner()
    for limit, rows, truncated in [(None, 61, False), (61, 61, False), (60, 60, True)]:
        more = [] if limit is None else ["--limit", str(limit)]
        args = ["corpus", "outline", location.uri, "many.py", "--repo", "many", "--json", *more]
        out = runner.invoke(cli, args)
        assert out.exit_code == 0, out.output
        data = json.loads(out.output)
        assert ([r["name"] for r in data["rows"]], data["truncated"]) == (
            names[:rows],
            truncated,
        ), limit


def test_corpus_callers_callees_outline_and_map_refuse_bad_input_in_one_line(location):
    uri = location.uri
    runner = CliRunner()
    usage = [  # refused as `seek callers` / `seek map` refuse them (click: exit 2)
        (["callers", uri, "py/shop/prices.py", "--repo", "shop"], "expected PATH:LINE"),
        (["callees", uri, "py/shop/prices.py:0", "--repo", "shop"], "expected PATH:LINE"),
        (["callees", uri, ":4", "--repo", "shop"], "expected PATH:LINE"),
        (["map", uri, "--repo", "shop", "--budget", "0"], "--budget"),
        (["outline", uri, "py/shop/cart.py", "--repo", "shop", "-n", "0"], "--limit"),
        (["outline", uri, "py/shop/cart.py"], "--repo"),
    ]
    for args, words in usage:
        out = runner.invoke(cli, ["corpus", *args])
        assert out.exit_code == 2 and words in out.output, (args, out.output)
    refused = [  # the library's one-line errors (main prints them)
        (["callers", uri, "../x.py:3", "--repo", "shop"], "is not a workspace-relative file"),
        (["outline", uri, "/etc/passwd", "--repo", "shop"], "is not a workspace-relative file"),
        (["outline", uri, "a.py", "--repo", "gamma"], "no repository 'gamma'"),
        (["map", uri, "x\x00", "--repo", "shop"], "NUL"),
    ]
    for args, words in refused:
        out = runner.invoke(cli, ["corpus", *args])
        assert out.exit_code == 1 and isinstance(out.exception, SeekError), (args, out.output)
        assert words in str(out.exception) and "\n" not in str(out.exception), args
    bad_library = [
        (("callers", "py/shop/prices.py"), {}, "expected PATH:LINE"),
        (("callees", "py/shop/prices.py:0"), {}, "the line must be"),
        (("outline", ""), {}, "is not a workspace-relative file"),
        (("outline", "py/shop/cart.py"), {"limit": -1}, "the limit must be"),
        (("map", ""), {"budget": 10**6}, "the budget must be"),
        (("nearby", "Cart"), {}, "unknown graph tool"),
    ]
    for (tool, target), options, words in bad_library:
        with pytest.raises(SeekError, match=words):
            lookup(location, "shop", tool, target, **options)


@pytest.mark.scale
def test_the_graph_of_a_corpus_on_s3(bucket, settings_for, repos):  # noqa: F811 - the fixture
    """The graph table goes through the same location as the chunk table: an S3 server
    (moto) on 127.0.0.1, read back by another process's reader."""
    location = CorpusLocation(f"s3://{bucket}/team")
    add_repos(location, repos)
    index(location, settings_for())
    (repos["shop"] / "py/shop/gift.py").unlink()
    index(location, settings_for())
    reader = CorpusLocation(location.uri)
    assert_graph_of_disk(reader, "shop", repos["shop"])
    rows = lookup(reader, "shop", "refs", "price_of").rows
    assert {(r["path"], r["line"]) for r in rows} == {
        ("py/shop/cart.py", 1),
        ("py/shop/cart.py", 9),
    }
