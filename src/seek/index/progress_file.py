"""A run's progress, published beside the writer lock so that another process can show it
(issue 16: a run started from the CLI shows its files done/total in ``seek ui``'s panel).

The writer replaces ``progress.json`` atomically (a temporary file, then ``os.replace``) at
most every ``INTERVAL_S`` and on each change of phase, and removes it when the run ends. A
run shorter than ``DELAY_S`` writes nothing, so the quick update before each search costs no
file at all. Readers trust the file only while the lock is held by the pid it names: a file
left by a killed writer, or written before the lock changed hands, is ignored.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from seek.index.report import Progress, with_counts
from seek.store.lock import HOLDER_NAME, is_locked

PROGRESS_NAME = "progress.json"
INTERVAL_S = 0.25
DELAY_S = 0.3


class ProgressFile:
    """Wraps a run's progress callback: each event goes on to ``inner``, and, throttled,
    to ``progress.json`` in ``index_dir``. Use it as a context manager around the run."""

    def __init__(self, index_dir: Path, inner: Callable[[Progress], None] | None = None) -> None:
        self.path = index_dir / PROGRESS_NAME
        self.inner = inner
        self.started = time.time()
        self._clock = time.monotonic()
        self._written_at: float | None = None
        self._phase = ""
        self._last = Progress("starting")
        self.wrote = False

    def __call__(self, event: Progress) -> None:
        if self.inner is not None:
            self.inner(event)
        event = self._last = with_counts(self._last, event)
        now = time.monotonic()
        if now - self._clock < DELAY_S:
            return
        if (
            self._written_at is not None
            and event.phase == self._phase
            and now - self._written_at < INTERVAL_S
        ):
            return
        self._phase, self._written_at = event.phase, now
        self._write(event)

    def _write(self, event: Progress) -> None:
        data = {
            "pid": os.getpid(), "phase": event.phase, "done": event.done, "total": event.total,
            "current": list(event.current), "chunks": event.chunks, "started": self.started,
            "updated": time.time(),
        }  # fmt: skip
        tmp = self.path.with_name(f"{PROGRESS_NAME}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(data), encoding="utf-8")
            os.replace(tmp, self.path)
            self.wrote = True
        except OSError:  # progress is a courtesy to other processes, never a reason to fail
            tmp.unlink(missing_ok=True)

    def __enter__(self) -> ProgressFile:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.wrote:  # never another writer's file (a run refused by the lock wrote none)
            self.path.unlink(missing_ok=True)


def read_progress(index_dir: Path) -> dict[str, Any] | None:
    """The progress of the run now holding ``index_dir``'s writer lock, with ``elapsed``
    seconds; None when no run holds it or the holder has published nothing (yet)."""
    try:
        data = json.loads((index_dir / PROGRESS_NAME).read_text(encoding="utf-8"))
        holder = json.loads((index_dir / HOLDER_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(holder, dict):
        return None
    if data.get("pid") != holder.get("pid") or not is_locked(index_dir):
        return None
    data["elapsed"] = round(max(0.0, time.time() - float(data.get("started", time.time()))), 1)
    return data
