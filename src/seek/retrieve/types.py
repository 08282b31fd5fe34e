"""What a search returns."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Protocol

MAX_SYMBOL_NAME_CHARS = 500
"""A symbol's name or container read from another server (a team hit)."""


@dataclass(frozen=True, slots=True)
class Symbol:
    """The definition a hit lies in (issue 28 deliver 2, "every search hit names its
    enclosing symbol"; chosen by :mod:`seek.retrieve.symbols`)."""

    name: str
    kind: str
    container: str | None
    """The qualified name of the definition that holds this one (None at file level)."""
    line: int
    """1-based, inclusive, like a hit's lines."""
    end_line: int

    @property
    def qualified(self) -> str:
        return f"{self.container}.{self.name}" if self.container else self.name

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "kind": self.kind,
            "container": self.container,
            "line": self.line,
            "end_line": self.end_line,
        }

    @classmethod
    def from_json(cls, data: Any) -> Symbol | None:
        """A symbol another seek server sent (a team hit's), or None when ``data`` is not
        one: a server is not trusted to send well-formed values."""
        if not isinstance(data, dict):
            return None
        name, kind, container = data.get("name"), data.get("kind"), data.get("container")
        line, end_line = data.get("line"), data.get("end_line")
        texts = (name, kind) if container is None else (name, kind, container)
        if not all(isinstance(t, str) and 0 < len(t) <= MAX_SYMBOL_NAME_CHARS for t in texts):
            return None
        lines = (line, end_line)
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in lines):
            return None
        return cls(name, kind, container, line, end_line)


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
    symbol: Symbol | None = field(default=None, kw_only=True)
    """The innermost definition holding most of the hit's lines (None: file-level code,
    a file without a grammar, an index without its code graph)."""

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "score": self.score,
            "content": self.content,
            "symbol": None if self.symbol is None else self.symbol.to_json(),
        }


class SpanSymbols(Protocol):
    """Names the enclosing symbol of any lines of an index's files, by the rule hits are
    named by (:class:`seek.retrieve.symbols.HitSymbols`)."""

    def span(self, path: str, start_line: int, end_line: int) -> Symbol | None: ...


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
    symbols: SpanSymbols | None = field(default=None, repr=False, compare=False)
    """Names other spans of the files these hits came from by the hits' rule (``seek
    context``'s widened, merged blocks); None when no searcher named the hits."""

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
