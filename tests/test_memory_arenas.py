"""Long-running commands cap glibc's malloc arenas (issue 20): with one arena per busy thread,
a server's free memory fragments over many heaps and its RSS creeps over a soak. They also
send Arrow's allocations to that malloc."""

import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
PROBE = """
import ctypes, sys, threading
sys.path.insert(0, {src!r})
from seek.store.memory import ARENAS, limit_malloc_arenas
if {limit}:
    assert limit_malloc_arenas()
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
def churn():  # ctypes calls release the GIL: the threads really contend in malloc
    for _ in range(20000):
        libc.free(libc.malloc(1000))
threads = [threading.Thread(target=churn) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
libc.malloc_stats()  # one "Arena N:" block per arena, on stderr
"""


def arenas_after_contention(limit: bool) -> int:
    code = PROBE.format(src=str(SRC), limit=limit)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return sum(line.startswith("Arena ") for line in run.stderr.splitlines())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_contending_threads_share_the_capped_arenas():
    from seek.store.memory import ARENAS

    assert arenas_after_contention(limit=False) > ARENAS  # the probe does make arenas
    assert arenas_after_contention(limit=True) <= ARENAS


ARROW_PROBE = """
import ctypes, os, sys
sys.path.insert(0, {src!r})
os.environ.pop("ARROW_DEFAULT_MEMORY_POOL", None)
from seek.store.memory import limit_malloc_arenas
if {limit}:
    limit_malloc_arenas()
import pyarrow
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in "arena ordblks smblks hblks hblkhd usmblks "
                "fsmblks uordblks fordblks keepcost".split()]
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Info
def in_use():
    info = libc.mallinfo2()
    return info.uordblks + info.hblkhd
before = in_use()
buffer = pyarrow.allocate_buffer(64 << 20)
print(pyarrow.default_memory_pool().backend_name, (in_use() - before) >> 20)
"""


def arrow_allocation(limit: bool) -> tuple[str, int]:
    code = ARROW_PROBE.format(src=str(SRC), limit=limit)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    pool, mib = run.stdout.split()
    return pool, int(mib)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallinfo2")
def test_long_running_commands_allocate_arrow_memory_through_malloc():
    """Arrow's own mimalloc kept what it freed (22-27 MiB in a serve soak) where neither the
    arena cap nor ``malloc_trim`` reaches it; long-running commands send it to malloc."""
    pool, mib = arrow_allocation(limit=False)
    assert pool != "system" and mib < 64  # the default: a 64 MiB buffer bypasses malloc
    assert arrow_allocation(limit=True) == ("system", 64)
