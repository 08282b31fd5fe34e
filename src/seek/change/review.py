"""Review context for a change (issue 44 deliver 5, `seek context --diff [REF] [--staged]`):
what a reviewer, or an agent about to commit, needs beside the diff, as labelled blocks
within a character budget.

- **changed**: each changed definition's own text (as it is now; a removed one as it was;
  the definitions nested in it collapsed to their first line), its change and whether its
  signature changed;
- **uses**: per changed definition, the lines that use it now, one line each with the file,
  line and enclosing definition (a removed one: the calls of its name that bind to nothing
  any more: they break);
- **tests**: the tests that reach the changed definitions, as `seek tests` selects them
  (:func:`seek.change.tests.select_tests`), nearest first, each with its depth and the
  definition it uses, and the test files named after a changed file that none of them is in;
- **calls**: the definitions the changed code calls, each as its signature and doc line
  (its contract), those the change newly calls first.

Ranked so the most useful fit first: the changed definitions whose signature changed (or
that were removed or renamed) and those with the most uses lead, each followed by its uses;
then the tests and the calls. What fits the budget is :mod:`seek.change.review_blocks`' rule:
a large change still shows who it reaches. Nothing here reads git or the disk: the caller
gives the graph of the working tree, the two sides of each changed file and a line reader.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from seek.change.definitions import Change
from seek.change.review_blocks import ReviewBlock, Row, fill
from seek.change.test_catalog import Reader, named_tests
from seek.change.tests import select_tests
from seek.graph import CodeGraph, Definition, Reference, extract
from seek.graph.lookup import TEST_PATH
from seek.untrusted import printable, printable_text

_ORDER = {"changed": 0, "uses": 1, "tests": 2, "calls": 3}

LineText = Callable[[str, int], str]
TestRow = tuple[str, int, str, int, str]
"""A test that reaches the change: path, line, name, depth, the definition it uses."""


@dataclass(frozen=True)
class Review:
    """The blocks kept, in reading order, and the headings of those the budget left out."""

    query: str
    changes: int
    blocks: tuple[ReviewBlock, ...]
    left_out: tuple[str, ...] = ()
    budget: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    def prompt(self) -> str:
        return "\n\n".join(block.text() for block in self.blocks)

    def context_line(self) -> str:
        """One line: what changed, what is shown, what the budget left out, the notes."""
        files = sorted({f for b in self.blocks for f in b.files})
        plural = "s" if self.changes != 1 else ""
        parts = [f"review of {printable(self.query)}", f"{self.changes} changed definition{plural}"]
        if self.blocks:
            counts = {k: sum(b.kind == k for b in self.blocks) for k in _ORDER}
            parts.append(", ".join(f"{n} {k}" for k, n in counts.items() if n)
                         + f" block{'s' if len(self.blocks) != 1 else ''} from "
                         f"{len(files)} file{'s' if len(files) != 1 else ''}")  # fmt: skip
        if self.left_out:
            parts.append(f"left out for the {self.budget:,}-character budget: "
                         + "; ".join(printable(h) for h in self.left_out))  # fmt: skip
        parts.extend(printable(n) for n in self.notes)
        return " · ".join(parts)

    def to_text(self) -> str:
        """The blocks and the line (what the MCP tool returns)."""
        if not self.blocks:
            return self.context_line()
        return printable_text(f"{self.prompt()}\n\n{self.context_line()}")  # workspace text

    def to_json(self) -> dict[str, object]:
        return {"tool": "review", "query": self.query, "changes": self.changes,
                "blocks": [b.to_json() for b in self.blocks], "prompt": self.prompt(),
                "left_out": list(self.left_out), "budget": self.budget,
                "notes": list(self.notes), "context_line": self.context_line()}  # fmt: skip


def review(
    query: str,
    graph: CodeGraph | None,
    changes: list[Change],
    sides: tuple[Mapping[str, bytes], Mapping[str, bytes]],
    line_text: LineText,
    budget: int,
    read: Reader | None = None,
) -> Review:
    """The review context of ``changes`` (from :func:`seek.change.definitions.compare`);
    ``sides`` the files' bytes before and after by path; ``graph`` the working tree's;
    ``read`` its files' bytes, for the tests written as calls (``it``, ``test``...)."""
    before, after = sides
    current = {id(c): _in_graph(graph, c.new) for c in changes}
    uses_of = {id(c): _uses(graph, c, current[id(c)]) for c in changes}
    ranked = sorted(changes, key=lambda c: (
        0 if c.signature_changed or c.change in ("removed", "renamed") else 1,
        -len(uses_of[id(c)]), c.current.path, c.current.line,
    ))  # fmt: skip
    code: list[ReviewBlock] = []
    lists: list[ReviewBlock] = []
    for rank, change in enumerate(ranked):
        uses = uses_of[id(change)]
        code.append(_changed_block(change, before, after, len(uses), rank))
        if uses:
            lists.append(_uses_block(change, uses, line_text, rank))
    reached = [d for d in current.values() if d is not None and not TEST_PATH.search(d.path)]
    if graph is not None and reached:
        tests = tests_reaching(graph, reached, read)
        shown = {t[0] for t in tests}
        named = [(f, of) for f, of in named_tests(graph.files, {d.path for d in reached})
                 if f not in shown]  # fmt: skip
        if tests or named:
            lists.append(_tests_block(tests, named, len(ranked)))
        calls = _calls_block(graph, ranked, current, before, len(ranked) + 1)
        if calls is not None:
            lists.append(calls)
    kept, left_out = fill(code, lists, budget)
    kept.sort(key=lambda b: (b.rank, _ORDER[b.kind]))
    return Review(query, len(changes), tuple(kept), tuple(left_out), budget)


def tests_reaching(
    graph: CodeGraph, definitions: list[Definition], read: Reader | None = None
) -> list[TestRow]:
    """The tests that reach any of ``definitions`` (:func:`seek.change.tests.select_tests`,
    its default depth), nearest first, each with the definition whose use reaches it."""
    return [(t.path, t.line, t.name, t.depth, t.through.qualified)
            for t in select_tests(graph, definitions, None, read)]  # fmt: skip


# -- the blocks ----------------------------------------------------------------------------


def _in_graph(graph: CodeGraph | None, definition: Definition | None) -> Definition | None:
    """The graph's own definition like ``definition`` (the graph may be of other lines)."""
    if graph is None or definition is None:
        return None
    same = [d for d in graph.outline(definition.path)
            if (d.kind, d.qualified) == (definition.kind, definition.qualified)]  # fmt: skip
    return min(same, key=lambda d: abs(d.line - definition.line)) if same else None


def _uses(graph: CodeGraph | None, change: Change, found: Definition | None) -> list[Reference]:
    """The uses of the definition now (of a removed one: the calls that bind to nothing),
    less those inside itself and the import lines."""
    if graph is None:
        return []
    if change.new is None:
        assert change.old is not None
        refs = [r for r in graph.refs_by_name.get(change.old.name, ())
                if r.call and not graph.candidates(r)]  # fmt: skip
    elif found is not None:
        inside = range(found.line, found.end_line + 1)
        refs = [r for r in graph.uses(found) if not (r.path == found.path and r.line in inside)]
    else:
        return []
    out = []
    for ref in sorted(set(refs), key=lambda r: (bool(TEST_PATH.search(r.path)), r.path, r.line)):
        facts = graph.files.get(ref.path)
        if facts is not None and any(i.line == ref.line for i in facts.imports):
            continue
        if not out or (out[-1].path, out[-1].line) != (ref.path, ref.line):
            out.append(ref)
    return out


def _lines_of(data: bytes | None, definition: Definition) -> list[str]:
    """The definition's own lines: those of the definitions nested in it (methods of a
    class, closures) shown as their first line and ``…``; each has its own block when it
    changed."""
    if data is None:
        return []
    lines = data.decode("utf-8", "replace").split("\n")
    facts = extract(definition.path, data)
    prefix = definition.qualified + "."
    nested = sorted(
        (d for d in (facts.definitions if facts else ())
         if f"{d.container}.".startswith(prefix) and d.end_line > d.line
         and definition.line < d.line and d.end_line <= definition.end_line),
        key=lambda d: (d.line, -d.end_line),
    )  # fmt: skip
    out: list[str] = []
    at = definition.line
    for inner in nested:
        if inner.line < at:
            continue  # inside one already collapsed
        out.extend(lines[at - 1 : inner.line])
        indent = lines[inner.line - 1][
            : len(lines[inner.line - 1]) - len(lines[inner.line - 1].lstrip())
        ]
        out.append(f"{indent}    …")
        at = inner.end_line + 1
    out.extend(lines[at - 1 : definition.end_line])
    return out


def _changed_block(
    change: Change, before: Mapping[str, bytes], after: Mapping[str, bytes], uses: int, rank: int
) -> ReviewBlock:
    now = change.current
    source = after if change.new is not None else before
    lines = _lines_of(source.get(now.path), now)
    title = f"{now.qualified} · {change.change}"
    if change.signature_changed:
        title += ", signature changed"
    if change.old is not None and change.new is not None and (
        change.old.path, change.old.qualified) != (now.path, now.qualified):  # fmt: skip
        title += f", was {change.old.path}:{change.old.line} {change.old.qualified}"
    if uses:
        what = "use" if change.new is not None else "broken call"
        title += f", {uses} {what}{'s' if uses != 1 else ''}"
    old = _lines_of(before.get(change.old.path), change.old) if change.old and change.new else []
    return ReviewBlock("changed", title, "\n".join(lines), now.path, now.line,
                       now.end_line, (now.path,), rank,
                       tuple(_excerpt(old, lines)) if old else ())  # fmt: skip


def _excerpt(old: list[str], new: list[str], context: int = 2) -> list[str]:
    """The new lines that differ from the old, with ``context`` lines around and the first
    line (the signature), gaps as ``…``: what a definition too long for the budget shows."""
    wanted = {0}
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            wanted.update(range(max(0, j1 - context), min(len(new), max(j2, j1 + 1) + context)))
    out: list[str] = []
    for i in sorted(w for w in wanted if w < len(new)):
        if out and i - 1 not in wanted:
            out.append("…")
        out.append(new[i])
    return out


def _list_block(kind: str, title: str, rows: list[Row], rank: int) -> ReviewBlock:
    """A list block of ``rows`` shown in their order; cut by priority (see :func:`_fit`)."""
    rows = [(key, path, printable(text)) for key, path, text in rows]
    files = tuple(dict.fromkeys(path for _, path, _ in rows))
    content = "\n".join(text for _, _, text in rows)
    return ReviewBlock(kind, title, content, files=files, rank=rank, rows=tuple(rows))


def _by_file(paths: list[str]) -> list[int]:
    """Each row's rank among the rows of its file: a cut list keeps one row per file first
    (more of the places the change reaches), then the second of each..."""
    seen: dict[str, int] = {}
    out = []
    for path in paths:
        out.append(seen.get(path, 0))
        seen[path] = out[-1] + 1
    return out


def _uses_block(change: Change, uses: list[Reference], line_text: LineText, rank: int):
    what = "calls that break" if change.new is None else "uses"
    nth = _by_file([ref.path for ref in uses])
    rows = [((nth[i], i), ref.path, f"{ref.path}:{ref.line} · {ref.enclosing or '(top level)'}"
             f" · {line_text(ref.path, ref.line)}") for i, ref in enumerate(uses)]  # fmt: skip
    title = f"{what} of {change.current.qualified} ({len(rows)})"
    return _list_block("uses", title, rows, rank)


def _tests_block(tests: list[TestRow], named: list[tuple[str, str]], rank: int) -> ReviewBlock:
    """The tests that reach the change, then the test files named after a changed file
    that none of them is in (ranked with the direct tests)."""
    nth = _by_file([t[0] for t in tests])
    rows = [((depth, nth[i], i), path, f"{path}:{line} · {name} · depth {depth}, uses {through}")
            for i, (path, line, name, depth, through) in enumerate(tests)]  # fmt: skip
    rows += [((1, 0, len(rows) + i), path, f"{path} · named after {of}")
             for i, (path, of) in enumerate(named)]  # fmt: skip
    rows.sort(key=lambda row: (row[0][0], row[0][2]))  # nearest first, named ones at depth 1
    return _list_block("tests", f"tests that reach the change ({len(rows)})", rows, rank)


def _calls_block(graph: CodeGraph, ranked: list[Change], current, before, rank: int):
    """The definitions the changed code calls (not changed themselves, not tests): those the
    change newly calls first, then in the order they are called."""
    changed = {d for d in current.values() if d is not None}
    fresh: dict[Definition, None] = {}
    other: dict[Definition, None] = {}
    for change in ranked:
        found = current[id(change)]
        if found is None:
            continue
        was = _called_names(before.get(change.old.path), change.old) if change.old else set()
        for callee in graph.callees(found):
            if callee in changed or TEST_PATH.search(callee.path):
                continue
            (other if callee.name in was else fresh)[callee] = None
    callees = [*fresh, *(c for c in other if c not in fresh)]
    if not callees:
        return None
    rows: list[Row] = []
    for i, callee in enumerate(callees):
        row = f"{callee.path}:{callee.line} · {callee.qualified} · {callee.signature}"
        rows.append(((i,), callee.path, row + (f"  — {callee.doc}" if callee.doc else "")))
    return _list_block("calls", f"what the change calls ({len(rows)}; new calls first)", rows, rank)


def _called_names(data: bytes | None, definition: Definition) -> set[str]:
    """The names ``definition`` called before the change."""
    facts = extract(definition.path, data) if data is not None else None
    if facts is None:
        return set()
    return {r.name for r in facts.references
            if r.call and definition.line <= r.line <= definition.end_line}  # fmt: skip
