"""``seek watch``: keep the index current while files change (reference §5.6, seek.md §4).

Every saved, created, deleted or moved file is debounced per path (1.5 s, restarted by each
event), then brought up to date on its own through the indexer's single-path update, which
makes the same unchanged checks as a full run. Events that arrive while an update or the
initial full run is going are queued and applied after it, never dropped. A changed ignore
file, or a folder that appears, triggers a full (incremental) update. A model or settings
mismatch stops the watcher with a message.

When the index folder cannot be written (a full disk, a read-only folder: issue 31), updates
stop with one line naming the cause and the folder; the changes stay queued and are tried again
later, less and less often (:mod:`seek.index.backoff`), and one line says when updates resume.
Searches meanwhile answer from the last complete index.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from seek.embed import Embedder
from seek.errors import IndexLockedError, IndexUnwritableError, SeekError
from seek.index.backoff import retry_wait
from seek.index.indexer import REBUILD, UPDATE, Indexer, IndexReport
from seek.settings import Settings

log = logging.getLogger(__name__)

FULL_UPDATE = "\0full"
"""Queue marker: run a whole (incremental) update instead of single paths."""
RULE_FILE_NAMES = frozenset({".gitignore", ".seekignore", ".gitmodules"})
LOCKED_RETRY_S = 1.0


class _Events(FileSystemEventHandler):
    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if raw:
                self.watcher.saw(os.fsdecode(raw), event.is_directory, event.event_type)


class Watcher:
    """Owns the debounce timers, the queue and the one thread that writes the index."""

    def __init__(
        self,
        root: Path,
        settings: Settings,
        *,
        embedder: Embedder | None = None,
        echo: Callable[[str], None] = print,
        debounce_s: float | None = None,
    ) -> None:
        self.root = root
        self.settings = settings
        self.embedder = embedder
        self.echo = echo
        self.debounce_s = settings.watch_debounce_s if debounce_s is None else debounce_s
        self.index_dir = Indexer(root, settings, embedder=embedder).index_dir
        self.queue: queue.Queue[str] = queue.Queue()
        self._timers: dict[str, threading.Timer] = {}
        self._lock = threading.Lock()
        self.updates = 0
        self.error: SeekError | None = None
        """Set when updates stopped (e.g. the index was rebuilt with another model)."""
        self.fault: IndexUnwritableError | None = None
        """Set while the index folder cannot be written; updates are retried meanwhile."""
        self.failures = 0
        self._stop = threading.Event()

    # -- events (watchdog's thread) ----------------------------------------------------------
    def saw(self, absolute: str, is_dir: bool, kind: str) -> None:
        try:
            rel = Path(absolute).resolve(strict=False).relative_to(self.root).as_posix()
        except ValueError:
            return  # outside the workspace (a file moved out is seen by its old path)
        if rel in (".", "") or rel == ".git" or rel.startswith(".git/"):
            if rel == ".git/info/exclude":
                self.queue.put(FULL_UPDATE)
            return
        if Path(absolute).resolve(strict=False).is_relative_to(self.index_dir):
            return
        if rel.rpartition("/")[2] in RULE_FILE_NAMES or (is_dir and kind in ("created", "moved")):
            self.queue.put(FULL_UPDATE)
            return
        if is_dir and kind == "modified":
            return
        self.schedule(rel)

    def schedule(self, rel: str) -> None:
        """(Re)start the path's debounce timer."""
        with self._lock:
            previous = self._timers.pop(rel, None)
            if previous is not None:
                previous.cancel()
            timer = threading.Timer(self.debounce_s, self._fire, args=(rel,))
            timer.daemon = True
            self._timers[rel] = timer
            timer.start()

    def _fire(self, rel: str) -> None:
        with self._lock:
            self._timers.pop(rel, None)
        self.queue.put(rel)

    # -- updates (the caller's thread) -----------------------------------------------------------
    def run(self, stop: threading.Event, ready: threading.Event | None = None) -> None:
        """Index once, then apply queued changes until ``stop`` is set. An error that stops
        updates (a model or settings mismatch, a failing embedder) is echoed, kept in
        :attr:`error`, and ends the loop."""
        self._stop = stop
        observer = Observer()
        observer.schedule(_Events(self), str(self.root), recursive=True)
        observer.start()  # before the full run, so changes made during it are queued
        try:
            self._apply([FULL_UPDATE])
            if ready is not None:
                ready.set()
            while not stop.is_set():
                try:
                    first = self.queue.get(timeout=0.2)
                except queue.Empty:
                    continue
                batch = [first]
                while True:
                    try:
                        batch.append(self.queue.get_nowait())
                    except queue.Empty:
                        break
                self._apply(batch)
        except SeekError as exc:
            self.error = exc
            self.echo(f"seek: error: {exc}")
        finally:
            observer.stop()
            observer.join()
            with self._lock:
                for timer in self._timers.values():
                    timer.cancel()

    def _apply(self, batch: list[str]) -> None:
        indexer = Indexer(self.root, self.settings, embedder=self.embedder)
        try:
            if FULL_UPDATE in batch:
                report = indexer.run(UPDATE)
                if report.mode == REBUILD:
                    self.echo(f"rebuilt the index: {report.rebuild_reason}")
            else:
                report = indexer.run_paths(batch)
        except IndexLockedError as exc:
            self.echo(f"waiting: {exc}")
            time.sleep(LOCKED_RETRY_S)
            for item in batch:
                self.queue.put(item)
            return
        except IndexUnwritableError as exc:
            self.failures += 1
            wait = retry_wait(self.failures)
            if self.fault is None:  # one line per outage, not one per try
                self.echo(f"seek: error: {exc} (trying again in {wait:g} s, then less often)")
            self.fault = exc
            for item in batch:
                self.queue.put(item)
            self._stop.wait(wait)
            return
        if self.fault is not None:
            self.echo(f"{time.strftime('%H:%M:%S')} the index can be written again: updating")
            self.fault, self.failures = None, 0
        self.updates += 1
        line = describe(report)
        if line:
            self.echo(line)


def describe(report: IndexReport) -> str:
    """One line per update: what was re-indexed and removed ("" when nothing changed)."""
    parts = []
    if report.embedded:
        names = ", ".join(report.updated[:5]) + (" …" if len(report.updated) > 5 else "")
        parts.append(f"re-indexed {names} ({report.chunks} chunks)")
    if report.removed:
        names = ", ".join(report.forgotten[:5]) + (" …" if len(report.forgotten) > 5 else "")
        parts.append(f"removed {names or f'{report.removed} files'}")
    if not parts:
        return ""
    return f"{time.strftime('%H:%M:%S')} " + "; ".join(parts) + f" ({report.seconds:.2f} s)"
