"""``seek serve``: a JSON HTTP API for editors and teams (Starlette app, run by uvicorn).

Endpoints (all JSON; errors are ``{"error": {"code": ..., "message": ...}}``; the OpenAPI
document is ``GET /v1/openapi.json``):

- ``POST /v1/search`` ``{"query", "path"?, "k"?, "focus"?}`` -> hits as ``seek search --json``
  plus ``workspace`` (the folder's name); this is also what team clients ask (§9)
- ``POST /v1/context`` ``{"question", "path"?, "budget"?}`` -> prompt blocks and the report
- ``GET /v1/status?path=`` -> what the index holds
- ``POST /v1/index`` ``{"path"?, "rebuild"?}`` -> the run's report (202 when it outlasts the
  request's time limit and goes on in the background; 409 while another run is going)

Security: it binds 127.0.0.1 unless told otherwise, and any other address requires a token
(``SEEK_TOKEN``; clients send ``Authorization: Bearer <token>``, compared in constant time;
when ``SEEK_TOKEN`` is set it is required on loopback too). Host, Origin, content type and
token are checked by :mod:`seek.serving.guard` before any route runs; slow and idle
connections are bounded by :mod:`seek.serving.connections`. Only the workspaces it was
started with can be named: a ``path`` is resolved (``..`` and symlinks included) and must
be one of them. Fields are type-checked strictly (``true`` is not a number, ``"no"`` is not
a boolean). Request bodies (64 KiB, read within 10 s), query lengths and request times
(30 s from the request head) are limited.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from seek.errors import ApiError, IndexLockedError, SeekError, WorkspaceError
from seek.serving import GuardPolicy, RequestGuard
from seek.serving.guard import error_response
from seek.serving.openapi import openapi_document
from seek.settings import load_settings
from seek.team import HOP_HEADER
from seek.untrusted import (
    MAX_BUDGET_CHARS,
    MAX_FOCUS,
    MAX_K,
    MAX_PATH_CHARS,
    MAX_QUERY_CHARS,
    has_lone_surrogates,
)
from seek.web.related import related_route
from seek.workspace import Workspaces

log = logging.getLogger("seek.serve")

MAX_BODY_BYTES = 64 * 1024
REQUEST_TIMEOUT_S = 30.0
BODY_TIMEOUT_S = 10.0
TOKEN_ENV = "SEEK_TOKEN"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class ServeConfig:
    workspaces: tuple[Path, ...]
    token: str = ""
    overrides: dict[str, object] | None = None
    hosts: tuple[str, ...] = ()
    """Extra ``Host`` names (the ``serve_hosts`` setting)."""
    origins: tuple[str, ...] = ()
    """Browser origins allowed to call (the ``serve_origins`` setting)."""
    ui: bool = False
    """Also serve the browser page (``seek ui``, :mod:`seek.web.ui`)."""


def check_text(value: str, field: str) -> str:
    """Refuse NUL bytes and lone surrogates (JSON ``"\\ud800"``): no file name or question
    holds them, and they break every encoder further down."""
    if "\x00" in value:
        raise ApiError(400, "bad_request", f"{field} must not contain NUL characters")
    if has_lone_surrogates(value):
        raise ApiError(
            400, "bad_request", f"{field} holds invalid Unicode (a lone surrogate such as \\ud800)"
        )
    return value


class Service:
    """The facade's calls behind the endpoints, as JSON, and which folders may be named."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self.roots = tuple(p.resolve() for p in config.workspaces)
        self.workspaces = Workspaces(config.overrides)

    def root(self, path: object) -> Path:
        """The allowed workspace a request names (default: the first one)."""
        if path is None or path == "":
            return self.roots[0]
        if not isinstance(path, str):
            raise ApiError(400, "bad_request", "path must be a string")
        if len(path) > MAX_PATH_CHARS:
            raise ApiError(400, "too_long", f"paths are limited to {MAX_PATH_CHARS} characters")
        check_text(path, "path")
        candidate = Path(path)  # no "~": the server's home means nothing to a client
        if not candidate.is_absolute():
            candidate = self.roots[0] / candidate
        resolved = Path(os.path.realpath(candidate))
        if resolved not in self.roots:
            raise ApiError(403, "forbidden", "path is not a workspace this server serves")
        return resolved

    def search(
        self, root: Path, query: str, k: int, focus: tuple[str, ...], team: bool = True
    ) -> dict[str, Any]:
        data = self.workspaces.search(root, query, k, focus, team=team).to_json()
        data["workspace"] = root.name  # team clients label hits team:<workspace>/<path>
        return data

    def context(self, root: Path, question: str, budget: int | None) -> dict[str, Any]:
        return self.workspaces.context(root, question, budget).to_json()

    def status(self, root: Path) -> dict[str, Any]:
        return self.workspaces.status_json(root)

    def index(self, root: Path, rebuild: bool) -> dict[str, Any]:
        return self.workspaces.index(root, rebuild).to_json()


# -- reading and checking requests ------------------------------------------------------


async def json_body(request: Request, deadline: float) -> dict[str, Any]:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise ApiError(413, "too_large", f"request bodies are limited to {MAX_BODY_BYTES} bytes")
    body = b""
    try:
        with anyio.fail_after(min(BODY_TIMEOUT_S, max(0.0, deadline - time.monotonic()))):
            async for piece in request.stream():
                body += piece
                if len(body) > MAX_BODY_BYTES:
                    raise ApiError(
                        413, "too_large", f"request bodies are limited to {MAX_BODY_BYTES} bytes"
                    )
    except TimeoutError as exc:
        raise ApiError(
            408, "timeout", f"the request body must arrive within {BODY_TIMEOUT_S:g} s"
        ) from exc
    try:
        data = json.loads(body or b"{}")
    except (ValueError, RecursionError) as exc:  # RecursionError: "[" x 30,000
        raise ApiError(400, "bad_json", "the request body is not valid JSON") from exc
    if not isinstance(data, dict):
        raise ApiError(400, "bad_request", "the request body must be a JSON object")
    return data


def question_text(data: dict[str, Any], field: str, plural: str) -> str:
    """The body's ``field``: a non-empty string of at most ``MAX_QUERY_CHARS``."""
    text = data.get(field)
    if not isinstance(text, str) or not text.strip():
        raise ApiError(400, "bad_request", f"{field} must be a non-empty string")
    if len(text) > MAX_QUERY_CHARS:
        raise ApiError(400, "too_long", f"{plural} are limited to {MAX_QUERY_CHARS} characters")
    return check_text(text, field)


def integer(data: dict[str, Any], field: str, default: int | None, low: int, high: int) -> Any:
    """An integer field in ``[low, high]``; JSON ``true`` is not an integer."""
    value = data.get(field, default)
    if value is None and default is None:
        return None
    if type(value) is not int or not low <= value <= high:
        raise ApiError(400, "bad_request", f"{field} must be an integer from {low} to {high}")
    return value


def focus_paths(data: dict[str, Any]) -> tuple[str, ...]:
    focus = data.get("focus")
    if focus is None:
        return ()
    if (
        not isinstance(focus, list)
        or len(focus) > MAX_FOCUS
        or not all(isinstance(f, str) and len(f) <= MAX_PATH_CHARS for f in focus)
    ):
        raise ApiError(400, "bad_request", f"focus must be a list of at most {MAX_FOCUS} paths")
    return tuple(check_text(f, "focus") for f in focus)


async def run(deadline: float, fn, *args: Any) -> Any:
    """``fn(*args)`` on a worker thread, within the request's time limit (504 after it)."""
    try:
        with anyio.fail_after(max(0.0, deadline - time.monotonic())):
            return await anyio.to_thread.run_sync(fn, *args, abandon_on_cancel=True)
    except TimeoutError as exc:
        raise ApiError(
            504, "timeout", f"the request took longer than {REQUEST_TIMEOUT_S:g} s"
        ) from exc


def failure_response(request: Request, exc: Exception) -> JSONResponse:
    """The JSON error for an exception an endpoint raised (never a traceback)."""
    if isinstance(exc, ApiError):
        return error_response(exc.status, exc.code, exc.message)
    if isinstance(exc, WorkspaceError):
        return error_response(404, "no_workspace", str(exc))
    if isinstance(exc, IndexLockedError):
        return error_response(409, "locked", str(exc))
    if isinstance(exc, SeekError):
        return error_response(422, "seek_error", str(exc))
    log.error("%s %s failed: %s: %s", request.method, request.url.path,
              type(exc).__name__, exc)  # fmt: skip
    return error_response(500, "internal", f"internal error ({type(exc).__name__})")


def create_app(config: ServeConfig) -> RequestGuard:
    """The API behind the request guard (Host, Origin, content type, token)."""
    service = Service(config)

    def handler(endpoint):
        async def wrapped(request: Request) -> Response:
            deadline = time.monotonic() + REQUEST_TIMEOUT_S
            try:
                answer = await endpoint(request, deadline)
                return answer if isinstance(answer, Response) else JSONResponse(answer)
            except Exception as exc:
                return failure_response(request, exc)

        return wrapped

    async def search(request: Request, deadline: float) -> dict[str, Any]:
        data = await json_body(request, deadline)
        query = question_text(data, "query", "queries")
        k = integer(data, "k", 10, 1, MAX_K)
        focus = focus_paths(data)
        root = service.root(data.get("path"))
        team = HOP_HEADER not in request.headers  # a team client's search asks no team
        return await run(deadline, service.search, root, query, k, focus, team)

    async def context(request: Request, deadline: float) -> dict[str, Any]:
        data = await json_body(request, deadline)
        question = question_text(data, "question", "questions")
        budget = integer(data, "budget", None, 0, MAX_BUDGET_CHARS)
        root = service.root(data.get("path"))
        return await run(deadline, service.context, root, question, budget)

    async def status(request: Request, deadline: float) -> dict[str, Any]:
        return await run(deadline, service.status, service.root(request.query_params.get("path")))

    async def index(request: Request, deadline: float) -> dict[str, Any]:
        data = await json_body(request, deadline)
        rebuild = data.get("rebuild", False)
        if not isinstance(rebuild, bool):
            raise ApiError(400, "bad_request", "rebuild must be true or false")
        root = service.root(data.get("path"))
        try:
            return await run(deadline, service.index, root, rebuild)
        except ApiError as exc:
            if exc.status != 504:
                raise
            # The run goes on (searches keep the last complete index meanwhile).
            return JSONResponse({"summary": "The index run continues in the background; "
                                 "GET /v1/status shows when it is done.", "running": True},
                                status_code=202)  # fmt: skip

    async def openapi(request: Request, deadline: float) -> dict[str, Any]:
        return openapi_document()

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "bad_request")
        return error_response(exc.status_code, code, str(exc.detail))

    routes = [
        Route("/v1/search", handler(search), methods=["POST"]),
        Route("/v1/context", handler(context), methods=["POST"]),
        Route("/v1/status", handler(status), methods=["GET"]),
        Route("/v1/index", handler(index), methods=["POST"]),
        Route("/v1/openapi.json", handler(openapi), methods=["GET"]),
        related_route(service, handler),
    ]
    public: frozenset[str] = frozenset()
    if config.ui:  # the page shares the API's checks: workspaces, body limits, errors
        from seek.web.ui import PUBLIC_PATHS, ui_routes

        async def read_json(request: Request) -> dict[str, Any]:
            return await json_body(request, time.monotonic() + REQUEST_TIMEOUT_S)

        routes += ui_routes(service.roots, config.overrides, service.root, read_json, handler)
        public = PUBLIC_PATHS
    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: http_error},
    )
    policy = GuardPolicy(token=config.token, extra_hosts=config.hosts,
                         allowed_origins=config.origins,
                         public_paths=public)  # fmt: skip
    return RequestGuard(app, policy)


def serve_config(
    host: str, workspaces: tuple[Path, ...], overrides: dict[str, object]
) -> ServeConfig:
    """Refuse to listen beyond loopback without a token. Extra hosts and origins come from
    the user's own settings (never a workspace's file)."""
    token = os.environ.get(TOKEN_ENV, "")
    if not is_loopback(host) and not token:
        raise SeekError(
            f"binding {host} exposes your code to the network: set {TOKEN_ENV} to a secret "
            "token first (clients send `Authorization: Bearer <token>`)"
        )
    user = load_settings(None, overrides=overrides)
    hosts = user.serve_hosts
    if not is_loopback(host):  # a team server is reached by the machine's name
        hosts += tuple({socket.gethostname(), socket.getfqdn()})
    return ServeConfig(workspaces=workspaces, token=token, overrides=overrides,
                       hosts=hosts, origins=user.serve_origins)  # fmt: skip
