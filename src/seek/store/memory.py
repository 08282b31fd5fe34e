"""Giving freed memory back to the operating system in long-running processes (issue 20).

When an index changes, a server drops its loaded searcher (every row, the vector matrix) and
builds a new one, while the update itself churns through tree-sitter trees, batches and
LanceDB writes. glibc's allocator keeps what was freed inside its heaps, fragmented between
live blocks, so the resident size of ``seek serve`` rose with every edit even though Python's
own objects did not (tracemalloc: flat). ``malloc_trim(0)`` returns those free pages; it is
called once per replaced searcher, not per request: it costs ~4 ms with three indexes loaded
(0 ms when little is free), and in-process, 5,000 questions with 25 edits on flask, gin and
express grew RSS by 15 MiB with it against 27 MiB without (docs/research/bench-rounds.md, "Soak").
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from functools import lru_cache


@lru_cache(maxsize=1)
def _malloc_trim():  # a ctypes function, or None
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim  # glibc only: musl and others have no such symbol
    except (OSError, AttributeError):
        return None


def release_free_memory() -> bool:
    """Hand free heap pages back to the OS where the C library can (glibc); returns whether
    it could. (No ``gc.collect()``: a replaced searcher is freed by reference counting, and a
    full collection costs 100-190 ms in a server with three indexes loaded.)"""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


M_ARENA_MAX = -8  # glibc's mallopt parameter number (malloc.h)
ARENAS = 2


ARROW_POOL = "system"


def limit_malloc_arenas() -> bool:
    """Cap glibc's malloc arenas for this process, and send Arrow's allocations to that same
    malloc; call before its threads start and before pyarrow is imported. A server's request
    and update threads each get an arena of their own (up to 8 per core), and each fragments
    on its own, so a long run's free memory is scattered over many heaps that
    ``malloc_trim`` only partly returns. Returns whether the C library took the cap.

    Arrow (under LanceDB's reads: the search cache is rebuilt from the table after every
    update) allocates from its own mimalloc by default, a third allocator that keeps what it
    freed, per thread, and that ``malloc_trim`` cannot reach: in a ``seek serve`` soak its
    1 GiB reservation held 22-27 MiB resident while Arrow had 0 bytes allocated (every
    sample, 23,000-38,000 requests; docs/research/bench-rounds.md, "Soak", round six). An explicit
    ``ARROW_DEFAULT_MEMORY_POOL`` wins."""
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", ARROW_POOL)
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(M_ARENA_MAX, ARENAS))
    except (OSError, AttributeError):
        return False
