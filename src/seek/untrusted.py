"""Text seek did not write (questions, file names) made safe to process and to print.

- Lone surrogates (``"\\ud800"`` in JSON, undecodable argv bytes) are not text: no encoder
  downstream accepts them, so front-ends refuse them with one clear line
  (:func:`check_query`).
- A file name may hold CR, LF or other control characters; printed raw in text output it
  could forge result lines, so :func:`printable` escapes them (JSON output keeps the name).
  File contents, team hits and a model's answer go through :func:`printable_text`, which
  keeps line breaks and tabs: an ``ESC ] 0 ; title BEL`` in a file cannot retitle the
  terminal when its hit is printed.
- Requests are bounded by one set of limits (below), which every front-end uses: the HTTP
  API, the browser page, MCP, the corpus server and the CLI (issue 27, finding 8). The CLI
  differs twice, because its caller is the user at their own terminal: a larger ``k``
  (:data:`CLI_MAX_K`) and no cap on a question's length (a pasted stack trace is a fair
  question there, and its cost falls on the one who asked).
"""

from __future__ import annotations

import re

from seek.errors import SeekError

MAX_QUERY_CHARS = 2_000
"""Questions and queries are capped (HTTP API, page, MCP; not the CLI): from a caller a
server does not know, a longer one is a paste or an attack, and its cost grows with its
length."""
MAX_K = 50
"""Chunks one search may return to a caller of a server (HTTP API, MCP, corpus)."""
CLI_MAX_K = 100
"""The CLI's ``-k`` goes higher: its caller is the user at their own terminal, who pays for
a long list in their own time, while a server shares its time between callers it does not
know (and a list of 100 is still a fraction of a second to rank)."""
MAX_FOCUS = 50
"""Files a search may be focused on."""
MAX_PATH_CHARS = 4_096
"""A path in a request (PATH_MAX on Linux)."""
MAX_BUDGET_CHARS = 10_000_000
"""Characters of code a context may hold (a request's ``budget``, ``--budget`` and the
``*_chars`` budget settings): far beyond any model's window, far below what strains
memory."""
MAX_SNIPPETS = 30
"""Code blocks a context may hold (``--snippets`` and the ``snippets`` setting)."""
MAX_ROWS = 1_000
"""Rows one code-graph answer may hold (a name used everywhere has thousands of uses)."""
MAX_NAME_CHARS = 500
"""A symbol name for the code graph's tools, dotted container included."""
MAX_DEPTH = 10
"""The most steps `seek impact` walks through users of users."""
MAX_REF_CHARS = 200
"""The longest git revision taken (`seek changed REF`: a branch, a hash, ``HEAD~3``)."""
MAX_LINE = 10_000_000
"""The largest line number a request may name (the graph's and ``related``'s)."""
MAX_MAP_TOKENS = 100_000
"""The largest budget of the code graph's ``map``, in tokens (``--budget``, a body's
``budget``)."""

_SURROGATE = re.compile("[\ud800-\udfff]")
# Bidirectional-text controls reorder what a terminal shows (CVE-2021-42574, "Trojan Source").
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")
# In text: LF, tab and the CR of a CRLF stay; a lone CR could overwrite the line it ends.
_TEXT_CONTROL = re.compile(f"\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")


def has_lone_surrogates(text: str) -> bool:
    return _SURROGATE.search(text) is not None


def check_query(text: str, what: str = "the query") -> str:
    """``text`` unchanged, or a :class:`SeekError` when it cannot be valid Unicode."""
    if has_lone_surrogates(text):
        raise SeekError(
            f"{what} is not valid Unicode text (undecodable bytes or a lone surrogate); "
            "check your terminal's encoding"
        )
    if "\x00" in text:
        raise SeekError(f"{what} must not contain NUL characters")
    return text


def printable(name: str) -> str:
    """``name`` with control characters (bidirectional overrides too) as ``\\n``, ``\\r``,
    ``\\t`` or ``\\xNN``/``\\uNNNN`` escapes (and lone surrogates from undecodable bytes as
    ``\\udcNN``), so one name is always one line of output, shown in order."""
    return _SURROGATE.sub(_escape, _CONTROL.sub(_escape, name))


def printable_text(text: str) -> str:
    """``text`` (file contents, a team hit, a model's answer) for a terminal: line breaks and
    tabs kept, every other control character (ESC, BEL, C1, bidirectional overrides) escaped
    as :func:`printable` does, so it cannot move the cursor, retitle the window or reorder
    what is shown."""
    return _SURROGATE.sub(_escape, _TEXT_CONTROL.sub(_escape, text))


def _escape(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")
