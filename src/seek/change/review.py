"""Review context for a change (issue 44 deliver 5, `seek context --diff [REF] [--staged]`):
what a reviewer, or an agent about to commit, needs beside the diff, as labelled blocks
within a character budget.

- **changed**: each changed definition's text (as it is now; a removed one as it was), its
  change and whether its signature changed;
- **uses**: per changed definition, the lines that use it now, one line each with the file,
  line and enclosing definition (a removed one: the calls of its name that bind to nothing
  any more: they break);
- **tests**: the test functions that reach the changed definitions through the graph,
  nearest first;
- **calls**: the definitions the changed code calls, each as its signature and doc line
  (its contract), those the change newly calls first.

Ranked so the most useful fit first: the changed definitions whose signature changed (or
that were removed or renamed) and those with the most users lead; then the others. The
changed code takes at most three fifths of the budget while lists are waiting (a definition
too long for what is left is shown as its changed lines, a list as its first lines), so a
large change still shows who it reaches; what is left over goes back to the code. The budget
counts content, as ``seek context``'s does. Nothing here reads git or the disk: the caller
gives the graph of the working tree, the two sides of each changed file and a line reader.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

from seek.change.definitions import Change
from seek.change.impact import impact
from seek.graph import CodeGraph, Definition, Reference
from seek.graph.lookup import TEST_PATH
from seek.untrusted import printable, printable_text

CODE_SHARE = 0.6
"""The share of the budget the changed code may take while lists still wait for room."""
TEST_DEPTH = 3
_BACKTICKS = re.compile(r"`+")
_ORDER = {"changed": 0, "uses": 1, "tests": 2, "calls": 3}

LineText = Callable[[str, int], str]
TestsOf = Callable[[list[Definition]], list[tuple[Definition, int, str]]]
"""The tests that reach some definitions: (test definition, depth, what it reaches)."""


@dataclass(frozen=True)
class ReviewBlock:
    """One labelled block. ``path``/``start``/``end`` are the code's (1-based lines) for a
    ``changed`` block, empty for a list; ``files`` are the workspace files it shows."""

    kind: str  # changed | uses | tests | calls
    title: str
    content: str
    path: str = ""
    start: int = 0
    end: int = 0
    files: tuple[str, ...] = ()
    rank: int = 0  # the change it belongs to (lists of the whole change: after them all)
    excerpt: tuple[str, ...] = field(default=(), repr=False)  # a changed block's changed lines

    def heading(self) -> str:
        if self.path:
            return f"{printable(self.path)} (lines {self.start}-{self.end}) · {self.title}"
        return self.title

    def text(self) -> str:
        """The heading, then the content in a fence longer than any backtick run inside."""
        longest = max((len(run) for run in _BACKTICKS.findall(self.content)), default=0)
        fence = "`" * max(3, longest + 1)
        name = self.path.rpartition("/")[2]
        tag = name.rsplit(".", 1)[1].lower() if self.path and "." in name.lstrip(".") else ""
        return f"{self.heading()}\n{fence}{tag}\n{self.content}\n{fence}"

    def to_json(self) -> dict[str, object]:
        row: dict[str, object] = {"kind": self.kind, "title": self.title,
                                  "content": self.content, "files": list(self.files)}  # fmt: skip
        if self.path:
            row.update(path=self.path, start_line=self.start, end_line=self.end)
        return row


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
    tests_of: TestsOf | None = None,
) -> Review:
    """The review context of ``changes`` (from :func:`seek.change.definitions.compare`);
    ``sides`` the files' bytes before and after by path; ``graph`` the working tree's."""
    before, after = sides
    current = {id(c): _in_graph(graph, c.new) for c in changes}
    counts = {id(c): len(_uses(graph, c, current[id(c)])) for c in changes}
    ranked = sorted(changes, key=lambda c: (
        0 if c.signature_changed or c.change in ("removed", "renamed") else 1,
        -counts[id(c)], c.current.path, c.current.line,
    ))  # fmt: skip
    code: list[ReviewBlock] = []
    lists: list[ReviewBlock] = []
    for rank, change in enumerate(ranked):
        code.append(_changed_block(change, before, after, counts[id(change)], rank))
        found = current[id(change)]
        uses = _uses(graph, change, found)
        if uses:
            lists.append(_uses_block(change, uses, line_text, rank))
    reached = [d for d in current.values() if d is not None and not TEST_PATH.search(d.path)]
    if graph is not None and reached:
        tests = (tests_of or (lambda ds: tests_reaching(graph, ds)))(reached)
        if tests:
            lists.append(_tests_block(tests, len(ranked)))
        calls = _calls_block(graph, ranked, current, before, len(ranked) + 1)
        if calls is not None:
            lists.append(calls)
    kept, left_out = _fill(code, lists, budget)
    kept.sort(key=lambda b: (b.rank, _ORDER[b.kind]))
    return Review(query, len(changes), tuple(kept), tuple(left_out), budget)


def tests_reaching(graph: CodeGraph, definitions: list[Definition]):
    """The test definitions that reach any of ``definitions`` within ``TEST_DEPTH`` steps,
    nearest first, each with its depth and the definition it reaches through."""
    best: dict[Definition, tuple[int, str]] = {}
    for definition in definitions:
        for r in impact(graph, definition, TEST_DEPTH):
            if r.test and r.definition is not None:
                if r.definition not in best or r.depth < best[r.definition][0]:
                    best[r.definition] = (r.depth, definition.qualified)
    order = sorted(best, key=lambda d: (best[d][0], d.path, d.line))
    return [(d, *best[d]) for d in order]


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
    if data is None:
        return []
    lines = data.decode("utf-8", "replace").split("\n")
    return lines[definition.line - 1 : definition.end_line]


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
                       now.line + max(len(lines), 1) - 1, (now.path,), rank,
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


def _uses_block(change: Change, uses: list[Reference], line_text: LineText, rank: int):
    name = change.current.qualified
    what = "calls that break" if change.new is None else "uses"
    rows = [f"{ref.path}:{ref.line} · {ref.enclosing or '(top level)'} · "
            f"{line_text(ref.path, ref.line)}" for ref in uses]  # fmt: skip
    files = tuple(dict.fromkeys(r.path for r in uses))
    content = "\n".join(printable(r) for r in rows)
    return ReviewBlock("uses", f"{what} of {name} ({len(rows)})", content, files=files, rank=rank)


def _tests_block(tests: list[tuple[Definition, int, str]], rank: int) -> ReviewBlock:
    rows = [f"{t.path}:{t.line} · {t.qualified} · depth {depth}, reaches {through}"
            for t, depth, through in tests]  # fmt: skip
    files = tuple(dict.fromkeys(t.path for t, _, _ in tests))
    content = "\n".join(printable(r) for r in rows)
    title = f"tests that reach the change ({len(rows)})"
    return ReviewBlock("tests", title, content, files=files, rank=rank)


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
    rows = []
    for callee in callees:
        row = f"{callee.path}:{callee.line} · {callee.qualified} · {callee.signature}"
        rows.append(row + (f"  — {callee.doc}" if callee.doc else ""))
    return ReviewBlock("calls", f"what the change calls ({len(rows)}; new calls first)",
                       "\n".join(printable(r) for r in rows),
                       files=tuple(dict.fromkeys(c.path for c in callees)), rank=rank)  # fmt: skip


def _called_names(data: bytes | None, definition: Definition) -> set[str]:
    """The names ``definition`` called before the change."""
    from seek.graph import extract

    facts = extract(definition.path, data) if data is not None else None
    if facts is None:
        return set()
    return {r.name for r in facts.references
            if r.call and definition.line <= r.line <= definition.end_line}  # fmt: skip


# -- the budget ----------------------------------------------------------------------------


def _fill(
    code: list[ReviewBlock], lists: list[ReviewBlock], budget: int
) -> tuple[list[ReviewBlock], list[str]]:
    """The blocks that fit ``budget`` (see the module docstring) and the headings of the
    rest."""
    kept: list[ReviewBlock] = []
    waiting = sum(len(b.content) for b in lists)
    share = budget - min(waiting, int(budget * (1 - CODE_SHARE)))
    later: list[ReviewBlock] = []
    used = 0
    for block in code:
        fitted = _fit(block, share - used)
        if fitted is block:
            kept.append(block)
            used += len(block.content)
        else:
            later.append(block)
    left_out: list[str] = []
    for block in lists:
        fitted = _fit(block, budget - used)
        if fitted is None:
            left_out.append(block.heading())
            continue
        kept.append(fitted)
        used += len(fitted.content)
    for block in later:  # what the lists left, for the code that did not fit whole
        fitted = _fit(block, budget - used)
        if fitted is None:
            left_out.append(block.heading())
            continue
        kept.append(fitted)
        used += len(fitted.content)
    return kept, left_out


def _fit(block: ReviewBlock, room: int) -> ReviewBlock | None:
    """``block`` whole when it fits ``room``; else its changed lines (code) or its first
    rows (a list), as many as fit, with what is missing said; None when not even one."""
    if len(block.content) <= room:
        return block
    lines = list(block.excerpt) or block.content.split("\n")
    total = len(block.content.split("\n")) if block.kind != "changed" else 0
    kept: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) + 1 + 40 > room:  # room for the line saying what is left out
            break
        kept.append(line)
        size += len(line) + 1
    if not kept:
        return None
    if block.kind == "changed":
        if kept == block.content.split("\n"):
            return block
        tail = [] if kept[-1] == "…" else ["…"]
        title = f"{block.title} (changed lines)"
        return replace(block, title=title, content="\n".join([*kept, *tail]))
    more = total - len(kept)
    kept.append(f"… and {more} more")
    return replace(block, content="\n".join(kept), files=_files_of(kept, block.files))


def _files_of(rows: Iterable[str], files: tuple[str, ...]) -> tuple[str, ...]:
    """The files a shortened list still shows (each row starts with ``path:line``)."""
    shown = {row.split(":", 1)[0] for row in rows}
    return tuple(f for f in files if printable(f) in shown)
