"""What a search returns."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Hit:
    path: str
    """Workspace-relative, ``/``-separated."""
    start_line: int
    """1-based, inclusive."""
    end_line: int
    """1-based, inclusive."""
    score: float
    content: str


@dataclass(frozen=True, slots=True)
class SearchResult:
    query: str
    keyword_query: str
    hits: list[Hit]
    notes: tuple[str, ...] = ()
    timings_ms: dict[str, float] = field(default_factory=dict)
