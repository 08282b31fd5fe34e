"""The store's one background event loop: where every asynchronous LanceDB call of seek runs
(issue 29, item 3).

LanceDB's engine answers with coroutines. Two places drive them from ordinary threads: the
lean path of the chunk table (:mod:`seek.store.lance`: the extension's native coroutine
methods, with no ``import lancedb`` at all, so not on the package's own loop) and the
corpus's search queries (:mod:`seek.store.corpus_table`: the table's asynchronous handle, so
that a question's queries overlap on one loop instead of blocking two threads). Both use the
loop here: a daemon thread, as the package's own ``BackgroundEventLoop``, started on first
use and started again in a forked child, where the thread is gone.

Calls are given as a function that makes the awaitable, not the awaitable itself: a native
coroutine method needs a running loop to be created, so it is called on the loop.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import TypeVar

T = TypeVar("T")

_guard = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def _event_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _guard:
        if _loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="seek-lance", daemon=True).start()
            _loop = loop
        return _loop


def _forget_loop() -> None:
    global _loop
    _loop = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_loop)


def start(call: Callable[[], Awaitable[T]]) -> Future[T]:
    """``call()`` awaited on the loop, started at once; its future, from any thread."""

    async def awaited() -> T:
        return await call()

    return asyncio.run_coroutine_threadsafe(awaited(), _event_loop())


def wait(call: Callable[[], Awaitable[T]]) -> T:
    """``call()`` awaited on the loop, its result (or exception) here. Interrupted, the call
    is cancelled rather than left running."""
    future = start(call)
    try:
        return future.result()
    except BaseException:
        future.cancel()
        raise
