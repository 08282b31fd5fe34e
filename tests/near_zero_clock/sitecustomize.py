"""Run Python as if the machine had booted a second ago (issue 42).

``time.monotonic()`` counts from boot, so code that starts a "time since" at 0.0 passes on
a machine up for hours and fails on one booted a minute ago - CI's. Putting this folder
first on ``PYTHONPATH`` (``.ci/run`` does, for the corpus and index tests) shifts
``time.monotonic`` and ``time.monotonic_ns`` so that they read about one second when the
run starts, and advance as before. The origin travels in ``SEEK_TEST_CLOCK_ORIGIN``, so
pytest's workers and every ``seek`` a test starts share one clock, as processes on one
machine do.
"""

import os
import time

_ORIGIN = "SEEK_TEST_CLOCK_ORIGIN"
_real_monotonic_ns = time.monotonic_ns

if _ORIGIN not in os.environ:
    os.environ[_ORIGIN] = str(_real_monotonic_ns() - 1_000_000_000)
_origin_ns = int(os.environ[_ORIGIN])


def monotonic_ns() -> int:
    return _real_monotonic_ns() - _origin_ns


def monotonic() -> float:
    return monotonic_ns() / 1e9


time.monotonic = monotonic
time.monotonic_ns = monotonic_ns
