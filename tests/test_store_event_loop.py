"""The store's one event loop (``seek.store.event_loop``): calls from any thread, failures
and interruptions, and a forked child that gets a loop of its own."""

import asyncio
import multiprocessing
import threading

import pytest

from seek.store import event_loop


async def double(n: int) -> int:
    await asyncio.sleep(0)
    return 2 * n


def test_calls_from_several_threads_share_one_loop_thread():
    seen: list[tuple[int, str]] = []

    async def where(n: int) -> tuple[int, str]:
        return await double(n), threading.current_thread().name

    threads = [
        threading.Thread(target=lambda n=n: seen.append(event_loop.wait(lambda: where(n))))
        for n in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(seen) == [(0, "seek-lance"), (2, "seek-lance"), (4, "seek-lance"),
                            (6, "seek-lance")]  # fmt: skip
    started = event_loop.start(lambda: double(21))
    assert started.result(timeout=5) == 42


def test_a_failure_is_raised_where_the_call_waits():
    async def fails() -> None:
        raise ValueError("bad query")

    with pytest.raises(ValueError, match="bad query"):
        event_loop.wait(fails)


def test_an_interrupted_wait_cancels_its_call(monkeypatch):
    """A caller stopped while it waits (Ctrl-C) does not leave its query running."""
    begun, cancelled = threading.Event(), threading.Event()

    async def slow() -> None:
        begun.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    real_start = event_loop.start

    def start_then_interrupt(call):
        future = real_start(call)
        assert begun.wait(5)

        def result(timeout=None):
            raise KeyboardInterrupt

        monkeypatch.setattr(future, "result", result)
        return future

    monkeypatch.setattr(event_loop, "start", start_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        event_loop.wait(slow)
    assert cancelled.wait(5)


def _in_child(queue) -> None:
    queue.put(event_loop.wait(lambda: double(5)))


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork")
def test_a_forked_child_gets_a_loop_of_its_own():
    """The parent's loop thread does not exist in a forked child: a call there must not wait
    forever on it."""
    assert event_loop.wait(lambda: double(1)) == 2  # the parent's loop is running
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_in_child, args=(queue,))
    child.start()
    child.join(30)
    assert child.exitcode == 0
    assert queue.get(timeout=5) == 10
