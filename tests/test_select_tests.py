"""`seek tests` (issue 44 deliver 3): what counts as a test in each framework, its runner
id, and which tests reach a definition through the code graph, fixtures, hooks and helpers
included; on small multi-language trees parsed by the real tree-sitter grammars."""

from __future__ import annotations

import pytest

from seek.change.runners import command
from seek.change.tests import select_tests
from seek.graph import build_graph

PYTHON = {
    "pkg/lexer.py": (
        "def helper(x):\n    return x\n\n\n"
        "class Lexer:\n"
        "    def __init__(self):\n        self.n = 0\n\n"
        "    def raw(self):\n        return helper(1)\n\n"
        "    def cooked(self):\n        return 2\n\n\n"
        "def unused_by_tests():\n    return 3\n"
    ),
    "tests/conftest.py": (
        "import pytest\nfrom pkg.lexer import Lexer\n\n\n"
        "@pytest.fixture\ndef lexer():\n    return Lexer()\n"
    ),
    "tests/test_lexer.py": (
        "import unittest\nfrom pkg.lexer import Lexer, helper\n\n\n"
        "def make():\n    return helper(5)\n\n\n"
        "def test_uses_fixture(lexer):\n    assert lexer\n\n\n"
        "def test_via_helper():\n    assert make()\n\n\n"
        "class TestLexer:\n"
        "    def test_raw(self):\n        assert Lexer().raw()\n\n"
        "    def test_other(self):\n        assert 1\n\n\n"
        "class Base(unittest.TestCase):\n    pass\n\n\n"
        "class LexerCase(Base):\n"
        "    def setUp(self):\n        self.lexer = Lexer()\n\n"
        "    def test_one(self):\n        pass\n\n"
        "    def test_two(self):\n        pass\n\n"
        "    def not_a_test(self):\n        pass\n"
    ),
    "pkg/other_test_util.py": "def test_looking_but_not_a_test_file():\n    return 0\n",
}


def names(selected):
    return [(t.depth, t.name) for t in selected]


def test_python_tests_through_helpers_fixtures_and_setup():
    graph = build_graph({k: v.encode() for k, v in PYTHON.items()})
    (helper,) = graph.defs("helper")
    found = select_tests(graph, [helper])
    assert names(found) == [(2, "test_via_helper"), (2, "TestLexer.test_raw")]
    (lexer,) = graph.defs("Lexer")
    found = {t.name: t for t in select_tests(graph, [lexer])}
    # a fixture in conftest.py reaches the tests that take it by name; setUp every test
    # of its class (unittest.TestCase through a base of the file)
    assert set(found) == {"test_uses_fixture", "TestLexer.test_raw", "LexerCase.test_one",
                          "LexerCase.test_two"}  # fmt: skip
    assert found["test_uses_fixture"].depth == 2 and found["LexerCase.test_one"].depth == 1
    assert found["LexerCase.test_two"].framework == "unittest"
    assert found["TestLexer.test_raw"].id == "tests/test_lexer.py::TestLexer::test_raw"
    assert found["test_uses_fixture"].through.name == "lexer"
    # __init__ runs when the class is called: its class's uses stand for its own
    init = graph.by_key[("pkg/lexer.py", "Lexer.__init__")]
    assert "LexerCase.test_one" in {t.name for t in select_tests(graph, [init])}
    assert select_tests(graph, [graph.defs("unused_by_tests")[0]]) == []


def test_depth_bounds_the_walk():
    graph = build_graph({k: v.encode() for k, v in PYTHON.items()})
    (helper,) = graph.defs("helper")
    # within one step no test: the tests of the files that import it stand in, one further
    fallback = select_tests(graph, [helper], depth=1)
    assert {(t.depth, t.use.line) for t in fallback} == {(2, 2)}  # the import's line
    assert names(select_tests(graph, [helper], depth=2))[0] == (2, "test_via_helper")
    (raw,) = graph.defs("raw")
    assert names(select_tests(graph, [raw], depth=1)) == [(1, "TestLexer.test_raw")]


def test_the_test_file_that_imports_the_module_stands_in_when_no_path_is_found():
    files = {
        "pkg/plugins.py": "def handler():\n    return 1\n",
        # reached only by name, through getattr: no use of `handler` binds
        "tests/test_plugins.py": (
            "from pkg import plugins\nfrom pkg.plugins import handler\n\n\n"
            "def test_dispatch():\n    assert getattr(plugins, 'hand' + 'ler')()\n"
        ),
        # imports it too, but is not the file named after the module: left out
        "tests/test_app.py": (
            "import pkg.plugins\n\n\ndef test_app():\n    assert getattr(pkg.plugins, 'x')\n"
        ),
    }
    graph = build_graph({k: v.encode() for k, v in files.items()})
    found = select_tests(graph, graph.defs("handler"), depth=2)
    assert names(found) == [(3, "test_dispatch")]


def test_nested_views_multiline_imports_and_hubs():
    files = {
        "app/core.py": (
            "def core():\n    return 1\n\n\ndef hub():\n    return core()\n\n\n"
            "def lonely():\n    return 2\n"
        ),
        "tests/test_core.py": (
            "from app.core import (\n    core,\n    hub,\n    lonely,\n)\n\n\n"
            "def test_core():\n    assert core()\n\n\n"
            "def test_view(app):\n    @app.route('/')\n    def index():\n"
            "        return lonely()\n\n    assert app\n\n\n"
            + "".join(f"def test_hub_{i}():\n    assert hub()\n\n\n" for i in range(3))
        ),
    }
    graph = build_graph({k: v.encode() for k, v in files.items()})
    # a function defined inside a test runs within it (a view the test registers)
    assert names(select_tests(graph, graph.defs("lonely"))) == [(1, "test_view")]
    # the names on an import's continuation lines are no top-level code of every test; the
    # step through `hub`, which would add three tests to one, is left out
    assert names(select_tests(graph, graph.defs("core"))) == [(1, "test_core")]
    assert len(select_tests(graph, graph.defs("hub"))) == 3


GO = {
    "go.mod": "module example.com/m\n",
    "calc/add.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
    "calc/add_test.go": (
        'package calc\n\nimport "testing"\n\n'
        "func check(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal()\n\t}\n}\n\n"
        "func TestAdd(t *testing.T) {\n\tcheck(t)\n}\n\n"
        "func TestOther(t *testing.T) {\n}\n\n"
        "func BenchmarkAdd(b *testing.B) {\n\tAdd(1, 1)\n}\n"
    ),
}

JS = {
    "src/add.ts": "export function add(a: number, b: number) { return a + b }\n",
    "src/add.test.ts": (
        "import { describe, it, expect, beforeEach } from 'vitest'\n"
        "import { add } from './add'\n"
        "describe('add', () => {\n"
        "  describe('small', () => {\n"
        "    beforeEach(() => { add(0, 0) })\n"
        "    it('one', () => { expect(1).toBe(1) })\n"
        "    it('two', () => { expect(2).toBe(2) })\n"
        "  })\n"
        "  it.each([1, 2])('big %i', (n) => { expect(add(n, n)).toBe(2 * n) })\n"
        "  test('unrelated', () => { expect(3).toBe(3) })\n"
        "})\n"
    ),
    "web/sum.js": "export function sum(xs) { return xs.length }\n",
    "web/__tests__/sum.js": (
        "const { sum } = require('../sum')\ntest('sums', () => {\n  expect(sum([1])).toBe(1)\n})\n"
    ),
}

OTHERS = {
    "src/lib.rs": (
        "pub fn add(a: i32) -> i32 { a }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n"
        "    #[test]\n    fn it_adds() {\n        assert_eq!(add(1), 1);\n    }\n\n"
        "    fn not_a_test() {\n        add(2);\n    }\n}\n"
    ),
    "src/main/java/p/Calc.java": (
        "package p;\npublic class Calc {\n  public int mul(int a) { return a; }\n}\n"
    ),
    "src/test/java/p/CalcTest.java": (
        "package p;\nimport org.junit.jupiter.api.*;\nclass CalcTest {\n"
        "  @BeforeEach\n  void init() {\n    new Calc().mul(0);\n  }\n"
        "  @Test\n  void muls() {\n  }\n"
        "  void helper() {\n  }\n}\n"
    ),
    "lib/shop.rb": "class Shop\n  def buy(a)\n    a\n  end\nend\n",
    "spec/shop_spec.rb": (
        "require 'shop'\nRSpec.describe Shop do\n  context 'when open' do\n"
        "    it 'buys' do\n      Shop.new.buy(1)\n    end\n  end\nend\n"
    ),
    "lib/calc.ex": "defmodule Calc do\n  def twice(a), do: a * 2\nend\n",
    "test/calc_test.exs": (
        'defmodule CalcTest do\n  use ExUnit.Case\n  describe "twice" do\n'
        '    test "doubles" do\n      Calc.twice(1)\n    end\n  end\nend\n'
    ),
    "Shop/Till.cs": "public class Till { public int Ring(int a) { return a; } }\n",
    "Tests/TillTests.cs": (
        "using Xunit;\npublic class TillTests {\n  [Fact]\n  public void Rings() {\n"
        "    new Till().Ring(1);\n  }\n}\n"
    ),
}


def built(files):
    data = {k: v.encode() for k, v in files.items()}
    return build_graph(data), data.get


def test_go_tests_and_their_helpers():
    graph, read = built(GO)
    found = select_tests(graph, graph.defs("Add"), read=read)
    # BenchmarkAdd is no test; TestAdd reaches Add through its helper
    assert [(t.depth, t.name, t.id) for t in found] == [
        (2, "TestAdd", "go test -run '^TestAdd$' ./calc")]  # fmt: skip
    assert command(found) == "go test -run '^TestAdd$' ./calc"


def test_javascript_tests_are_named_by_their_describe_path():
    graph, read = built(JS)
    found = select_tests(graph, graph.defs("add"), read=read)
    # the hook's use reaches the tests of its group; the table test through its own call
    assert [(t.name, t.framework) for t in found] == [
        ("add small one", "vitest"),
        ("add small two", "vitest"),
        ("add big %i", "vitest"),
    ]
    assert found[0].id == "src/add.test.ts -t 'add small one'"
    assert command(found[:2]) == "npx vitest run src/add.test.ts -t 'add small one|add small two'"
    (sums,) = select_tests(graph, graph.defs("sum"), read=read)
    assert (sums.name, sums.framework, sums.line) == ("sums", "jest", 2)


@pytest.mark.parametrize(
    "name, expected",
    [("add", [("tests::it_adds", "cargo", "tests::it_adds")]),
     ("mul", [("CalcTest.muls", "junit", "CalcTest#muls")]),
     ("buy", [("Shop when open buys", "rspec", "spec/shop_spec.rb:4")]),
     ("twice", [("twice doubles", "exunit", "test/calc_test.exs:4")]),
     ("Ring", [("TillTests.Rings", "dotnet", "TillTests.Rings")])],
)  # fmt: skip
def test_each_frameworks_tests_and_ids(name, expected):
    graph, read = built(OTHERS)
    found = select_tests(graph, graph.defs(name)[:1], read=read)
    assert [(t.name, t.framework, t.id) for t in found] == expected


def test_commands_for_a_selection():
    graph, read = built(OTHERS)
    (rust,) = select_tests(graph, graph.defs("add")[:1], read=read)
    assert command([rust]) == "cargo test tests::it_adds -- --exact"
    (spec,) = select_tests(graph, graph.defs("buy"), read=read)
    assert command([spec]) == "bundle exec rspec spec/shop_spec.rb:4"
    assert command([spec, rust]) is None  # two frameworks: no one command


def test_a_use_in_a_long_parametrize_table_is_the_decorated_tests():
    # the table's rows name what each case runs: the decorated test runs them, not every
    # test of the file (requests' test_utils.py selected the whole file for one row)
    table = "".join(f"        ({i}, parse({i})),\n" for i in range(8))
    files = {
        "pkg/parse.py": "def parse(x):\n    return x\n",
        "tests/test_parse.py": (
            "import pytest\nfrom pkg.parse import parse\n\n\n"
            "def test_other():\n    assert 1\n\n\n"
            f"@pytest.mark.parametrize(\n    'x, y',\n    [\n{table}    ],\n)\n"
            "def test_table(x, y):\n    assert x == y\n\n\n"
            "def test_last():\n    assert 2\n"
        ),
    }
    graph = build_graph({k: v.encode() for k, v in files.items()})
    found = select_tests(graph, graph.defs("parse"), read=lambda p: files[p].encode())
    assert names(found) == [(1, "test_table")]
