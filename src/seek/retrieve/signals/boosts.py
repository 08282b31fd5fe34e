"""Boosts of whole files: candidates whose file or folder name matches the question's
words, and each file's best candidate by how much of the fused score its file holds
(reference-ranking.md §1.6)."""

from __future__ import annotations

from collections.abc import Sequence

from seek.retrieve.signals.names import path_matches, query_keywords

STEM_BOOST_UNITS = 1.0
STEM_MATCH_MIN_RATIO = 0.10


def stem_boost(scores: dict[int, float], query: str, best: float, paths: Sequence[str]) -> None:
    """Candidates whose file or folder name matches the question's words gain up to 1 x best."""
    keywords = query_keywords(query)
    if not keywords:
        return
    unit = STEM_BOOST_UNITS * best
    ratios: dict[str, float] = {}  # candidates of one file share their path's ratio
    for chunk_id in list(scores):
        path = paths[chunk_id]
        if path not in ratios:
            ratios[path] = path_matches(keywords, path) / len(keywords)
        if ratios[path] >= STEM_MATCH_MIN_RATIO:
            scores[chunk_id] += unit * ratios[path]


FILE_COHERENCE_UNITS = 0.2


def file_coherence(scores: dict[int, float], paths: Sequence[str]) -> None:
    """Each file's best candidate gains 0.2 x best score x (file's summed score / top file's)."""
    if not scores:
        return
    best = max(scores.values())
    if best <= 0:
        return
    totals: dict[str, float] = {}
    leader: dict[str, int] = {}
    for chunk_id, score in scores.items():
        path = paths[chunk_id]
        totals[path] = totals.get(path, 0.0) + score
        if path not in leader or score > scores[leader[path]]:
            leader[path] = chunk_id
    top_total = max(totals.values())
    for path, chunk_id in leader.items():
        scores[chunk_id] += FILE_COHERENCE_UNITS * best * totals[path] / top_total
