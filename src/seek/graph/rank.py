"""PageRank over the reference graph and the repository map rendered from it (seek.md §2,
`seek map`; aider's repository map is the anchor: tags + PageRank, fitted to a budget).

A small power iteration over numpy arrays: the graphs are a few thousand to a few hundred
thousand edges, which numpy handles in milliseconds, and it keeps networkx/scipy out of the
runtime dependencies.
"""

from __future__ import annotations

import numpy as np

DAMPING = 0.85


def pagerank(
    size: int,
    sources: np.ndarray,
    targets: np.ndarray,
    weights: np.ndarray,
    personal: np.ndarray | None = None,
    iterations: int = 100,
    tolerance: float = 1e-8,
) -> np.ndarray:
    """Stationary scores of a weighted directed graph; teleport (and the mass of nodes with
    no out-edges) goes to ``personal`` when given, else uniformly."""
    if size == 0:
        return np.zeros(0)
    teleport = np.full(size, 1.0 / size)
    if personal is not None and personal.sum() > 0:
        teleport = personal / personal.sum()
    out = np.bincount(sources, weights=weights, minlength=size)
    norm = np.divide(weights, out[sources], out=np.zeros_like(weights), where=out[sources] > 0)
    dangling = out == 0
    rank = teleport.copy()
    for _ in range(iterations):
        spread = np.bincount(targets, weights=rank[sources] * norm, minlength=size)
        new = DAMPING * (spread + rank[dangling].sum() * teleport) + (1 - DAMPING) * teleport
        if np.abs(new - rank).sum() < tolerance:
            return new
        rank = new
    return rank


def render_map(ranked, budget_tokens: int) -> str:
    """Signatures of the best definitions, grouped by file in the order of each file's best,
    until the text reaches ``budget_tokens`` (counted as characters / 4, the usual rule of
    thumb for code).  ``ranked`` is [(score, Definition)] best first."""
    budget = max(0, budget_tokens) * 4
    chosen: dict[str, list] = {}
    used = 0
    for _, definition in ranked:
        line = f"  {definition.line}: {definition.signature or definition.name}\n"
        head = 0 if definition.path in chosen else len(definition.path) + 2
        if used + head + len(line) > budget:
            continue  # a shorter signature further down may still fit
        chosen.setdefault(definition.path, []).append(definition)
        used += head + len(line)
    parts = []
    for path, definitions in chosen.items():
        parts.append(f"{path}:\n")
        for definition in sorted(definitions, key=lambda d: d.line):
            parts.append(f"  {definition.line}: {definition.signature or definition.name}\n")
    return "".join(parts)
