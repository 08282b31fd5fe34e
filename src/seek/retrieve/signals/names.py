"""The words of questions, files and chunks, as the signals compare them: English stems
(the BM25 index's stemmer), the stemmed parts of a file's name and folder, and chunks
grouped by file stem (reference-ranking.md §1.6)."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from functools import lru_cache

import snowballstemmer

from seek.text import split_identifier

STEM_PREFIX_MIN_CHARS = 3
STEM_STOP_WORDS = frozenset(
    "a an and are as at be by do does for from has have how if in is it not of on or the to "
    "was what when where which who why with".split()
)


# With PyStemmer installed (a dependency) this is its C implementation of the same Snowball
# algorithm (same stems, ~18x faster): a corpus question stems its pool's new words afresh.
_english = snowballstemmer.stemmer("english")
# A snowball stemmer keeps the word it works on in itself: two server threads stemming at once
# corrupted each other (IndexError, wrong stems; found by the soak, issue 20).
_english_lock = threading.Lock()


@lru_cache(maxsize=65_536)
def english_stem(word: str) -> str:
    """Snowball English stem, the stemmer the BM25 index uses too: "reads" and "readers"
    meet at "read"/"reader", "writes" and "writers" at "write"/"writer"."""
    with _english_lock:
        return _english.stemWord(word)


def stem_probe(stem: str) -> str:
    """A string every word that :func:`english_stem` takes to ``stem`` starts with: the stem
    without its last letter (Snowball changes at most the last letter it keeps: "happy" ->
    "happi", "relational" -> "relat"), or its last two for "ie" ("dying" -> "die"). Checked on
    the 2.6M distinct words and identifier parts of the benchmark checkouts, the standard
    library and site-packages (docs/research/bench-rounds.md, "Scale"): none breaks it. A
    text that lacks a word's probe cannot hold the word, so a corpus question tokenizes only
    the chunks that may (:meth:`seek.retrieve.ranker.Corpus.words_among`)."""
    return stem[:-2] if stem.endswith("ie") else stem[:-1]


def query_keywords(query: str) -> set[str]:
    """Stemmed, lower-cased words of the question longer than 2 letters, stop words dropped."""
    return {
        english_stem(word.lower())
        for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", query)
        if len(word) > 2 and word.lower() not in STEM_STOP_WORDS
    }


@lru_cache(maxsize=8192)
def path_parts(path: str) -> frozenset[str]:
    """Stemmed words of a file's stem and of its folder's name."""
    folder, _, name = path.rpartition("/")
    stem = name.split(".", 1)[0] if not name.startswith(".") else name
    parts = set(split_identifier(stem)) | {stem.lower()}
    parent = folder.rpartition("/")[2]
    if parent:
        parts |= set(split_identifier(parent)) | {parent.lower()}
    return frozenset(english_stem(p) for p in parts if p)


@lru_cache(maxsize=8192)
def _path_forms(path: str) -> tuple[frozenset[str], frozenset[str], tuple[str, ...]]:
    """:func:`path_parts`, every prefix of 3+ characters of them, and those of 3+ characters."""
    parts = path_parts(path)
    prefixes = frozenset(
        part[:n] for part in parts for n in range(STEM_PREFIX_MIN_CHARS, len(part) + 1)
    )
    return parts, prefixes, tuple(p for p in parts if len(p) >= STEM_PREFIX_MIN_CHARS)


def path_matches(keywords: Iterable[str], path: str) -> int:
    """How many keywords match one of :func:`path_parts`: a keyword matches when it is a
    part, a prefix (3+ characters) of a part, or starts with a part of 3+ characters. By
    look-ups: the pairwise test it replaced was ~16% of a query's time (issue 14)."""
    parts, prefixes, long_parts = _path_forms(path)
    return sum(
        1
        for word in keywords
        if word in parts
        or (len(word) >= STEM_PREFIX_MIN_CHARS and word in prefixes)
        or word.startswith(long_parts)
    )


def stem_names_symbol(stem: str, name: str) -> bool:
    """``user_service`` / ``userservice`` / ``users`` name the symbol ``UserService``/``user``."""
    name = name.lower()
    flat = stem.replace("_", "")
    return name in (stem, flat, stem.rstrip("s"), flat.rstrip("s"))


class StemGroups(dict[str, list[int]]):
    """Chunk ids grouped by file stem, with the stems indexed by the forms the pull-in scans
    compare (the stem, without ``_``, without a final ``s``): a question looks up the few
    stems that can match instead of testing every stem of the index (that test was ~18% of
    a query's time on laravel-framework, issue 14). The stems found are scanned in the
    groups' order, so the scores are the same as testing each."""

    def __init__(self, groups: dict[str, list[int]]) -> None:
        super().__init__(groups)
        self.order = {stem: i for i, stem in enumerate(self)}
        self.by_form: dict[str, list[str]] = {}
        self.by_symbol_form: dict[str, list[str]] = {}
        for stem in self:
            flat = stem.replace("_", "")
            for key in {stem, flat}:
                self.by_form.setdefault(key, []).append(stem)
            for key in {stem, flat, stem.rstrip("s"), flat.rstrip("s")}:
                self.by_symbol_form.setdefault(key, []).append(stem)

    def in_order(self, stems: Iterable[str]) -> list[str]:
        return sorted(set(stems), key=self.order.__getitem__)


def chunks_by_stem(stems: Sequence[str]) -> StemGroups:
    """Chunk ids grouped by file stem; built once per index so that the pull-in scans test
    each stem once per query instead of each chunk."""
    groups: dict[str, list[int]] = {}
    for chunk_id, stem in enumerate(stems):
        groups.setdefault(stem, []).append(chunk_id)
    return StemGroups(groups)
