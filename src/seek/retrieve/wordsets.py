"""Every chunk's stemmed words (:func:`seek.retrieve.ranker.chunk_words`), computed for a
whole index at once and kept in the search cache, so the ranker's per-file word sets are not
re-derived from the text in every search process (they were ~0.4 s of a ``seek search`` on
laravel-framework)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import count

import numpy as np

from seek.retrieve.bm25 import Codes, sorted_unique
from seek.retrieve.signals.names import english_stem, stem_probe
from seek.text import IDENTIFIER, split_identifier


@lru_cache(maxsize=65_536)
def identifier_words(token: str) -> frozenset[str]:
    """What :func:`chunk_words` takes from one identifier, stemmed (cached: code repeats its
    identifiers, and a corpus question derives the words of its pool's chunks afresh)."""
    return frozenset(english_stem(w) for w in (token.lower(), *split_identifier(token)))


_words_once = identifier_words.__wrapped__
""":func:`identifier_words` past its cache, for :meth:`WordSets.build`, which expands each
distinct identifier once: through the cache, an index run kept up to 65,536 frozensets it
never asked for again, at its peak (17 MB of curl/lib's; issue 14)."""


@lru_cache(maxsize=1024)
def _probes(wanted: frozenset[str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((w, stem_probe(w)) for w in wanted))


def may_hold(content: str, wanted: frozenset[str]) -> frozenset[str]:
    """The ``wanted`` stems whose :func:`stem_probe` ``content`` holds, in any case: all
    those it may hold as words (:func:`chunk_words`), defined names or comment words, each
    of which is the stem of a lower-cased identifier of the text or a part of one."""
    lower = content.lower()
    return frozenset(w for w, probe in _probes(wanted) if probe in lower)


@dataclass(frozen=True)
class WordSets:
    """Chunk ``i``'s words are ``words[ids[starts[i]:starts[i + 1]]]``."""

    words: Sequence[str]
    starts: np.ndarray  # int64, chunks + 1
    ids: np.ndarray  # int32
    _memo: dict[int, frozenset[str]] = field(default_factory=dict, repr=False, compare=False)

    def of(self, chunk_id: int) -> frozenset[str]:
        found = self._memo.get(chunk_id)
        if found is None:
            lo, hi = int(self.starts[chunk_id]), int(self.starts[chunk_id + 1])
            words = self.words
            found = frozenset(words[i] for i in self.ids[lo:hi].tolist())
            self._memo[chunk_id] = found
        return found

    @classmethod
    def build(cls, contents: Sequence[str]) -> WordSets:
        """The word sets of every chunk: each distinct identifier is split and stemmed once,
        the (chunk, word) pairs are made unique by numpy."""
        raw_code: defaultdict[str, int] = defaultdict(count().__next__)
        per_chunk: list[int] = []
        codes = Codes()
        for content in contents:
            found = set(map(raw_code.__getitem__, IDENTIFIER.findall(content)))
            codes.extend(found)
            per_chunk.append(len(found))
        code = codes.array()
        word_ids: dict[str, int] = {}
        expansions = [
            [word_ids.setdefault(w, len(word_ids)) for w in _words_once(raw)] for raw in raw_code
        ]
        sizes = np.array([len(e) for e in expansions], dtype=np.int64)
        flat = np.array([w for e in expansions for w in e], dtype=np.int32)
        del expansions
        offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        n = len(per_chunk)
        width = max(len(word_ids), 1)
        # Expand each (chunk, identifier) to its words, a ragged gather, into one int64 key
        # per pair (chunk * width + word), built in place: the int64 arrays of every step
        # were ~100 MB at the peak of a cold index of abseil-cpp.
        reps = sizes[code] if len(code) else code.astype(np.int64)
        ends = np.cumsum(reps)
        at = np.repeat(offsets[code] - (ends - reps) if len(code) else ends, reps)
        del code
        at += np.arange(len(at), dtype=np.int64)  # each pair's place in ``flat``
        keys = np.repeat(np.arange(n, dtype=np.int64), per_chunk)
        keys = np.repeat(keys, reps)
        del reps, ends
        keys *= width
        keys += flat[at] if len(at) else at
        del at
        keys.sort()  # in place: the same order as a stable sort, for integers
        pairs = sorted_unique(keys)
        del keys
        starts = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(pairs // width, minlength=n), out=starts[1:])
        words = [""] * len(word_ids)
        for word, i in word_ids.items():
            words[i] = word
        return cls(words, starts, (pairs % width).astype(np.int32))
