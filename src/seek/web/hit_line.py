"""The line that matters in a search hit, for the page's hit head (issue 46, deliver 4).

A chunk's first line is often the tail of the code before it (in the README's screenshot the
top hit for "retry with exponential backoff" began with a colour table, the function it found
7 lines below). The page names instead:

- the enclosing definition's own line, its signature (``def send(self, request):``), when the
  hit's symbol (:mod:`seek.retrieve.symbols`) starts inside the hit;
- else the hit's line sharing the most search words with the question (identifiers split as
  the keyword index splits them, stop words out: :func:`seek.text.keyword_query`), the first
  of equals;
- else nothing (no line shares a word): the code block below starts where the chunk does.
"""

from __future__ import annotations

from typing import Any

from seek.text import keyword_query, keyword_text

MAX_CHARS = 160
"""A signature or line longer than this is cut with "…" (the block below shows it whole)."""


def hit_line(content: str, start_line: int, symbol: Any, query: str) -> dict[str, Any] | None:
    """``{"line", "text", "why"}`` (``why``: ``definition`` or ``match``) of the hit whose
    text is ``content`` from ``start_line`` (1-based), or None. ``symbol``: the hit's
    :class:`seek.retrieve.types.Symbol`, or None."""
    lines = content.split("\n")
    if symbol is not None and start_line <= symbol.line < start_line + len(lines):
        text = lines[symbol.line - start_line].strip()
        if text:
            return {"line": symbol.line, "text": _short(text), "why": "definition"}
    words = set(keyword_query(query).split())
    best, best_score = None, 0
    for offset, line in enumerate(lines):
        score = len(words.intersection(keyword_text(line).split()))
        if score > best_score:
            best, best_score = offset, score
    if best is None:
        return None
    return {"line": start_line + best, "text": _short(lines[best].strip()), "why": "match"}


def _short(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"
