"""Bounding LanceDB's native threads in long-running processes (issue 20).

Lance reads and writes local files through a tokio runtime whose blocking-thread pool grows
with the number of file operations in flight. An index update (delete, add, compact, update
the keyword index) runs many at once; afterwards steady search traffic keeps waking each idle
thread before tokio's 10 s keep-alive ends it, so in a busy server the pool only grew:
``seek serve`` went from 27 to 61 threads over a 100,000-request soak with 99 edits.
``LANCE_IO_THREADS`` (lance's IO parallelism, 8 by default for local files) bounds how many
operations are in flight. Measured in-process (3 threads searching a copy of ``src/seek``
while a file is edited and the index updated 30-60 times): LanceDB's worker threads went
5 -> 67 with the default, 5 -> 24 with 4 and up after every few edits, and stayed at 11
from the 5th edit to the 60th with 2; search latency 4.0 vs 4.3 ms median (noise on a shared
2-core machine), update time unchanged. 1 deadlocks the first update (measured): never use it.
Only the long-running commands set it (``seek index`` keeps lance's default), and only when
the user has not: an explicit ``LANCE_IO_THREADS`` wins.
"""

from __future__ import annotations

import os

IO_THREADS = "2"


def bound_native_threads() -> None:
    """Cap lance's IO parallelism for this process; call before LanceDB opens a table."""
    os.environ.setdefault("LANCE_IO_THREADS", IO_THREADS)
