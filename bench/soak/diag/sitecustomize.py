"""Soak diagnostics, for bench/soak.py's servers only (issue 20, round six; not part of seek).

With this folder on ``PYTHONPATH`` and ``SEEK_DIAG_LOG`` set, a ``seek serve`` process appends
one JSON line every ``SEEK_DIAG_S`` seconds (default 120) to that file: RssAnon / RssFile,
glibc malloc's bytes in use, mmapped and free (``mallinfo2``, every arena), Python's
allocated blocks and live objects, the size of every ``lru_cache`` over 100 entries, the
commonest object types and Arrow's allocated bytes. Python's own arena statistics
(``sys._debugmallocstats``) go to the server's stderr (bench/soak.py's ``*_serve.log``).
What grows in RSS but in none of these is memory held outside glibc malloc and Python's
allocator: compare ``/proc/PID/smaps`` over time (``bench/soak_smaps.py``).

    PYTHONPATH=bench/soak_diag SEEK_DIAG_LOG=/tmp/diag.jsonl python -m bench.soak ...
"""

import os
import sys

if os.environ.get("SEEK_DIAG_LOG") and "serve" in sys.argv:
    import collections
    import ctypes
    import functools
    import gc
    import json
    import threading
    import time

    class _MallInfo2(ctypes.Structure):
        _fields_ = [
            (name, ctypes.c_size_t)
            for name in "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks "
            "keepcost".split()
        ]

    def _sample() -> dict:
        row: dict = {"t": time.strftime("%H:%M:%S")}
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in ("RssAnon", "RssFile"):
                    row[key] = int(value.split()[0]) >> 10
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _MallInfo2
        info = libc.mallinfo2()
        row["malloc_inuse"] = (info.uordblks + info.hblkhd) >> 20
        row["malloc_mmap"] = info.hblkhd >> 20
        row["malloc_free"] = info.fordblks >> 20
        row["py_blocks"] = sys.getallocatedblocks()
        sys._debugmallocstats()  # to stderr
        objects = gc.get_objects()
        row["objs"] = len(objects)
        row["lru"] = {
            f"{o.__module__}.{o.__qualname__}": o.cache_info().currsize
            for o in objects
            if isinstance(o, functools._lru_cache_wrapper) and o.cache_info().currsize > 100
        }
        row["types"] = collections.Counter(type(o).__name__ for o in objects).most_common(15)
        del objects
        if "pyarrow" in sys.modules:
            row["arrow"] = sys.modules["pyarrow"].total_allocated_bytes() >> 20
        return row

    def _run() -> None:
        every = float(os.environ.get("SEEK_DIAG_S", "120"))
        while True:
            time.sleep(every)
            try:
                row = _sample()
            except Exception as exc:  # noqa: BLE001 - a diagnostic never stops the server
                row = {"error": repr(exc)}
            with open(os.environ["SEEK_DIAG_LOG"], "a", encoding="utf-8") as log:
                log.write(json.dumps(row) + "\n")

    threading.Thread(target=_run, name="seek-diag", daemon=True).start()
