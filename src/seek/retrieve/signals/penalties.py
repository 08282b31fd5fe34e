"""Penalties, which multiply a score: files that rarely answer a question (tests,
examples, compat shims, declaration stubs), prose and configuration, and each further
chunk of one file in the top ``k`` (file saturation; reference-ranking.md §1.7)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

STRONG_PENALTY = 0.3  # tests, compat shims, examples
MODERATE_PENALTY = 0.5  # re-export barrels, package metadata
MILD_PENALTY = 0.7  # .d.ts declaration stubs

_TEST_FILE = re.compile(
    r"(?:^|/)(?:"
    r"test_[^/]*\.py|[^/]*_test\.py|[^/]*_test\.go|[^/]*Tests?\.java|[^/]*Test\.php"
    r"|[^/]*_spec\.rb|[^/]*_test\.rb|[^/]*\.(?:test|spec)\.[jt]sx?"
    r"|[^/]*Tests?\.kt|[^/]*Spec\.kt|[^/]*Tests?\.swift|[^/]*Spec\.swift|[^/]*Tests?\.cs"
    r"|test_[^/]*\.(?:c|cc|cpp|cxx)|[^/]*_(?:test|unittest)\.(?:c|cc|cpp|cxx)"  # gtest: _test.cc
    r"|[^/]*(?:Spec|Suite|Test)\.scala|[^/]*_test\.dart|test_[^/]*\.dart"
    r"|[^/]*_spec\.lua|[^/]*_test\.lua|test_[^/]*\.lua|test_helpers?[^/]*\.\w+"
    r")$"
)
_TEST_DIR = re.compile(r"(?:^|/)(?:tests?|__tests__|spec|testing)(?:/|$)")
_COMPAT_DIR = re.compile(r"(?:^|/)(?:compat|_compat|legacy)(?:/|$)")
_EXAMPLES_DIR = re.compile(r"(?:^|/)(?:_?examples?|docs?_src)(?:/|$)")
REEXPORT_NAMES = frozenset({"__init__.py", "package-info.java"})


@lru_cache(maxsize=8192)
def path_penalty(path: str) -> float:
    """Multiplier for files that rarely answer a question: tests, examples, compat, stubs."""
    factor = 1.0
    if _TEST_FILE.search(path) or _TEST_DIR.search(path):
        factor *= STRONG_PENALTY
    if path.rpartition("/")[2] in REEXPORT_NAMES:
        factor *= MODERATE_PENALTY
    if _COMPAT_DIR.search(path):
        factor *= STRONG_PENALTY
    if _EXAMPLES_DIR.search(path):
        factor *= STRONG_PENALTY
    if path.endswith(".d.ts"):
        factor *= MILD_PENALTY
    return factor


def apply_path_penalties(scores: dict[int, float], paths: Sequence[str]) -> None:
    for chunk_id in scores:
        scores[chunk_id] *= path_penalty(paths[chunk_id])


NON_CODE_FACTOR = 0.5
"""Docs, config and data files rank below code: a question to a code index is answered by
code, while READMEs and skill files repeat the question's words without implementing it.
Measured on the dev set: +0.008 NDCG@10 (0.5, 0.3 and 0.1 within 0.001 of each other)."""
NON_CODE_EXTENSIONS = frozenset(
    "md mdx markdown rst adoc txt text org tex bib json jsonc json5 jsonl yaml yml toml ini "
    "cfg conf properties xml xaml plist csv tsv diff patch".split()
)


@lru_cache(maxsize=8192)
def is_non_code(path: str) -> bool:
    """Prose, configuration or data, judged by extension; extension-less names
    (README, LICENSE, Makefile...) count as non-code too."""
    name = path.rpartition("/")[2]
    if "." not in name.lstrip("."):
        return True
    return name.rsplit(".", 1)[1].lower() in NON_CODE_EXTENSIONS


def apply_non_code_penalty(scores: dict[int, float], paths: Sequence[str]) -> None:
    for chunk_id in scores:
        if is_non_code(paths[chunk_id]):
            scores[chunk_id] *= NON_CODE_FACTOR


SATURATION_FREE_CHUNKS = 1
"""Chunks a file may place before the decay starts."""
SATURATION_DECAY = 0.5


def select_top(
    scores: dict[int, float], paths: Sequence[str], k: int, saturate: bool = True
) -> list[tuple[int, float]]:
    """Greedy top-k where each further chunk of a file counts 0.5^(n-1) of its score."""
    ranked = sorted(scores.items(), key=lambda item: -item[1])
    if not saturate:
        return ranked[:k]
    taken: list[tuple[int, float]] = []
    per_file: dict[str, int] = {}
    floor = float("inf")
    for chunk_id, score in ranked:
        if len(taken) >= k and score <= floor:
            break
        already = per_file.get(paths[chunk_id], 0)
        excess = already - SATURATION_FREE_CHUNKS + 1
        effective = score * SATURATION_DECAY**excess if excess > 0 else score
        taken.append((chunk_id, effective))
        per_file[paths[chunk_id]] = already + 1
        if len(taken) == k:
            floor = min(s for _, s in taken)
        elif len(taken) > k:
            floor = min(floor, effective)  # scores only get added: the floor only falls
    taken.sort(key=lambda item: -item[1])
    return taken[:k]
