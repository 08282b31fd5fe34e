"""`seek serve`'s connection limits in-process (docs/security.md, Limits): request heads
10 s, idle keep-alive 5 s, 1,000 open connections kept under the file-descriptor limit, and
over the cap the connection that waited longest for its request head is closed; error logs
are one line each and rate-limited. ``test_slow_clients.py`` drives the same limits through a
`seek serve` subprocess; these tests run the protocol in this process, so a broken rule shows
here (and mutation testing can see it: scripts/mutation.py, module ``connections``)."""

from __future__ import annotations

import logging
import socket
import time

import httpx
import pytest
from seek_server import running
from test_slow_clients import closed_within, half_sent

from seek.errors import SeekError
from seek.serving import connections
from seek.serving import requests as request_checks
from seek.serving.config import ServeConfig

pytestmark = pytest.mark.slow


@pytest.fixture
def config(make_tree, seek_home):
    root = make_tree({"a.py": "def a():\n    pass\n"})
    return ServeConfig(workspaces=(root,), overrides={"home": str(seek_home)})


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def body_pending(port: int) -> socket.socket:
    """A connection whose request head is complete and whose body is still to come (a request
    the app is running)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 b"Content-Type: application/json\r\nContent-Length: 40\r\n\r\n{")  # fmt: skip
    return sock


def test_the_documented_limits():
    """docs/security.md: request heads 10 s, idle keep-alive 5 s, 1,000 open connections."""
    assert connections.HEADER_TIMEOUT_S == 10
    assert connections.KEEP_ALIVE_S == 5
    assert connections.MAX_CONNECTIONS == 1_000
    settings = connections.uvicorn_config(object(), "10.1.2.3", 8765)
    assert (settings.host, settings.port) == ("10.1.2.3", 8765)
    assert settings.timeout_keep_alive == 5
    assert issubclass(settings.http, connections.GuardedH11Protocol)
    assert settings.http.header_timeout_s == 10
    assert settings.http.max_connections == connections.connection_cap()
    assert settings.backlog == min(2048, settings.http.max_connections)
    # warnings and errors, not a line per request; a caller may ask for less
    assert settings.log_level == "warning"
    assert connections.uvicorn_config(object(), "::1", 1, log_level="error").log_level == "error"


def test_the_server_takes_the_cap_under_a_low_descriptor_limit(monkeypatch):
    monkeypatch.setattr(connections, "resource", FakeResource(192, 192))
    settings = connections.uvicorn_config(object(), "127.0.0.1", 8765)
    assert settings.http.max_connections == 192 - connections.SPARE_FDS
    assert settings.backlog == 192 - connections.SPARE_FDS


def is_open(sock: socket.socket) -> bool:
    """Not closed by the server (checked without waiting)."""
    sock.setblocking(False)
    try:
        return sock.recv(100) != b""
    except BlockingIOError:
        return True
    except ConnectionResetError:
        return False
    finally:
        sock.setblocking(True)


@pytest.fixture
def log_room(monkeypatch):
    """Room in the log rate limit, whatever tests before this one logged."""
    monkeypatch.setattr(connections, "_limit", connections._RateLimit(100.0))


def warnings_of(caplog) -> list[str]:
    """What ``seek serve`` logged, failing on any error (a callback that raised)."""
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    return [r.getMessage() for r in caplog.records if r.name == "seek.serve"]


def test_over_the_cap_the_connection_that_waited_longest_is_closed(config, caplog, log_room):
    """docs/security.md: over the cap, the connection that waited longest for its request
    head is closed - counted from its last answer, not from when it connected."""
    caplog.set_level(logging.WARNING)
    with running(config, max_connections=5) as url:
        port = port_of(url)
        served = socket.create_connection(("127.0.0.1", port), timeout=10)  # connects first
        slow = []
        for _ in range(4):
            time.sleep(0.05)
            slow.append(half_sent(port))
        time.sleep(0.05)
        served.sendall(b"GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert served.recv(100).startswith(b"HTTP/1.1 200")  # now waiting the shortest
        time.sleep(0.2)
        assert all(is_open(sock) for sock in (served, *slow))  # at the cap: nobody is closed
        newcomer = socket.create_connection(("127.0.0.1", port), timeout=5)
        try:
            assert closed_within(slow[0], 3)  # the one that waited longest
            assert all(is_open(sock) for sock in (served, *slow[1:]))
            newcomer.sendall(b"GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            newcomer.settimeout(10)
            assert newcomer.recv(100).startswith(b"HTTP/1.1 200")
        finally:
            newcomer.close()
            served.close()
            for sock in slow:
                sock.close()
    assert warnings_of(caplog) == ["6 connections are open: closing the one that waited longest"]


def test_over_the_cap_with_every_request_running_the_newcomer_is_closed(config):
    """Connections whose requests are running are not slow clients: the new one goes."""
    with running(config, max_connections=2) as url:
        port = port_of(url)
        busy = [body_pending(port), body_pending(port)]
        time.sleep(0.2)
        newcomer = half_sent(port)
        try:
            assert closed_within(newcomer, 3)
            assert all(is_open(sock) for sock in busy)
        finally:
            newcomer.close()
            for sock in busy:
                sock.close()


def test_after_a_response_the_next_head_is_timed_too(config, caplog, log_room):
    """A keep-alive connection that answers one request and then sends nothing is closed
    after the header timeout (here 1 s), not only after the 5 s keep-alive."""
    caplog.set_level(logging.WARNING)
    with running(config, header_timeout_s=1.0) as url:
        sock = socket.create_connection(("127.0.0.1", port_of(url)), timeout=10)
        try:
            sock.sendall(b"GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert sock.recv(100).startswith(b"HTTP/1.1 200")
            started = time.monotonic()
            assert closed_within_draining(sock, 5)
            assert time.monotonic() - started < 3.5
        finally:
            sock.close()
        time.sleep(0.1)  # the server's side of the close has run
    assert warnings_of(caplog) == ["closed a connection that sent no request head in 1 s"]


def closed_within_draining(sock: socket.socket, seconds: float) -> bool:
    """Like :func:`closed_within`, reading past what is left of a response first."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            if sock.recv(65536) == b"":
                return True
        except TimeoutError:
            return False
        except ConnectionResetError:
            return True
    return False


def test_a_running_request_is_not_cut_by_the_header_timeout(config, monkeypatch):
    """Once the head is complete the app bounds the rest: a body slower than the 0.5 s head
    timeout gets the app's 408, not a dropped connection."""
    monkeypatch.setattr(request_checks, "BODY_TIMEOUT_S", 1.5)
    with running(config, header_timeout_s=0.5) as url:
        sock = body_pending(port_of(url))
        try:
            sock.settimeout(6)
            answer = sock.recv(1000)
        finally:
            sock.close()
    assert answer.startswith(b"HTTP/1.1 408"), answer


def test_normal_requests_pass_under_a_small_cap(config):
    with running(config, max_connections=2) as url:
        with httpx.Client() as client:
            for _ in range(5):
                assert client.get(f"{url}/v1/status", timeout=10).status_code == 200


class FakeResource:
    """``resource``'s file-descriptor limit calls, on made-up limits."""

    RLIMIT_NOFILE = 7
    RLIM_INFINITY = -1

    def __init__(self, soft: int, hard: int, refuse: bool = False) -> None:
        self.limits = (soft, hard)
        self.refuse = refuse

    def getrlimit(self, which: int) -> tuple[int, int]:
        assert which == self.RLIMIT_NOFILE
        return self.limits

    def setrlimit(self, which: int, limits: tuple[int, int]) -> None:
        assert which == self.RLIMIT_NOFILE
        if self.refuse:
            raise ValueError("not allowed")
        self.limits = limits


@pytest.mark.parametrize(
    ("soft", "hard", "cap", "soft_after"),
    [
        (192, 192, 192 - connections.SPARE_FDS, 192),  # cannot raise: stay under the limit
        (256, 4096, 1_000, 1_000 + connections.SPARE_FDS),  # raised just enough
        (256, 600, 600 - connections.SPARE_FDS, 600),  # raised to the hard limit
        (256, -1, 1_000, 1_000 + connections.SPARE_FDS),  # unlimited hard limit
        (4096, 4096, 1_000, 4096),  # enough already: untouched
        (1_064, 4096, 1_000, 1_064),  # exactly enough
        (-1, -1, 1_000, -1),  # unlimited
        (70, 70, 16, 70),  # never under 16 connections
    ],
)
def test_the_connection_cap_stays_under_the_descriptor_limit(
    monkeypatch, soft, hard, cap, soft_after
):
    fake = FakeResource(soft, hard)
    monkeypatch.setattr(connections, "resource", fake)
    assert connections.connection_cap() == cap
    assert fake.limits == (soft_after, hard)


def test_a_refused_raise_keeps_the_cap_under_the_old_limit(monkeypatch):
    fake = FakeResource(256, 4096, refuse=True)
    monkeypatch.setattr(connections, "resource", fake)
    assert connections.connection_cap() == 256 - connections.SPARE_FDS
    assert connections.connection_cap(100) == 100


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def record(message: str, exc: BaseException | None = None, args: tuple = ()) -> logging.LogRecord:
    info = (type(exc), exc, exc.__traceback__) if exc else None
    return logging.LogRecord("seek.serve", logging.ERROR, __file__, 1, message, args, info)


def test_error_logs_are_rate_limited(monkeypatch):
    """A burst passes up to the rate's worth of lines, the rest are dropped and counted in the
    next line that passes; the allowance refills with time but never beyond one second's."""
    clock = FakeClock()
    monkeypatch.setattr(connections, "time", clock)
    monkeypatch.setattr(connections, "_limit", connections._RateLimit(4.0))
    keep = connections.OneLineRateLimited()
    assert [keep.filter(record(f"line {i}")) for i in range(6)] == [True] * 4 + [False] * 2
    clock.now += 0.25  # a quarter of a second: one more line
    first = record("after the burst")
    assert keep.filter(first)
    assert first.getMessage() == "after the burst (2 similar lines dropped)"
    assert not keep.filter(record("again"))
    clock.now += 100  # a long quiet spell refills one second's worth, not 400 lines
    later = [record(f"later {i}") for i in range(6)]
    assert [keep.filter(line) for line in later] == [True] * 4 + [False] * 2
    assert later[0].getMessage() == "later 0 (1 similar lines dropped)"
    assert later[1].getMessage() == "later 1"  # counted once, then from zero


def test_error_logs_are_one_line_without_a_traceback(monkeypatch):
    monkeypatch.setattr(connections, "_limit", connections._RateLimit(100.0))
    try:
        raise ValueError("bad\nthing")
    except ValueError as exc:
        line = record("request   from\n  %s failed", exc, args=("127.0.0.1",))
    assert connections.OneLineRateLimited().filter(line)
    assert line.getMessage() == "request from 127.0.0.1 failed: ValueError: bad thing"
    assert line.exc_info is None and line.exc_text is None and line.stack_info is None
    unraised = ValueError("never raised")  # an exception without a traceback
    quiet = logging.LogRecord("seek.serve", logging.ERROR, __file__, 1, "closing", (),
                              (ValueError, unraised, None))  # fmt: skip
    assert connections.OneLineRateLimited().filter(quiet)
    assert quiet.getMessage() == "closing: ValueError: never raised" and quiet.exc_info is None
    spread = record("%s failed: %s", args=("GET /v1/status", "RuntimeError: two\nlines"))
    assert connections.OneLineRateLimited().filter(spread)
    assert spread.getMessage() == "GET /v1/status failed: RuntimeError: two lines"
    long = record("x" * 1000)
    assert connections.OneLineRateLimited().filter(long)
    assert len(long.getMessage()) == 300


def test_quiet_server_logs_covers_the_loggers_a_client_can_reach():
    names = ("asyncio", "uvicorn.error", "uvicorn.asgi", "seek.serve")
    connections.quiet_server_logs()
    connections.quiet_server_logs()  # twice: still one filter each
    for name in names:
        filters = logging.getLogger(name).filters
        assert sum(isinstance(f, connections.OneLineRateLimited) for f in filters) == 1, name


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_connections_to_a_socket_seek_binds_itself_send_without_delay(host):
    """`seek serve` and `seek ui` bind their socket before the server is built
    (:func:`connections.listen`). asyncio turns Nagle's algorithm off (``TCP_NODELAY``) only
    on sockets whose protocol says TCP: without it every keep-alive answer waited for the
    client's delayed ACK, ~40 ms a request (a 2,000-question soak: 119 s instead of 38)."""
    import asyncio

    if host == "::1" and not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    try:
        sock = connections.listen(host, 0)
    except SeekError:
        pytest.skip(f"cannot listen on {host} here")
    seen: list[int] = []

    class Record(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            accepted = transport.get_extra_info("socket")
            seen.append(accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            transport.close()

    async def accept_one() -> None:
        server = await asyncio.get_running_loop().create_server(Record, sock=sock)
        async with server:
            port = sock.getsockname()[1]
            _, writer = await asyncio.open_connection(host, port)
            for _ in range(100):
                if seen:
                    break
                await asyncio.sleep(0.01)
            writer.close()

    asyncio.run(accept_one())
    assert seen and seen[0] != 0
