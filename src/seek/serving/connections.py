"""Connection limits for ``seek serve``: slow and idle clients cannot starve the server.

uvicorn bounds idle keep-alive connections (``timeout_keep_alive``) and header sizes (h11),
but it has no header read timeout and no cap on open connections: ~1,000 half-sent requests
exhaust the usual 1,024 file descriptors, every later request waits forever and the accept
loop logs a traceback per attempt. :class:`GuardedH11Protocol` adds

- a cap on open connections (``MAX_CONNECTIONS``, kept under the file-descriptor limit by
  :func:`connection_cap`): over it, the connection that has waited longest for its request
  head is closed, so slow clients make room for normal ones instead of locking them out;
- a header read timeout (``HEADER_TIMEOUT_S``): a connection that has not sent a complete
  request head that long after it opened (or after its previous response) is closed.

Body read time is bounded by the app (``seek.web.api`` answers 408), and the whole request by
its 30 s limit. :func:`quiet_server_logs` turns the server's error logging into one line per
event, at most a few per second, so no client can flood stderr.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import socket
import time
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from seek.errors import SeekError

HEADER_TIMEOUT_S = 10.0
KEEP_ALIVE_S = 5.0
MAX_CONNECTIONS = 1_000
SPARE_FDS = 64
"""File descriptors kept free for the index, models and logs under the connection cap."""
LOG_LINES_PER_S = 5.0


def connection_cap(wanted: int = MAX_CONNECTIONS) -> int:
    """Raise the soft file-descriptor limit towards the hard one if needed, and return a
    connection cap that leaves ``SPARE_FDS`` descriptors free."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = wanted + SPARE_FDS
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(16, min(wanted, soft - SPARE_FDS))


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a connection cap and a header read timeout."""

    max_connections = MAX_CONNECTIONS
    header_timeout_s = HEADER_TIMEOUT_S

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None
        self._waiting_since: float | None = None
        """When it started waiting for a request head (None while a request runs)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()
        if len(self.connections) > self.max_connections:
            self._make_room()

    def _make_room(self) -> None:
        """Over the cap, close the connection that has waited longest for its request head
        (a slow or idle client; a normal client sends its head at once), or this new one
        when every other connection has a request running."""
        waiting = [
            c for c in self.connections
            if isinstance(c, GuardedH11Protocol) and c is not self
            and c._waiting_since is not None and not c.transport.is_closing()
        ]  # fmt: skip
        victim = min(waiting, key=lambda c: c._waiting_since or 0.0) if waiting else self
        _log.warning(
            "%d connections are open: closing the one that waited longest", len(self.connections)
        )
        victim.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        if self.cycle is not None and not self.cycle.response_complete:
            self._disarm_head_timer()  # the head is complete: the app bounds the rest
            self._waiting_since = None

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_head_timer()

    def _arm_head_timer(self) -> None:
        self._disarm_head_timer()
        self._waiting_since = time.monotonic()
        self._head_timer = self.loop.call_later(self.header_timeout_s, self._head_too_slow)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        self._head_timer = None
        waiting = self.cycle is None or self.cycle.response_complete
        if waiting and not self.transport.is_closing():
            _log.warning(
                "closed a connection that sent no request head in %g s", self.header_timeout_s
            )
            self.transport.abort()


# -- logging that cannot flood ------------------------------------------------------------

_log = logging.getLogger("seek.serve")


class _RateLimit:
    def __init__(self, per_s: float) -> None:
        self.per_s = per_s
        self.allowance = per_s
        self.last = time.monotonic()
        self.dropped = 0

    def allow(self) -> bool:
        now = time.monotonic()
        self.allowance = min(self.per_s, self.allowance + (now - self.last) * self.per_s)
        self.last = now
        if self.allowance >= 1:
            self.allowance -= 1
            return True
        self.dropped += 1
        return False


_limit = _RateLimit(LOG_LINES_PER_S)


class OneLineRateLimited(logging.Filter):
    """Drops records over the rate, and turns the rest into one line without a traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not _limit.allow():
            return False
        # The arguments are formatted in before the line is flattened: they carry what a
        # client or a file controls (an exception's text, a path), newlines included.
        message = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            message = f"{message}: {type(exc).__name__}: {exc}"
        record.msg = " ".join(message.split())[:300]
        record.args = ()
        record.exc_info = None
        record.exc_text = None
        record.stack_info = None
        if _limit.dropped:
            record.msg += f" ({_limit.dropped} similar lines dropped)"
            _limit.dropped = 0
        return True


def quiet_server_logs() -> None:
    """Rate-limit and one-line the loggers a hostile client can make talk."""
    for name in ("asyncio", "uvicorn.error", "uvicorn.asgi", "seek.serve"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, OneLineRateLimited) for f in logger.filters):
            logger.addFilter(OneLineRateLimited())


def uvicorn_config(app: Any, host: str, port: int, log_level: str = "warning") -> Any:
    """uvicorn's settings for seek: the guarded protocol, the connection cap under the file
    descriptor limit, a short keep-alive and quiet logs."""
    import uvicorn

    cap = connection_cap()
    protocol = type("CappedH11Protocol", (GuardedH11Protocol,), {"max_connections": cap})
    quiet_server_logs()
    return uvicorn.Config(
        app, host=host, port=port, log_level=log_level, http=protocol,
        timeout_keep_alive=int(KEEP_ALIVE_S), backlog=min(2048, cap), lifespan="off",
    )  # fmt: skip


def listen(host: str, port: int, backlog: int = 128) -> socket.socket:
    """A socket listening on ``host:port`` before the server is built, so that what is
    printed (the address, the token file's name) is the port that answers, ``0`` included,
    and a client that connects meanwhile waits in the backlog instead of being refused.

    The protocol is named (``IPPROTO_TCP``, as ``getaddrinfo`` gives it when uvicorn binds
    itself): asyncio sets ``TCP_NODELAY`` only on sockets that say so, and without it each
    keep-alive answer waited for the client's delayed ACK (~40 ms; a 2,000-question soak
    took 119 s instead of 55)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError as exc:
        sock.close()
        from seek.serving.guard import address_name

        where = f"{address_name(host)}:{port}"
        raise SeekError(f"cannot listen on {where} ({exc.strerror})") from exc
    return sock
