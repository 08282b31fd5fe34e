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

When no test is reached this way, the tests of the test files that import the subject's
file stand in, one step further (the graph misses the path when a call is built from a
string, a ``getattr`` table or generated code).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass

from seek.change.test_catalog import FileTests, Reader, TestUnit, is_test_support
from seek.graph import CodeGraph, Definition, Reference

DEFAULT_DEPTH = 4
_IMPLICIT = re.compile(r"^__\w+__$|^(constructor|initialize|new)$")
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
    walk = _Walk(graph, read)
    found: dict[tuple[str, int, str], SelectedTest] = {}
    for subject in subjects:
        reached = walk.run(subject, depth or DEFAULT_DEPTH)
        if not reached:
            reached = walk.importers(subject, (depth or DEFAULT_DEPTH) + 1)
        for test in reached:
            key = (test.path, test.line, test.name)
            if key not in found or test.depth < found[key].depth:
                found[key] = test
    return sorted(found.values(), key=lambda t: (t.depth, t.path, t.line, t.name))


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
        frontier = [subject, *self._implied(subject)]
        seen.update(frontier)
        for level in range(1, depth + 1):
            following: list[Definition] = []
            for target in frontier:
                for use in self._uses(target):
                    units, user = self.tests_of(use.path).reached(use)
                    if user is None and not units and use.enclosing:
                        user = self.graph.by_key.get((use.path, use.enclosing))
                    for unit in units:
                        key = (unit.path, unit.line, unit.name)
                        if key not in tested:
                            tested.add(key)
                            found.append(_selected(unit, level, use, target))
                    if user is not None and user not in seen:
                        seen.add(user)
                        following.append(user)
            frontier = following
        return found

    def _implied(self, subject: Definition) -> list[Definition]:
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
        if use.enclosing is not None:
            return False
        facts = self.graph.files.get(use.path)
        return facts is not None and any(i.line == use.line for i in facts.imports)

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
                    found.extend(_selected(u, depth, use, subject)
                                 for u in self.tests_of(facts.path).units)  # fmt: skip
                    break
        return found


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
