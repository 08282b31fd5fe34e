"""Definitions: whether a chunk defines a name (``class Router``, ``func (v *Viper) Get``,
``CREATE TABLE users``), and the boosts of the chunks that define the question's symbol or
the identifiers a sentence names (reference-ranking.md §1.6), pulling in definitions that
neither retriever found from the files named after them; and, for a symbol whose definition
none of that finds, the definitions the code graph knows (issue 28 deliver 4)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache

from seek.retrieve.signals.names import StemGroups, stem_names_symbol
from seek.retrieve.signals.query import (
    IDENT,
    embedded_identifiers,
    last_segment,
    owner_segment,
    symbol_names,
)

DEFINITION_BOOST_UNITS = 3.0
"""A chunk defining the queried symbol gains 3 x the best score."""
SAME_NAME_FILE_TIER = 1.5
"""... times 1.5 when its file is named after the symbol."""
EMBEDDED_IDENTIFIER_SCALE = 0.5
"""Identifiers inside a sentence are boosted at half strength (they may be incidental)."""
EMBEDDED_STEM_MIN_CHARS = 4

Scores = dict[int, float]
"""A score per chunk id, changed in place by the boosts."""
Texts = Sequence[str]
"""A text per chunk id (its content, its file's stem)."""
Groups = Mapping[str, Sequence[int]]
"""Chunk ids by file stem (:func:`~.names.chunks_by_stem`)."""

DEFINITION_KEYWORDS = (
    "class", "module", "defmodule", "def", "interface", "struct", "enum", "trait", "type",
    "func", "function", "object", "abstract class", "data class", "fn", "fun", "package",
    "namespace", "protocol", "record", "typedef",
)  # fmt: skip
SQL_DEFINITION_KEYWORDS = ("CREATE TABLE", "CREATE VIEW", "CREATE PROCEDURE", "CREATE FUNCTION")


@lru_cache(maxsize=512)
def _definition_patterns(name: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    # keyword, whitespace, an optional Go receiver ``(v *Viper)``, optional Namespace. /
    # Namespace:: prefixes, the name, then an opening bracket, colon, semicolon, whitespace
    # or the end of the line.
    tail = (
        r")\s+(?:\([^()\n]*\)\s*)?(?:" + IDENT + r"(?:\.|::))*" + re.escape(name)
        + r"(?:\s|[<({:\[;]|$)"
    )  # fmt: skip
    head = r"(?:^|(?<=\s))(?:"
    code = head + "|".join(map(re.escape, DEFINITION_KEYWORDS)) + tail
    sql = head + "|".join(map(re.escape, SQL_DEFINITION_KEYWORDS)) + tail
    return re.compile(code, re.MULTILINE), re.compile(sql, re.MULTILINE | re.IGNORECASE)


def _site_finder(keywords: Sequence[str], flags: int) -> tuple[re.Pattern[str], tuple]:
    """Where a definition keyword starts (zero-width, so overlapping starts are all found),
    and per keyword the pattern of the keyword, its whitespace and an optional receiver."""
    alternatives = "|".join(map(re.escape, keywords))
    starts = re.compile(r"(?:^|(?<=\s))(?=(?:" + alternatives + r")\s)", flags)
    sites = tuple(
        re.compile(re.escape(keyword) + r"\s+(?:\([^()\n]*\)\s*)?", flags) for keyword in keywords
    )
    return starts, sites


_CODE_SITES = _site_finder(DEFINITION_KEYWORDS, re.MULTILINE)
_SQL_SITES = _site_finder(SQL_DEFINITION_KEYWORDS, re.MULTILINE | re.IGNORECASE)
_NAME_START = re.compile(r"[A-Za-z_]")


def _sites(content: str, finder: tuple[re.Pattern[str], tuple]) -> tuple[int, ...]:
    starts, sites = finder
    ends = []
    for start in starts.finditer(content):
        for site in sites:  # two keywords can start at one place ("type", "typedef")
            found = site.match(content, start.start())
            if found is not None:
                ends.append(found.end())
    return tuple(ends)


@lru_cache(maxsize=65_536)
def definition_sites(content: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Where a defined name can start in ``content``: the ends of every ``keyword + space +
    optional receiver`` (code keywords, then SQL ones). Found once per chunk, so that
    :func:`defines` tests a name at these few places instead of scanning the whole text
    for each name of each question (the scan was ~20% of a query, issue 14)."""
    return _sites(content, _CODE_SITES), _sites(content, _SQL_SITES)


@lru_cache(maxsize=65_536)
def _mentions_create(content: str) -> bool:
    """Whether the case-insensitive SQL patterns can match at all (they start with CREATE):
    lower-casing every candidate's text for each question was most of the definition test."""
    return "create" in content.lower()


@lru_cache(maxsize=512)
def _definition_tails(name: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    tail = r"(?:" + IDENT + r"(?:\.|::))*" + re.escape(name) + r"(?:\s|[<({:\[;]|$)"
    return re.compile(tail, re.MULTILINE), re.compile(tail, re.MULTILINE | re.IGNORECASE)


def defines(content: str, name: str) -> bool:
    """True when ``content`` holds a definition of ``name`` (class/def/fn/... name): the
    match of :func:`_definition_patterns`, found by testing the name's tail at the chunk's
    :func:`definition_sites`. The two agree because after a keyword's whitespace the
    pattern can only go on with a receiver's bracket or a letter, so each keyword start has
    one place where the name can begin (a name not starting with a letter or ``_`` takes
    the full pattern)."""
    in_case = name in content
    if not in_case and not _mentions_create(content):
        return False  # the code pattern needs the name as written, the SQL one CREATE
    if not in_case and name.lower() not in content.lower():
        return False  # cheap test first: most chunks never mention the name
    if not _NAME_START.match(name):
        code, sql = _definition_patterns(name)
        return code.search(content) is not None or sql.search(content) is not None
    code_sites, sql_sites = definition_sites(content)
    code, sql = _definition_tails(name)
    if in_case and any(code.match(content, end) for end in code_sites):
        return True  # the code pattern is case-sensitive: it needs the name as written
    return any(sql.match(content, end) for end in sql_sites)


def _definition_bonus(content: str, stem: str, names: Iterable[str], unit: float) -> float:
    names = list(names)
    if not any(defines(content, name) for name in names):
        return 0.0
    return unit * (SAME_NAME_FILE_TIER if any(stem_names_symbol(stem, n) for n in names) else 1.0)


def boost_definitions(
    scores: Scores,
    names: set[str],
    unit: float,
    contents: Texts,
    stems: Texts,
    stem_groups: Groups,
    stem_ok: Callable[[str], bool],
    matching: list[str] | None = None,
) -> int:
    """Candidates defining a name gain ``unit`` (x1.5 in a same-name file); chunks that are
    not candidates join with that bonus as their score when their file stem passes
    ``stem_ok`` (the definition may be missing from both retrievers' lists). ``matching``:
    the stems that pass, in the groups' order, when the caller looked them up. Returns how
    many chunks define a name, candidates and joined."""
    found = 0
    for chunk_id in list(scores):
        bonus = _definition_bonus(contents[chunk_id], stems[chunk_id], names, unit)
        if bonus:
            scores[chunk_id] += bonus
            found += 1
    if matching is None:
        matching = [stem for stem in stem_groups if stem_ok(stem)]
    for stem in matching:
        for chunk_id in stem_groups[stem]:
            if chunk_id in scores:
                continue
            bonus = _definition_bonus(contents[chunk_id], stem, names, unit)
            if bonus:
                scores[chunk_id] = bonus
                found += 1
    return found


def symbol_query_boost(
    scores: Scores, query: str, best: float, contents: Texts, stems: Texts, stem_groups: Groups
) -> int:
    """Symbol queries: chunks defining the symbol gain 3 x ``best`` (x1.5 same-name file).
    Returns how many chunks define it (0: see :func:`graph_definition_boost`)."""
    names = symbol_names(query)
    last = last_segment(query)
    unit = DEFINITION_BOOST_UNITS * best
    matching = None
    if isinstance(stem_groups, StemGroups):
        matching = stem_groups.in_order(stem_groups.by_symbol_form.get(last.lower(), ()))
    return boost_definitions(
        scores, names, unit, contents, stems, stem_groups,
        lambda stem: stem_names_symbol(stem, last), matching,
    )  # fmt: skip


GRAPH_DEFINITION_KINDS = frozenset(
    "class interface type struct trait enum object module function method macro".split()
)
"""The code graph's kinds that count as defining a symbol: what the definition keywords
name, not fields, variables or constants (a struct's ``Args`` field is not cobra's
``Args``)."""


def graph_definition_boost(
    scores: Scores,
    query: str,
    best: float,
    located: Iterable[tuple[int, str, str | None, bool]],
    stems: Texts,
) -> None:
    """A symbol query whose definition neither the candidates nor a file named after it show
    by the definition patterns (:func:`symbol_query_boost` found none: a Java method's
    ``void reconstructFormattingElements()``, an enum defined in ``action.rs`` that
    ``arg.rs`` mentions 248 times): the chunks holding the first line of each definition of
    its last part that the code graph knows gain the definition bonus, joining the
    candidates if they were not among them. ``located``: (chunk id, kind, container, whether
    it spans more than its first line) per such definition. Only definitions with a body
    count: a one-line declaration (a C++ prototype in a header, ``void
    initialize_logger(...);``) is not where the symbol is defined. A qualified query
    (``HtmlTreeBuilder.reconstructFormattingElements``) keeps the definitions whose
    container names its qualifier's last part, or at file level in a file named after it
    (``models.User``: ``models.py``)."""
    last, owner = last_segment(query), owner_segment(query)
    unit = DEFINITION_BOOST_UNITS * best
    boosted: set[int] = set()
    for chunk_id, kind, container, body in located:
        if chunk_id in boosted or not body or kind not in GRAPH_DEFINITION_KINDS:
            continue
        if owner and not (
            owner in container.split(".")
            if container
            else stem_names_symbol(stems[chunk_id], owner)
        ):
            continue
        tier = SAME_NAME_FILE_TIER if stem_names_symbol(stems[chunk_id], last) else 1.0
        scores[chunk_id] = scores.get(chunk_id, 0.0) + unit * tier
        boosted.add(chunk_id)


def embedded_identifier_boost(
    scores: Scores, query: str, best: float, contents: Texts, stems: Texts, stem_groups: Groups
) -> None:
    """Questions naming ``camelCase``/``PascalCase`` identifiers: their definitions gain
    1.5 x ``best``; files named like a prefix of the identifier (``state.ts`` for
    ``StateManager``) are searched for it too."""
    names = embedded_identifiers(query)
    if not names:
        return
    lowered = {n.lower() for n in names}

    def stem_ok(stem: str) -> bool:
        flat = stem.replace("_", "")
        return any(
            name in (stem, flat)
            or (len(stem) >= EMBEDDED_STEM_MIN_CHARS and name.startswith(stem))
            or (len(flat) >= EMBEDDED_STEM_MIN_CHARS and name.startswith(flat))
            for name in lowered
        )

    unit = DEFINITION_BOOST_UNITS * EMBEDDED_IDENTIFIER_SCALE * best
    matching = None
    if isinstance(stem_groups, StemGroups):  # stem or flat equal to a name, or a prefix of it
        forms = stem_groups.by_form
        found = [s for name in lowered for s in forms.get(name, ())]
        found += [s for name in lowered for k in range(EMBEDDED_STEM_MIN_CHARS, len(name) + 1)
                  for s in forms.get(name[:k], ())]  # fmt: skip
        matching = stem_groups.in_order(found)
    boost_definitions(scores, names, unit, contents, stems, stem_groups, stem_ok, matching)
