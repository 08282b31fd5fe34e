"""What an index run reports: :class:`Progress` events while it runs and the
:class:`IndexReport` at its end (reference §5.5), and its one JSON schema."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

UPDATE = "update"
REBUILD = "rebuild"


@dataclass(frozen=True, slots=True)
class Progress:
    """A progress event: ``phase`` is scanning, embedding or finishing; ``chunks``: the
    chunks this run has stored so far."""

    phase: str
    done: int = 0
    total: int = 0
    current: tuple[str, ...] = ()
    chunks: int = 0


def with_counts(last: Progress, event: Progress) -> Progress:
    """``event``, keeping ``last``'s counts when it carries none ("finishing" has none, and
    a bar that drops to zero just before the end misleads)."""
    if event.total or not last.total:
        return event
    return Progress(event.phase, last.done, last.total, event.current, last.chunks)


@dataclass(slots=True)
class IndexReport:
    workspace: Path
    index_dir: Path
    mode: str = UPDATE
    rebuild_reason: str = ""
    embedded: int = 0
    chunks: int = 0
    unchanged: int = 0
    removed: int = 0
    files: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    """Files embedded by this run, in order."""
    forgotten: list[str] = field(default_factory=list)
    """Files whose rows and stamps this run removed."""
    cancelled: bool = False
    kept_previous: bool = False
    """A cancelled rebuild: the index it was replacing stays as it was."""
    seconds: float = 0.0

    def to_json(self) -> dict[str, object]:
        """The run's report as ``seek index --json`` and ``POST /v1/index`` print it."""
        return {
            "summary": self.summary(), "workspace": str(self.workspace),
            "index": str(self.index_dir), "mode": self.mode,
            "rebuild_reason": self.rebuild_reason, "embedded": self.embedded,
            "chunks": self.chunks, "unchanged": self.unchanged, "removed": self.removed,
            "files": self.files, "skipped": self.skipped, "unreadable": self.unreadable,
            "cancelled": self.cancelled, "seconds": round(self.seconds, 3),
        }  # fmt: skip

    @property
    def changed(self) -> bool:
        return bool(self.embedded or self.removed or self.rebuild_reason)

    def summary(self) -> str:
        """The closing line of reference §5.5."""
        took = format_duration(self.seconds)
        if self.cancelled and self.kept_previous:
            return "Rebuild cancelled; the previous index is kept. Run again to rebuild."
        if self.cancelled:
            return (
                f"Indexing cancelled. {self.embedded} files were embedded and kept; "
                "run again to continue."
            )
        if not self.changed:
            return f"Index is up to date: {self.files} files, nothing changed ({took})."
        return (
            f"Indexed: {self.embedded} files embedded ({self.chunks} chunks), "
            f"{self.unchanged} unchanged, {self.removed} removed in {took}."
        )


def format_duration(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.2f} s"
    if seconds < 120:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)} min {int(seconds % 60)} s"
