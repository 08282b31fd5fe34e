"""What a search returns."""

from __future__ import annotations

from dataclasses import dataclass, field, replace


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

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "score": self.score,
            "content": self.content,
        }


@dataclass(frozen=True, slots=True)
class SearchResult:
    query: str
    keyword_query: str
    hits: list[Hit]
    notes: tuple[str, ...] = ()
    timings_ms: dict[str, float] = field(default_factory=dict)
    calibrated: bool = False
    """True when hit scores are the learned ranker's probabilities (0-1), not fused scores."""
    context_hits: list[Hit] = field(default_factory=list)
    """The chunk stage's order for ``seek context`` (further parts of likely files weigh
    more there than in a search list); empty when the stage did not run."""

    def with_notes_first(self, notes: list[str]) -> SearchResult:
        """The same result with ``notes`` placed before its own."""
        if not notes:
            return self
        return replace(self, notes=(*notes, *self.notes))

    def to_json(self) -> dict[str, object]:
        """The result as JSON-ready data (``seek search --json``, the HTTP API)."""
        return {
            "query": self.query,
            "keyword_query": self.keyword_query,
            "hits": [h.to_json() for h in self.hits],
            "notes": list(self.notes),
            "calibrated": self.calibrated,
            "timings_ms": {name: round(ms, 2) for name, ms in self.timings_ms.items()},
        }
