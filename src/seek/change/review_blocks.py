"""The blocks of a review context (issue 44 deliver 5, :mod:`seek.change.review`) and what of
them fits its character budget: the changed code first, up to ``CODE_SHARE`` of the budget while
lists wait; the lists share what is left evenly (a short list whole, what it does not use
going to the longer ones), each cut by its rows' priority; then the code that did not fit
whole gets what the lists left, whole or as its changed lines (or first lines). The budget
counts content, as ``seek context``'s does."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from seek.untrusted import printable

CODE_SHARE = 0.6
"""The share of the budget the changed code may take while lists still wait for room."""
_BACKTICKS = re.compile(r"`+")
Row = tuple[tuple[int, ...], str, str]
"""A list's row: its priority (lower first when the budget cuts the list), file and text."""


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
    rows: tuple[Row, ...] = field(default=(), repr=False)  # a list's rows

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


def fill(
    code: list[ReviewBlock], lists: list[ReviewBlock], budget: int
) -> tuple[list[ReviewBlock], list[str]]:
    """The blocks that fit ``budget`` (see the module docstring) and the headings of the
    rest. The code comes first, up to its share while lists wait; the lists share what is
    left evenly (a short list whole, what it does not use going to the longer ones); then
    the code that did not fit whole gets what the lists left."""
    kept: list[ReviewBlock] = []
    waiting = sum(len(b.content) for b in lists)
    share = budget - min(waiting, int(budget * (1 - CODE_SHARE)))
    later: list[ReviewBlock] = []
    used = 0
    for block in code:
        if len(block.content) <= share - used:
            kept.append(block)
            used += len(block.content)
        else:
            later.append(block)
    left_out: list[str] = []
    pending = sorted(lists, key=lambda b: len(b.content))
    while pending:
        block = pending.pop(0)
        fitted = _fit(block, (budget - used) // (len(pending) + 1))
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
    """``block`` whole when it fits ``room``; else a code block's changed lines (or its
    first lines), a list's rows of the lowest priority kept in their order and what is
    left out said; None when not even one line fits."""
    if len(block.content) <= room:
        return block
    if block.kind != "changed":
        chosen: set[int] = set()
        size = len("… and 99999 more")
        for _key, i in sorted((row[0], i) for i, row in enumerate(block.rows)):
            if size + len(block.rows[i][2]) + 1 > room:
                break
            chosen.add(i)
            size += len(block.rows[i][2]) + 1
        if not chosen:
            return None
        rows = [block.rows[i] for i in sorted(chosen)]
        content = "\n".join([*(r[2] for r in rows), f"… and {len(block.rows) - len(rows)} more"])
        files = tuple(dict.fromkeys(r[1] for r in rows))
        return replace(block, content=content, files=files, rows=tuple(rows))
    lines = list(block.excerpt) or block.content.split("\n")
    kept: list[str] = []
    size = len("…")
    for line in lines:
        if size + len(line) + 1 > room:
            break
        kept.append(line)
        size += len(line) + 1
    if not kept:
        return None
    tail = [] if kept[-1] == "…" else ["…"]
    title = f"{block.title} (changed lines)" if block.excerpt else f"{block.title} (first lines)"
    return replace(block, title=title, content="\n".join([*kept, *tail]))
