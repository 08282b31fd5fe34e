"""Embedding windows: chunk text cut to what a small embedding model reads (reference §3.4)."""

from __future__ import annotations

from seek.chunk.packing import LineSizes


def embedding_windows(content: str, window_chars: int, overlap_chars: int) -> list[str]:
    """Line-aligned windows of at most ``window_chars``, consecutive ones sharing up to
    ``overlap_chars`` of whole lines; a single longer line is sliced. Blank windows dropped."""
    if len(content) <= window_chars:
        return [content] if content.strip() else []
    lines = content.split("\n")
    sizes = LineSizes(lines)
    last = len(lines) - 1
    windows: list[str] = []
    start = 0
    while True:
        end = start
        while end < last and sizes.chars(start, end + 1) <= window_chars:
            end += 1
        text = "\n".join(lines[start : end + 1])
        if len(text) > window_chars:
            windows.extend(text[i : i + window_chars] for i in range(0, len(text), window_chars))
        else:
            windows.append(text)
        if end == last:
            break
        next_start = end + 1
        while next_start - 1 > start and sizes.chars(next_start - 1, end) <= overlap_chars:
            next_start -= 1
        start = next_start
    return [w for w in windows if w.strip()]
