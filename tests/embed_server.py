"""A real HTTP embeddings server on 127.0.0.1 for tests and the batching benchmark.

It speaks Ollama (``POST /api/embed`` -> ``{"embeddings": [...]}``), OpenAI
(``POST /v1/embeddings`` -> ``{"data": [{"index", "embedding"}]}``, deliberately listed in
reverse order) and the legacy single form (``POST /api/embeddings`` -> ``{"embedding"}``),
with deterministic vectors, and can be told to misbehave through :class:`Behaviour`.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from local_http import serving


def vector_for(text: str, dims: int) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    while len(digest) < dims:
        digest += hashlib.sha256(digest).digest()
    return [b / 255.0 for b in digest[:dims]]


@dataclass
class Behaviour:
    dims: int = 8
    refuse_lists: bool = False
    """Answer ``refuse_status`` to any list input (a server that takes one string only)."""
    refuse_status: int = 400
    rate_limits: int = 0
    """Answer 429 this many times before behaving."""
    retry_after: str | None = None
    fail_after: int | None = None
    """Answer ``fail_status`` once this many requests have succeeded."""
    fail_status: int = 500
    not_json: bool = False
    """Answer 200 with a body that is not JSON."""
    hang_s: float = 0.0
    wrong_count: bool = False
    """Return one vector too few for lists."""
    no_vectors: bool = False
    """Answer 200 with an empty list of vectors."""
    ragged: bool = False
    """Every second vector one number short (a broken server)."""
    models: set[str] = field(default_factory=lambda: {"test-embed", "nomic-embed-text"})
    api_key: str | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    flight_lock: threading.Lock = field(default_factory=threading.Lock)
    """Guards ``in_flight`` alone: answers are sent while ``lock`` may be held."""
    succeeded: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    """The most requests the server was answering at once."""
    on_request: Callable[[int], None] | None = None
    """Called with each request's number (1-based, counting ``requests``) before it is
    answered: lets a test act at a given point of a client's run (the crash test kills it)."""


class _Handler(BaseHTTPRequestHandler):
    behaviour: Behaviour

    def log_message(self, format: str, *args: Any) -> None:  # stdlib name
        pass  # keep test output clean

    _counted = False

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        # A request stops being "in flight" before its answer is written: once the client
        # reads it, it may send the next one before this thread runs again.
        self._leave_flight()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout tests) or was killed (crash test)

    def do_POST(self) -> None:  # stdlib name
        b = self.behaviour
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        with b.lock:
            b.requests.append(
                {
                    "path": self.path,
                    "body": body,
                    "auth": self.headers.get("Authorization"),
                    "content_type": self.headers.get("Content-Type"),
                }  # fmt: skip
            )
            number = len(b.requests)
        if b.on_request is not None:
            b.on_request(number)
        with b.flight_lock:
            b.in_flight += 1
            b.max_in_flight = max(b.max_in_flight, b.in_flight)
        self._counted = True
        try:
            self._answer(b, body)
        finally:
            self._leave_flight()

    def _leave_flight(self) -> None:
        if self._counted:
            self._counted = False
            with self.behaviour.flight_lock:
                self.behaviour.in_flight -= 1

    def _answer(self, b: Behaviour, body: Any) -> None:
        if b.hang_s:
            time.sleep(b.hang_s)
        if b.api_key is not None and self.headers.get("Authorization") != f"Bearer {b.api_key}":
            return self._send(401, {"error": {"message": "invalid api key"}})
        with b.lock:
            if b.rate_limits > 0:
                b.rate_limits -= 1
                headers = {"Retry-After": b.retry_after} if b.retry_after else {}
                return self._send(429, {"error": "slow down"}, headers)
            if b.fail_after is not None and b.succeeded >= b.fail_after:
                return self._send(b.fail_status, {"error": "the model crashed (out of memory)"})
        if body.get("model") not in b.models:
            return self._send(
                404, {"error": f'model "{body.get("model")}" not found, try pulling it first'}
            )
        texts = body.get("input")
        is_list = isinstance(texts, list)
        if is_list and b.refuse_lists:
            return self._send(b.refuse_status, {"error": "input must be a string"})
        items = texts if is_list else [texts]
        vectors = [vector_for(str(t), b.dims) for t in items]
        if b.ragged:
            vectors = [v[: len(v) - i % 2] for i, v in enumerate(vectors)]
        if is_list and b.wrong_count:
            vectors = vectors[:-1]
        if b.no_vectors:
            vectors = []
        with b.lock:
            b.succeeded += 1
        if b.not_json:
            return self._send(200, b"<html>the gateway is busy</html>")
        if self.path == "/v1/embeddings":
            data = [{"index": i, "embedding": v} for i, v in enumerate(vectors)][::-1]
            return self._send(200, {"data": data, "usage": {"prompt_tokens": len(items)}})
        if self.path == "/api/embeddings":
            return self._send(200, {"embedding": vectors[0]})
        return self._send(200, {"embeddings": vectors})


@contextmanager
def serve(behaviour: Behaviour | None = None) -> Iterator[tuple[str, Behaviour]]:
    """Run the server in a thread; yields its base URL and the behaviour to steer it."""
    behaviour = behaviour or Behaviour()
    handler = type("Handler", (_Handler,), {"behaviour": behaviour})
    with serving(handler) as url:
        yield url, behaviour
