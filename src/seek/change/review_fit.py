"""What of a review context fits its character budget (issue 44 deliver 5,
:mod:`seek.change.review`): the changed code first, up to ``CODE_SHARE`` of the budget while
lists wait; the lists share what is left evenly (a short list whole, what it does not use
going to the longer ones), each cut by its rows' priority; then the code that did not fit
whole gets what the lists left, whole or as its changed lines (or first lines). The budget
counts content, as ``seek context``'s does."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from seek.change.review import ReviewBlock

CODE_SHARE = 0.6
"""The share of the budget the changed code may take while lists still wait for room."""


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
