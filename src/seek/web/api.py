"""``seek serve``: a JSON HTTP API for editors and teams (Starlette app, run by uvicorn).

Endpoints (all JSON; errors are ``{"error": {"code": ..., "message": ...}}``; the OpenAPI
document is ``GET /v1/openapi.json``):

- ``POST /v1/search`` ``{"query", "path"?, "k"?, "focus"?}`` -> hits as ``seek search --json``
  plus ``workspace`` (the folder's name); this is also what team clients ask (§9)
- ``POST /v1/context`` ``{"question", "path"?, "budget"?}`` -> prompt blocks and the report
- ``GET /v1/status?path=`` -> what the index holds
- ``POST /v1/index`` ``{"path"?, "rebuild"?}`` -> the run's report (202 when it outlasts the
  request's time limit and goes on in the background; 409 while another run is going)

Security: it binds 127.0.0.1 unless told otherwise, and every request needs a token
(clients send ``Authorization: Bearer <token>``, compared in constant time): ``SEEK_TOKEN``
when set, which any other address requires; else a secret one made for the run on loopback
(issue 43, finding 7; :mod:`seek.store.token_file`), unless ``--no-token``. Host, Origin,
content type and token are checked by :mod:`seek.serving.guard` before any route runs; slow and idle
connections are bounded by :mod:`seek.serving.connections`. Only the workspaces it was
started with can be named: a ``path`` is resolved (``..`` and symlinks included) and must
be one of them. Fields are type-checked strictly (``true`` is not a number, ``"no"`` is not
a boolean). Request bodies (64 KiB, read within 10 s), query lengths and request times
(30 s from the request head) are limited.
"""

from __future__ import annotations

import logging
import os
import socket
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from seek.errors import ApiError, SeekError
from seek.serving import GuardPolicy, RequestGuard
from seek.serving.config import ServeConfig, is_loopback
from seek.serving.guard import error_response
from seek.serving.requests import (
    check_text,
    failure_response,
    focus_paths,
    integer,
    json_body,
    question_text,
    request_deadline,
    run,
)
from seek.settings import load_settings
from seek.untrusted import (
    MAX_BUDGET_CHARS,
    MAX_K,
    MAX_PATH_CHARS,
)
from seek.web.graph import graph_routes
from seek.web.openapi import openapi_document
from seek.web.related import related_route
from seek.workspace import Workspaces
from seek.workspace.team import HOP_HEADER

log = logging.getLogger("seek.serve")

TOKEN_ENV = "SEEK_TOKEN"


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


def create_app(config: ServeConfig) -> RequestGuard:
    """The API behind the request guard (Host, Origin, content type, token)."""
    service = Service(config)

    def handler(endpoint):
        async def wrapped(request: Request) -> Response:
            deadline = request_deadline()
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
        *graph_routes(service, handler),  # def, refs, callers, callees, outline, map
    ]
    public: frozenset[str] = frozenset()
    if config.ui:  # the page shares the API's checks: workspaces, body limits, errors
        from seek.web.ui import PUBLIC_PATHS, ui_routes

        async def read_json(request: Request) -> dict[str, Any]:
            return await json_body(request, request_deadline())

        routes += ui_routes(service.roots, service.workspaces, service.root, read_json, handler)
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
    host: str, workspaces: tuple[Path, ...], overrides: dict[str, object], *, no_token: bool = False
) -> ServeConfig:
    """The server's settings. Its token: ``SEEK_TOKEN`` when set; else, on loopback, a new
    secret one for this run (issue 43, finding 7: loopback is shared by every local user)
    unless ``no_token`` (``--no-token``); beyond loopback there is no serving without
    ``SEEK_TOKEN``. Extra hosts and origins come from the user's own settings (never a
    workspace's file)."""
    from seek.web.launch import new_token

    token = os.environ.get(TOKEN_ENV, "")
    if not is_loopback(host) and not token:
        raise SeekError(
            f"binding {host} exposes your code to the network: set {TOKEN_ENV} to a secret "
            "token first (clients send `Authorization: Bearer <token>`)"
        )
    if no_token and token:
        raise SeekError(f"--no-token and {TOKEN_ENV} contradict: unset {TOKEN_ENV} or drop "
                        "--no-token")  # fmt: skip
    if not token and not no_token:
        token = new_token()
    user = load_settings(None, overrides=overrides)
    hosts = user.serve_hosts
    if not is_loopback(host):  # a team server is reached by the machine's name
        hosts += tuple({socket.gethostname(), socket.getfqdn()})
    return ServeConfig(workspaces=workspaces, token=token, overrides=overrides,
                       hosts=hosts, origins=user.serve_origins)  # fmt: skip
