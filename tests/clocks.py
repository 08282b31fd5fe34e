"""Clocks for tests that must not depend on how long the machine has been up (issue 42).

``time.monotonic()`` counts from boot: code that starts a "time since" at 0.0 behaves one
way on a machine up for hours and another on one booted a minute ago, which is where CI
runs. :func:`frozen_clock` stands in for the ``time`` module of one module under test, so
a test can pin what that code does at any reading of the clock without waiting for it;
``tests/near_zero_clock/`` shifts the whole process's (and its children's) clock instead.
"""

from __future__ import annotations

import time
import types


def frozen_clock(monotonic: float) -> types.ModuleType:
    """A stand-in for the ``time`` module whose ``monotonic()`` always reads ``monotonic``
    (``monotonic_ns`` too); every other function is the real one. Patch it over one
    module's ``time`` (``monkeypatch.setattr(module, "time", frozen_clock(1.0))``) so that
    nothing else in the process - thread pools, LanceDB's waits - sees a frozen clock."""
    clock = types.ModuleType("time")
    clock.__dict__.update(time.__dict__)
    clock.monotonic = lambda: monotonic
    clock.monotonic_ns = lambda: int(monotonic * 1e9)
    return clock
