"""The code-graph tools behind the facade: `def`, `refs`, `callers`, `callees`, `outline`,
`map` (seek.md §2; issue 28 deliver 2), answered from the graph stored with the index.

The graph is assembled from the index's graph table (:mod:`seek.index.graph_rows`) after the
index is brought up to date, as a search does; how it is read (a server's cache per
workspace, a one-shot answer's lazy read) is :mod:`seek.workspace.stored_graph`'s.

Every answer is a :class:`GraphResult`: rows that name a site by workspace-relative
``path`` and 1-based ``line`` (plus ``end_line``, ``kind``, ``name``, ``container`` where
they apply), the same JSON for every front-end. Names, paths and budgets are checked here
with the limits of :mod:`seek.untrusted`, since a server's caller is not trusted: a path
is only ever a key into the graph (a path that climbs out matches nothing), and the one
file read, for a use's line of text, is read with :func:`seek.scan.beneath.read_beneath`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seek.errors import SeekError
from seek.untrusted import (
    MAX_MAP_TOKENS,
    MAX_NAME_CHARS,
    MAX_PATH_CHARS,
    MAX_ROWS,
    check_query,
    printable,
    printable_text,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from seek.graph import CodeGraph, Definition, Reference

TOOLS = ("defs", "refs", "callers", "callees", "outline", "map")
DEFAULT_ROWS = 50
DEFAULT_MAP_TOKENS = 1_024
LINE_TEXT_CHARS = 200
GRAPH_REPAIRED = (
    "The stored code graph could not be read; the index run made it again from the files."
)
_LOCATION = re.compile(r"^(.+):([0-9]+)$")


@dataclass(frozen=True, slots=True)
class GraphResult:
    """One tool's answer: rows (see the module docstring), notes, and for ``map`` its text."""

    tool: str
    query: str
    rows: list[dict[str, Any]]
    notes: tuple[str, ...] = ()
    text: str = ""
    """``map``: the signatures rendered within the budget (empty for the other tools)."""
    truncated: bool = False
    """More rows matched than the limit let through."""
    importers: list[str] = field(default_factory=list)
    """``impact``: the files that import the subject's file and name it."""
    render_rows: Callable[[GraphResult], list[str]] | None = None
    """The text of the rows of a tool whose rows are not definitions or uses (``impact``,
    ``changed``, ``history``: :mod:`seek.workspace.change_rows`)."""
    subject: dict[str, Any] | None = None
    """``callers``, ``callees`` and ``refs PATH:LINE``: the definition the location was taken
    to mean (a row like the definitions'), so that the caller sees which one was answered
    (a line between two methods means their class); None when none or for a name."""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "tool": self.tool,
            "query": self.query,
            "rows": self.rows,
            "notes": list(self.notes),
            "truncated": self.truncated,
        }
        if self.tool in _ABOUT:
            data["subject"] = self.subject
        if self.tool == "impact":
            data["importers"] = self.importers
        if self.tool == "map":
            data["map"] = self.text
        return data

    def to_text(self, notes: bool = True) -> str:
        """What a person or an agent reads (``seek def`` etc., the MCP tools): definitions as
        ``path:line-end_line  kind  Container.name`` with their signature line; uses grouped
        by file and enclosing definition, ``line:column  text`` each; the map as rendered.
        Names and lines from the workspace are escaped (:mod:`seek.untrusted`); ``notes``:
        end with the notes (the CLI prints them to stderr instead)."""
        out: list[str] = []
        if self.subject is not None:
            out.append(f"{_ABOUT[self.tool]} {definition_line(self.subject)}")
        if not self.rows:
            out.append("Nothing found.")
        elif self.tool == "map":
            out.append(printable_text(self.text.rstrip("\n")))
        elif self.render_rows is not None:
            out.extend(self.render_rows(self))
        elif self.tool == "refs":
            out.extend(use_lines(self.rows))
        else:
            for row in self.rows:
                out.append(definition_line(row))
                if row["signature"]:
                    out.append(f"      {printable(row['signature'])}")
        if notes and self.truncated:
            out.append(f"note: only the first {len(self.rows)} rows (ask for more with a limit)")
        if notes:
            out.extend(f"note: {printable(note)}" for note in self.notes)
        return "\n".join(out)


_ABOUT = {"refs": "uses of", "callers": "callers of", "callees": "callees of",
          "history": "history of", "impact": "impact of", "tests": "tests of"}  # fmt: skip
"""The tools that may answer about a definition at PATH:LINE, and how their text says so."""


def use_lines(rows: list[dict[str, Any]], indent: str = "") -> list[str]:
    """Uses as ``refs`` prints them: under their file and enclosing definition,
    ``line:column  text`` each, escaped."""
    out, group = [], None
    for row in rows:
        if (row["path"], row["container"]) != group:
            group = (row["path"], row["container"])
            inside = row["container"] or "(file level)"
            out.append(f"{indent}{printable(row['path'])}  {printable(inside)}")
        kind = " call" if row["kind"] == "call" else ""
        out.append(f"{indent}  {row['line']}:{row['column']}{kind}  {printable(row['text'])}")
    return out


def definition_line(row: dict[str, Any]) -> str:
    """``path:line-end_line  kind  Container.name``, escaped."""
    name = f"{row['container']}.{row['name']}" if row["container"] else row["name"]
    where = f"{row['path']}:{row['line']}-{row['end_line']}"
    return f"{printable(where)}  {row['kind']}  {printable(name)}"


# -- input -------------------------------------------------------------------------------


def check_name(name: str) -> str:
    check_query(name, "the name")
    name = name.strip()
    if not name:
        raise SeekError("the name is empty")
    if len(name) > MAX_NAME_CHARS:
        raise SeekError(f"the name is longer than {MAX_NAME_CHARS} characters")
    return name


def check_path(path: str) -> str:
    """A workspace-relative ``/`` path, as the index names files (``./`` and ``\\`` are
    accepted and normalised; an absolute path or one with ``..`` is refused)."""
    check_query(path, "the path")
    if len(path) > MAX_PATH_CHARS:
        raise SeekError(f"the path is longer than {MAX_PATH_CHARS} characters")
    rel = path.strip().replace("\\", "/")
    while rel.startswith("./"):
        rel = rel[2:]
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise SeekError(f"{path!r} is not a workspace-relative file path")
    return rel


def check_line(line: int) -> int:
    if isinstance(line, bool) or not isinstance(line, int) or line < 1:
        raise SeekError("the line must be a whole number from 1")
    return line


def parse_location(text: str) -> tuple[str, int] | None:
    """``PATH:LINE`` as (path, line), or None when ``text`` is not of that form."""
    match = _LOCATION.match(text.strip())
    if match is None:
        return None
    return check_path(match.group(1)), check_line(int(match.group(2)))


def check_limit(limit: int | None) -> int:
    if limit is None:
        return DEFAULT_ROWS
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_ROWS:
        raise SeekError(f"the limit must be from 1 to {MAX_ROWS}")
    return limit


def check_budget(budget: int | None) -> int:
    if budget is None:
        return DEFAULT_MAP_TOKENS
    if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= MAX_MAP_TOKENS:
        raise SeekError(f"the budget must be from 1 to {MAX_MAP_TOKENS} tokens")
    return budget


# -- rows --------------------------------------------------------------------------------


def definition_row(d: Definition) -> dict[str, Any]:
    return {
        "path": d.path,
        "line": d.line,
        "end_line": d.end_line,
        "column": d.column + 1,
        "kind": d.kind,
        "name": d.name,
        "container": d.container,
        "signature": d.signature,
        "doc": d.doc,
    }


def use_row(root: Path, ref: Reference, lines: Lines) -> dict[str, Any]:
    return {
        "path": ref.path,
        "line": ref.line,
        "column": ref.column + 1,
        "kind": "call" if ref.call else "use",
        "name": ref.name,
        "container": ref.enclosing,
        "text": lines.get(root, ref.path, ref.line),
    }


class Lines:
    """Lines of workspace files, each file read once per answer (never outside the root)."""

    def __init__(self) -> None:
        self._files: dict[str, list[str]] = {}

    def get(self, root: Path, path: str, line: int) -> str:
        from seek.scan.beneath import read_beneath

        if path not in self._files:
            try:
                data = read_beneath(root, path)
            except OSError:
                data = b""
            self._files[path] = data.decode("utf-8", "replace").split("\n")
        rows = self._files[path]
        text = rows[line - 1].strip() if 0 < line <= len(rows) else ""
        return text[:LINE_TEXT_CHARS]


def _limited(rows: list[dict[str, Any]], limit: int) -> tuple[list[dict[str, Any]], bool]:
    return rows[:limit], len(rows) > limit


# -- the tools ---------------------------------------------------------------------------


@dataclass(slots=True)
class Lookup:
    """One call's graph and notes (the facade fills them, the tools below answer)."""

    root: Path
    graph: CodeGraph | None
    notes: list[str] = field(default_factory=list)

    def result(self, tool: str, query: str, rows: list[dict[str, Any]], limit: int, **kw: Any):
        kept, truncated = _limited(rows, limit)
        return GraphResult(tool, query, kept, tuple(self.notes), truncated=truncated, **kw)

    def at(self, path: str, line: int, uses: bool = False) -> Definition | None:
        """The definition named on that line, else (``uses``) the one a use on it means,
        else the innermost one whose span holds it: `refs` at a call site asks about the
        callee, as an editor's "find references" does; `callers`/`callees` ask about the
        function the line is in."""
        assert self.graph is not None
        graph = self.graph
        named = [d for d in graph.outline(path) if d.line == line]
        found = (
            (named[0] if named else None)
            or (graph.definition_at(path, line) if uses else None)
            or graph.enclosing(path, line)
        )
        if found is None:
            self.notes.append(f"No definition at {path}:{line}.")
        return found


def defs(lookup: Lookup, name: str, limit: int) -> GraphResult:
    rows = [] if lookup.graph is None else [definition_row(d) for d in lookup.graph.defs(name)]
    return lookup.result("defs", name, rows, limit)


def refs(lookup: Lookup, target: str, limit: int) -> GraphResult:
    """Uses of a name, or of the definition at PATH:LINE, grouped by enclosing definition
    (rows in group order: by file, then by where each enclosing definition sits)."""
    graph = lookup.graph
    groups, definition = [], None
    if graph is not None:
        location = parse_location(target)
        if location is not None:
            definition = lookup.at(*location, uses=True)
            groups = graph.refs(definition) if definition is not None else []
        else:
            groups = graph.refs(check_name(target))
    lines = Lines()
    rows = [use_row(lookup.root, ref, lines) for group in groups for ref in group.uses]
    return lookup.result("refs", target, rows, limit, subject=_row_of(definition))


def callers(lookup: Lookup, path: str, line: int, limit: int) -> GraphResult:
    return _call_edges(lookup, "callers", path, line, limit)


def callees(lookup: Lookup, path: str, line: int, limit: int) -> GraphResult:
    return _call_edges(lookup, "callees", path, line, limit)


def _call_edges(lookup: Lookup, tool: str, path: str, line: int, limit: int) -> GraphResult:
    """``callers`` or ``callees`` of the definition at ``path:line``, named as the subject."""
    rows, definition = [], None
    if lookup.graph is not None and (definition := lookup.at(path, line)) is not None:
        edges = lookup.graph.callers if tool == "callers" else lookup.graph.callees
        rows = [definition_row(d) for d in edges(definition)]
    return lookup.result(tool, f"{path}:{line}", rows, limit, subject=_row_of(definition))


def _row_of(definition: Definition | None) -> dict[str, Any] | None:
    return definition_row(definition) if definition is not None else None


def outline(lookup: Lookup, path: str, limit: int) -> GraphResult:
    rows = [] if lookup.graph is None else [definition_row(d) for d in lookup.graph.outline(path)]
    if lookup.graph is not None and path not in lookup.graph.files:
        lookup.notes.append(f"{path} is not a source file of the index.")
    return lookup.result("outline", path, rows, limit)


def repo_map(lookup: Lookup, question: str, budget: int) -> GraphResult:
    """The most central definitions (personalised toward ``question``'s words when given),
    as signatures within ``budget`` tokens; rows are the definitions shown, best first."""
    graph = lookup.graph
    if graph is None:
        return lookup.result("map", question, [], MAX_ROWS)
    from seek.graph.lookup import TEST_PATH  # CodeGraph.map's rule, kept in one place
    from seek.graph.rank import render_map

    # CodeGraph.map's selection, with the ranking computed once for the text and the rows
    ranked = [
        (score, d)
        for score, d in graph.ranked(question)
        if d.kind != "field" and not TEST_PATH.search(d.path)
    ]
    text = render_map(ranked, budget)
    shown = _shown(text)
    rows = [definition_row(d) for _, d in ranked if (d.path, d.line) in shown]
    return lookup.result("map", question, rows, len(rows) or 1, text=text)


def _shown(text: str) -> set[tuple[str, int]]:
    """(path, line) of every signature in a rendered map (``path:`` then ``  line: sig``)."""
    shown: set[tuple[str, int]] = set()
    path = ""
    for row in text.split("\n"):
        if row.startswith("  "):
            number, _, _ = row.strip().partition(":")
            if number.isdigit():
                shown.add((path, int(number)))
        elif row.endswith(":"):
            path = row[:-1]
    return shown


__all__ = [
    "TOOLS",
    "GraphResult",
    "Lookup",
    "callees",
    "callers",
    "check_budget",
    "check_limit",
    "check_line",
    "check_name",
    "check_path",
    "defs",
    "outline",
    "parse_location",
    "refs",
    "repo_map",
]
