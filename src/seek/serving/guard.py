"""Request checks in front of every route of ``seek serve`` (an ASGI middleware).

Why: a server on 127.0.0.1 is reachable from any web page the user opens. A DNS-rebinding
page (``evil.example`` re-pointed at 127.0.0.1) would read search results, and any page can
send a "simple" cross-site POST (``text/plain`` bodies need no CORS preflight). So:

- ``Host`` must name the address the connection came in on or a loopback name
  (``127.0.0.1``, ``localhost``, ``[::1]``) with the server's port, or one of the names the
  user configured (``serve_hosts``); otherwise 400 ``bad_host``;
- a browser's ``Origin`` must be the server's own origin or one the user configured
  (``serve_origins``); ``Sec-Fetch-Site: cross-site`` is refused too; otherwise 403
  ``cross_origin``;
- with a token, ``Authorization: Bearer <token>`` is required (constant-time compare); 401;
- a request with a body (POST, PUT, PATCH) must say ``Content-Type: application/json``; 415.

CORS headers are sent only to origins the user configured; nobody else gets any.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from starlette.datastructures import Headers
from starlette.responses import JSONResponse, Response

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
BODY_METHODS = ("POST", "PUT", "PATCH")
JSON_TYPE = "application/json"


class Refused(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def error_response(status: int, code: str, message: str) -> JSONResponse:
    """The JSON error every seek endpoint sends: ``{"error": {"code", "message"}}``."""
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


@dataclass(frozen=True, slots=True)
class GuardPolicy:
    token: str = ""
    extra_hosts: tuple[str, ...] = ()
    """Names (``name`` or ``name:port``) accepted in ``Host`` besides loopback and the bound
    address: what a reverse proxy or a team's DNS name sends."""
    allowed_origins: tuple[str, ...] = ()
    """Browser origins (``https://app.example``) allowed to call; they get CORS headers."""
    public_paths: frozenset[str] = frozenset()
    """Paths a GET may fetch without the token (the browser page's own files, which hold no
    data: a browser cannot send the token with the page's first request)."""


def split_host(value: str) -> tuple[str, int | None]:
    """``name[:port]`` -> (lower-case name, port or None); IPv6 keeps its brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value.partition("]")
        name += "]"
        port_text = rest[1:] if rest.startswith(":") else ("" if not rest else "x")
    else:
        name, _, port_text = value.partition(":")
    if port_text == "":
        return name, None
    if not port_text.isdigit() or len(port_text) > 5:
        raise ValueError(value)
    return name, int(port_text)


def address_name(address: str) -> str:
    """How an address appears in a ``Host`` header (IPv6 in brackets)."""
    try:
        return f"[{address}]" if ipaddress.ip_address(address).version == 6 else address
    except ValueError:
        return address.lower()


class RequestGuard:
    """ASGI middleware applying :class:`GuardPolicy` to every HTTP request."""

    def __init__(self, app: ASGIApp, policy: GuardPolicy) -> None:
        self.app = app
        self.policy = policy
        self.extra_hosts = {h.strip().lower() for h in policy.extra_hosts if h.strip()}
        self.origins = {o.strip().rstrip("/").lower() for o in policy.allowed_origins}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin", "").rstrip("/").lower()
        cors = origin if origin and origin in self.origins else ""
        if cors:
            # An allowed page must be able to read every answer, refusals included (a 401
            # tells it to ask for the token), so the headers go on whatever is sent.
            send = self.with_cors(send, cors)
        try:
            self.check(scope, headers, origin, cors)
        except Refused as exc:
            await error_response(exc.status, exc.code, exc.message)(scope, receive, send)
            return
        if cors and scope["method"] == "OPTIONS":
            preflight = self.cors_headers(cors, preflight=True)
            del preflight["Access-Control-Allow-Origin"], preflight["Vary"]  # added by `send`
            await Response(status_code=204, headers=preflight)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def with_cors(self, send: Send, origin: str) -> Send:
        extra = [(k.encode(), v.encode()) for k, v in self.cors_headers(origin).items()]

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        return send_with_cors

    @staticmethod
    def cors_headers(origin: str, preflight: bool = False) -> dict[str, str]:
        headers = {"Access-Control-Allow-Origin": origin, "Vary": "Origin"}
        if preflight:
            headers["Access-Control-Allow-Methods"] = "GET, POST"
            headers["Access-Control-Allow-Headers"] = "Authorization, Content-Type"
            headers["Access-Control-Max-Age"] = "600"
        return headers

    def check(self, scope: Scope, headers: Headers, origin: str, cors: str) -> None:
        host = headers.get("host", "")
        if not self.host_allowed(host, scope.get("server")):
            raise Refused(
                400, "bad_host",
                f"Host {host[:100]!r} is not an address of this server; add it to the "
                "serve_hosts setting if you reach the server under that name",
            )  # fmt: skip
        if origin and not cors:
            own = f"{scope.get('scheme', 'http')}://{host.strip().lower()}"
            if origin != own:
                raise Refused(
                    403, "cross_origin",
                    f"requests from the web page {origin[:100]!r} are refused; add it to the "
                    "serve_origins setting to allow it",
                )  # fmt: skip
        if not origin and headers.get("sec-fetch-site", "") == "cross-site":
            raise Refused(403, "cross_origin", "cross-site requests are refused")
        public = scope["method"] == "GET" and scope.get("path") in self.policy.public_paths
        if self.policy.token and not public and not (cors and scope["method"] == "OPTIONS"):
            header = headers.get("authorization", "")
            given = header[7:] if header.lower().startswith("bearer ") else ""
            if not hmac.compare_digest(given.encode(), self.policy.token.encode()):
                raise Refused(
                    401, "unauthorized", "a valid `Authorization: Bearer <token>` is required"
                )
        if scope["method"] in BODY_METHODS:
            media_type = headers.get("content-type", "").partition(";")[0].strip().lower()
            if media_type != JSON_TYPE:
                raise Refused(
                    415, "unsupported_media_type",
                    f"request bodies must be sent as Content-Type: {JSON_TYPE}",
                )  # fmt: skip

    def host_allowed(self, host: str, server: tuple[str, int | None] | None) -> bool:
        if host.strip().lower() in self.extra_hosts:
            return True
        try:
            name, port = split_host(host)
        except ValueError:
            return False
        if name in self.extra_hosts:
            return True
        own_port = server[1] if server else None
        names = set(LOOPBACK_NAMES)
        if server:
            names.add(address_name(server[0]))
        return name in names and (port is None or own_port is None or port == own_port)
