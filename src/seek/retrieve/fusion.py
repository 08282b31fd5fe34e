"""Reciprocal rank fusion of ranked candidate lists."""

from __future__ import annotations


def rrf_ranks(ids: list[int], k: int) -> dict[int, float]:
    """Reciprocal rank fusion weight of each id: 1 / (k + rank), rank counted from 1."""
    return {chunk_id: 1.0 / (k + rank) for rank, chunk_id in enumerate(ids, 1)}


def fuse(lists: list[tuple[list[int], float]], k: int) -> dict[int, float]:
    """Weighted reciprocal rank fusion: each ``(ids, weight)`` list adds
    ``weight / (k + rank)`` to its chunks; chunks scoring 0 are dropped."""
    fused: dict[int, float] = {}
    for ids, weight in lists:
        for chunk_id, value in rrf_ranks(ids, k).items():
            fused[chunk_id] = fused.get(chunk_id, 0.0) + weight * value
    return {chunk_id: score for chunk_id, score in fused.items() if score > 0}
