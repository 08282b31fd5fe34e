"""What a question is: one identifier (possibly qualified) or a sentence, the identifiers
it names, and how much the vector list weighs for it (query-type weighting,
reference-ranking.md §1.6)."""

from __future__ import annotations

import re

SEMANTIC_WEIGHT_SYMBOL = 0.3
"""Weight of the vector list for symbol queries (keywords find exact names better)."""
SEMANTIC_WEIGHT_NL = 0.5
"""Weight of the vector list for natural-language queries."""

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
"""One identifier, as a regular expression."""
_SYMBOL_QUERY = re.compile(
    rf"^(?:{IDENT}(?:(?:::|\\|->|\.){IDENT})+"  # qualified: a.b, A::B, a->b, A\B
    r"|_[A-Za-z0-9_]*"  # _private
    r"|[A-Za-z][A-Za-z0-9]*[A-Z_][A-Za-z0-9_]*"  # getUser, get_user, HTTP
    r"|[A-Z][A-Za-z0-9]*)$"  # Session
)
_QUALIFIER = re.compile(r"::|\\|->|\.")
_EMBEDDED_IDENTIFIER = re.compile(
    r"\b(?:[A-Z][a-z][a-zA-Z0-9]*[A-Z][a-zA-Z0-9]*"  # PascalCase with two humps
    r"|[a-z][a-zA-Z0-9]*[A-Z][a-zA-Z0-9]+)\b"  # camelCase
)


def is_symbol_query(query: str) -> bool:
    """True when the whole query is one identifier (possibly qualified); any space = NL."""
    return _SYMBOL_QUERY.match(query.strip()) is not None


def semantic_weight(query: str, enabled: bool = True) -> float:
    if not enabled:
        return SEMANTIC_WEIGHT_NL
    return SEMANTIC_WEIGHT_SYMBOL if is_symbol_query(query) else SEMANTIC_WEIGHT_NL


def last_segment(query: str) -> str:
    """The last segment of a qualified name (``User`` of ``app.models.User``)."""
    return _QUALIFIER.split(query.strip())[-1]


def owner_segment(query: str) -> str:
    """The segment before the last of a qualified name (``models`` of ``app.models.User``;
    "" for a bare name)."""
    parts = _QUALIFIER.split(query.strip())
    return parts[-2] if len(parts) > 1 else ""


def symbol_names(query: str) -> set[str]:
    """The last segment of a qualified name, plus the whole name when it differs."""
    return {last_segment(query), query.strip()}


def embedded_identifiers(query: str) -> set[str]:
    return set(_EMBEDDED_IDENTIFIER.findall(query))
