"""The tests that reach a definition (issue 44 deliver 3, `seek tests`): a breadth-first
walk up the code graph's bound uses (:meth:`CodeGraph.uses`) from the subjects, as
``seek impact`` walks, that stops at tests (:mod:`seek.change.test_catalog` says what is
one, per language) and goes on through everything else: helpers and fixtures in test code
included. Besides the graph's uses, three edges the code does not spell as a use:

- a pytest fixture reaches the tests and fixtures that take a parameter of its name;
- a hook's code (``setUp``, ``beforeEach``, ``before``, ``setup``...) runs for every test of
  its class or group, and a test file's top-level code for every test of the file;
- a method Python calls without naming it (``__init__``, ``__eq__``, ``__iter__``...) is
  reached through its class.

The walk stops at the end of the step where ``ENOUGH`` tests have been found, and before a
step that would add more than ``GROWTH`` times the tests found so far: such a step goes
through a definition much of the code calls, and its tests rarely run the subject (on the
per-test coverage oracles, flask, requests and cobra, this halves the rows and keeps most
of the recall). When no test is reached, a constructor's class is tried (one step), then
the tests of the test files that import the subject's file and name it, the file named
after the subject's module alone when it is one of them, one step further than the walk
(the graph misses the path when a call is built from a string, a ``getattr`` table or
generated code).
"""

from __future__ import annotations

import posixpath
import re
import weakref
from collections.abc import Iterable
from dataclasses import dataclass

from seek.change.test_catalog import FileTests, Reader, TestUnit, is_test_support, named_tests
from seek.graph import CodeGraph, Definition, Reference

DEFAULT_DEPTH = 8
"""The most steps from a subject; the walk stops sooner (see :meth:`_Walk.run`)."""
ENOUGH = 5
"""Tests found by the end of a step after which the walk goes no further."""
GROWTH = 2
"""A step that would add more than this many times the tests found so far is left out."""
_IMPLIED_DEPTH = 1
# the methods a class's use runs without naming them: its constructors
_IMPLICIT = re.compile(r"^(__init__|__new__|__post_init__|__init_subclass__|constructor|new)$")
_PARAMS = re.compile(r"\bdef\s+\w+\s*\(([^)]*)")


@dataclass(frozen=True, slots=True)
class SelectedTest:
    """A test that reaches a subject: where it is, its qualified ``name``, its runner
    ``id`` and ``framework``, its ``depth`` (1: it uses the subject itself), and the ``use``
    of ``through`` that reaches it."""

    path: str
    line: int
    end_line: int
    name: str
    depth: int
    id: str
    framework: str
    use: Reference
    through: Definition
    definition: Definition | None = None


def select_tests(
    graph: CodeGraph,
    subjects: list[Definition],
    depth: int | None = None,
    read: Reader | None = None,
) -> list[SelectedTest]:
    """The tests that reach any of ``subjects`` within ``depth`` steps (default
    ``DEFAULT_DEPTH``), nearest first, then by path and line. ``read`` (a workspace path ->
    its bytes, or None) lets tests written as calls (``it``, ``test``, RSpec, ExUnit) be
    named and told apart; without it their files' tests are not seen."""
    walk = _walk_of(graph, read)
    found: dict[tuple[str, int, str], SelectedTest] = {}
    for subject in subjects:
        reached = walk.run(subject, depth or DEFAULT_DEPTH)
        for owner in walk.implied(subject) if not reached else ():
            reached = walk.run(owner, _IMPLIED_DEPTH)
        if not reached:
            reached = walk.importers(subject, (depth or DEFAULT_DEPTH) + 1)
        for test in reached:
            key = (test.path, test.line, test.name)
            if key not in found or test.depth < found[key].depth:
                found[key] = test
    return sorted(found.values(), key=lambda t: (t.depth, t.path, t.line, t.name))


_WALKS: weakref.WeakKeyDictionary[CodeGraph, _Walk] = weakref.WeakKeyDictionary()


def _walk_of(graph: CodeGraph, read: Reader | None) -> _Walk:
    """The walker of ``graph``, kept while the graph lives: the test files it has read are
    read once for every subject asked about (a harness asks about hundreds, one by one)."""
    walk = _WALKS.get(graph)
    if walk is None or walk.read is not read:
        walk = _WALKS[graph] = _Walk(graph, read)
    return walk


class _Walk:
    def __init__(self, graph: CodeGraph, read: Reader | None) -> None:
        self.graph, self.read = graph, read
        self._files: dict[str, FileTests] = {}
        self._takers: dict[str, list[Definition]] | None = None

    def tests_of(self, path: str) -> FileTests:
        if path not in self._files:
            self._files[path] = FileTests(self.graph, path, self.read)
        return self._files[path]

    def run(self, subject: Definition, depth: int) -> list[SelectedTest]:
        seen: set[Definition] = {subject}
        found: list[SelectedTest] = []
        tested: set[tuple[str, int, str]] = set()
        frontier = [subject]
        for level in range(1, depth + 1):
            following: list[Definition] = []
            new: list[SelectedTest] = []
            for target in frontier:
                for use in self._uses(target):
                    units, user = self.tests_of(use.path).reached(use)
                    if user is None and not units and use.enclosing:
                        user = self.graph.by_key.get((use.path, use.enclosing))
                    for unit in units:
                        key = (unit.path, unit.line, unit.name)
                        if key not in tested:
                            tested.add(key)
                            new.append(_selected(unit, level, use, target))
                    if user is not None and user not in seen:
                        seen.add(user)
                        following.append(user)
            if found and len(new) > GROWTH * len(found):
                break  # through a definition that much of the code calls: not telling
            found.extend(new)
            frontier = following
            if len(found) >= ENOUGH:
                break
        return found

    def implied(self, subject: Definition) -> list[Definition]:
        """The class of a method its language calls without naming it."""
        if subject.kind == "method" and subject.container and _IMPLICIT.match(subject.name):
            owner = self.graph.by_key.get((subject.path, subject.container))
            return [owner] if owner is not None else []
        return []

    def _uses(self, target: Definition) -> list[Reference]:
        if self.graph.by_key.get((target.path, target.qualified)) == target:
            uses = self.graph.uses(target)
        else:  # removed since: the uses of its name that nothing defines any longer
            known = self.graph.refs_by_name.get(target.name, ())
            uses = [u for u in known if not self.graph.candidates(u)]
        uses = [u for u in uses if not self._import_line(u)]
        uses.extend(self._fixture_uses(target))
        return sorted(uses, key=lambda r: (r.path, r.line, r.column))

    def _import_line(self, use: Reference) -> bool:
        """Whether a use is an import's (a name on an import's continuation line too)."""
        if use.enclosing is not None:
            return False
        facts = self.graph.files.get(use.path)
        if facts is None:
            return False
        return any(i.line == use.line or (not use.call and use.name in i.names)
                   for i in facts.imports)  # fmt: skip

    def _fixture_uses(self, target: Definition) -> Iterable[Reference]:
        """A pytest fixture's uses by parameter name: the functions of test code that take
        a parameter of its name, in its file or, for a conftest.py, under its folder."""
        if not target.path.endswith(".py") or not is_test_support(target.path):
            return []
        folder = posixpath.dirname(target.path)
        conftest = posixpath.basename(target.path) == "conftest.py"
        out = []
        for taker in self._parameter_takers().get(target.name, ()):
            inside = taker.path.startswith(f"{folder}/") or not folder
            if taker != target and (taker.path == target.path or (conftest and inside)):
                out.append(Reference(taker.path, target.name, taker.line, taker.column,
                                     taker.qualified))  # fmt: skip
        return out

    def _parameter_takers(self) -> dict[str, list[Definition]]:
        if self._takers is None:
            self._takers = {}
            for path in self.graph.files:
                if not path.endswith(".py") or not is_test_support(path):
                    continue
                for d in self.graph.files[path].definitions:
                    if d.kind in ("function", "method"):
                        for name in _parameters(d, self.read):
                            self._takers.setdefault(name, []).append(d)
        return self._takers

    def importers(self, subject: Definition, depth: int) -> list[SelectedTest]:
        """The tests of the test files that import the subject's file and name it (or its
        class), or import the module whole: the walk's stand-in when it found no path."""
        names = {subject.name, (subject.container or "").rpartition(".")[2]} - {""}
        found = []
        for facts in self.graph.mentioning(names):
            if facts.path == subject.path or not is_test_support(facts.path):
                continue
            named = names & {r.name for r in facts.references}
            for imp in facts.imports:
                whole = not imp.names or "*" in imp.names or imp.alias is not None
                if subject.path in imp.files and (named or whole or names & set(imp.names)):
                    use = Reference(facts.path, subject.name, imp.line, 0, None)
                    units = self.tests_of(facts.path).units
                    lines = {r.line for r in facts.references if r.name in names}
                    naming = [u for u in units if any(u.line <= n <= u.end_line for n in lines)]
                    found.extend(_selected(u, depth, use, subject) for u in naming or units)
                    break
        # the file named after the subject's module, when it is among them, alone: the
        # others import the module for something else as often as for the subject
        named = {path for path, _ in named_tests({t.path for t in found}, {subject.path})}
        return [t for t in found if t.path in named] if named else found


def _selected(unit: TestUnit, depth: int, use: Reference, through: Definition) -> SelectedTest:
    return SelectedTest(unit.path, unit.line, unit.end_line, unit.name, depth, unit.id,
                        unit.framework, use, through, unit.definition)  # fmt: skip


def _parameters(d: Definition, read: Reader | None) -> list[str]:
    """A Python function's parameter names, from its signature line (its source lines when
    the signature runs over several and ``read`` is given)."""
    header = d.signature
    if ")" not in header and read is not None:
        source = read(d.path)
        if source is not None:
            lines = source.decode("utf-8", "replace").splitlines()[d.line - 1 : d.line + 20]
            header = "\n".join(lines)
    match = _PARAMS.search(header)
    if match is None:
        return []
    names = []
    for part in match.group(1).split(","):
        name = part.split(":")[0].split("=")[0].strip().lstrip("*")
        if name.isidentifier() and name not in ("self", "cls"):
            names.append(name)
    return names
