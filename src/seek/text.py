"""Words from code: identifier splitting and the keyword column (reference §3.3, §6.4)."""

from __future__ import annotations

import re
from functools import lru_cache

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")
_PATH_TOKEN = re.compile(r"[A-Za-z0-9_]+")
_SPLIT = re.compile(r"_+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")

STOP_WORDS = frozenset(
    "a an the and or but so then also of in on to for with from by at as is are was were be "
    "been do does did can could should would will how what where why when which who i me my "
    "we you your it its this that these those they them there ok okay please about".split()
)


def split_identifier(token: str) -> list[str]:
    """``HTTPServer`` -> [http, server]; ``MAX_FILE_BYTES`` -> [max, file, bytes].

    Splits at underscores, lower->Upper and Upper->UpperLower boundaries; digits stay
    attached (``utf8Decoder`` -> [utf8, decoder]); parts of one character are dropped.
    """
    return [part.lower() for part in _SPLIT.split(token) if len(part) > 1]


@lru_cache(maxsize=65_536)
def _token_words(token: str) -> tuple[str, ...]:
    """The token lower-cased, then its parts when splitting changes it (cached: code repeats
    the same identifiers constantly, and this runs for every identifier indexed)."""
    whole = token.lower()
    parts = split_identifier(token)
    if len(parts) > 1 or (parts and parts[0] != whole):
        return (whole, *parts)
    return (whole,)


@lru_cache(maxsize=65_536)
def _token_text(token: str) -> str:
    return " ".join(_token_words(token))


def keyword_text(content: str) -> str:
    """Every identifier, lower-cased, followed by its parts when splitting changes it.

    Repetition is kept on purpose: BM25 uses term frequency.
    """
    return " ".join(map(_token_text, IDENTIFIER.findall(content)))


@lru_cache(maxsize=1024)
def path_keywords(rel_path: str) -> str:
    """Words of a relative path: ``src/status-bar.ts`` -> ``src status bar ts`` (deduplicated;
    cached: every chunk of a file starts its keyword column with them)."""
    seen: dict[str, None] = {}
    for token in _PATH_TOKEN.findall(rel_path):
        seen.setdefault(token.lower(), None)
        for part in split_identifier(token):
            seen.setdefault(part, None)
    return " ".join(seen)


def keyword_column(rel_path: str, content: str) -> str:
    """The value of the keyword column for one chunk: path words, then code words."""
    return f"{path_keywords(rel_path)} {keyword_text(content)}"


def keyword_query(text: str) -> str:
    """Search words of a question: identifiers whole and split, stop words dropped, once each."""
    seen: dict[str, None] = {}
    for token in IDENTIFIER.findall(text):
        for word in _token_words(token):
            if word not in STOP_WORDS:
                seen.setdefault(word, None)
    return " ".join(seen)


# -- follow-up questions (reference §6.2) ----------------------------------------------------

_CONTENT_WORD = re.compile(r"[a-z_][a-z0-9_]+")
PRONOUNS = frozenset("it its this that these those they them there one ones".split())


def content_words(text: str) -> list[str]:
    """Lower-cased words of two or more characters that are not stop words."""
    return [w for w in _CONTENT_WORD.findall(text.lower()) if w not in STOP_WORDS]


def is_follow_up(text: str) -> bool:
    """A question that leans on the previous one: under 2 content words, or under 3 with a
    pronoun ("and how is it tested?", "what about caching", "explain this")."""
    words = content_words(text)
    if len(words) < 2:
        return True
    if len(words) < 3:
        return any(w in PRONOUNS for w in re.findall(r"[a-z]+", text.lower()))
    return False


def search_text(question: str, previous: str | None) -> str:
    """What is searched: the question, preceded by the previous one when it is a follow-up."""
    question = question.strip()
    if previous and previous.strip() and is_follow_up(question):
        return f"{previous.strip()}\n{question}"
    return question
