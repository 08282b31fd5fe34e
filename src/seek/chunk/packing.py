"""Break rows, greedy packing, folding, overlap and the giant-line guard (reference §2.3-§2.5).

All line numbers are 0-based and inclusive. ``line_chars(a, b)`` is the sum of
``len(line) + 1`` over lines ``a..b``, computed from prefix sums.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

_HEADING = re.compile(r"^#{1,6}\s")


@dataclass(frozen=True, slots=True)
class Chunk:
    start_line: int
    """0-based first line, including the overlap prefix."""
    end_line: int
    """0-based last line, inclusive."""
    content: str
    """The exact lines ``start_line..end_line`` joined with ``\\n`` (or a slice of them)."""


class LineSizes:
    """Prefix sums of ``len(line) + 1`` so any range's size is O(1)."""

    __slots__ = ("_cum",)

    def __init__(self, lines: Sequence[str]) -> None:
        self._cum = [0, *accumulate(len(line) + 1 for line in lines)]

    def chars(self, start: int, end: int) -> int:
        return self._cum[end + 1] - self._cum[start]


def prose_breaks(lines: Sequence[str]) -> list[int]:
    """Rows that start a paragraph or a markdown heading."""
    breaks = []
    previous_blank = True
    for row, line in enumerate(lines):
        blank = not line.strip()
        if (previous_blank and not blank) or _HEADING.match(line):
            breaks.append(row)
        previous_blank = blank
    return breaks


def segments(breaks: Sequence[int], line_count: int) -> list[tuple[int, int]]:
    if line_count == 0:
        return []
    rows = sorted({0, *(b for b in breaks if 0 <= b < line_count)})
    ends = [r - 1 for r in rows[1:]] + [line_count - 1]
    return list(zip(rows, ends, strict=True))


def pack(
    segs: Sequence[tuple[int, int]], sizes: LineSizes, max_chars: int
) -> list[tuple[int, int]]:
    """Greedy packing: extend the open range while it fits; cut oversized segments by lines."""
    ranges: list[tuple[int, int]] = []
    open_range: tuple[int, int] | None = None
    for start, end in segs:
        if open_range is not None and sizes.chars(open_range[0], end) <= max_chars:
            open_range = (open_range[0], end)
            continue
        if open_range is not None:
            ranges.append(open_range)
            open_range = None
        if sizes.chars(start, end) <= max_chars:
            open_range = (start, end)
            continue
        piece_start = start
        for row in range(start, end + 1):
            if row > piece_start and sizes.chars(piece_start, row) > max_chars:
                ranges.append((piece_start, row - 1))
                piece_start = row
        open_range = (piece_start, end)  # the last piece stays open and may absorb more
    if open_range is not None:
        ranges.append(open_range)
    return ranges


def fold_small(
    ranges: Sequence[tuple[int, int]], sizes: LineSizes, min_chars: int, max_chars: int
) -> list[tuple[int, int]]:
    """Merge ranges smaller than ``min_chars`` into the previous one when it stays <= 1.5 max."""
    kept: list[tuple[int, int]] = []
    for start, end in ranges:
        if (
            kept
            and sizes.chars(start, end) < min_chars
            and sizes.chars(kept[-1][0], end) <= 1.5 * max_chars
        ):
            kept[-1] = (kept[-1][0], end)
        else:
            kept.append((start, end))
    return kept


def add_overlap(
    ranges: Sequence[tuple[int, int]], sizes: LineSizes, overlap_chars: int
) -> list[tuple[int, int]]:
    """Move each range's start up by whole lines totalling at most ``overlap_chars``."""
    out = list(ranges[:1])
    for start, end in ranges[1:]:
        new_start = start
        while new_start > 0 and sizes.chars(new_start - 1, start - 1) <= overlap_chars:
            new_start -= 1
        out.append((new_start, end))
    return out


def chunks_from_breaks(
    lines: Sequence[str],
    breaks: Sequence[int],
    *,
    max_chars: int,
    min_chars: int,
    overlap_chars: int,
) -> list[Chunk]:
    sizes = LineSizes(lines)
    ranges = pack(segments(breaks, len(lines)), sizes, max_chars)
    ranges = add_overlap(fold_small(ranges, sizes, min_chars, max_chars), sizes, overlap_chars)
    chunks: list[Chunk] = []
    for start, end in ranges:
        content = "\n".join(lines[start : end + 1])
        if len(content) > 2 * max_chars:  # only very long lines get here
            pieces = [content[i : i + max_chars] for i in range(0, len(content), max_chars)]
        else:
            pieces = [content]
        chunks.extend(Chunk(start, end, piece) for piece in pieces if piece.strip())
    return chunks
