"""The library calls behind the page, in one place (issue 16).

Why a separate adapter: the page's routes only translate HTTP to these calls, so moving the
server (issue 18) moves the routes and leaves this file as it is. Every call goes through
the process's one facade (:class:`seek.workspace.Workspaces`, shared with the API: one
searcher per workspace). Index runs started here run the facade's :meth:`index` in a thread
with a cancel event; a run started elsewhere (the CLI, a watcher, ``POST /v1/index``) is
seen through the facade's :meth:`writer`, and the page never starts a second writer.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seek.chat import ask
from seek.errors import IndexLockedError
from seek.index.report import REBUILD, UPDATE, IndexReport, Progress, with_counts
from seek.web.highlight import highlight
from seek.web.hit_line import hit_line
from seek.workspace import Workspaces


@dataclass
class Run:
    """An index run the page started: its progress, its cancel switch, its outcome."""

    mode: str
    started: float = field(default_factory=time.monotonic)
    progress: Progress = field(default_factory=lambda: Progress("starting"))
    cancel: threading.Event = field(default_factory=threading.Event)
    report: IndexReport | None = None
    error: str = ""
    finished: float | None = None
    kept_files: int | None = None
    """After a cancel: the files the index holds (the kept ones)."""

    def to_json(self) -> dict[str, Any]:
        """The run as it goes, then the report in its one shape (``IndexReport.to_json``,
        as ``seek index --json`` and ``POST /v1/index`` print it) and ``kept_files``."""
        end = self.finished or time.monotonic()
        data: dict[str, Any] = {
            "mode": self.mode, "running": self.finished is None, "phase": self.progress.phase,
            "done": self.progress.done, "total": self.progress.total,
            "current": list(self.progress.current), "chunks": self.progress.chunks,
            "elapsed": round(end - self.started, 1),
            "cancelling": self.cancel.is_set() and self.finished is None, "error": self.error,
        }  # fmt: skip
        if self.report is not None:
            data.update(self.report.to_json(), kept_files=self.kept_files)
        return data


class Page:
    """The page's calls on the facade, plus the index runs the page started."""

    def __init__(self, spaces: Workspaces) -> None:
        self.spaces = spaces
        self.runs: dict[Path, Run] = {}
        self._lock = threading.Lock()

    # -- index runs ---------------------------------------------------------------------

    def start_index(self, root: Path, rebuild: bool) -> dict[str, Any]:
        """Start a run in a thread; refused while any writer (this page's or another
        process's) holds the index."""
        with self._lock:
            run = self.runs.get(root)
            if run is not None and run.finished is None:
                raise IndexLockedError("an index run started from this page is in progress")
            if self.spaces.writer(root) is not None:
                raise IndexLockedError(
                    "another process is writing this index (see the panel); wait for it to end"
                )
            run = Run(REBUILD if rebuild else UPDATE)
            self.runs[root] = run
        threading.Thread(target=self._run, args=(root, run), daemon=True).start()
        return run.to_json()

    def _run(self, root: Path, run: Run) -> None:
        def progress(event: Progress) -> None:
            run.progress = with_counts(run.progress, event)

        try:
            run.report = self.spaces.index(
                root, run.mode == REBUILD, progress=progress, cancel=run.cancel
            )
            if run.report.cancelled:
                run.kept_files = self.spaces.status(root).files
        except Exception as exc:  # shown in the page, never lost in a thread
            run.error = str(exc) or type(exc).__name__
        finally:
            run.finished = time.monotonic()

    def cancel(self, root: Path) -> bool:
        """Ask this page's run to stop after the file it is on; False when none runs."""
        run = self.runs.get(root)
        if run is None or run.finished is not None:
            return False
        run.cancel.set()
        return True

    def progress(self, root: Path) -> dict[str, Any]:
        """This page's run, or what the writer of a run started elsewhere shows: its name
        and the files its manifest holds so far."""
        run = self.runs.get(root)
        if run is not None:
            return {"source": "page", **run.to_json()}
        return {"source": "none", "running": False}

    def foreign_writer(self, root: Path) -> dict[str, Any]:
        """A writer this page did not start (:meth:`seek.workspace.Workspaces.writer`):
        the progress it publishes, else the files its manifest holds so far."""
        writer = self.spaces.writer(root)
        if writer is None:
            return {"source": "none", "running": False}
        run = self.runs.get(root)
        if run is not None and run.finished is not None:
            del self.runs[root]  # its outcome is older than this run's: stop showing it
        return {"source": "other", "running": True, **writer}

    # -- search and ask -----------------------------------------------------------------

    def search_page(self, root: Path, query: str) -> dict[str, Any]:
        """Hits, each with its widened block when the context kept one, highlighted, and its
        enclosing symbol (the JSON of :meth:`seek.retrieve.types.Symbol.to_json`, or None;
        issue 28 deliver 2); the context line and the near misses (reference §8.4-§8.5)."""
        found, context = self.spaces.found_and_context(root, query)
        blocks = context.blocks

        def widened(hit: Any) -> Any:
            for b in blocks:
                if (b.start + 1, b.end + 1) == (hit.start_line, hit.end_line):
                    continue  # no wider than the hit: nothing more to expand to
                if b.path == hit.path and b.start + 1 <= hit.start_line <= b.end + 1:
                    return {"start_line": b.start + 1, "end_line": b.end + 1,
                            "html": highlight(b.path, b.content)}  # fmt: skip
            return None

        hits = []
        for h in found.hits:
            line = hit_line(h.content, h.start_line, h.symbol, query)
            mark = line["line"] - h.start_line + 1 if line else None  # marked in the block
            hits.append({"path": h.path, "start_line": h.start_line, "end_line": h.end_line,
                         "score": round(h.score, 4), "html": highlight(h.path, h.content, mark),
                         "symbol": h.symbol.to_json() if h.symbol else None, "line": line,
                         "widened": widened(h)})  # fmt: skip
        near = [{"path": b.path, "start_line": b.start + 1, "end_line": b.end + 1,
                 "score": round(b.score, 4)} for b in context.near_misses]  # fmt: skip
        return {"hits": hits, "near_misses": near, "context_line": context.context_line(),
                "notes": list(found.notes)}  # fmt: skip

    def ask(
        self, root: Path, question: str, session: str, on_piece: Any, on_sources: Any
    ) -> dict[str, Any]:
        """The answer streamed to ``on_piece``; its labelled sources go to ``on_sources``
        as soon as they are chosen, before the model's first word."""
        settings = self.spaces.settings(root)

        def sources(context: Any) -> None:
            on_sources({"sources": [
                {"label": f"{b.path} (lines {b.start + 1}-{b.end + 1})", "path": b.path,
                 "score": round(b.score, 4), "kind": b.kind, "html": highlight(b.path, b.content)}
                for b in context.blocks
            ], "context_line": context.context_line()})  # fmt: skip

        ask(root, question, settings, session=session or None, on_piece=on_piece,
            on_context=sources, workspaces=self.spaces)  # fmt: skip
        return {"snippets": settings.snippets, "threshold": settings.rerank_threshold}
