"""Bounding native threads: LanceDB's in long-running processes (issue 20), BLAS's everywhere
(issue 14, :func:`one_blas_thread`).

Lance reads and writes local files through a tokio runtime whose blocking-thread pool grows
with the number of file operations in flight. An index update (delete, add, compact, update
the keyword index) runs many at once; afterwards steady search traffic keeps waking each idle
thread before tokio's 10 s keep-alive ends it, so in a busy server the pool only grew:
``seek serve`` went from 27 to 61 threads over a 100,000-request soak with 99 edits.
``LANCE_IO_THREADS`` (lance's IO parallelism, 8 by default for local files) bounds how many
operations are in flight. Measured in-process (``bench/lance_threads.py``: 3 threads searching
a copy of ``src/seek`` while a file is edited and the index updated 30 times), LanceDB's
worker threads ended at 31-67 with the default, 24 with 4 (up every few edits) and 8-11 with
2 (the process's total flat from the 5th edit to the 60th); single-thread search latency
4.0 vs 4.3 ms median, update time unchanged. Through a real ``seek serve`` with 30 quick edits
the count still creeps (+2 to +6 threads after the 4th edit, against +34 to +39 with the
default; ``tests/test_soak.py``): bounded, not yet constant. 1 deadlocks the first update
(measured): never use it.
Only the long-running commands set it (``seek index`` keeps lance's default), and only when
the user has not: an explicit ``LANCE_IO_THREADS`` wins.
"""

from __future__ import annotations

import os

IO_THREADS = "2"


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
