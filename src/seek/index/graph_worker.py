"""The code graph's facts extracted on a second core (issue 28 deliver 1: the graph costs a
cold index at most a quarter more time).

Extracting a file's definitions and references (:func:`seek.index.graph_rows.file_facts`) is
Python and tree-sitter work that holds the GIL, so a thread beside the run's chunking gives
no overlap (docs/research/graph-rounds.md, "Why +25 % is out of reach in this process"). A
:class:`GraphWorker` is a child process forked at the start of a run's embedding steps: the
run's thread sends it each source file's bytes as read and hashed, a few files ahead of the
one it chunks. The child parses each file once for both: it sends the run the file's syntax
breaks first (the chunker needs nothing else of the tree, :func:`seek.chunk.syntax_of`),
keeps the tree, and extracts the file's facts from it while the run chunks, embeds and
writes; the writer takes the encoded rows of a write's files just before writing them. (Each
side parsing the file cost the graph a second parse, half or more of the chunking's CPU.)

Why a fork and not a fresh interpreter: a fresh one costs ~30 MB before it holds a tree,
more than the +10 % peak memory the graph may cost; a forked child shares the index
process's pages and owns only what it allocates (``gc.freeze`` keeps its collections from
touching, and so copying, the pages it inherited).

It never changes what is stored: a file the child could not answer for (the child died, a
pipe broke, the parser or the extractor failed there) is parsed or extracted on the run's
side as before, and a run that cannot fork (not Linux, one core, a small run) parses and
extracts in-process throughout.
"""

from __future__ import annotations

import gc
import logging
import os
import queue
import signal
import sys
import threading
import warnings
from collections import deque
from collections.abc import Iterable
from multiprocessing.connection import Connection
from pathlib import Path

from seek.chunk import PARSE, source_lines, syntax_of
from seek.index.graph_rows import Encoded, file_facts

log = logging.getLogger("seek.index.indexer")

MIN_FILES = 16
"""Fewer stale files than this are extracted in-process. A worker compiles its grammars'
queries anew each run (40-150 ms a grammar: Python 42 ms, Go 56, TypeScript 148), which a
process extracting in-process compiles once and keeps: a server's saves under ``seek
watch`` (a few files each) answer sooner without a worker, a cold index or a checkout of
many files sooner with one."""

AHEAD_BYTES = 256 * 1024
"""The child parses files the run waits for before it extracts those parsed, until the trees
kept for extraction hold this much source (a tree takes 20-30 times its source's bytes:
~6 MB of trees; tokio's whole source would keep 75 MB)."""

_FAILED = "failed"


def usable(files: int) -> bool:
    """Whether a run of ``files`` stale files extracts its graph on a worker: Linux (where a
    fork is cheap and safe for a child that runs only Python and tree-sitter), a second core
    this process may use, enough files, and not switched off (``SEEK_GRAPH_WORKER=0``, for
    measuring the in-process path)."""
    if files < MIN_FILES or not sys.platform.startswith("linux"):
        return False
    if os.environ.get("SEEK_GRAPH_WORKER", "1") == "0":
        return False
    return len(os.sched_getaffinity(0)) > 1


class GraphWorker:
    """A forked child that turns (path, bytes) into syntax breaks and encoded graph rows.

    ``submit`` (the run's thread) queues a file and returns at once; a sender thread feeds the
    child and a reader thread collects its answers as they come (neither side of a pipe ever
    waits on the other: the run is not slowed to the child's pace, nor the child stopped by
    answers nobody reads yet). ``breaks`` (the run's thread, chunking the file) waits for its
    syntax breaks; ``take`` (the writer thread) for the rows of a write's files. ``finish``
    says no more files come; ``close`` ends the child.
    """

    def __init__(self, root: Path, max_chars: int) -> None:
        """``max_chars``: the run's chunk size, which the syntax breaks depend on."""
        import multiprocessing

        self.root = root
        self._sources: dict[str, bytes] = {}
        """Files sent and not yet taken: extracted here if the child cannot answer."""
        self._breaks: dict[str, list[int] | None | str] = {}
        self._answers: dict[str, Encoded | None | str] = {}
        self._changed = threading.Condition()
        self._broken = False
        self._finished = False
        self._closed = False
        self._outbox: queue.SimpleQueue[tuple[str, bytes] | None] = queue.SimpleQueue()
        context = multiprocessing.get_context("fork")
        to_child_r, self._to_child = context.Pipe(duplex=False)
        self._from_child, from_child_w = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_serve,
            args=(root, max_chars, to_child_r, from_child_w, (self._to_child, self._from_child)),
            name="seek-graph",
            daemon=True,
        )
        # The run's own collections would write to every object the two share, and each page
        # written is copied; frozen, they skip them until the worker is done (gc.freeze's
        # documented use before a fork).
        gc.freeze()
        try:
            with warnings.catch_warnings():  # the child inherits the filters as they are now
                # lancedb's at-fork hook restarts its event loop in the child and warns, once
                # per process, that LanceDB in a forked child is experimental: this child
                # never uses LanceDB, and a server would print the warning on every run
                warnings.filterwarnings("ignore", "lancedb fork support", RuntimeWarning)
                # Python 3.12+ on any fork of a process with threads: this child runs only
                # Python and tree-sitter, no lock another thread may hold (see usable)
                warnings.filterwarnings("ignore", ".*use of fork.. may lead to deadlocks",
                                        DeprecationWarning)  # fmt: skip
                self._process.start()
        except BaseException:
            gc.unfreeze()
            raise
        to_child_r.close()
        from_child_w.close()
        self._threads = [
            threading.Thread(target=self._send, name="seek-graph-send", daemon=True),
            threading.Thread(target=self._receive, name="seek-graph-receive", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, rel: str, data: bytes) -> None:
        with self._changed:
            self._sources[rel] = data
        self._outbox.put((rel, data))

    def breaks(self, rel: str) -> list[int] | None | object:
        """The syntax breaks the child found in a file sent (None: prose breaks, and no facts
        come); :data:`seek.chunk.PARSE` when it cannot say (it died, its parse failed, the file
        was not sent): the run parses the file itself."""
        with self._changed:
            if rel not in self._sources:
                return PARSE
            self._changed.wait_for(lambda: rel in self._breaks or self._broken)
            found = self._breaks.pop(rel, _FAILED)
            if found is None:
                del self._sources[rel]
            elif found == _FAILED:
                self._answers[rel] = _FAILED  # no facts come either: the run extracts them
        return PARSE if found == _FAILED else found

    def forget(self, rel: str) -> None:
        """The run stores no facts of a file sent (it has no chunks): its answer is not kept."""
        with self._changed:
            self._sources.pop(rel, None)
            self._answers.pop(rel, None)

    def sent(self, rel: str) -> bool:
        with self._changed:
            return rel in self._sources

    def answered(self, rels: Iterable[str]) -> bool:
        """Whether ``take(rels)`` would not wait."""
        with self._changed:
            return self._broken or all(rel in self._answers for rel in rels)

    def take(self, rels: Iterable[str]) -> list[tuple[str, str, str]]:
        """(path, definitions, facts) of those of ``rels`` that have facts, in their order."""
        rows = []
        for rel in rels:
            with self._changed:
                self._changed.wait_for(lambda rel=rel: rel in self._answers or self._broken)
                facts = self._answers.pop(rel, _FAILED)
                data = self._sources.pop(rel)
            if facts == _FAILED:
                facts = file_facts(rel, data, self.root)
            if facts is not None:
                rows.append((rel, *facts))
        return rows

    def finish(self) -> None:
        """No more files come: the child exits once it has answered (nothing waits for it
        here); again: nothing."""
        if not self._finished:
            self._finished = True
            self._outbox.put(None)  # the sender closes the pipe; the child's recv ends: it exits

    def close(self) -> None:
        """End the child (and let go of its memory); again: nothing."""
        if self._closed:
            return
        self._closed = True
        self.finish()
        self._threads[0].join(timeout=5)
        self._process.join(timeout=5)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._threads[1].join(timeout=5)
        self._from_child.close()
        gc.unfreeze()

    def _send(self) -> None:
        while (item := self._outbox.get()) is not None:
            if self._broken:
                continue
            try:
                self._to_child.send(item)
            except (OSError, ValueError) as exc:
                self._break(exc)
        self._to_child.close()

    def _receive(self) -> None:
        while True:
            try:
                kind, rel, value = self._from_child.recv()
            except (EOFError, OSError) as exc:
                self._break(exc)
                return
            with self._changed:
                if kind == "breaks":
                    self._breaks[rel] = value
                elif rel in self._sources:  # (the run may have let go of it: forget)
                    self._answers[rel] = value
                self._changed.notify_all()

    def _break(self, exc: BaseException) -> None:
        with self._changed:
            if not self._broken and not isinstance(exc, EOFError):
                log.debug("the graph worker stopped (%s); extracting in-process", exc)
            self._broken = True
            self._changed.notify_all()


def _serve(
    root: Path,
    max_chars: int,
    inbox: Connection,
    outbox: Connection,
    parent_ends: tuple[Connection, ...],
) -> None:
    """The child: parse each file sent and answer its syntax breaks at once, then extract its
    facts from the tree kept, parsing first while the run waits (up to :data:`AHEAD_BYTES`
    of trees kept), until the run's end closes the pipe."""
    gc.freeze()  # what the child inherited is never collected here, so its pages stay shared
    for end in parent_ends:  # the fork copied them: the run's close must be the pipe's last
        end.close()
    _close_sockets()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the run's to handle
    # not a server's shutdown handler: a stop signal ends the child (the run extracts what
    # it did not answer)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    parsed: deque = deque()  # (rel, bytes, tree) to extract, in the order sent
    ahead = 0  # their source bytes
    reading = True
    try:
        while reading or parsed:
            if reading and (not parsed or (ahead < AHEAD_BYTES and inbox.poll())):
                try:
                    rel, data = inbox.recv()
                except (EOFError, OSError):
                    reading = False
                    continue
                try:
                    breaks, tree = syntax_of(rel, data, source_lines(data), max_chars)
                except Exception:  # noqa: BLE001 - the run parses it again and reports
                    breaks, tree = _FAILED, None
                outbox.send(("breaks", rel, breaks))
                if tree is not None:
                    parsed.append((rel, data, tree))
                    ahead += len(data)
                continue
            rel, data, tree = parsed.popleft()
            ahead -= len(data)
            try:
                facts: Encoded | None | str = file_facts(rel, data, root, tree)
            except Exception:  # noqa: BLE001 - the run extracts it again and reports
                facts = _FAILED
            outbox.send(("facts", rel, facts))
    except OSError:  # the run's end of the answers is gone: nothing to answer to
        return


def _close_sockets() -> None:
    """Close the child's copies of the process's sockets: a server's listening socket and its
    connections stay the server's alone (a connection it closes ends now, not when the run
    does; its port is free once it exits). The child never uses them; the objects that own
    them are never finalized here (``gc.freeze``, and the child ends with ``os._exit``)."""
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return
    for name in fds:
        try:
            if os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                os.close(int(name))
        except OSError:
            pass  # the listing's own descriptor, already gone
