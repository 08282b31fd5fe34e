"""What counts as a test, per language, by the frameworks' own conventions (issue 44
deliver 3, `seek tests`), and which tests a use inside test code belongs to.

- Python (pytest, unittest): in ``test_*.py``/``*_test.py``/``tests.py`` files, module-level
  ``test*`` functions, ``test*`` methods of ``Test*`` classes; anywhere under a tests folder,
  ``test*`` methods of ``unittest.TestCase`` subclasses (bases followed in the file). Hooks:
  ``setUp``/``setup_method``/``tearDown``... run for every test of their class,
  ``setup_module``/``setup_function`` and ``autouse`` fixtures for every test of the file.
- Go: ``func TestX(t *testing.T)`` in ``*_test.go`` (testify suites' ``Test*`` methods too).
- Rust: functions under a ``#[test]`` attribute (``#[tokio::test]`` and the like), anywhere.
- Java and Kotlin: ``@Test`` (``@ParameterizedTest``...) methods; JUnit 3's ``test*`` methods
  of ``*Test`` classes; ``@Before``/``@BeforeEach``... are hooks of their class.
- C#: ``[Fact]``/``[Theory]``/``[Test]``/``[TestCase]``/``[TestMethod]`` methods; ``[SetUp]``,
  ``[TestInitialize]`` and xUnit's constructors are hooks of their class.
- Ruby minitest (``test_*`` methods, ``setup``), PHPUnit (``test*`` methods of ``*Test``
  classes), XCTest (``test*`` methods of ``*Tests`` classes).
- Tests written as calls (jest, vitest, mocha, RSpec, ExUnit): :mod:`seek.change.test_blocks`.

A use inside a test belongs to that test; inside a hook, to the tests of the hook's class or
group; in a test file's top-level code (not an import), to every test of the file; a
decorator's or an attribute's line, to the definition under it.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from seek.change.runners import test_id
from seek.change.test_blocks import BLOCK_GRAMMARS, Block, read_blocks
from seek.graph import CodeGraph, Definition, Reference
from seek.graph.lookup import TEST_PATH

Reader = Callable[[str], bytes | None]

_PY_TEST_FILE = re.compile(r"(^|/)(test_[^/]*|[^/]*_test|tests)\.py$")
_GO_TEST = re.compile(r"^Test([^a-z]|$)")
_RUST_MARKS = frozenset({"test", "rstest", "quickcheck", "proptest"})
_JVM_MARKS = frozenset({"Test", "ParameterizedTest", "RepeatedTest", "TestFactory",
                        "TestTemplate", "Property", "Theory"})  # fmt: skip
_JVM_HOOKS = frozenset({"Before", "BeforeEach", "BeforeAll", "BeforeClass", "After",
                        "AfterEach", "AfterAll", "AfterClass"})  # fmt: skip
_CS_MARKS = frozenset({"Fact", "Theory", "Test", "TestCase", "TestCaseSource", "TestMethod",
                       "DataTestMethod"})  # fmt: skip
_CS_HOOKS = frozenset({"SetUp", "TearDown", "OneTimeSetUp", "OneTimeTearDown",
                       "TestInitialize", "TestCleanup", "ClassInitialize"})  # fmt: skip
_PY_HOOKS = frozenset({"setUp", "tearDown", "setUpClass", "tearDownClass", "asyncSetUp",
                       "asyncTearDown", "setup_method", "teardown_method", "setup_class",
                       "teardown_class", "setUpTestData", "setup", "teardown"})  # fmt: skip
_PY_FILE_HOOKS = frozenset({"setup_module", "teardown_module", "setup_function",
                            "teardown_function", "setUpModule", "tearDownModule"})  # fmt: skip
_DECORATOR_LINES = 200  # the longest decorator followed back to its definition
_CALLABLE = frozenset({"function", "method"})


@dataclass(frozen=True, slots=True)
class TestUnit:
    """One test: where it is, its qualified name, its framework and runner id, and its
    definition in the graph (None for a test written as a call)."""

    path: str
    line: int
    end_line: int
    name: str
    framework: str
    id: str
    definition: Definition | None = None


def is_test_support(path: str) -> bool:
    """Test code that is no test itself may be: helpers, fixtures, conftest.py."""
    return bool(TEST_PATH.search(path)) or posixpath.basename(path) == "conftest.py"


class FileTests:
    """The tests of one file, its hooks, and the definitions under decorators."""

    def __init__(self, graph: CodeGraph, path: str, read: Reader | None) -> None:
        facts = graph.files[path]
        self.path, self.grammar = path, facts.grammar
        self.units: list[TestUnit] = []
        self.by_def: dict[str, TestUnit] = {}
        self.hooks: dict[str, list[TestUnit]] = {}  # a hook's qualified name -> its tests
        self.blocks: list[Block] = []
        self._defs = sorted(facts.definitions, key=lambda d: (d.line, -d.end_line))
        self._starts = [d.line for d in self._defs]
        self._named = {d.qualified: d for d in reversed(self._defs)}
        self.marks = _marks(self._defs, facts.references)
        source = read(path) if read is not None and self._wanted(facts.grammar) else None
        # Python's lines, for decorators longer than a few lines (a parametrize table)
        self._lines = (source.decode("utf-8", "replace").splitlines()
                       if source is not None and facts.grammar == "python" else [])  # fmt: skip
        if facts.grammar in BLOCK_GRAMMARS and source is not None:
            self._read_blocks(graph, source)
        self._read_definitions(graph, source)

    def _wanted(self, grammar: str) -> bool:
        return grammar in BLOCK_GRAMMARS or grammar == "python"

    # -- which definitions are tests ------------------------------------------------------

    def _read_definitions(self, graph: CodeGraph, source: bytes | None) -> None:
        file_hooks: list[str] = []
        class_hooks: list[Definition] = []
        for d in self._defs:
            if d.kind not in _CALLABLE:
                continue
            framework = self._framework(graph, d)
            if framework is not None:
                name = d.qualified.replace(".", "::") if framework == "cargo" else d.qualified
                unit = TestUnit(self.path, d.line, d.end_line, name, framework,
                                test_id(framework, self.path, name, d.line), d)  # fmt: skip
                self.units.append(unit)
                self.by_def[d.qualified] = unit
            elif self._file_hook(d, source):
                file_hooks.append(d.qualified)
            elif self._class_hook(d):
                class_hooks.append(d)
        for qualified in file_hooks:
            self.hooks[qualified] = self.units
        for d in class_hooks:
            prefix = f"{d.container}."
            self.hooks[d.qualified] = [u for u in self.units if u.name.startswith(prefix)]

    def _framework(self, graph: CodeGraph, d: Definition) -> str | None:
        grammar, path, marks = self.grammar, self.path, self.marks.get(d.qualified, ())
        if grammar == "python":
            if not d.name.startswith("test"):
                return None
            if d.container is None:
                return "pytest" if _PY_TEST_FILE.search(path) else None
            if self._testcase(graph, d.container):
                return "unittest" if TEST_PATH.search(path) or _PY_TEST_FILE.search(path) else None
            top = d.container.rpartition(".")[2]
            return "pytest" if top.startswith("Test") and _PY_TEST_FILE.search(path) else None
        if grammar == "go":
            ok = path.endswith("_test.go") and bool(_GO_TEST.match(d.name))
            return "go" if ok else None
        if grammar == "rust":
            return "cargo" if _RUST_MARKS & set(marks) else None
        if grammar in ("java", "kotlin"):
            if _JVM_MARKS & set(marks):
                return "junit"
            return "junit" if self._named_test_class(d, ("Test", "Tests")) else None
        if grammar == "csharp":
            return "dotnet" if _CS_MARKS & set(marks) else None
        if grammar == "ruby":
            return "minitest" if TEST_PATH.search(path) and self._test_method(d) else None
        if grammar == "php":
            return "phpunit" if self._named_test_class(d, ("Test",)) else None
        if grammar == "swift":
            return "xctest" if self._named_test_class(d, ("Tests", "Test")) else None
        return None

    def _testcase(self, graph: CodeGraph, container: str, depth: int = 0) -> bool:
        """Whether the class (in this file) derives from a ``*TestCase``, through bases
        written in this file."""
        bases = graph.files[self.path].bases.get(container, ())
        for base in bases:
            last = base.rpartition(".")[2]
            if last.endswith(("TestCase", "TestBase")) or last == "TestCase":
                return True
            if depth < 5 and base in graph.files[self.path].bases:
                if self._testcase(graph, base, depth + 1):
                    return True
        return False

    def _test_method(self, d: Definition) -> bool:
        return d.container is not None and d.name.startswith("test")

    def _named_test_class(self, d: Definition, endings: tuple[str, ...]) -> bool:
        return (self._test_method(d) and d.container is not None
                and d.container.rpartition(".")[2].endswith(endings))  # fmt: skip

    def _file_hook(self, d: Definition, source: bytes | None) -> bool:
        if self.grammar != "python":
            return False
        if d.container is None and d.name in _PY_FILE_HOOKS:
            return True
        # an autouse fixture runs for every test in its reach; the file's own tests here
        return "fixture" in self.marks.get(d.qualified, ()) and _autouse(source, d)

    def _class_hook(self, d: Definition) -> bool:
        if d.container is None:
            return False
        marks = set(self.marks.get(d.qualified, ()))
        if self.grammar == "python":
            return d.name in _PY_HOOKS
        if self.grammar in ("java", "kotlin"):
            return bool(_JVM_HOOKS & marks)
        if self.grammar == "csharp":
            return bool(_CS_HOOKS & marks) or d.name == d.container.rpartition(".")[2]
        if self.grammar in ("ruby", "php", "swift"):
            return d.name in ("setup", "teardown", "setUp", "tearDown")
        return False

    # -- tests written as calls -----------------------------------------------------------

    def _read_blocks(self, graph: CodeGraph, source: bytes) -> None:
        self.blocks = read_blocks(self.path, source)
        framework = self._block_framework(graph)
        for b in self.blocks:
            if b.kind == "test":
                unit = TestUnit(self.path, b.line, b.end_line, b.name, framework,
                                test_id(framework, self.path, b.name, b.line))  # fmt: skip
                self.units.append(unit)

    def _block_framework(self, graph: CodeGraph) -> str:
        if self.grammar == "ruby":
            return "rspec" if self.path.endswith("_spec.rb") else "rails"
        if self.grammar == "elixir":
            return "exunit"
        targets = [i.target for i in graph.files[self.path].imports]
        if any(t == "vitest" or t.startswith("vitest/") for t in targets):
            return "vitest"
        if any(t in ("mocha", "chai", "node:test") for t in targets):
            return "mocha"
        return "jest"

    # -- where a use belongs --------------------------------------------------------------

    def reached(self, use: Reference) -> tuple[list[TestUnit], Definition | None]:
        """The tests a use in this file runs in, and the definition it is in when that is no
        test nor hook (a helper, a fixture: the walk goes on from it)."""
        qualified, helper = use.enclosing, None
        while qualified:  # a function nested in a test runs within it (a view, a callback)
            if qualified in self.by_def:
                return [self.by_def[qualified]], None
            if qualified in self.hooks:
                return self.hooks[qualified], None
            d = self._definition(qualified)
            if d is None:
                break
            if d.kind in _CALLABLE and helper is None:
                helper = d
            if d.kind == "class" and helper is None and not self.blocks:
                prefix = f"{qualified}."
                return [u for u in self.units if u.name.startswith(prefix)], None
            qualified = d.container
        if helper is not None:  # the tests that call it are reached through it
            inside = self._in_blocks(use.line) if self.blocks else []
            return (inside, None) if len(inside) == 1 else ([], helper)
        if self.blocks:
            return self._in_blocks(use.line), None
        under = self._decorated(use.line)
        if under is not None:
            if under.qualified in self.by_def:
                return [self.by_def[under.qualified]], None
            return [], under
        return (self.units if is_test_support(self.path) else []), None

    def _in_decorator(self, line: int, below: int) -> bool:
        """Whether ``line`` is inside the decorators of the definition at line ``below``: no
        blank line between them, and a line above or at ``line`` that starts a decorator at
        the definition's indentation (``@pytest.mark.parametrize(`` and its table, whose
        rows name what each case runs: a use there is the decorated test's, not the file's).
        """
        lines = self._lines
        if not lines or below - line > _DECORATOR_LINES or below > len(lines):
            return False
        head = lines[below - 1]
        indent = len(head) - len(head.lstrip())
        if any(not text.strip() for text in lines[line - 1 : below - 1]):
            return False
        for number in range(line, max(0, line - _DECORATOR_LINES), -1):
            text = lines[number - 1]
            if not text.strip():
                return False
            if text.lstrip().startswith("@") and len(text) - len(text.lstrip()) == indent:
                return True
        return False

    def _definition(self, qualified: str) -> Definition | None:
        return self._named.get(qualified)

    def _decorated(self, line: int) -> Definition | None:
        """The definition right under a decorator or attribute at ``line``."""
        i = bisect.bisect_right(self._starts, line)
        if i < len(self._defs) and (
            self._defs[i].line - line <= 3 or self._in_decorator(line, self._defs[i].line)
        ):
            gap = [d for d in self._defs[:i] if d.line <= line <= d.end_line]
            if not gap or all(d.end_line >= self._defs[i].end_line for d in gap):
                return self._defs[i]
        return None

    def _in_blocks(self, line: int) -> list[TestUnit]:
        """The tests a line of a call-style test file runs in: its own test; a hook's or a
        group's code runs for each test of the group; top-level code for every test."""
        inner: Block | None = None
        for b in self.blocks:
            if b.line <= line <= b.end_line and (inner is None or b.line >= inner.line):
                inner = b
        if inner is None:
            return list(self.units) if self.blocks else []
        if inner.kind == "test":
            return [u for u in self.units if u.line == inner.line and u.name == inner.name]
        span = (inner.line, inner.end_line) if inner.kind == "group" else (
            inner.groups[-1] if inner.groups else None)  # fmt: skip
        if span is None:
            return list(self.units)
        return [u for u in self.units if span[0] <= u.line <= span[1]]


def _marks(defs: list[Definition], refs: list[Reference]) -> dict[str, list[str]]:
    """The names written on each definition's decorators, attributes and annotations: the
    uses in the lines between the previous definition (or its container's first line) and
    its own, and the non-call uses inside it (Java's and C#'s annotations are in its span)."""
    marks: dict[str, list[str]] = {}
    ends: list[tuple[int, Definition]] = []
    starts = {d.qualified: d.line for d in defs}
    by_line: dict[int, list[str]] = {}
    for r in refs:
        by_line.setdefault(r.line, []).append(r.name)
        if r.enclosing is not None and not r.call:
            marks.setdefault(r.enclosing, []).append(r.name)
    for d in defs:
        before = max((e for e, _ in ends if e < d.line), default=0)
        if d.container is not None:
            before = max(before, starts.get(d.container, 0))
        for line in range(before + 1, d.line):
            marks.setdefault(d.qualified, []).extend(by_line.get(line, ()))
        ends.append((d.end_line, d))
    return marks


def _autouse(source: bytes | None, d: Definition) -> bool:
    if source is None:
        return False
    lines = source.splitlines()[max(0, d.line - 4) : d.line - 1]
    return any(b"autouse" in line and b"True" in line for line in lines)


_GENERIC = frozenset({"__init__", "index", "mod", "main", "lib", "utils", "util", "types"})
_TEST_FOLDER = re.compile(r"(^|/)(tests?|spec|__tests__)(/|$)")


def named_tests(paths: Iterable[str], changed: set[str]) -> list[tuple[str, str]]:
    """(test file, changed file) for the test files named after a changed source file by
    the usual conventions (``test_x.py``, ``x_test.go``, ``x.test.ts``, ``x.spec.js``,
    ``XTest.java``...) in its folder or in a test folder (``tests/``, ``__tests__/``...;
    for a generic name, ``index``, ``__init__``, ``mod``..., its folder only): the tests a
    change may break where the graph finds no path (a call through an interface, a
    fixture, a string)."""
    stems: dict[str, list[str]] = {}
    for path in sorted(changed):
        stem = path.rpartition("/")[2].split(".", 1)[0]
        for name in (f"test_{stem}", f"{stem}_test", f"{stem}.test", f"{stem}.spec",
                     f"{stem}_spec", f"{stem}Test", f"{stem}Tests", f"Test{stem}"):  # fmt: skip
            stems.setdefault(name, []).append(path)
    out = []
    for path in sorted(paths):
        folder, _, name = path.rpartition("/")
        for of in stems.get(name.rsplit(".", 1)[0], ()):
            near = of.rpartition("/")[0] == folder
            generic = of.rpartition("/")[2].split(".", 1)[0] in _GENERIC
            if path not in changed and TEST_PATH.search(path) and (
                near or (not generic and _TEST_FOLDER.search(folder))):  # fmt: skip
                out.append((path, of))
                break
    return out
