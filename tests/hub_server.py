"""A stand-in for the Hugging Face hub on 127.0.0.1: ``GET /{repo}/resolve/{rev}/{path}``.

Like the real hub, a large file can be answered with a redirect to a file server (another
instance of this class, so another origin) carrying ``X-Linked-Etag`` (the SHA-256) and
``X-Repo-Commit``; a missing file is a 404 with ``X-Error-Message``. It records every request's
path and ``Authorization`` header, and can cut a body short to play a dropped connection.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from local_http import serving

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@dataclass
class Hub:
    files: dict[str, bytes] = field(default_factory=dict)
    """URL path -> content."""
    redirect_to: str | None = None
    """Base URL of a file server: answer 302 to ``{redirect_to}/cdn/{sha256}`` instead."""
    linked_etag: str | None = None
    """Send this as ``X-Linked-Etag`` instead of the true SHA-256 (with ``redirect_to``)."""
    truncate: bool = False
    """Send half of each body, with the full ``Content-Length``, then close."""
    status: int | None = None
    """Answer every request with this status."""
    requests: list[tuple[str, str | None]] = field(default_factory=list)
    url: str = ""

    def add(self, repo: str, path: str, content: bytes, revision: str = "main") -> None:
        self.files[f"/{repo}/resolve/{revision}/{path}"] = content
        self.files[f"/cdn/{hashlib.sha256(content).hexdigest()}"] = content


class _Handler(BaseHTTPRequestHandler):
    hub: Hub

    def log_message(self, format: str, *args: Any) -> None:  # stdlib name
        pass

    def do_GET(self) -> None:  # stdlib name
        hub = self.hub
        hub.requests.append((self.path, self.headers.get("Authorization")))
        content = hub.files.get(self.path)
        if hub.status is not None:
            self._head(hub.status, b"", {"X-Error-Message": "Access to this repo is restricted"})
        elif content is None:
            self._head(404, b"", {"X-Error-Message": "Entry not found"})
        elif hub.redirect_to and not self.path.startswith("/cdn/"):
            sha = hashlib.sha256(content).hexdigest()
            self._head(
                302,
                b"",
                {
                    "Location": f"{hub.redirect_to}/cdn/{sha}",
                    "X-Linked-Etag": f'"{hub.linked_etag or sha}"',
                    "X-Repo-Commit": COMMIT,
                },
            )
        elif hub.truncate:
            self._head(200, content[: len(content) // 2], {}, length=len(content))
            self.close_connection = True
        else:
            self._head(200, content, {"X-Repo-Commit": COMMIT})

    def _head(self, status: int, body: bytes, headers: dict, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()


@contextmanager
def serve(hub: Hub) -> Iterator[Hub]:
    handler = type("Handler", (_Handler,), {"hub": hub})
    with serving(handler) as url:
        hub.url = url
        yield hub
