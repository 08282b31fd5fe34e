"""Long-running commands cap glibc's malloc arenas (issue 20): with one arena per busy thread,
a server's free memory fragments over many heaps and its RSS creeps over a soak."""

import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
PROBE = """
import ctypes, sys, threading
sys.path.insert(0, {src!r})
from seek.memory import ARENAS, limit_malloc_arenas
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
    from seek.memory import ARENAS

    assert arenas_after_contention(limit=False) > ARENAS  # the probe does make arenas
    assert arenas_after_contention(limit=True) <= ARENAS
