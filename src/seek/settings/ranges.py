"""Every numeric setting's sensible range (:mod:`seek.settings`): what no source may go
beyond, the user's own included. How far a workspace's own file may go is narrower still
(:func:`seek.settings.trust.tighten`, issue 43)."""

from __future__ import annotations

import typing
from collections.abc import Mapping
from types import MappingProxyType

from seek.untrusted import MAX_BUDGET_CHARS, MAX_K, MAX_SNIPPETS


class Range(typing.NamedTuple):
    low: float
    high: float
    above: bool = False
    """``low`` itself is refused (``> low`` rather than ``>= low``)."""

    def holds(self, value: float) -> bool:  # never for NaN: comparing it is always False
        return (self.low < value if self.above else self.low <= value) and value <= self.high

    def text(self) -> str:
        return f"{'>' if self.above else '>='} {self.low} and <= {self.high}"


MANY = 1_000_000
"""A bound for counts and sizes no setting sensibly reaches (and far below what overflows
arithmetic or memory: ``1e308`` or a 23-digit budget must not get through)."""
RANGES: Mapping[str, Range] = MappingProxyType({
    "embed_batch_size": Range(0, 10_000, above=True),
    "embed_timeout_s": Range(0, 3_600, above=True),
    "embed_concurrency": Range(0, 256, above=True),
    "chunk_max_chars": Range(0, MANY, above=True),
    "chunk_min_chars": Range(0, MANY),
    "chunk_overlap_chars": Range(0, MANY),
    "window_chars": Range(0, MANY, above=True),
    "window_overlap_chars": Range(0, MANY),
    "max_file_bytes": Range(0, 1 << 31, above=True),
    "binary_sniff_bytes": Range(0, 1 << 24, above=True),
    "flush_every_files": Range(0, MANY, above=True),
    "retrieve_k": Range(1, 10_000),
    "focus_k": Range(0, 10_000),
    "focus_files": Range(0, 10_000),
    "rrf_k": Range(0, MANY),
    "rerank_top": Range(0, 10_000),
    "rerank_threshold": Range(0, 1),
    "near_misses": Range(0, 10_000),
    "snippets": Range(0, MAX_SNIPPETS),
    "prompt_budget_chars": Range(0, MAX_BUDGET_CHARS),
    "widen_chars": Range(0, MAX_BUDGET_CHARS),
    "imports_chars": Range(0, MAX_BUDGET_CHARS),
    "merge_chars": Range(0, MAX_BUDGET_CHARS),
    "watch_debounce_s": Range(0, 3_600),
    "team_k": Range(0, MAX_K),
    "team_timeout_s": Range(0, 3_600, above=True),
})  # fmt: skip
"""Every number's sensible range (a test checks that each numeric setting has one): a value
saved from the page, a file, ``SEEK_*`` or a flag outside it is refused with its name."""
