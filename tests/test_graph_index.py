"""The code graph stored with the index (issue 28 deliver 1): written with each file's rows,
replaced when the file changes, removed with it, rebuilt with a rebuild, updated by
``seek watch``, added to an index stored before it; real tree-sitter and LanceDB."""

import importlib
import json
import os
from dataclasses import MISSING, fields

import lancedb
import pyarrow as pa
import pytest

from seek.graph import Definition, FileFacts, Import, Reference, build_graph
from seek.index.freshness import is_current
from seek.index.graph_rows import assemble, encode, read_graph
from seek.index.indexer import REBUILD, Indexer, index_workspace
from seek.store import index_dir_for, load_manifest
from seek.store.graph_table import GraphTable, graph_table_name
from seek.workspace import Workspaces
from seek.workspace.stored_graph import file_definitions, load_graph

PROJECT = {
    # Python: a package, a relative import, a method call through an instance
    "py/shop/__init__.py": "from .cart import Cart\n",
    "py/shop/cart.py": (
        "from .prices import price_of\n\n\n"
        "class Cart:\n"
        "    def __init__(self):\n        self.items = []\n\n"
        "    def total(self):\n        return sum(price_of(i) for i in self.items)\n"
    ),
    "py/shop/prices.py": "TAX = 2\n\n\ndef price_of(item):\n    return item.cost * TAX\n",
    # a base class and super(): FileFacts.bases, a member bound through the base
    "py/shop/gift.py": (
        "from .cart import Cart\n\n\n"
        "class GiftCart(Cart):\n    def total(self):\n        return super().total() - 1\n"
    ),
    "py/main.py": "from shop import Cart\n\n\ndef checkout():\n    return Cart().total()\n",
    # JavaScript / TypeScript: ES imports between files
    "web/src/format.ts": (
        "export function formatPrice(cents: number): string {\n"
        "  return (cents / 100).toFixed(2);\n}\n"
    ),
    "web/src/view.js": (
        "import { formatPrice } from './format';\n\n"
        "export function render(item) {\n  return formatPrice(item.cents);\n}\n"
    ),
    # Go: a module, a package imported by path
    "go/go.mod": "module example.com/shop\n\ngo 1.22\n",
    "go/store/store.go": (
        "package store\n\n// Open opens the store.\nfunc Open(path string) *Store {\n"
        "\treturn &Store{path: path}\n}\n\ntype Store struct {\n\tpath string\n}\n"
    ),
    "go/main.go": (
        'package main\n\nimport "example.com/shop/store"\n\n'
        'func main() {\n\ts := store.Open("db")\n\t_ = s\n}\n'
    ),
    "README.md": "# Shop\n\nA cart, prices and a store.\n",
}


def records(graph):
    """Every record of the graph, by its class (a file's facts, definitions, uses, imports)."""
    facts = list(graph.files.values())
    return {
        FileFacts: facts,
        Definition: [d for f in facts for d in f.definitions],
        Reference: [r for f in facts for r in f.references],
        Import: [i for f in facts for i in f.imports],
    }


def assert_every_field_is_exercised(graph):
    """Each field of each record is set (not its default) somewhere in ``graph``, so that the
    stored graph's equality with a clean build pins every field: a field the row drops or
    mangles makes the two differ (the library's fields are read, not listed here)."""
    unset = []
    for cls, items in records(graph).items():
        for name, default in _defaults(cls).items():
            if not any(getattr(item, name) != default for item in items):
                unset.append(f"{cls.__name__}.{name}")
    assert unset == [], "the test project leaves these at their defaults"


def _defaults(cls) -> dict:
    """The fields of a record (a dataclass or a named tuple) that have a default, with it."""
    if hasattr(cls, "_field_defaults"):
        return dict(cls._field_defaults)
    out = {}
    for f in fields(cls):
        if f.default is not MISSING:
            out[f.name] = f.default
        elif f.default_factory is not MISSING:
            out[f.name] = f.default_factory()
    return out


def run(root, settings, **kw):
    return index_workspace(root, settings, **kw)


def disk_files(root):
    files = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            files[os.path.relpath(path, root).replace(os.sep, "/")] = open(path, "rb").read()
    return files


def stored(root, settings):
    index_dir = index_dir_for(root, settings)
    return load_graph(index_dir)[0]


def graph_rows(root, settings):
    index_dir = index_dir_for(root, settings)
    table = graph_table_name(load_manifest(index_dir).table)
    return sorted(GraphTable(index_dir, table).load_all())


def assert_same_graph(root, settings):
    """The stored graph is the one built from the files on disk (imports resolved alike)."""
    graph = stored(root, settings)
    clean = build_graph(disk_files(root))
    assert graph is not None
    assert graph.files == clean.files
    paths = [path for path, *_ in graph_rows(root, settings)]
    assert len(paths) == len(set(paths)), "one row per file"


@pytest.fixture
def project(make_tree):
    return make_tree(PROJECT)


@pytest.fixture
def settings(settings_for, hash_provider):
    """The hash embedder, by name: a search's freshness check sees the index as current."""
    return settings_for(provider=hash_provider)


def test_an_index_run_stores_the_graph_of_every_source_file(project, settings):
    run(project, settings)
    assert_every_field_is_exercised(build_graph(disk_files(project)))
    assert_same_graph(project, settings)
    graph = stored(project, settings)
    assert "README.md" not in graph.files
    # imports resolved over the stored files: Python relative, TS from JS, Go by module path
    (price_of,) = graph.defs("price_of")
    assert [d.path for d in graph.callers(price_of)] == ["py/shop/cart.py"]
    assert [d.name for d in graph.callers(graph.defs("formatPrice")[0])] == ["render"]
    assert [d.name for d in graph.callers(graph.defs("Open")[0])] == ["main"]


def test_edits_moves_deletions_and_rebuilds_keep_the_graph_equal_to_the_files(
    project, settings, monkeypatch
):
    run(project, settings)
    prices = project / "py/shop/prices.py"
    prices.write_text("TAX = 2\n\n\n\n\n# moved down\ndef price_of(item):\n    return item.cost\n")
    (project / "web/src/view.js").unlink()
    (project / "web/src/list.js").write_text(
        "import { formatPrice } from './format';\nexport const show = (c) => formatPrice(c);\n"
    )
    report = run(project, settings)
    assert report.embedded == 2 and report.removed == 1
    assert_same_graph(project, settings)
    graph = stored(project, settings)
    assert [(d.path, d.line) for d in graph.defs("price_of")] == [("py/shop/prices.py", 7)]
    assert "web/src/view.js" not in graph.files
    assert [d.path for d in graph.callers(graph.defs("formatPrice")[0])] == ["web/src/list.js"]

    before = graph_rows(project, settings)
    report = run(project, settings, mode=REBUILD)
    assert report.rebuild_reason == "rebuild requested"
    assert graph_rows(project, settings) == before
    # the next runs keep the current graph table (nothing is read again to rebuild it)
    read = []
    monkeypatch.setattr("seek.index.indexer.file_facts", lambda *args: read.append(args))
    (project / "README.md").write_text("# Shop\n\nChanged prose.\n")
    run(project, settings)
    assert read == []
    assert graph_rows(project, settings) == before


def test_watch_updates_the_graph_of_the_paths_it_is_given(project, settings):
    run(project, settings)
    (project / "py/main.py").write_text(
        "from shop import Cart\n\n\ndef checkout(cart):\n    return cart.total()\n\n\n"
        "def pay():\n    return checkout(Cart())\n"
    )
    (project / "go/store/store.go").unlink()
    Indexer(project, settings).run_paths(["py/main.py", "go/store/store.go"])
    assert_same_graph(project, settings)
    graph = stored(project, settings)
    assert [d.name for d in graph.callers(graph.defs("checkout")[0])] == ["pay"]
    assert graph.defs("Open") == []


def test_an_index_stored_before_the_graph_gets_it_from_the_next_run(project, settings):
    run(project, settings)
    index_dir = index_dir_for(project, settings)
    GraphTable(index_dir, graph_table_name(load_manifest(index_dir).table)).drop()
    assert load_graph(index_dir)[0] is None
    assert not is_current(project, settings)  # a search's freshness check runs the index
    result = Workspaces(live=False, settings=settings).defs(project, "Cart")
    assert [(r["path"], r["line"]) for r in result.rows] == [("py/shop/cart.py", 4)]
    assert result.notes == ()
    assert_same_graph(project, settings)
    assert is_current(project, settings)


def test_a_workspace_without_source_files_has_an_empty_graph_not_a_missing_one(make_tree, settings):
    root = make_tree({"README.md": "# Notes\n\nNothing to run.\n"})
    run(root, settings)
    graph = stored(root, settings)
    assert graph is not None and graph.files == {}
    assert is_current(root, settings)
    result = Workspaces(live=False, settings=settings).defs(root, "anything")
    assert (result.rows, result.notes) == ([], ())


def test_a_run_that_dies_between_rows_and_stamps_leaves_no_graph_rows_behind(
    project, settings, monkeypatch
):
    """Rows written, stamps not (a kill at that instant, simulated in-process at the one
    call between them): the next run drops what no stamp accounts for, graph rows too."""
    run(project, settings)
    (project / "py/shop/extra.py").write_text("def discount(cart):\n    return 0\n")
    (project / "py/main.py").write_text("def checkout():\n    return 1\n")

    def die():
        raise KeyboardInterrupt  # not an Exception: nothing in the run catches it

    monkeypatch.setattr("seek.index.embed_steps.release_free_memory", die)
    with pytest.raises(KeyboardInterrupt):
        run(project, settings)
    monkeypatch.undo()
    assert load_manifest(index_dir_for(project, settings)).run_open
    assert "py/shop/extra.py" in {row[0] for row in graph_rows(project, settings)}  # unstamped
    (project / "py/shop/extra.py").unlink()
    run(project, settings)
    assert_same_graph(project, settings)
    assert stored(project, settings).defs("discount") == []


def test_the_stage_extracts_from_the_tree_the_chunker_parsed(project, settings, monkeypatch):
    """One parse per source file (issue 28's index cost): the graph's facts come from the
    chunker's tree, the same facts a parse of their own gives."""
    from seek.index.graph_rows import file_facts
    from seek.index.rules import chunking_spec
    from seek.index.stages import FileSpec, prepare_file
    from seek.scan import scan_workspace

    files = {f.rel: f for f in scan_workspace(project, max_file_bytes=1_000_000).files}
    spec = FileSpec(chunking_spec(settings), settings.binary_sniff_bytes, "", graph=True)
    expected = {
        rel: file_facts(rel, (project / rel).read_bytes(), project)
        for rel in ("py/shop/cart.py", "web/src/format.ts", "go/store/store.go")
    }

    class NoSecondParse:
        def parse(self, source):
            raise AssertionError("the graph parsed the file again")

    # the module (``seek.graph.extract`` as a name is the function the package exports)
    extract_module = importlib.import_module("seek.graph.extract")
    monkeypatch.setattr(extract_module, "parser_for", lambda grammar: NoSecondParse())
    for rel, facts in expected.items():
        assert facts is not None
        assert prepare_file(project, files[rel], None, spec).graph == facts


def test_a_graph_table_of_an_older_format_is_replaced_from_the_files(project, settings):
    """An index whose graph rows were written in another format (version 1, `t_graph`: uses
    as six values, no declared types) is not read as its graph: the next run stores the
    current one from the files and drops the old table."""
    run(project, settings)
    index_dir = index_dir_for(project, settings)
    table = load_manifest(index_dir).table
    GraphTable(index_dir, graph_table_name(table)).drop()
    old = GraphTable(index_dir, table + "_graph")
    version_1 = {"g": "python", "d": [], "r": [["x", 1, 0, None, None, 0]], "i": []}
    lancedb.connect(index_dir / "lancedb").create_table(
        old.name,
        pa.table({"path": ["py/main.py"], "facts": [json.dumps(version_1)]}),
    )
    assert load_graph(index_dir)[0] is None
    assert not is_current(project, settings)
    run(project, settings)
    assert_same_graph(project, settings)
    assert not old.exists()


def test_a_files_definitions_are_read_without_assembling_the_graph(project, settings):
    """What a search hit needs to name its enclosing definition: one column of a few rows."""
    run(project, settings)
    index_dir = index_dir_for(project, settings)
    clean = build_graph(disk_files(project))
    wanted = ["py/shop/cart.py", "go/store/store.go", "README.md", "no/such.py", "py/shop/cart.py"]
    found = file_definitions(index_dir, wanted)
    assert found == {
        p: clean.files[p].definitions for p in ("py/shop/cart.py", "go/store/store.go")
    }
    GraphTable(index_dir, graph_table_name(load_manifest(index_dir).table)).drop()
    assert file_definitions(index_dir, wanted) == {}


def test_a_graph_read_lazily_answers_as_the_assembled_one(project, settings):
    """Every lookup of a graph whose files are decoded as asked for (a one-shot call's)
    equals the assembled graph's, asked name by name and definition by definition, each on
    a fresh lazy graph; and decoding it all gives the same files."""
    run(project, settings)
    rows = graph_rows(project, settings)
    whole = assemble(rows)
    names = {d.name for f in whole.files.values() for d in f.definitions}
    names |= {r.name for f in whole.files.values() for r in f.references}
    for name in sorted(names):
        assert read_graph(rows).defs(name) == whole.defs(name), name
        assert read_graph(rows).refs(name) == whole.refs(name), name
        assert read_graph(rows).inbound_of((name,)) == whole.inbound_of((name,)), name
    for facts in whole.files.values():
        for d in facts.definitions:
            lazy = read_graph(rows)
            assert lazy.defs(d.name, d.path) == whole.defs(d.name, d.path)
            assert lazy.callers(d) == whole.callers(d) and lazy.callees(d) == whole.callees(d)
            assert lazy.refs(d) == whole.refs(d)
        for r in facts.references:
            assert read_graph(rows).definition_at(r.path, r.line, r.column) == (
                whole.definition_at(r.path, r.line, r.column)
            )
    assert read_graph(rows).map("price", 300) == whole.map("price", 300)
    lazy = read_graph(rows)
    assert dict(lazy.files) == whole.files
    assert lazy.inbound() == whole.inbound()


@pytest.mark.parametrize(
    ("module", "bases"),
    [
        (None, {}),
        (("go", "example.com/shop"), {}),
        (None, {"m": ("A", "B")}),  # a nested key named m: not the row's module
        (("go", "example.com/shop"), {"m": ("A", "B")}),
        (('we"ird,"m":["x', 'y"]}'), {}),  # the marker inside a string is escaped
    ],
)
def test_a_go_rows_module_is_read_without_decoding_the_row(module, bases):
    from seek.index.graph_rows import _row_module, decode

    facts = FileFacts("go/a.go", "go", bases=bases)
    row = encode(facts, module)
    assert _row_module(row[1]) == decode("go/a.go", row)[1] == module
