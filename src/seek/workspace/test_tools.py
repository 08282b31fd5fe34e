"""The facade's ``tests`` tool (issue 44 deliver 3, `seek tests`): the tests that reach a
definition, a file's definitions, or the definitions the working tree changed since a ref,
on the code graph stored with the index (:mod:`seek.change.tests` does the walk). A part of
:class:`seek.workspace.Workspaces`, kept apart as the change tools are.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seek.errors import SeekError
from seek.untrusted import check_query, printable

if TYPE_CHECKING:
    from seek.change.tests import SelectedTest
    from seek.graph import CodeGraph, Definition
    from seek.settings import Settings
    from seek.workspace.code_graph import GraphResult, Lookup

_SUBJECT_KINDS = frozenset({"function", "method", "class", "struct", "interface", "trait",
                            "type", "enum", "constant", "variable", "macro"})  # fmt: skip


class TestTools:
    """Mixed into :class:`seek.workspace.Workspaces`, whose lookups these use."""

    settings: Callable[[Path | None], Settings]
    _lookup: Callable[..., Lookup]
    _graph_answer: Callable[[Path, Callable[[bool], GraphResult]], GraphResult]

    def tests(
        self,
        root: Path,
        subject: str | None = None,
        changed: str | None = None,
        staged: bool = False,
        depth: int | None = None,
        limit: int | None = None,
    ) -> GraphResult:
        """The tests that reach ``subject`` (a definition's NAME or PATH:LINE, or a file's
        PATH: its definitions) or, with ``changed`` (a git ref; ``staged``: the index
        against it), every definition changed since; nearest first, each with its runner's
        id (issue 44 deliver 3; :mod:`seek.change.tests`)."""
        from seek.change.tests import DEFAULT_DEPTH, select_tests
        from seek.scan.beneath import read_beneath
        from seek.workspace import change_rows as cr
        from seek.workspace import code_graph as cg

        if (subject is None) == (changed is None):
            raise SeekError("name a subject or a ref to compare with (changed), not both")
        limit = cg.check_limit(limit)
        depth = cr.check_depth(depth) if depth is not None else DEFAULT_DEPTH
        changes, location = None, None
        if changed is not None:
            from seek.change.definitions import compare
            from seek.change.git import diff_sides

            ref = check_query(changed or "HEAD", "the ref").strip()
            max_bytes = self.settings(root).max_file_bytes
            changes = compare(diff_sides(root, ref, staged, max_bytes))
            query = f"--changed {ref} --staged" if staged else f"--changed {ref}"
        else:
            query = check_query(subject or "", "the subject").strip()
            location = cg.parse_location(query)

        def read(path: str) -> bytes | None:
            try:
                return read_beneath(root, path)
            except (OSError, ValueError):
                return None

        def answer(update: bool) -> GraphResult:
            lookup = self._lookup(root, update) if changes != [] else cg.Lookup(root, None)
            graph, about = lookup.graph, None
            subjects: list[Definition] = []
            if graph is not None and changes is not None:
                subjects = [_current(graph, c.current) for c in changes]
            elif graph is not None and location is not None:
                found = lookup.at(*location, uses=True)
                subjects = [found] if found is not None else []
                about = cg.definition_row(found) if found is not None else None
            elif graph is not None:
                subjects = _named(graph, query, lookup.notes)
                if len(subjects) == 1:
                    about = cg.definition_row(subjects[0])
            selected = select_tests(graph, subjects, depth, read) if graph is not None else []
            if subjects and not selected:
                lookup.notes.append("No test reaches it through the code graph.")
            rows = test_rows(root, selected)
            return lookup.result("tests", query, rows, limit, subject=about,
                                 render_rows=tests_text)  # fmt: skip

        return self._graph_answer(root, answer)


def _current(graph: CodeGraph, definition: Definition) -> Definition:
    """The graph's own record of a changed definition (the walk binds uses to it)."""
    return graph.by_key.get((definition.path, definition.qualified), definition)


def _named(graph: CodeGraph, subject: str, notes: list[str]) -> list[Definition]:
    """A file's definitions (a workspace path), else the best definition of a name."""
    from seek.workspace import code_graph as cg

    if subject in graph.files:
        return [d for d in graph.outline(subject) if d.kind in _SUBJECT_KINDS]
    found = graph.defs(cg.check_name(subject))
    if not found:
        notes.append(f"No definition of {subject}.")
    return found[:1]


def test_rows(root: Path, selected: list[SelectedTest]) -> list[dict[str, Any]]:
    """``seek tests``' rows: each test's ``path``, ``line``, ``end_line``, ``name`` (its
    qualified name), ``column``, ``kind`` "test", ``depth``, runner ``id`` and ``framework``,
    ``signature`` (its first line: a test written as a call has no other), ``through``
    (the definition it reaches) and ``via`` (the use that reaches it, a use row)."""
    from seek.workspace.code_graph import Lines, use_row

    lines = Lines()
    return [
        {"path": t.path, "line": t.line, "end_line": t.end_line,
         "column": t.definition.column + 1 if t.definition is not None else 1,
         "name": t.name, "kind": "test", "depth": t.depth, "id": t.id,
         "framework": t.framework, "signature": _first_line(root, t, lines),
         "through": t.through.qualified, "via": use_row(root, t.use, lines)}
        for t in selected
    ]  # fmt: skip


def _first_line(root: Path, test: SelectedTest, lines: Any) -> str:
    if test.definition is not None:
        return test.definition.signature
    return lines.get(root, test.path, test.line)


def tests_text(result: GraphResult) -> list[str]:
    """Each test: ``depth  path:line  name  (framework)``, then the use that reaches it and
    the runner's id; last, one command line that runs them when there is one."""
    from seek.change.runners import command

    out: list[str] = []
    for row in result.rows:
        via = row["via"]
        what = "calls" if via["kind"] == "call" else "uses"
        where = f"{via['path']}:{via['line']}" if via["path"] != row["path"] else via["line"]
        out.append(f"{row['depth']}  {printable(row['path'])}:{row['line']}  "
                   f"{printable(row['name'])}  ({row['framework']})  "
                   f"{what} {printable(row['through'])} at {printable(str(where))}")  # fmt: skip
        out.append(f"      {printable(row['id'])}")
    line = command(result.rows)
    if line is not None:
        out.append(f"run: {printable(line)}")
    return out
