"""The rows and text of the facade's change tools (issue 44): ``impact``'s reached
definitions, ``changed``'s changes and ``history``'s commits, for
:class:`seek.workspace.code_graph.GraphResult` (whose ``render_rows`` these text functions
are). Names, lines and commit fields from the workspace or git are escaped
(:mod:`seek.untrusted`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from seek.errors import SeekError
from seek.untrusted import MAX_DEPTH, printable
from seek.workspace.code_graph import Lines, definition_line, definition_row, use_row

if TYPE_CHECKING:
    from seek.change.impact import Reached
    from seek.workspace.code_graph import GraphResult


def check_depth(depth: int | None) -> int:
    """``seek impact``'s depth: 1 (direct users) to ``MAX_DEPTH``, default 3."""
    if depth is None:
        return 3
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
        raise SeekError(f"the depth must be from 1 to {MAX_DEPTH}")
    return depth


def reached_rows(
    root: Path, reached: list[Reached], lines: Lines | None = None
) -> list[dict[str, Any]]:
    """``seek impact``'s rows: the definition reached (a file's top level: ``kind`` "file",
    ``name`` its path), its ``depth``, whether it is a ``test``, ``through`` what it uses,
    and ``via``, the use that reaches it (a use row: line, column, text, read by ``lines``:
    the working tree's files unless a caller reads them elsewhere, as a harness reads a
    past commit's blobs)."""
    lines = lines if lines is not None else Lines()
    rows = []
    for r in reached:
        if r.definition is not None:
            row = definition_row(r.definition)
        else:
            row = {"path": r.path, "line": r.use.line, "end_line": r.use.line, "column": 1,
                   "kind": "file", "name": r.path, "container": None, "signature": "",
                   "doc": ""}  # fmt: skip
        via = use_row(root, r.use, lines)
        rows.append({**row, "depth": r.depth, "test": r.test, "via": via,
                     "through": r.through.qualified})  # fmt: skip
    return rows


def impact_text(result: GraphResult) -> list[str]:
    """Each reached definition, its depth and the use that reaches it (its line below);
    tests after ``tests:``; the importers last."""
    out: list[str] = []
    tests = False
    for row in result.rows:
        if row["test"] and not tests:
            tests = True
            out.append("tests:")
        via = row["via"]
        what = "calls" if via["kind"] == "call" else "uses"
        out.append(f"{row['depth']}  {definition_line(row)}  {what} "
                   f"{printable(row['through'])} at {via['line']}:{via['column']}")  # fmt: skip
        out.append(f"      {printable(via['text'])}")
    if result.importers:
        out.append("imported by: " + ", ".join(printable(p) for p in result.importers))
    return out


def changed_text(result: GraphResult) -> list[str]:
    """Each change: ``change  path:line-end_line  kind  name``, whether the signature
    changed, where it was (renamed, moved) and how many definitions call it; its signature
    below."""
    out: list[str] = []
    for row in result.rows:
        line = f"{row['change']:<8}  {definition_line(row)}"
        if row["signature_changed"]:
            line += "  (signature changed)"
        if "old" in row:
            old = row["old"]
            name = f"{old['container']}.{old['name']}" if old["container"] else old["name"]
            line += f"  was {printable(old['path'])}:{old['line']} {printable(name)}"
        if row.get("callers"):
            line += f"  {row['callers']} caller{'s' if row['callers'] != 1 else ''}"
        out.append(line)
        if row["signature"]:
            out.append(f"      {printable(row['signature'])}")
    return out


def history_text(result: GraphResult) -> list[str]:
    """Each commit: its short hash, date, author and subject line; its hunks below."""
    out: list[str] = []
    for row in result.rows:
        out.append(f"{row['hash'][:12]}  {row['date'][:10]}  "
                   f"{printable(row['author'])}  {printable(row['subject'])}")  # fmt: skip
        out.extend(f"    {printable(line)}" for line in row.get("patch", "").splitlines())
    return out
