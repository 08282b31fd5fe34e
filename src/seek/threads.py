"""Bounding LanceDB's native threads in long-running processes (issue 20).

Lance reads and writes local files through one process-wide tokio runtime whose
blocking-thread pool (``lancedb-tokio-worker``) grows to the most file operations ever in
flight at once, and in a busy server never shrinks: steady searches wake each idle thread
before tokio's 10 s keep-alive ends it. ``seek serve`` went from 27 to 61 threads over a
100,000-request soak with 99 edits. Two bounds:

- ``LANCE_IO_THREADS=2`` (lance's IO parallelism, 8 by default for local files) bounds how
  many operations one update or search has in flight. Measured in-process
  (``bench/lance_threads.py``), LanceDB's worker threads ended at 31-67 with the default,
  24 with 4 and 8-11 with 2; single-thread search latency 4.0 vs 4.3 ms median, update time
  unchanged. 1 deadlocks the first update (measured): never use it. Only the long-running
  commands set it (``seek index`` keeps lance's default), and only when the user has not: an
  explicit ``LANCE_IO_THREADS`` wins.
- :data:`LANCE_GATE`: an index update (delete, add, compact, keyword index, cleanup) runs
  alone, never beside searches. The pool's size is then the larger of the two bursts, not
  the sum of whatever happened to overlap; with overlaps the count kept ratcheting up at
  random coincidences (+2 to +6 threads over 30 edits even with the IO bound above; measured
  numbers in bench/README.md, "Soak"). Searches wait for an update (tens of ms).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import Any, TypeVar

IO_THREADS = "2"

F = TypeVar("F", bound=Callable[..., Any])


def bound_native_threads() -> None:
    """Cap lance's IO parallelism for this process; call before LanceDB opens a table."""
    os.environ.setdefault("LANCE_IO_THREADS", IO_THREADS)


class SharedExclusiveGate:
    """A readers-writer lock that prefers writers (steady searches must not starve an
    update). Re-entrant per thread: a thread that holds it in either mode passes through
    (a write calls reads such as ``has_keyword_index``). A reader must not ask to write."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0
        self._held = threading.local()

    def _depth(self) -> int:
        return getattr(self._held, "depth", 0)

    @contextmanager
    def shared(self) -> Iterator[None]:
        if self._depth():
            yield
            return
        with self._cond:
            while self._writer or self._writers_waiting:
                self._cond.wait()
            self._readers += 1
        self._held.depth = 1
        try:
            yield
        finally:
            self._held.depth = 0
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        if self._depth():
            yield
            return
        with self._cond:
            self._writers_waiting += 1
            try:
                while self._writer or self._readers:
                    self._cond.wait()
            finally:
                self._writers_waiting -= 1
            self._writer = True
        self._held.depth = 1
        try:
            yield
        finally:
            self._held.depth = 0
            with self._cond:
                self._writer = False
                self._cond.notify_all()


LANCE_GATE = SharedExclusiveGate()


def reads_lance(method: F) -> F:
    """Run ``method`` beside other reads, never beside a write (:data:`LANCE_GATE`)."""

    @wraps(method)
    def gated(*args: Any, **kwargs: Any) -> Any:
        with LANCE_GATE.shared():
            return method(*args, **kwargs)

    return gated  # type: ignore[return-value]


def writes_lance(method: F) -> F:
    """Run ``method`` alone in this process (:data:`LANCE_GATE`)."""

    @wraps(method)
    def gated(*args: Any, **kwargs: Any) -> Any:
        with LANCE_GATE.exclusive():
            return method(*args, **kwargs)

    return gated  # type: ignore[return-value]
