"""Bounding native threads: LanceDB's in long-running processes (issue 20), BLAS's everywhere
(issue 14, :func:`one_blas_thread`).

Every thread the servers added over a soak was a ``lancedb-tokio-worker``: the blocking-thread
pool of LanceDB's one tokio runtime, which local file reads and writes go through. It grows
whenever an operation starts and no thread is idle (so to the most operations ever in flight,
plus threads that had finished one and were not yet idle again: many on a busy machine), and
a thread ends only after 10 s without work; steady LanceDB traffic wakes the idle threads in
turn, so in a busy server the pool only grew (``seek serve``: 27 -> 61 threads over 100,000
requests with 99 edits). What bounds it here:

- ``LANCE_IO_THREADS=2`` (lance's IO parallelism, 8 by default for local files): fewer
  operations in flight per update or search. In-process (``bench/soak/lance_threads.py``),
  LanceDB's workers ended at 31-67 with the default, 24 with 4, 8-11 with 2; search latency
  4.0 vs 4.3 ms median. 1 deadlocks the first update (measured): never use it. Only the
  long-running commands set it, and an explicit ``LANCE_IO_THREADS`` wins.
- :data:`LANCE_GATE`: an index update (delete, add, compact, keyword index, cleanup) runs
  alone in the process, so the pool needs the larger of an update's and the searches' bursts,
  not their sum. Before, 155 of 391 reads in ``tests/test_soak.py`` ran beside a write.
- no LanceDB work when nothing changed: the update check a server runs once a second per
  busy workspace read every data file of the table through a new connection; a table found
  sound is now not read again while its files are unchanged (``seek.store.health``).

Measured in-process (3 threads searching without pause, an edit every 11 s): with searches
that do not touch LanceDB (vector only) its threads were back at 2 before every edit; with
LanceDB's full-text search in every search they stayed at 6-8, never ending. The pool's size
is then what one update needs once searches keep LanceDB out of the steady path; until then
it can still creep at rare coincidences (docs/research/bench-rounds.md, "Soak").
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import wraps
from typing import Any, TypeVar

IO_THREADS = "2"

F = TypeVar("F", bound=Callable[..., Any])


def bound_native_threads() -> None:
    """Cap lance's IO parallelism for this process; call before LanceDB opens a table."""
    os.environ.setdefault("LANCE_IO_THREADS", IO_THREADS)


def one_blas_thread() -> None:
    """One BLAS thread for numpy in seek's own processes; call before numpy is imported.

    A search multiplies one query vector by the index's matrix (a matrix-vector product of
    ~20,000 x 384), too small for OpenBLAS's threads to pay: on this 2-core machine under
    load they made it 11-29 ms instead of 0.9-1.3 ms (issue 14), and a server that answers
    several searches at once gains nothing from them either. An explicit
    ``OPENBLAS_NUM_THREADS`` wins."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


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

    def shared(self) -> AbstractContextManager[None]:
        return self._holding(self._enter_shared, self._leave_shared)

    def exclusive(self) -> AbstractContextManager[None]:
        return self._holding(self._enter_exclusive, self._leave_exclusive)

    @contextmanager
    def _holding(self, enter: Callable[[], None], leave: Callable[[], None]) -> Iterator[None]:
        if getattr(self._held, "depth", 0):
            yield
            return
        with self._cond:
            enter()
        self._held.depth = 1
        try:
            yield
        finally:
            self._held.depth = 0
            with self._cond:
                leave()
                self._cond.notify_all()

    # The four below run with ``self._cond`` held.
    def _enter_shared(self) -> None:
        while self._writer or self._writers_waiting:
            self._cond.wait()
        self._readers += 1

    def _leave_shared(self) -> None:
        self._readers -= 1

    def _enter_exclusive(self) -> None:
        self._writers_waiting += 1
        try:
            while self._writer or self._readers:
                self._cond.wait()
        finally:
            self._writers_waiting -= 1
        self._writer = True

    def _leave_exclusive(self) -> None:
        self._writer = False


LANCE_GATE = SharedExclusiveGate()


def reads_lance(method: F) -> F:
    """Run ``method`` beside other reads, never beside a write (:data:`LANCE_GATE`)."""
    return _gated(method, LANCE_GATE.shared)


def writes_lance(method: F) -> F:
    """Run ``method`` alone in this process (:data:`LANCE_GATE`)."""
    return _gated(method, LANCE_GATE.exclusive)


def _gated(method: F, mode: Callable[[], AbstractContextManager[None]]) -> F:
    @wraps(method)
    def gated(*args: Any, **kwargs: Any) -> Any:
        with mode():
            return method(*args, **kwargs)

    return gated  # type: ignore[return-value]
