"""``seek serve``: a JSON HTTP API for editors and teams (Starlette app, run by uvicorn).

Endpoints (all JSON; errors are ``{"error": {"code": ..., "message": ...}}``):

- ``POST /v1/search`` ``{"query", "path"?, "k"?, "focus"?}`` -> hits as ``seek search --json``
  plus ``workspace`` (the folder's name); this is also what team clients ask (§9)
- ``POST /v1/context`` ``{"question", "path"?, "budget"?}`` -> prompt blocks and the report
- ``GET /v1/status?path=`` -> what the index holds
- ``POST /v1/index`` ``{"path"?, "rebuild"?}`` -> the run's report

Security: it binds 127.0.0.1 unless told otherwise, and any other address requires a token
(``SEEK_TOKEN``; clients send ``Authorization: Bearer <token>``, compared in constant time;
when ``SEEK_TOKEN`` is set it is required on loopback too). Only the workspaces it was
started with can be named: a ``path`` is resolved (``..`` and symlinks included) and must
be one of them. Request bodies, query lengths and request times are limited.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from seek.errors import IndexLockedError, SeekError, WorkspaceError
from seek.indexer import REBUILD, UPDATE, index_workspace
from seek.live import LiveIndexes
from seek.retrieve.context import build_context
from seek.settings import Settings, load_settings
from seek.status import workspace_status

MAX_BODY_BYTES = 64 * 1024
TOO_LARGE = f"request bodies are limited to {MAX_BODY_BYTES} bytes"
MAX_QUERY_CHARS = 2_000
MAX_K = 50
REQUEST_TIMEOUT_S = 30.0
TOKEN_ENV = "SEEK_TOKEN"


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


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


class Service:
    """The library calls behind the endpoints, with per-workspace locking and caching."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self.roots = tuple(p.resolve() for p in config.workspaces)
        self._locks = {root: threading.Lock() for root in self.roots}
        self.live = LiveIndexes()

    def root(self, path: object) -> Path:
        """The allowed workspace a request names (default: the first one)."""
        if path is None or path == "":
            return self.roots[0]
        if not isinstance(path, str):
            raise ApiError(400, "bad_request", "path must be a string")
        candidate = Path(path).expanduser()
        if not candidate.is_absolute():
            candidate = self.roots[0] / candidate
        resolved = Path(os.path.realpath(candidate))
        if resolved not in self.roots:
            raise ApiError(403, "forbidden", f"{path} is not a workspace this server serves")
        return resolved

    def settings(self, root: Path) -> Settings:
        return load_settings(root, overrides=self.config.overrides)

    def search(self, root: Path, query: str, k: int, focus: tuple[str, ...]) -> dict[str, Any]:
        data = self.live.search(root, self.settings(root), query, k, focus).to_json()
        data["workspace"] = root.name  # team clients label hits team:<workspace>/<path>
        return data

    def context(self, root: Path, question: str, budget: int | None) -> dict[str, Any]:
        settings = self.settings(root)
        found = self.live.search(root, settings, question, settings.rerank_top, ())
        return build_context(root, found, settings, budget=budget).to_json()

    def status(self, root: Path) -> dict[str, Any]:
        return workspace_status(root, self.settings(root)).to_json()

    def index(self, root: Path, rebuild: bool) -> dict[str, Any]:
        with self._locks[root]:
            report = index_workspace(root, self.settings(root), mode=REBUILD if rebuild else UPDATE)
        return {
            "summary": report.summary(), "mode": report.mode,
            "rebuild_reason": report.rebuild_reason, "embedded": report.embedded,
            "chunks": report.chunks, "unchanged": report.unchanged, "removed": report.removed,
            "files": report.files, "skipped": report.skipped, "seconds": round(report.seconds, 3),
        }  # fmt: skip


def error_response(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def create_app(config: ServeConfig) -> Starlette:
    service = Service(config)

    def check_token(request: Request) -> None:
        if not config.token:
            return
        header = request.headers.get("authorization", "")
        given = header[7:] if header.lower().startswith("bearer ") else ""
        if not hmac.compare_digest(given.encode(), config.token.encode()):
            raise ApiError(
                401, "unauthorized", "a valid `Authorization: Bearer <token>` is required"
            )

    async def json_body(request: Request) -> dict[str, Any]:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            raise ApiError(
                413, "too_large", f"request bodies are limited to {MAX_BODY_BYTES} bytes"
            )
        body = b""
        async for piece in request.stream():
            body += piece
            if len(body) > MAX_BODY_BYTES:
                raise ApiError(
                    413, "too_large", f"request bodies are limited to {MAX_BODY_BYTES} bytes"
                )
        try:
            data = json.loads(body or b"{}")
        except ValueError as exc:
            raise ApiError(400, "bad_json", "the request body is not valid JSON") from exc
        if not isinstance(data, dict):
            raise ApiError(400, "bad_request", "the request body must be a JSON object")
        return data

    async def run(fn, *args: Any) -> Any:  # noqa: ANN001
        try:
            with anyio.fail_after(REQUEST_TIMEOUT_S):
                return await anyio.to_thread.run_sync(fn, *args, abandon_on_cancel=True)
        except TimeoutError as exc:
            raise ApiError(
                504, "timeout", f"the request took longer than {REQUEST_TIMEOUT_S:g} s"
            ) from exc

    def question_text(data: dict[str, Any], field: str, plural: str) -> str:
        """The body's ``field``: a non-empty string of at most ``MAX_QUERY_CHARS``."""
        text = data.get(field)
        if not isinstance(text, str) or not text.strip():
            raise ApiError(400, "bad_request", f"{field} must be a non-empty string")
        if len(text) > MAX_QUERY_CHARS:
            raise ApiError(400, "too_long", f"{plural} are limited to {MAX_QUERY_CHARS} characters")
        return text

    def handler(endpoint):  # noqa: ANN001, ANN202
        async def wrapped(request: Request) -> JSONResponse:
            try:
                check_token(request)
                return JSONResponse(await endpoint(request))
            except ApiError as exc:
                return error_response(exc.status, exc.code, exc.message)
            except WorkspaceError as exc:
                return error_response(404, "no_workspace", str(exc))
            except IndexLockedError as exc:
                return error_response(409, "locked", str(exc))
            except SeekError as exc:
                return error_response(422, "seek_error", str(exc))

        return wrapped

    async def search(request: Request) -> dict[str, Any]:
        data = await json_body(request)
        query = question_text(data, "query", "queries")
        k = data.get("k", 10)
        if not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise ApiError(400, "bad_request", f"k must be an integer from 1 to {MAX_K}")
        focus = data.get("focus") or []
        if not isinstance(focus, list) or not all(isinstance(f, str) for f in focus):
            raise ApiError(400, "bad_request", "focus must be a list of paths")
        root = service.root(data.get("path"))
        return await run(service.search, root, query, k, tuple(focus))

    async def context(request: Request) -> dict[str, Any]:
        data = await json_body(request)
        question = question_text(data, "question", "questions")
        budget = data.get("budget")
        if budget is not None and (not isinstance(budget, int) or budget < 0):
            raise ApiError(400, "bad_request", "budget must be a non-negative integer")
        root = service.root(data.get("path"))
        return await run(service.context, root, question, budget)

    async def status(request: Request) -> dict[str, Any]:
        return await run(service.status, service.root(request.query_params.get("path")))

    async def index(request: Request) -> dict[str, Any]:
        data = await json_body(request)
        return await run(service.index, service.root(data.get("path")), bool(data.get("rebuild")))

    return Starlette(routes=[
        Route("/v1/search", handler(search), methods=["POST"]),
        Route("/v1/context", handler(context), methods=["POST"]),
        Route("/v1/status", handler(status), methods=["GET"]),
        Route("/v1/index", handler(index), methods=["POST"]),
    ])  # fmt: skip


def serve_config(
    host: str, workspaces: tuple[Path, ...], overrides: dict[str, object]
) -> ServeConfig:
    """Refuse to listen beyond loopback without a token."""
    token = os.environ.get(TOKEN_ENV, "")
    if not is_loopback(host) and not token:
        raise SeekError(
            f"binding {host} exposes your code to the network: set {TOKEN_ENV} to a secret "
            "token first (clients send `Authorization: Bearer <token>`)"
        )
    return ServeConfig(workspaces=workspaces, token=token, overrides=overrides)
