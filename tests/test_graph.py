"""The code graph (issue 28): extraction and lookups on small real files, real tree-sitter."""

from __future__ import annotations

import numpy as np
import pytest

from seek.chunk.languages import GRAMMARS, parser_for
from seek.chunk.syntax import syntax_breaks
from seek.graph import build_graph, extract
from seek.graph.rank import pagerank

PY = {
    "pkg/__init__.py": b"from .cache import Cache\n",
    "pkg/cache.py": b'''"""Caching."""


class Cache:
    """Keeps computed values.

    Second line."""

    limit = 10

    def get(self, key):
        return self.lookup(key)

    def lookup(self, key):
        return None


# Builds the default cache.
def make_cache():
    return Cache()
''',
    "pkg/app.py": b"""from pkg import Cache
from .cache import make_cache


class App:
    def run(self):
        cache = make_cache()
        return cache.get("a")


def helper():
    return Cache()
""",
    "pkg/other.py": b"""def run():
    make_cache = 3
    return make_cache
""",
    "tests/test_cache.py": b"""from pkg.cache import Cache


class Cache:
    pass


def test_get():
    assert Cache().get("x") is None
""",
}


@pytest.fixture(scope="module")
def py_graph():
    return build_graph(PY)


def _def(graph, path, qualified):
    return next(d for d in graph.files[path].definitions if d.qualified == qualified)


def test_python_definitions_carry_kind_container_signature_and_doc(py_graph):
    cache = _def(py_graph, "pkg/cache.py", "Cache")
    assert (cache.kind, cache.line, cache.end_line) == ("class", 4, 15)
    assert cache.signature == "class Cache:"
    assert cache.doc == "Keeps computed values."
    get = _def(py_graph, "pkg/cache.py", "Cache.get")
    assert (get.kind, get.container, get.line, get.column) == ("method", "Cache", 11, 8)
    assert _def(py_graph, "pkg/cache.py", "Cache.limit").kind == "field"
    assert _def(py_graph, "pkg/cache.py", "make_cache").doc == "Builds the default cache."
    assert [d.qualified for d in py_graph.outline("pkg/cache.py")] == [
        "Cache",
        "Cache.limit",
        "Cache.get",
        "Cache.lookup",
        "make_cache",
    ]


def test_python_imports_resolve_relative_and_package_modules(py_graph):
    imports = {i.target: i.files for i in py_graph.files["pkg/app.py"].imports}
    assert imports[".cache"] == ("pkg/cache.py",)
    assert imports["pkg"] == ("pkg/__init__.py",)
    assert py_graph.files["tests/test_cache.py"].imports[0].files == ("pkg/cache.py",)


def test_python_uses_bind_through_imports_and_reexports(py_graph):
    cache = _def(py_graph, "pkg/cache.py", "Cache")
    groups = {(g.path, g.enclosing): [u.line for u in g.uses] for g in py_graph.refs(cache)}
    # app.py imports Cache from the package, which re-exports it from cache.py
    assert groups[("pkg/app.py", "helper")] == [12]
    assert groups[("pkg/cache.py", "make_cache")] == [20]
    # the test file defines its own Cache: its uses bind there, not to pkg/cache.py; only
    # its import line names pkg/cache.py's
    tests = [u.line for g in py_graph.refs(cache) if g.path.startswith("tests/") for u in g.uses]
    assert tests == [1]


def test_python_unimported_bare_name_is_not_a_use(py_graph):
    make_cache = _def(py_graph, "pkg/cache.py", "make_cache")
    paths = {g.path for g in py_graph.refs(make_cache)}
    assert "pkg/other.py" not in paths  # a local variable of the same name
    assert "pkg/app.py" in paths


def test_callers_and_callees(py_graph):
    lookup = _def(py_graph, "pkg/cache.py", "Cache.lookup")
    get = _def(py_graph, "pkg/cache.py", "Cache.get")
    assert py_graph.callers(lookup) == [get]
    assert py_graph.callees(get) == [lookup]
    run = _def(py_graph, "pkg/app.py", "App.run")
    assert set(py_graph.callees(run)) == {_def(py_graph, "pkg/cache.py", "make_cache"), get}


def test_def_ranks_the_source_definition_above_a_test_one(py_graph):
    found = py_graph.defs("Cache")
    assert [d.path for d in found] == ["pkg/cache.py", "tests/test_cache.py"]
    # from a file that defines its own, its own comes first
    assert py_graph.defs("Cache", from_path="tests/test_cache.py")[0].path == "tests/test_cache.py"
    assert py_graph.defs("Cache.get")[0].qualified == "Cache.get"


def test_refs_at_a_definition_line_and_definition_at_a_use(py_graph):
    assert py_graph.definition_at("pkg/app.py", 8).qualified == "Cache.get"
    groups = py_graph.refs_at("pkg/cache.py", 19)
    assert {(g.path, g.enclosing) for g in groups} == {("pkg/app.py", "App.run")} | {
        ("pkg/app.py", None)
    }


TS = {
    "src/util.ts": b"export function clamp(x: number): number { return x }\n"
    b"export interface Range { low: number }\n",
    "src/index.ts": b"import { clamp } from './util'\nimport type { Range } from './util'\n"
    b"export const top = (r: Range) => clamp(r.low)\n",
    "lib/legacy.js": b"const { clamp } = require('../src/util')\n"
    b"function wrap(v) { return clamp(v) }\n"
    b"module.exports = { wrap }\n",
}


def test_typescript_and_javascript_imports_bind_across_files():
    graph = build_graph(TS)
    assert graph.files["src/index.ts"].imports[0].files == ("src/util.ts",)
    assert graph.files["lib/legacy.js"].imports[0].files == ("src/util.ts",)
    clamp = graph.defs("clamp")[0]
    groups = {(g.path, g.enclosing) for g in graph.refs(clamp)}
    assert ("src/index.ts", "top") in groups
    assert ("lib/legacy.js", "wrap") in groups
    assert graph.defs("Range")[0].kind == "interface"
    assert graph.defs("low")[0].container == "Range"


GO = {
    "go.mod": b"module example.com/shop\n\ngo 1.22\n",
    "store/store.go": b"""package store

// Store holds items.
type Store struct {
\titems map[string]int
}

// Get returns one item.
func (s *Store) Get(key string) int {
\treturn s.items[key]
}

func New() *Store { return &Store{} }
""",
    "store/helpers.go": b"package store\n\nfunc fresh() *Store { return New() }\n",
    "main.go": b"""package main

import "example.com/shop/store"

func main() {
\ts := store.New()
\t_ = s.Get("a")
}
""",
}


def test_go_packages_resolve_by_folder_and_methods_by_receiver():
    graph = build_graph(GO)
    assert set(graph.files["main.go"].imports[0].files) == {"store/store.go", "store/helpers.go"}
    get = graph.defs("Get")[0]
    assert (get.kind, get.container, get.doc) == ("method", "Store", "Get returns one item.")
    items = graph.defs("items")[0]
    assert (items.kind, items.container) == ("field", "Store")
    # `s.items` inside a method on *Store binds to Store.items (receiver as self)
    assert {g.enclosing for g in graph.refs(items)} == {"Store.Get"}
    new = graph.defs("New")[0]
    groups = {(g.path, g.enclosing) for g in graph.refs(new)}
    assert groups == {("main.go", "main"), ("store/helpers.go", "fresh")}


C_FAMILY = {
    "util.h": b"/* Adds one. */\nint add_one(int x);\n",
    "util.c": (
        b'#include "util.h"\n\n'
        b"/* Adds one. */\n"
        b"int add_one(int x)\n{\n  return x + 1;\n}\n\n"
        b'static const char *\nname_of(int n)\n{\n  return n ? "one" : "none";\n}\n'
    ),
    "main.c": b'#include "util.h"\n\nint main(void)\n{\n  return add_one(1);\n}\n',
    "box.cpp": (
        b"class Box {\n public:\n  int area();\n  int side() { return w; }\n  int w;\n};\n\n"
        b"int Box::area() {\n  return side() * side();\n}\n"
    ),
}


def test_c_and_cpp_functions_span_their_bodies_and_enclose_their_uses():
    """C's and C++'s tags mark a function by its declarator: a definition with a body spans
    the body (so callers and callees work), a prototype stays one line."""
    graph = build_graph(C_FAMILY)
    spans = {(d.path, d.name): (d.line, d.end_line) for f in graph.files.values()
             for d in f.definitions if d.kind in ("function", "method")}  # fmt: skip
    assert spans[("util.h", "add_one")] == (2, 2)  # the prototype
    assert spans[("util.c", "add_one")] == (4, 7)
    assert spans[("util.c", "name_of")] == (9, 13)  # `static const char *` on the line above
    assert spans[("box.cpp", "area")] == (8, 10) and spans[("box.cpp", "side")] == (4, 4)
    name_of = next(d for d in graph.defs("name_of"))
    assert (name_of.signature, name_of.doc) == ("name_of(int n)", "")
    add_one = next(d for d in graph.defs("add_one") if d.path == "util.c")
    assert add_one.doc == "Adds one."  # the block comment's closing mark left out
    assert [d.name for d in graph.callers(add_one)] == ["main"]
    area = next(d for d in graph.defs("area") if d.path == "box.cpp" and d.line == 8)
    assert [d.name for d in graph.callees(area)] == ["side"]


RUST = {
    "src/lib.rs": b"mod parse;\nuse crate::parse::Parser;\n\n"
    b"pub fn run() { Parser::new().go(); }\n",
    "src/parse.rs": b"pub struct Parser { depth: u32 }\n\nimpl Parser {\n"
    b"    pub fn new() -> Self { Parser { depth: 0 } }\n    pub fn go(&self) {}\n}\n",
}


def test_rust_mod_and_use_crate_resolve_and_impl_methods_get_their_type():
    graph = build_graph(RUST)
    files = {i.target: i.files for i in graph.files["src/lib.rs"].imports}
    assert files == {"mod parse": ("src/parse.rs",), "crate::parse": ("src/parse.rs",)}
    new = graph.defs("new")[0]
    assert (new.kind, new.container) == ("method", "Parser")
    assert graph.callers(new) == [graph.defs("run")[0]]


CARGO_WORKSPACE = {
    "crates/tokio-util/src/lib.rs": b"pub mod codec;\n",
    "crates/tokio-util/src/codec.rs": b"pub struct LinesCodec;\n\nimpl LinesCodec {\n"
    b"    pub fn new() -> Self { LinesCodec }\n}\n",
    "crates/app/src/lib.rs": b"use tokio_util::codec::LinesCodec;\nuse serde::Deserialize;\n\n"
    b"pub fn start() { LinesCodec::new(); }\n",
}


def test_a_cargo_workspaces_crates_use_each_other_by_name():
    """Issue 45: `use tokio_util::codec::LinesCodec` in a workspace holding the crate
    tokio-util resolves to its module; a crate from outside (serde) stays unresolved."""
    graph = build_graph(CARGO_WORKSPACE)
    files = {i.target: i.files for i in graph.files["crates/app/src/lib.rs"].imports}
    assert files == {"tokio_util::codec": ("crates/tokio-util/src/codec.rs",), "serde": ()}
    new = graph.defs("new")[0]
    assert [(u.path, u.line) for u in graph.uses(new)] == [("crates/app/src/lib.rs", 4)]


SAMPLES = {
    "bash": ("a.sh", b"greet() { echo hi; }\ngreet\n", "greet"),
    "c": ("a.c", b"int add(int a) { return a; }\n", "add"),
    "cpp": ("a.cpp", b"class Box { int w; };\nint area() { return 1; }\n", "area"),
    "csharp": ("a.cs", b"class Shop { void Buy() {} }\n", "Buy"),
    "elixir": ("a.ex", b"defmodule Shop do\n  def buy(x), do: x\nend\n", "buy"),
    "go": ("a.go", b"package a\nfunc Buy() {}\n", "Buy"),
    "haskell": ("a.hs", b"module A where\nbuy :: Int -> Int\nbuy x = x\n", "buy"),
    "java": ("A.java", b"class Shop { void buy() {} }\n", "buy"),
    "javascript": ("a.js", b"function buy() {}\n", "buy"),
    "kotlin": ("a.kt", b"fun buy(): Int = 1\n", "buy"),
    "lua": ("a.lua", b"function buy() end\n", "buy"),
    "php": ("a.php", b"<?php\nfunction buy() {}\n", "buy"),
    "python": ("a.py", b"def buy():\n    pass\n", "buy"),
    "ruby": ("a.rb", b"class Shop\n  def buy\n  end\nend\n", "buy"),
    "rust": ("a.rs", b"fn buy() {}\n", "buy"),
    "scala": ("a.scala", b"object Shop { def buy(): Int = 1 }\n", "buy"),
    "swift": ("a.swift", b"func buy() {}\n", "buy"),
    "tsx": ("a.tsx", b"export function Buy() { return <div/> }\n", "Buy"),
    "typescript": ("a.ts", b"function buy(): void {}\n", "buy"),
    "zig": ("a.zig", b"pub fn buy() void {}\n", "buy"),
}


@pytest.mark.parametrize("grammar", sorted(set(GRAMMARS) - {"css"}))
def test_every_shipped_code_grammar_yields_definitions(grammar):
    path, source, name = SAMPLES[grammar]
    facts = extract(path, source)
    assert facts is not None and facts.grammar == grammar
    assert name in [d.name for d in facts.definitions]


def test_pagerank_puts_the_hub_first_and_follows_personalisation():
    # 1, 2, 3 all point at 0; 0 points at 4
    src, dst = np.array([1, 2, 3, 0]), np.array([0, 0, 0, 4])
    scores = pagerank(5, src, dst, np.ones(4))
    assert scores.argmax() in (0, 4) and scores[0] > scores[1]
    assert abs(scores.sum() - 1) < 1e-6
    personal = np.array([0, 0, 0, 1.0, 0])
    tilted = pagerank(5, src, dst, np.ones(4), personal)
    assert tilted[3] > tilted[1]


def test_map_stays_within_budget_and_leans_to_the_question(py_graph):
    text = py_graph.map(budget=20)
    assert 0 < len(text) <= 80
    assert "pkg/cache.py:" in py_graph.map(budget=200)
    leaning = py_graph.map("how does the app run", budget=12)
    assert "App" in leaning or "run" in leaning


RANKED = {
    "a.py": b"def hub():\n    return 1\n\n\ndef one():\n    print(1)\n    return hub()\n\n\n"
    b"def two():\n    return hub() + one()\n\n\nhub()\n",
    "b.py": b"from a import hub\n\n\nclass A:\n    def size(self):\n        return 1\n\n\n"
    b"class B:\n    width = 3\n\n    def size(self):\n        return self.width\n\n\n"
    b"def measure_by(x):\n    return x.size() + hub()\n\n\nhub()\n",
    "tests/test_a.py": b"from a import hub\n\n\ndef test_hub():\n    assert hub() == 1\n",
}
# RANKED's uses, read off its text: (user, used, weight); a file-level use is the file's, a
# use that can mean n definitions weighs 1/n toward each, `print` binds to nothing
RANKED_EDGES = [
    ("one", "hub", 1), ("two", "hub", 1), ("two", "one", 1), ("a.py", "hub", 1),
    ("b.py", "hub", 1), ("B.size", "B.width", 1), ("measure_by", "A.size", 0.5),
    ("measure_by", "B.size", 0.5), ("measure_by", "hub", 1), ("b.py", "hub", 1),
    ("tests/test_a.py", "hub", 1), ("test_hub", "hub", 1),
]  # fmt: skip


def test_ranked_is_pagerank_over_the_uses_personalised_by_words_and_seed_files():
    """`seek map`'s order: PageRank over user -> used edges (a definition's own uses, a
    file's file-level uses), teleporting toward definitions sharing a word of three letters
    or more with the question, or toward seed files and their definitions."""
    graph = build_graph(RANKED)
    definitions = [d.qualified for f in graph.files.values() for d in f.definitions]
    nodes = [*definitions, *graph.files]
    at = {n: i for i, n in enumerate(nodes)}

    def expected(*personal_nodes):
        personal = None
        if personal_nodes:
            personal = np.zeros(len(nodes))
            personal[[at[n] for n in personal_nodes]] = 1.0
        scores = pagerank(
            len(nodes),
            np.array([at[u] for u, _, _ in RANKED_EDGES]),
            np.array([at[d] for _, d, _ in RANKED_EDGES]),
            np.array([w for _, _, w in RANKED_EDGES], dtype=float),
            personal,
        )
        return {n: float(scores[at[n]]) for n in definitions}

    def ranked(*args, **kwargs):
        found = graph.ranked(*args, **kwargs)
        assert [s for s, _ in found] == sorted((s for s, _ in found), reverse=True)
        return {d.qualified: s for s, d in found}

    assert ranked() == pytest.approx(expected())
    assert ranked("by") == pytest.approx(expected())  # short words do not personalise
    assert ranked("how to measure") == pytest.approx(expected("measure_by"))
    b_defs = [d.qualified for d in graph.files["b.py"].definitions]
    assert ranked(seeds=("b.py",)) == pytest.approx(expected(*b_defs, "b.py"))
    assert graph.ranked()[0][1].name == "hub"
    alone = build_graph({"c.py": b"def alone():\n    return 1\n"})  # no edge at all
    assert [(s, d.name) for s, d in alone.ranked()] == [(pytest.approx(0.5), "alone")]
    # the map shows neither fields nor tests, and leans toward the seed files
    whole = graph.map()
    assert "measure_by" in whole and "width" not in whole and "tests/" not in whole
    assert "9: class B:" in graph.map(budget=30, seeds=("b.py",))
    assert "9: class B:" not in graph.map(budget=30)


def test_refs_at_a_line_asks_about_its_definition_use_or_enclosing_definition(py_graph):
    get = _def(py_graph, "pkg/cache.py", "Cache.get")
    lookup = _def(py_graph, "pkg/cache.py", "Cache.lookup")
    assert py_graph.refs_at("pkg/cache.py", get.line) == py_graph.refs(get) != []
    assert py_graph.refs_at("pkg/cache.py", 12) == py_graph.refs(lookup)  # `self.lookup(key)`
    assert py_graph.refs_at("pkg/cache.py", lookup.end_line) == py_graph.refs(lookup)  # no use
    assert py_graph.refs_at("pkg/cache.py", 2) == []  # in no definition
    assert py_graph.refs_at("pkg/nowhere.py", 1) == []


NEARNESS = {
    # the nested `thing` is not visible at file level: no definition is bound from here
    "x/the_using_file.py": b"import lib.m\n\n\ndef outer():\n    def thing():\n        return 1\n\n"
    b"    return 0\n",
    "x/sib.py": b"def thing():\n    return 2\n",
    "lib/m.py": b"def thing():\n    return 3\n",
    "z/o.py": b"def thing():\n    return 4\n",
    "x/importer.py": b"from z.o import thing\n",
}


def test_defs_from_a_file_rank_its_own_then_its_folder_then_its_imports_then_the_rest():
    graph = build_graph(NEARNESS)
    near = [d.path for d in graph.defs("thing", from_path="x/the_using_file.py")]
    assert near == ["x/the_using_file.py", "x/sib.py", "lib/m.py", "z/o.py"]
    shortest_first = ["z/o.py", "lib/m.py", "x/sib.py", "x/the_using_file.py"]
    assert [d.path for d in graph.defs("thing")] == shortest_first  # from nowhere
    assert [d.path for d in graph.defs("thing", from_path="new.py")] == shortest_first
    # what a use in the file would mean comes before any nearness
    assert graph.defs("thing", from_path="x/importer.py")[0].path == "z/o.py"
    assert graph.defs("X.thing") == []  # no container X: the top-level ones are not it
    assert [r.line for g in graph.refs("thing") for r in g.uses] == [1]  # the import
    assert graph.refs("outer") == []  # defined, used nowhere


AMBIGUOUS = {
    "a/x.c": b"int helper(void) { return 1; }\n",
    "b/y.c": b"int helper(void) { return 2; }\n",
    "b/z.c": b"int main(void) { return helper(); }\n",
    "m.py": b"def run():\n    return 0\n\n\nclass Job:\n    def run(self):\n        return 1\n\n\n"
    b"def go(job: Job):\n    return job.run()\n",
    "cfg.py": b"Config = None\n\n\nclass Config:\n    pass\n\n\ndef use():\n    return Config()\n",
    "Foo.scala": b"class Foo(val n: Int)\n\nobject Foo {\n  def one(): Foo = new Foo(1)\n}\n\n"
    b"object Main {\n  def run(): Unit = {\n    println(Foo)\n  }\n}\n",
    "b.py": b"class A:\n    def size(self):\n        return 1\n\n\nclass B:\n    def size(self):\n"
    b"        return 2\n\n\ndef measure(x):\n    return x.size()\n\n\n"
    b"def more():\n    return B().size() + B().size()\n",
}


def test_defs_rank_weightier_kinds_then_sources_over_tests_then_the_most_used():
    """`seek def NAME` with no file to be near: a class before a variable of its name (and a
    kind the weights do not name, Scala's `object`, after the class), a source file's
    definition before a test's, a used definition before an unused one; only then the
    shorter path."""
    graph = build_graph(AMBIGUOUS)
    assert [(d.kind, d.line) for d in graph.defs("Config")] == [("class", 4), ("constant", 1)]
    assert [d.kind for d in graph.defs("Foo")] == ["class", "object"]
    widget = b"def widget():\n    return 1\n"
    tests_last = build_graph({"tests/w.py": widget, "zzzzz/w.py": widget})
    assert [d.path for d in tests_last.defs("widget")] == ["zzzzz/w.py", "tests/w.py"]
    used_first = build_graph(
        {
            "lib/long_name.py": b"def gadget():\n    return 1\n\n\nVALUE = gadget()\n",
            "lib/b.py": b"def gadget():\n    return 2\n",
        }
    )
    assert [d.path for d in used_first.defs("gadget")] == ["lib/long_name.py", "lib/b.py"]
    counted = used_first.inbound_of({"gadget"})
    assert {d.path: n for d, n in counted.items()} == {"lib/long_name.py": 1}
    used_first.inbound()  # a server counts every use once: the same answers from that count
    assert used_first.inbound_of({"gadget"}) == counted
    assert [d.path for d in used_first.defs("gadget")] == ["lib/long_name.py", "lib/b.py"]


def test_a_call_that_can_mean_several_definitions_names_the_best_one():
    """callees and a use's PATH:LINE name one definition for a use that binds to several:
    the nearest to the use's file, then the weightier kind, then the most used; a use bound
    to one definition names that one, whatever a bare name would mean."""
    graph = build_graph(AMBIGUOUS)
    # C binds by name: both `helper`s; the one in main's folder is meant
    assert graph.callees(_def(graph, "b/z.c", "main")) == [_def(graph, "b/y.c", "helper")]
    # `job.run()` is Job's method, not the module's `run` a bare name would mean
    assert graph.callees(_def(graph, "m.py", "go")) == [_def(graph, "m.py", "Job.run")]
    # `x.size()` may be A's or B's: B's is used more
    b_size = _def(graph, "b.py", "B.size")
    assert graph.callees(_def(graph, "b.py", "measure")) == [b_size]
    assert graph.definition_at("b.py", 12) == b_size
    # a use that can mean n definitions counts 1/n toward each, rounded after summing
    counts = {d.qualified: n for d, n in graph.inbound_of({"size"}).items()}
    assert counts == {"A.size": 1, "B.size": 3}  # 1/2; 1/2 + 2
    # `Config()` may be the variable or the class: the class is the weightier kind
    config = graph.definition_at("cfg.py", 9)
    assert (config.kind, config.line) == ("class", 4)
    # Scala's companion `object Foo` (a kind the weights do not name) and `class Foo`
    companion = graph.definition_at("Foo.scala", 9)
    assert (companion.kind, companion.line) == ("class", 1)


def test_enclosing_is_the_innermost_definition_holding_the_line(py_graph):
    cache, get = (
        _def(py_graph, "pkg/cache.py", "Cache"),
        _def(py_graph, "pkg/cache.py", "Cache.get"),
    )
    assert py_graph.enclosing("pkg/cache.py", get.line) == get  # its first line
    assert py_graph.enclosing("pkg/cache.py", get.end_line) == get
    assert py_graph.enclosing("pkg/cache.py", cache.line) == cache
    assert py_graph.enclosing("pkg/cache.py", 2) is None
    assert py_graph.enclosing("pkg/nowhere.py", 1) is None


SHADOW = {
    "lib/cache.py": b"def make():\n    return 1\n\n\ncounter = 0\n\n\ndef bump():\n"
    b"    global counter\n    counter = counter + 1\n",
    "lib/use.py": b"from lib.cache import make\nfrom lib import cache as c\n\n\n"
    b"def direct():\n    return make()\n\n\ndef shadowed(make):\n    return make()\n\n\n"
    b"def through_alias():\n    return c.make()\n",
}


def test_a_parameter_shadows_an_import_and_a_module_alias_binds():
    graph = build_graph(SHADOW)
    make = graph.defs("make")[0]
    enclosing = {g.enclosing for g in graph.refs(make) if g.path == "lib/use.py"}
    # `shadowed(make)` calls its parameter; `c.make()` goes through `from lib import cache as c`
    assert enclosing == {None, "direct", "through_alias"}


def test_a_global_statement_makes_assignments_uses_of_the_module_name():
    graph = build_graph(SHADOW)
    counter = graph.defs("counter")[0]
    assert [u.line for g in graph.refs(counter) for u in g.uses] == [9, 10, 10]


MEMBERS = {
    "a/cache.py": b"class Cache:\n    def get(self):\n        return 1\n",
    "b/store.py": b"class Store:\n    def get(self):\n        return 2\n",
    "a/app.py": b"from a.cache import Cache\n\n\ndef run(x):\n    return x.get()\n",
}


def test_an_ambiguous_member_use_binds_to_the_nearest_definitions():
    graph = build_graph(MEMBERS)
    store_get = graph.defs("Store.get")[0]
    cache_get = graph.defs("Cache.get")[0]
    assert graph.definition_at("a/app.py", 5) == cache_get  # a/app.py imports a/cache.py
    assert graph.refs(store_get) == []


GO_LITERAL = {
    "go.mod": b"module example.com/x\n",
    "x.go": b"package x\n\ntype Box struct {\n\tsize int\n}\n\n"
    b"func NewBox(size int) *Box {\n\treturn &Box{size: size}\n}\n",
}


def test_a_go_composite_literal_key_is_the_field_not_the_local():
    graph = build_graph(GO_LITERAL)
    size = graph.defs("size")[0]
    assert (size.container, [(u.line, u.column) for g in graph.refs(size) for u in g.uses]) == (
        "Box",
        [(8, 13)],
    )


REEXPORT = {
    "src/core/schema.ts": b"export class ZType { parse() { return 1 } }\n",
    "src/core/index.ts": b'export * from "./schema.js"\n',
    "src/api.ts": b'import * as core from "./core/index.js"\n'
    b'import { ZType } from "./core/index.js"\n'
    b"export const a = new core.ZType()\nexport const b = new ZType()\n",
}


def test_typescript_star_reexports_pass_names_and_namespace_members_through():
    graph = build_graph(REEXPORT)
    ztype = graph.defs("ZType")[0]
    assert [u.line for g in graph.refs(ztype) if g.path == "src/api.ts" for u in g.uses] == [
        2,
        3,
        4,
    ]


SCOPED = {
    "go.mod": b"module example.com/x\n",
    "a_test.go": b"package x\n\nfunc TestA() {\n\tcases := []struct{ desc string }{\n"
    b'\t\t{desc: "one"},\n\t}\n\t_ = cases[0].desc\n}\n\n'
    b'func TestB() {\n\tc := struct{ desc string }{desc: "two"}\n\t_ = c.desc\n}\n',
    "cli.py": b"def run_command():\n    def app():\n        return 1\n    return app()\n\n\n"
    b"def other(ctx):\n    return ctx.app\n",
}


def test_a_definition_inside_a_function_is_visible_only_there():
    graph = build_graph(SCOPED)
    in_a = next(d for d in graph.by_name["desc"] if d.container == "TestA")
    in_b = next(d for d in graph.by_name["desc"] if d.container == "TestB")
    assert [u.line for g in graph.refs(in_a) for u in g.uses] == [5, 7]
    assert [u.line for g in graph.refs(in_b) for u in g.uses] == [11, 12]
    # a nested Python function: its name elsewhere (an attribute of another object) is not it
    app = graph.defs("app")[0]
    assert [(g.enclosing, [u.line for u in g.uses]) for g in graph.refs(app)] == [
        ("run_command", [4])
    ]


NESTED_SIBLINGS = {
    "load.py": b"def parse(text):\n    return text.split()\n\n\n"
    b"def load(text):\n    def parse(text):\n        return [text]\n\n"
    b"    def again(text):\n        return parse(text)\n\n"
    b"    return parse(text) + again(text)\n\n\n"
    b"def loader(text):\n    return parse(text)\n",
}


def test_a_nested_definitions_scope_is_matched_by_whole_name_segments():
    """A helper `parse` inside `load()` is seen in `load` and in what `load` nests, not in a
    sibling `loader()` whose name only starts like it: there `parse` is the module's (issue
    47, row 3)."""
    graph = build_graph(NESTED_SIBLINGS)
    inner = _def(graph, "load.py", "load.parse")
    outer = _def(graph, "load.py", "parse")
    load, again, loader = (_def(graph, "load.py", q) for q in ("load", "load.again", "loader"))
    assert [(g.enclosing, [u.line for u in g.uses]) for g in graph.refs(inner)] == [
        ("load.again", [10]),
        ("load", [12]),
    ]
    # (inside `load` a use may mean either `parse`: the graph does not order shadowing)
    assert ("loader", [16]) in [(g.enclosing, [u.line for u in g.uses]) for g in graph.refs(outer)]
    assert graph.callers(inner) == [again, load] and loader in graph.callers(outer)
    assert graph.callees(loader) == [outer]


ONE_LINERS = {
    "one.py": b"def helper():\n    return 1\n\n\ndef make():\n    return 2\n\n\n"
    b"def one(): return helper()\n\n\ndef f(x=make()):\n    return x\n\n\n"
    b"class K:\n    def m(self, y=make()): return helper()\n",
    "one.c": b"int helper(void) { return 1; }\nint one(void) { return helper(); }\n"
    b"int two(void) {\n    return one();\n}\n",
}


def test_callees_of_one_line_definitions_and_of_default_arguments():
    """A call on a definition's first line is one of its callees: the whole body of a
    one-line function (Python and C), a default argument's value (issue 47, row 1)."""
    graph = build_graph(ONE_LINERS)
    helper, make = _def(graph, "one.py", "helper"), _def(graph, "one.py", "make")
    assert graph.callees(_def(graph, "one.py", "one")) == [helper]
    assert graph.callees(_def(graph, "one.py", "f")) == [make]
    assert graph.callees(_def(graph, "one.py", "K.m")) == [make, helper]
    c_one = _def(graph, "one.c", "one")
    assert (c_one.line, c_one.end_line) == (2, 2)
    assert graph.callees(c_one) == [_def(graph, "one.c", "helper")]
    assert graph.callees(_def(graph, "one.c", "two")) == [c_one]


RECURSIVE = {
    "fact.py": b"def fact(n):\n    return 1 if n < 2 else n * fact(n - 1)\n\n\n"
    b"def main():\n    return fact(5)\n\n\n"
    b"def twice(n):\n    return fact(n) + fact(n)\n",
}


def test_a_recursive_function_is_not_its_own_caller_or_callee():
    """`callers fact.py:1` names who else calls `fact`, each once; a call to itself is
    neither a caller nor a callee (issue 47, row 2)."""
    graph = build_graph(RECURSIVE)
    fact, main, twice = (_def(graph, "fact.py", q) for q in ("fact", "main", "twice"))
    assert graph.callers(fact) == [main, twice]
    assert graph.callees(fact) == []
    assert graph.callees(twice) == [fact]


SUBMODULE = {
    "pkg/__init__.py": b"",
    "pkg/cli.py": b"cli = object()\n\n\ndef load():\n    return 1\n",
    "pkg/app.py": b"from . import cli\n\n\ndef run():\n    return cli.load()\n",
}


def test_a_python_from_import_of_a_submodule_binds_the_module_not_its_namesake():
    graph = build_graph(SUBMODULE)
    constant = graph.defs("cli")[0]
    assert (constant.kind, graph.refs(constant)) == ("constant", [])
    assert graph.definition_at("pkg/app.py", 5, 15) == graph.defs("load")[0]


NESTED_MODULE = {
    "go.mod": b"module example.com/m\n",
    "util/u.go": b"package util\n\nfunc Do() {}\n",
    "main.go": b'package main\n\nimport "example.com/m/util"\n\nfunc main() { util.Do() }\n',
    "copy/go.mod": b"module example.com/m\n",
    "copy/util/u.go": b"package util\n\nfunc Do() {}\n",
    "copy/main.go": b'package main\n\nimport "example.com/m/util"\n\nfunc main() { util.Do() }\n',
}


def test_a_go_import_resolves_in_the_module_of_the_importing_file():
    graph = build_graph(NESTED_MODULE)
    assert graph.files["main.go"].imports[0].files == ("util/u.go",)
    assert graph.files["copy/main.go"].imports[0].files == ("copy/util/u.go",)


TYPED_GO = {
    "go.mod": b"module example.com/t\n",
    "mux.go": b"""package t

import "net/http"

type Router interface {
\tGet(p string)
}

type Mux struct {
\ttree *node
}

type node struct{}

func (n *node) Get(p string) {}

func (m *Mux) Get(p string) { m.tree.Get(p) }

func NewMux() *Mux { return &Mux{} }

func use(r Router, w http.ResponseWriter) {
\tr.Get("/")
\tw.Get("/")
\tmx := NewMux()
\tmx.Get("/")
\tlit := &Mux{}
\tlit.Get("/")
}
""",
}


def _lines(graph, definition):
    return [u.line for g in graph.refs(definition) for u in g.uses]


def test_go_member_uses_bind_by_declared_receiver_types():
    graph = build_graph(TYPED_GO)
    by = {d.qualified: d for d in graph.by_name["Get"]}
    # a parameter's interface type, a field's type through the receiver, a constructor's
    # result and a composite literal; `w` has a type from outside the workspace: no binding
    assert _lines(graph, by["Router.Get"]) == [22]
    assert _lines(graph, by["node.Get"]) == [17]
    assert _lines(graph, by["Mux.Get"]) == [25, 27]


TYPED_PY = {
    "app/serial.py": b"class Serializer:\n    def tag(self, v):\n        return v\n",
    "app/tags.py": b"""from typing import Optional

from app.serial import Serializer


class Base:
    def tag(self, v):
        return v


class Tag(Base):
    def __init__(self, serializer: Serializer, extra: Optional[Serializer] = None):
        self.serializer = serializer

    def run(self, v, **options):
        options.tag(v)
        super().tag(v)
        return self.serializer.tag(v)


def make(s: "Serializer", d: dict):
    d.tag(1)
    return s.tag(1)
""",
}


def test_python_member_uses_bind_by_annotations_self_attributes_and_super():
    graph = build_graph(TYPED_PY)
    by = {d.qualified: d for d in graph.by_name["tag"]}
    # `self.serializer` was assigned an annotated parameter; `s: "Serializer"` a forward
    # reference; `**options` and `d: dict` are builtins; super() is Base
    assert [(g.path, u.line) for g in graph.refs(by["Serializer.tag"]) for u in g.uses] == [
        ("app/tags.py", 18),
        ("app/tags.py", 23),
    ]
    assert _lines(graph, by["Base.tag"]) == [17]


ALIASED = {
    "pkg/__init__.py": b"",
    "pkg/base.py": b"class Blueprint:\n    def has_static(self):\n        return True\n",
    "pkg/blueprints.py": b"""from outside import Request as RequestBase
from .base import Blueprint as BaseBlueprint


class Blueprint(BaseBlueprint):
    def check(self):
        return self.has_static()


class Request(RequestBase):
    @property
    def size(self):
        return 1

    @size.setter
    def size(self, value):
        pass

    def grow(self):
        return self.size
""",
}


def test_python_aliased_imports_bind_the_original_and_class_bodies_see_their_names():
    graph = build_graph(ALIASED)
    base = graph.defs("Blueprint")
    original = next(d for d in base if d.path == "pkg/base.py")
    # on the import line and through the alias (a base class), the name is base.py's
    assert graph.definition_at("pkg/blueprints.py", 2, 18) == original
    assert graph.definition_at("pkg/blueprints.py", 5, 16) == original
    assert graph.definition_at("pkg/blueprints.py", 7, 20) == graph.defs("has_static")[0]
    # a class named like an outside import's original name is still the file's own class
    size = graph.defs("Request.size")[0]
    assert (size.line, graph.definition_at("pkg/blueprints.py", 20, 20)) == (12, size)
    # `@size.setter` names the property in the class body; the setter is the same symbol
    assert graph.definition_at("pkg/blueprints.py", 15, 5) == size
    assert graph.definition_at("pkg/blueprints.py", 16, 8) == size


GO_PACKAGE_VARS = {
    "go.mod": b"module example.com/v\n",
    "binding/binding.go": b"package binding\n\nvar (\n\tJSON = jsonBinding{}\n)\n\n"
    b'type jsonBinding struct{}\n\nfunc (jsonBinding) Name() string { return "json" }\n',
    "errors.go": b"""package v

import (
\t"example.com/v/binding"
\ttoml "github.com/pelletier/go-toml/v2"
)

type msgs struct{}

func (m msgs) JSON() int { return 1 }

func (m msgs) Name() string { return "" }

const param = 1

var format = func(param msgs) int { return param.JSON() }

func use() {
\t_ = binding.JSON
\t_ = binding.JSON.Name()
\t_ = toml.Name()
}
""",
}


def test_go_var_blocks_package_members_and_function_literal_parameters():
    graph = build_graph(GO_PACKAGE_VARS)
    json_var = next(d for d in graph.by_name["JSON"] if d.kind == "variable")
    assert (json_var.path, _lines(graph, json_var)) == ("binding/binding.go", [19, 20])
    # binding.JSON is the package's variable, not a method named JSON elsewhere
    assert _lines(graph, graph.defs("msgs.JSON")[0]) == [16]
    # the literal's parameter shadows the constant; toml is a package from outside
    assert _lines(graph, graph.defs("param")[0]) == []
    assert [
        (g.path, [u.line for u in g.uses]) for g in graph.refs(graph.defs("jsonBinding.Name")[0])
    ] == [("errors.go", [20])]
    assert _lines(graph, graph.defs("msgs.Name")[0]) == []


GO_CLOSURES = {
    "go.mod": b"module example.com/c\n",
    "c.go": b"""package c

type Router interface {
\tGroup(fn func(r Router))
}

type Mux struct{}

func (m *Mux) Group(fn func(r Router)) {}

func NewMux() *Mux { return &Mux{} }

const mGET = 1

type entry struct{ mGET int }

var table = map[int]entry{
\tmGET: {mGET: 2},
}

func build() {
\tr := NewMux()
\tr.Group(func(r Router) {
\t\tr.Group(nil)
\t})
}
""",
}


def test_go_function_literals_scope_their_parameters_and_map_keys_are_values():
    graph = build_graph(GO_CLOSURES)
    # the outer r is a *Mux, the literal's parameter r a Router
    assert _lines(graph, graph.defs("Mux.Group")[0]) == [23]
    assert _lines(graph, graph.defs("Router.Group")[0]) == [24]
    constant = next(d for d in graph.by_name["mGET"] if d.kind == "constant")
    field = next(d for d in graph.by_name["mGET"] if d.kind == "field")
    assert [(u.line, u.column) for g in graph.refs(constant) for u in g.uses] == [(18, 1)]
    assert [(u.line, u.column) for g in graph.refs(field) for u in g.uses] == [(18, 8)]


JS_MEMBERS = {
    "lib/request.js": b"""var accepts = require('accepts');
var req = {};
module.exports = req;

req.accepts = function () {
  return accepts(this);
};

req.get = function get(name) {
  return this.accepts(name);
};
""",
    "lib/utils.js": b"exports.etag = function etag(body) { return body; };\n",
    "lib/app.js": b"var etag = require('./utils').etag;\nvar utils = require('./utils');\n"
    b"function send(b) { return utils.etag(b); }\n",
    "flask/tag.py": b"class PassDict:\n    def to_json(self, v):\n        return v\n\n"
    b"    tag = to_json\n",
}


def test_js_member_assignments_are_members_and_class_body_values_see_the_class():
    graph = build_graph(JS_MEMBERS)
    member = graph.defs("req.accepts")[0]
    assert (member.kind, member.container) == ("method", "req")
    # the bare `accepts(this)` is the required module, not the member being defined
    assert graph.definition_at("lib/request.js", 6, 9).kind == "constant"
    assert graph.definition_at("lib/request.js", 10, 14) == member
    etag = next(d for d in graph.by_name["etag"] if d.container == "exports")
    assert graph.definition_at("lib/app.js", 3, 32) == etag
    assert graph.definition_at("flask/tag.py", 5, 10) == graph.defs("PassDict.to_json")[0]


REIMPORTED = {
    "req/__init__.py": b"",
    "req/compat.py": b"import http.cookiejar as cookielib\n",
    "req/jar.py": b"""from .compat import cookielib


class Jar(cookielib.CookieJar):
    def update(self, other):
        self.__dict__.update(other)
        return super().update(other)
""",
}


def test_python_names_reimported_from_outside_and_dunder_attributes_bind_nothing():
    graph = build_graph(REIMPORTED)
    # the base class comes from outside through compat.py, and __dict__ is the object's:
    # neither `update` call is Jar.update itself
    assert graph.refs(graph.defs("Jar.update")[0]) == []


OUTSIDE_CALLS = {
    "app/info.py": b"class ScriptInfo:\n    def load_app(self):\n        return 1\n",
    "app/cli.py": b"""import click


def run(ctx: click.Context):
    from .info import ScriptInfo

    return ctx.ensure_object(ScriptInfo).load_app()
""",
}


def test_python_a_call_on_an_outside_object_may_return_a_workspace_one_and_local_imports_bind():
    graph = build_graph(OUTSIDE_CALLS)
    assert _lines(graph, graph.defs("ScriptInfo.load_app")[0]) == [7]
    assert _lines(graph, graph.defs("ScriptInfo")[0]) == [5, 7]


@pytest.mark.parametrize("grammar", sorted(set(GRAMMARS) - {"css"}))
def test_extract_reads_the_tree_the_chunker_parsed(grammar):
    # an indexer may hand extract() the tree it parsed for syntax breaks (no second parse)
    path, source, _ = SAMPLES[grammar]
    tree = parser_for(grammar).parse(source)
    assert syntax_breaks(tree, source, max_chars=1500)
    assert extract(path, source, grammar, tree=tree) == extract(path, source)


def test_a_use_is_enclosed_by_its_innermost_definition_across_nesting_and_siblings():
    source = b"""def outer():
    a = 1
    def inner():
        return b
    return c


class K:
    def m(self):
        return d

    print(e)


print(h)
"""
    facts = extract("m.py", source)
    enclosing = {r.name: r.enclosing for r in facts.references}
    assert enclosing == {  # `a` is outer's own local: a use that means no definition, not kept
        "b": "outer.inner",
        "c": "outer",
        "d": "K.m",
        "e": "K",
        "h": None,
        "print": None,  # the last of its uses
    }


@pytest.mark.parametrize("grammar", sorted(set(GRAMMARS) - {"css"}))
def test_the_indexers_rows_encode_what_extract_finds(grammar):
    # graph_rows encodes extract_rows()'s plain reference rows, never building a Reference
    from seek.index.graph_rows import encode, file_facts

    path, source, _ = SAMPLES[grammar]
    assert file_facts(path, source) == encode(extract(path, source))


@pytest.mark.parametrize("grammar", sorted(set(GRAMMARS) - {"css"}))
def test_rows_are_the_json_text_of_before(grammar):
    # the rows are written with orjson: the very text json.dumps wrote, so stored graphs
    # read back the same, and a lone surrogate (a non-UTF-8 file name) still encodes
    import json

    from seek.index.graph_rows import _dumps, _loads, file_facts

    path, source, _ = SAMPLES[grammar]
    for text in file_facts(path, source):
        value = json.loads(text)
        assert _dumps(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        assert _loads(text) == value
    odd = {"m": ["pkg/\udcff", "example.com/m"], "r": [["é", 1, 2, None, True]]}
    assert _loads(_dumps(odd)) == odd
    assert _dumps(odd) == json.dumps(odd, ensure_ascii=False, separators=(",", ":"))


def test_one_walk_falls_back_to_the_patterns_that_compile(monkeypatch):
    # the joined tags + binder + name query is compiled as written; a pattern a grammar
    # version rejects leaves it out, as the separate queries did, with the same facts
    import sys

    from seek.graph import queries

    module = sys.modules["seek.graph.extract"]  # the package's `extract` is the function
    source = PY["pkg/app.py"] + b"\n\ndef local_use(x):\n    y = x\n    return helper(y)\n"
    expected = extract("pkg/app.py", source)
    names = {r.name for r in expected.references}
    assert expected.definitions and "helper" in names and not names & {"x", "y"}  # locals
    assert any(r.call for r in expected.references)

    def broken(grammar):
        tags, binders = queries.raw_texts(grammar)
        return tags + "\n(no_such_node name: (identifier) @name) @definition.function", binders

    monkeypatch.setattr(module, "raw_texts", broken)
    module._one_pass.cache_clear()
    try:
        assert extract("pkg/app.py", source) == expected
    finally:
        module._one_pass.cache_clear()


def test_the_use_count_of_some_names_equals_the_whole_count_through_aliases_and_reexports():
    """`def NAME` ranks by the uses of NAME's definitions alone (lookup.inbound_of), which
    must count what the whole count (inbound) does, uses through `as` aliases and a
    package's renaming re-export included."""
    files = {
        **ALIASED,
        "pkg/__init__.py": b"from .base import Blueprint as Exported\n",
        "app.py": b"from pkg import Exported\n\n\ndef make():\n    return Exported()\n",
        # an alias that is also another definition's own name, used on its own
        "other.py": b"def Exported():\n    return 1\n\n\nExported()\n",
    }
    graph = build_graph(files)
    whole = graph.inbound()
    names = {d.name for facts in graph.files.values() for d in facts.definitions}
    fresh = build_graph(files)  # a graph whose whole count was never made
    for name in names:
        part = fresh.inbound_of((name,))
        assert {d.name for d in part} <= {name}, name  # the definitions of the name alone
        assert {d: part.get(d, 0) for d in graph.by_name[name]} == {
            d: whole.get(d, 0) for d in graph.by_name[name]
        }, name
    original = next(d for d in graph.by_name["Blueprint"] if d.path == "pkg/base.py")
    assert build_graph(files).inbound_of(("Blueprint",))[original] >= 3  # via both aliases


TYPED_PY_PATHS = {
    "app/__init__.py": b"",
    "app/models.py": b"""class Row:
    def save(self):
        return 1


class Pair:
    def first(self) -> "Row":
        return Row()


def make() -> Row:
    return Row()
""",
    "app/stray.py": b"class Stray:\n    def save(self):\n        return 3\n",
    "app/other.py": b"class Row:\n    def save(self):\n        return 4\n",
    "app/deep/__init__.py": b"from .mid import Leaf\n",
    "app/deep/mid.py": b"from .inner import Leaf\n",
    "app/deep/inner.py": b"class Leaf:\n    def save(self):\n        return 2\n",
    "app/use.py": b"""from requests import Session

from app import deep, models
from app.models import Row, make

DEFAULT: models.Row = models.Row()


class Local:
    def save(self):
        return 0


class Outer:
    class Inner(models.Pair):
        def first(self):
            return super().first().save()


def typed(r: Row, leaf: deep.Leaf, s: Session):
    r.save()
    leaf.save()
    s.save()
    DEFAULT.save()
    make().save()
    models.make().save()


def unknown(x: models.Missing, y: models.Stray, z: nowhere.Thing, u: Undefined):
    x.save()
    y.save()
    z.save()
    u.save()


def outer():
    class Box:
        def save(self):
            return 5

    def inner(b: Box):
        b.save()
""",
}


def _bound(graph, path, line, name):
    """What the member use of ``name`` on ``line`` binds to, as (path, qualified name)."""
    refs = [r for r in graph.files[path].references if r.line == line and r.name == name]
    assert len(refs) == 1, refs
    return sorted((d.path, d.qualified) for d in graph.candidates(refs[0]))


def test_python_declared_types_follow_module_paths_reexports_calls_and_super():
    """A member use binds by its owner's declared type through `module.Type`, a package's
    re-export, an imported name that other files also define, a typed module constant,
    what a (module's) function returns and super() in a nested class (issue 47)."""
    graph = build_graph(TYPED_PY_PATHS)
    row = [("app/models.py", "Row.save")]
    assert _bound(graph, "app/use.py", 17, "first") == [("app/models.py", "Pair.first")]
    assert _bound(graph, "app/use.py", 17, "save") == row
    assert _bound(graph, "app/use.py", 21, "save") == row  # not other.py's Row
    assert _bound(graph, "app/use.py", 22, "save") == [("app/deep/inner.py", "Leaf.save")]
    assert _bound(graph, "app/use.py", 23, "save") == []  # a type from outside: nothing
    for line in (24, 25, 26):
        assert _bound(graph, "app/use.py", line, "save") == row


def test_python_a_type_that_cannot_be_resolved_binds_by_name_and_a_local_type_binds():
    """An annotation naming nothing in the workspace (a missing member of a workspace
    module, a name the module does not define, an unimported module, an undefined name)
    leaves the type unknown: the use binds by name to the nearest `save`, the file's own;
    a class defined in a function types the parameters of a function nested there."""
    graph = build_graph(TYPED_PY_PATHS)
    for line in (30, 31, 32, 33):
        assert _bound(graph, "app/use.py", line, "save") == [("app/use.py", "Local.save")]
    assert _bound(graph, "app/use.py", 42, "save") == [("app/use.py", "outer.Box.save")]


TYPED_GO_STEPS = {
    "go.mod": b"module example.com/shop\n",
    "store/base.go": b"""package store

type Base struct{}

func (b *Base) Close() error { return nil }

type Item struct{}

func (i Item) Save() {}
""",
    "store/store.go": b"""package store

import "net/http"

type Mode int

func (m Mode) Save() {}

func (m Mode) RoundTrip() {}

type Store struct {
\tBase
\titem   Item
\tclient *http.Client
}

func Open() (*Store, error) { return &Store{}, nil }

func Pair() (error, *Store) { return nil, &Store{} }

func (s *Store) Item() Item { return s.item }

func use(x Missing) {
\ts, err := Open()
\ts.Close()
\t_ = err
\t_, t := Pair()
\tt.Close()
\ts.item.Save()
\ts.Item().Save()
\ts.client.Transport.RoundTrip(nil)
\tx.Save()
\ts.item.Load()
}

func (i Item) Load() {}
""",
}


def test_go_declared_types_follow_results_fields_methods_and_embedding():
    """Go member uses bind through a function's first or second result, a field's and a
    method's declared type and a struct embedded from another file of the package; a type
    from outside the workspace (or one not declared anywhere) binds nothing, however far
    the chain goes (issue 47)."""
    graph = build_graph(TYPED_GO_STEPS)
    path = "store/store.go"
    close = [("store/base.go", "Base.Close")]
    save = [("store/base.go", "Item.Save")]
    assert _bound(graph, path, 25, "Close") == close
    assert _bound(graph, path, 28, "Close") == close
    assert _bound(graph, path, 29, "Save") == save  # not Mode.Save, the file's own
    assert _bound(graph, path, 30, "Save") == save
    assert _bound(graph, path, 31, "RoundTrip") == []
    assert _bound(graph, path, 32, "Save") == []
    # a method declared in another file of the package than its type
    assert _bound(graph, path, 33, "Load") == [("store/store.go", "Item.Load")]


CHAINS = (
    "".join(f"class C{i}(C{i + 1}):\n    pass\n\n\n" for i in range(6))
    + """class C6:
    def top(self):
        return 6


class Other:
    def top(self):
        return 0


class A(B):
    pass


class B(A):
    pass


def f(x: C0, y: A):
    x.top()
    y.top()


v0 = C6()
v1 = v0
v2 = v1
v3 = v2
v4 = v3
v5 = v4
v6 = v5


def g():
    v5.top()
    v6.top()
"""
)


def test_python_types_are_followed_six_bases_and_six_values_deep_and_cycles_end():
    """Resolution is bounded (graph/binding.py: six bases, six hops of `$v`), so that a
    cycle of bases ends: a method six bases up binds, a cycle binds nothing, a value typed
    six assignments away binds and one seven away is unknown: by name (issue 47)."""
    graph = build_graph({"m.py": CHAINS.encode()})
    assert _bound(graph, "m.py", 44, "top") == [("m.py", "C6.top")]
    assert _bound(graph, "m.py", 45, "top") == []
    assert _bound(graph, "m.py", 58, "top") == [("m.py", "C6.top")]
    assert _bound(graph, "m.py", 59, "top") == [("m.py", "C6.top"), ("m.py", "Other.top")]


TYPED_SCOPES = {
    "m/__init__.py": b"",
    "m/models.py": b"class Row:\n    def save(self):\n        return 1\n",
    "m/body.py": b"""from m.models import Row


class Local:
    def save(self):
        return 0


class Inner:
    def save(self):
        return 1


class Base:
    def get(self) -> Row:
        return Row()


class Sub(Base):
    pass


class Ctx:
    def __enter__(self) -> Row:
        return Row()


class K:
    class Inner:
        def save(self):
            return 2

    default = Row()
    saved = default.save()
    inner = Inner()
    kept = inner.save()

    def make(self) -> Row:
        return Row()

    made = make(None)
    done = made.save()


def use():
    Sub().get().save()
    Ctx().__enter__().save()


def outer():
    class Box:
        def save(self):
            return 5

    def build() -> Box:
        return Box()

    build().save()


class J:
    class Inner:
        def save(self):
            return 3

    def get(self) -> "Inner":
        return J.Inner()


def use_j():
    J().get().save()
""",
    "m/chain.py": b"""from m.models import Row


class Local:
    def save(self):
        return 0


def mk() -> Row:
    return Row()


w0 = mk()
w1 = w0
w2 = w1
w3 = w2
w4 = w3
w5 = w4
v0 = Row()
v1 = v0
v2 = v1
v3 = v2
v4 = v3
v5 = v4


class Holder:
    attr4 = v4
    attr5 = v5

    def run(self):
        self.attr4.save()
        self.attr5.save()


def use():
    w4.save()
    w5.save()
""",
}


def test_python_types_resolve_in_the_scope_that_wrote_them():
    """A type is resolved where it was written: a class body's values (`default = Row()`,
    `inner = Inner()` meaning the class's own Inner, `made = make(None)` calling the class's
    method), a method inherited from a base, a dunder method the class defines, and a
    function nested in a function returning a class defined there (issue 47)."""
    graph = build_graph(TYPED_SCOPES)
    row = [("m/models.py", "Row.save")]
    assert _bound(graph, "m/body.py", 34, "save") == row
    assert _bound(graph, "m/body.py", 36, "save") == [("m/body.py", "K.Inner.save")]
    assert _bound(graph, "m/body.py", 42, "save") == row
    assert _bound(graph, "m/body.py", 46, "save") == row
    assert _bound(graph, "m/body.py", 47, "save") == row
    assert _bound(graph, "m/body.py", 58, "save") == [("m/body.py", "outer.Box.save")]
    # a method's result names its class's own Inner, not the module's or another class's
    assert _bound(graph, "m/body.py", 71, "save") == [("m/body.py", "J.Inner.save")]


def test_python_the_depth_bound_counts_calls_and_attribute_steps():
    """The six-step bound of type resolution counts a function's result and an
    attribute's value like any other hop: one hop past it the type is unknown and the use
    binds by name, to the file's own `save` (issue 47)."""
    graph = build_graph(TYPED_SCOPES)
    row = [("m/models.py", "Row.save")]
    local = [("m/chain.py", "Local.save")]
    assert _bound(graph, "m/chain.py", 32, "save") == row  # self.attr4: v4 -> ... -> Row()
    assert _bound(graph, "m/chain.py", 33, "save") == local
    assert _bound(graph, "m/chain.py", 37, "save") == row  # w4 -> ... -> mk() -> Row
    assert _bound(graph, "m/chain.py", 38, "save") == local


REEXPORTED_OUTSIDE = {
    "m/__init__.py": b"",
    "m/a.py": b"from m.b import Session\n",
    "m/b.py": b"from m.c import Session\n",
    "m/c.py": b"from m.d import Session\n",
    "m/d.py": b"from requests import Session\n",
    "m/near.py": b"from m.b import Session\n\n\ndef use(s: Session):\n    s.save()\n",
    "m/far.py": b"from m.a import Session\n\n\ndef use(s: Session):\n    s.save()\n",
    "m/renamed.py": b"from m.d import Session as Sess\n\n\ndef use(s: Session):\n    s.save()\n",
    "m/local.py": b"class Local:\n    def save(self):\n        return 0\n",
}


def test_python_a_name_from_outside_is_followed_three_reexports_deep():
    """A type imported from outside through workspace modules binds nothing when it is
    three re-exports away; four away it is not followed (the type is unknown: by name);
    `import Session as Sess` binds Sess, so a bare `Session` there is not from outside
    (issue 47)."""
    graph = build_graph(REEXPORTED_OUTSIDE)
    local = [("m/local.py", "Local.save")]
    assert _bound(graph, "m/near.py", 5, "save") == []
    assert _bound(graph, "m/far.py", 5, "save") == local
    assert _bound(graph, "m/renamed.py", 5, "save") == local


def test_go_a_call_step_with_several_results_types_by_the_first():
    """`s.Pick()` returning (Item, error), called as a step: its value is an Item."""
    source = b"""package store

type Item struct{}

func (i Item) Save() {}

type Mode int

func (m Mode) Save() {}

type Store struct{}

func (s *Store) Pick() (Item, error) { return Item{}, nil }

func use(s *Store) {
\tit, err := s.Pick()
\tit.Save()
\t_ = err
}
"""
    graph = build_graph({"go.mod": b"module example.com/shop\n", "store/s.go": source})
    assert _bound(graph, "store/s.go", 17, "Save") == [("store/s.go", "Item.Save")]


def test_python_a_name_imported_on_the_first_line_and_redefined_is_the_files_own():
    """The type a name gives is the definition the file's own code means: a class that
    redefines an imported name shadows the import, even one on the first line (issue 47)."""
    files = {
        "m/__init__.py": b"",
        "m/models.py": b"class Row:\n    def save(self):\n        return 1\n",
        "m/shadow.py": b"""from m.models import Row


class Row:
    def save(self):
        return 2


def use(r: Row):
    r.save()
""",
    }
    graph = build_graph(files)
    assert _bound(graph, "m/shadow.py", 10, "save") == [("m/shadow.py", "Row.save")]


def test_a_lazy_graphs_uses_by_name_are_the_assembled_graphs():
    """Over facts decoded as asked for, the uses of a name, the names iterated and counted,
    and the missing name's KeyError are those of the assembled graph (issue 47)."""
    from seek.index.graph_rows import encode, read_graph

    whole = build_graph(TYPED_PY_PATHS)
    rows = [(path, *encode(facts)) for path, facts in whole.files.items()]
    lazy = read_graph(rows).refs_by_name
    assert lazy["save"] == lazy["save"] == whole.refs_by_name["save"]
    with pytest.raises(KeyError) as missing:
        lazy["nobody_uses_this"]
    assert missing.value.args == ("nobody_uses_this",)
    assert sorted(lazy) == sorted(whole.refs_by_name) and len(lazy) == len(whole.refs_by_name)
    assert lazy["first"] == whole.refs_by_name["first"]  # once iterated: the whole mapping


RENAMED = {
    "m/__init__.py": b"",
    "m/models.py": (
        b"class Row:\n    def save(self):\n        return 1\n\n\nclass Pair:\n    pass\n"
    ),
    "m/pkg/__init__.py": b"from .one import Row\n",
    "m/pkg/one.py": b"from .two import Row\n",
    "m/pkg/two.py": b"from m.models import Row\n",
    "m/short/__init__.py": b"from .one import Row\n",
    "m/short/one.py": b"from m.models import Row\n",
    "m/x.py": (
        b"from m.models import Pair as P\nfrom m.models import Pair\n"
        b"from m.models import Row as Record\nfrom m.models import Nothing\n"
    ),
    "m/x2.py": b"from m.short import Row as Record\n",
    "m/x3.py": b"from m.pkg import Row as Record\n",
    "m/x4.py": (
        b"try:\n    from fast import Row as Record\n"
        b"except ImportError:\n    from m.models import Row as Record\n"
    ),
    "m/local.py": b"class Local:\n    def save(self):\n        return 0\n",
    "m/use.py": b"""from m import models as mdl
from m import x, x2, x3, x4
from m.models import Nothing as N


class K(Mystery):
    def __init__(self):
        self.conn = mdl.Row()


def use(k: K, n: N, a: x.Record, b: x2.Record, c: x3.Record):
    k.save()
    k.conn.save()
    n.save()
    a.save()
    b.save()
    c.save()


def more(d: x.Nothing):
    d.save()


def fallback(e: x4.Record):
    e.save()
""",
}


def test_python_types_through_renaming_imports_and_unresolvable_bases():
    """`from m import Row as Record` in a module another imports: `x.Record` is m's Row,
    after other imports of that module and through a package's re-exports, three files
    deep at most (x3's is four: unknown, so by name). A class whose base cannot be resolved
    may inherit any member: `k.save()` binds nothing, and an attribute its method assigns
    is unknown too (the base may define it), as is the type of a name the module lacks
    (issue 47)."""
    graph = build_graph(RENAMED)
    row = [("m/models.py", "Row.save")]
    by_name = [("m/local.py", "Local.save"), ("m/models.py", "Row.save")]
    assert _bound(graph, "m/use.py", 12, "save") == []
    assert _bound(graph, "m/use.py", 13, "save") == by_name
    assert _bound(graph, "m/use.py", 14, "save") == by_name
    assert _bound(graph, "m/use.py", 15, "save") == row
    assert _bound(graph, "m/use.py", 16, "save") == row
    assert _bound(graph, "m/use.py", 17, "save") == by_name
    assert _bound(graph, "m/use.py", 21, "save") == by_name  # x imports what m lacks
    # `try: from fast import ... except ImportError: from m.models import ...`
    assert _bound(graph, "m/use.py", 25, "save") == row


def test_js_a_required_modules_commonjs_export_is_its_member():
    """`lib.helper()` of `require('./lib')` is lib's `module.exports.helper`, not the
    nearer `helper` member of an object in the calling file (issue 47)."""
    graph = build_graph(
        {
            "js/lib.js": b"module.exports.helper = function () {};\n",
            "js/main.js": (
                b"const lib = require('./lib');\nconst o = { helper() {} };\nlib.helper();\n"
            ),
        }
    )
    assert _bound(graph, "js/main.js", 3, "helper") == [("js/lib.js", "module.exports.helper")]


UNTYPED_MEMBERS = {
    "m/__init__.py": b"",
    "m/models.py": (
        b"class Row:\n    def save(self):\n        return 1\n\n"
        b"    def __eq__(self, other):\n        return True\n\n"
        b"    def __secret(self):\n        return 2\n"
    ),
    "m/pkg/__init__.py": b"from .one import Row\n",
    "m/pkg/one.py": b"from .two import Row\n",
    "m/pkg/two.py": b"from m.models import Row\n",
    "m/loose.py": b"""import requests

from m import models as mdl
from m import pkg


def helper(self, cls, other):
    other.__eq__(1)
    self.__secret()
    cls.__secret()
    requests.save()
    mdl.save()
    pkg.Row()
""",
    "go.mod": b"module example.com/shop\n",
    "store/s.go": b"package store\n\ntype Item struct{}\n\nfunc (i Item) Open() {}\n",
    "cmd/main.go": (
        b'package main\n\nimport "example.com/shop/store"\n\nfunc main() {\n\tstore.Open()\n}\n'
    ),
}


def test_member_uses_without_a_type_bind_by_module_protocol_and_name():
    """No declared type: `other.__eq__` is the protocol (nothing), but `self.__secret` and
    `cls.__secret` are a class's own (mangled) method; a member of a module
    from outside binds nothing, of a workspace module that lacks it binds by name, of a
    package re-exporting it two files deep its definition; a Go package's member is only in
    that package (issue 47)."""
    graph = build_graph(UNTYPED_MEMBERS)
    secret = [("m/models.py", "Row.__secret")]
    assert _bound(graph, "m/loose.py", 8, "__eq__") == []
    assert _bound(graph, "m/loose.py", 9, "__secret") == secret
    assert _bound(graph, "m/loose.py", 10, "__secret") == secret
    assert _bound(graph, "m/loose.py", 11, "save") == []
    assert _bound(graph, "m/loose.py", 12, "save") == [("m/models.py", "Row.save")]
    assert _bound(graph, "m/loose.py", 13, "Row") == [("m/models.py", "Row")]
    assert _bound(graph, "cmd/main.go", 6, "Open") == []  # not store's Item.Open


def test_this_self_and_a_type_name_pick_that_classs_members_where_no_type_is_declared():
    """Without declared types (JavaScript, Rust): `this.m` and `Self::m` are the enclosing
    class's (impl's) m, `B.create` is B's; another object's `helper` may be any class's
    (issue 47)."""
    js = b"""class A {
  run(other) {
    this.helper();
    other.helper();
    B.create();
  }
  helper() {}
}

class B {
  helper() {}
  static create() {}
}

class C {
  create() {}
}

function factory() {
  class D {
    go() { this.helper(); }
    helper() {}
  }
  return D;
}
"""
    rust = b"""struct A;
struct B;

impl A {
    fn new() -> A { A }
    fn make() -> A { Self::new() }
}

impl B {
    fn new() -> B { B }
}
"""
    graph = build_graph({"js/a.js": js, "rs/src/lib.rs": rust})
    assert _bound(graph, "js/a.js", 3, "helper") == [("js/a.js", "A.helper")]
    # any class's, one built in a function too (in JS, objects escape their function)
    assert _bound(graph, "js/a.js", 4, "helper") == [
        ("js/a.js", "A.helper"),
        ("js/a.js", "B.helper"),
        ("js/a.js", "factory.D.helper"),
    ]
    assert _bound(graph, "js/a.js", 5, "create") == [("js/a.js", "B.create")]
    assert _bound(graph, "js/a.js", 21, "helper") == [("js/a.js", "factory.D.helper")]
    assert _bound(graph, "rs/src/lib.rs", 6, "new") == [("rs/src/lib.rs", "A.new")]


def test_without_imports_or_types_a_member_use_means_members_else_any_definition():
    """C has no methods: `o.run()` can only mean the function `run`; C++'s `o.run()` means
    the member, not the free function of that name; JavaScript's `this` outside a class
    is the file's members first (issue 47). (Separate graphs: a member use binds across
    languages, a limit noted in bench/mutation-survivors.md.)"""
    c = b"""struct ops { void (*run)(void); };

void run(void) {}

void go(struct ops o) {
    o.run();
}
"""
    cpp = b"struct Ops {\n    void run() {}\n};\n\nvoid run() {}\n\n"
    cpp += b"void go(Ops o) {\n    o.run();\n}\n"
    js = {
        "js/a.js": b"class A {\n  helper() {}\n}\n\nfunction loose() {\n  this.helper();\n}\n",
        "js/b.js": b"class E {\n  helper() {}\n}\n",
    }
    assert _bound(build_graph({"c/ops.c": c}), "c/ops.c", 6, "run") == [("c/ops.c", "run")]
    graph = build_graph({"cpp/ops.cpp": cpp})
    assert _bound(graph, "cpp/ops.cpp", 8, "run") == [("cpp/ops.cpp", "Ops.run")]
    assert _bound(build_graph(js), "js/a.js", 6, "helper") == [("js/a.js", "A.helper")]


def test_a_function_nested_in_a_method_is_visible_only_there_and_a_setter_is_its_getter():
    """A function defined inside a method is that method's (not its sibling's); in a class
    body, `@size.setter` names the property's first definition only (issue 47)."""
    source = b"""class A:
    def run(self):
        def helper():
            return 1

        return helper()

    def other(self):
        return helper()

    @property
    def size(self):
        return 1

    @size.setter
    def size(self, value):
        pass
"""
    graph = build_graph({"m.py": source})
    assert _bound(graph, "m.py", 6, "helper") == [("m.py", "A.run.helper")]
    assert _bound(graph, "m.py", 9, "helper") == []
    setter = [r for r in graph.files["m.py"].references if r.line == 15 and r.name == "size"]
    assert [d.line for d in graph.candidates(setter[0])] == [12]


def test_uses_of_a_python_definition_imported_under_another_name():
    """`from m import a as b`: the uses of b are uses of a (issue 45: requests uses urllib3's
    SSLError as _SSLError), and a name that merely equals the alias elsewhere is not."""
    graph = build_graph(
        {
            "errors.py": b"class SSLError(Exception):\n    pass\n",
            "client.py": b"from errors import SSLError as _SSLError\n\n\ndef send():\n"
            b"    try:\n        pass\n    except _SSLError:\n        raise\n",
            "other.py": b"def f(_SSLError):\n    return _SSLError\n",
        }
    )
    ssl = graph.defs("SSLError")[0]
    assert [(u.path, u.line, u.name) for u in graph.uses(ssl)] == [
        ("client.py", 1, "SSLError"),
        ("client.py", 7, "_SSLError"),
    ]


def test_a_python_member_of_a_submodule_named_through_its_package():
    """`import pkg` then `pkg.exceptions.SSLError`: a member of the submodule the package
    names (issue 45: urllib3.exceptions.SSLError in requests' tests); a step that is not a
    module binds nothing."""
    graph = build_graph(
        {
            "pkg/__init__.py": b"from . import exceptions\n",
            "pkg/exceptions.py": b"class SSLError(Exception):\n    pass\n",
            "pkg/util/__init__.py": b"",
            "pkg/util/retry.py": b"class Retry:\n    pass\n",
            "app.py": b"import pkg\nimport pkg.util\n\n\ndef f():\n"
            b"    return pkg.exceptions.SSLError, pkg.util.retry.Retry, pkg.nothing.SSLError\n",
        }
    )
    for name in ("SSLError", "Retry"):
        found = graph.uses(graph.defs(name)[0])
        assert [(u.path, u.line, u.column) for u in found if u.path == "app.py"] == [
            ("app.py", 6, 26 if name == "SSLError" else 51)
        ]
