"""A hit that ends with the doc comment of the next definition shows that definition too
(issue 13, "the right lines").

The chunker breaks at every syntax node that fits, comments included, so a cut often falls
between a doc comment and the function it documents: of the benchmark checkouts' chunks
24 % end with a comment line, 17 % with two or more. Such a chunk matches a question
through the comment (the words of the answer) while the code that answers starts in the
next chunk, and a hit listed as ``path:231-253`` then stops exactly where the answer begins.

The rule, applied to the ranked list after the chunk stage: when a hit's chunk ends with at
least ``MIN_COMMENT_LINES`` comment lines and the next chunk of its file is at most
``MAX_NEXT_LINES`` long and not listed before it, the hit runs to that chunk's end (its
content grows by the lines it did not already hold) and the next chunk is not listed again.
Nothing is re-scored: the order and the probabilities stay the chunk stage's.
Thresholds chosen beforehand, not fitted (MODELS.md has the measurements).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

MIN_COMMENT_LINES = 2
"""A single trailing comment line is often a note on the code above it (`// end if`)."""
MAX_NEXT_LINES = 40
"""The next chunk joins a hit only when short enough to read with it."""

_COMMENT = re.compile(r"^\s*(?://|/\*|\*|#(?:\s|$)|--\s|;;|\"\"\"|''')")
"""A comment line; ``#`` only before a space, so C's ``#include``/``#endif`` are code."""


def trailing_comment_lines(content: str) -> int:
    """How many comment lines close ``content`` (blank lines at its end ignored)."""
    lines = content.rstrip().split("\n")
    n = 0
    while n < len(lines) and _COMMENT.match(lines[-1 - n]):
        n += 1
    return n


def with_lead_ins(
    order: Sequence[tuple[int, float]],
    paths: Sequence[str],
    starts: Sequence[int],
    ends: Sequence[int],
    contents: Sequence[str],
    chunks_of_path: Mapping[str, np.ndarray],
    k: int,
) -> list[tuple[int, float, int | None]]:
    """The first ``k`` entries of ``order`` as ``(chunk_id, score, joined)``: ``joined`` is the
    next chunk a hit runs into (None when it keeps its own lines); chunks joined to an
    earlier hit are left out. ``starts``/``ends`` are 0-based inclusive lines."""
    out: list[tuple[int, float, int | None]] = []
    shown: set[int] = set()
    for chunk_id, score in order:
        if len(out) >= k:
            break
        if chunk_id in shown:
            continue
        shown.add(chunk_id)
        joined = _next_chunk(chunk_id, paths, chunks_of_path)
        if (
            joined is None
            or joined in shown
            or ends[joined] - starts[joined] + 1 > MAX_NEXT_LINES
            or trailing_comment_lines(contents[chunk_id]) < MIN_COMMENT_LINES
        ):
            joined = None
        else:
            shown.add(joined)
        out.append((chunk_id, score, joined))
    return out


def joined_content(first: str, first_end: int, second: str, second_start: int) -> str:
    """``first`` followed by the lines of ``second`` after ``first_end`` (the chunks overlap
    by a few lines; 0-based inclusive line numbers)."""
    skip = first_end - second_start + 1
    rest = second.split("\n")[max(skip, 0) :]
    return "\n".join([first, *rest]) if rest else first


def _next_chunk(
    chunk_id: int, paths: Sequence[str], chunks_of_path: Mapping[str, np.ndarray]
) -> int | None:
    ids = chunks_of_path[paths[chunk_id]]
    at = int(np.searchsorted(ids, chunk_id))
    if at + 1 < len(ids) and ids[at] == chunk_id:
        return int(ids[at + 1])
    return None
