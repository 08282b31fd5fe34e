"""``seek serve``'s app on a free 127.0.0.1 port (uvicorn in a thread, as `seek serve` runs
it: guarded protocol, connection cap, keep-alive)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from seek.serving import uvicorn_config
from seek.serving.config import ServeConfig
from seek.web.api import create_app


@contextmanager
def running(config: ServeConfig, **protocol: object) -> Iterator[str]:
    """Yields ``http://127.0.0.1:PORT``; ``protocol`` overrides class attributes of the
    connection protocol (``max_connections``, ``header_timeout_s``)."""
    settings = uvicorn_config(create_app(config), "127.0.0.1", 0, log_level="error")
    if protocol:
        settings.http = type("TestProtocol", (settings.http,), protocol)
    server = uvicorn.Server(settings)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
