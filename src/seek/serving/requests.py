"""Reading and checking a JSON request, the same for every seek server (``seek serve``'s API
and page, ``seek corpus serve``): body size and arrival time, strict field types, text
without NUL or lone surrogates, a request's time limit on a worker thread, and the JSON error
for an exception (never a traceback). Limits: 64 KiB bodies read within 10 s, 30 s per
request from its head.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import PurePosixPath
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse

from seek.errors import ApiError, IndexLockedError, SeekError, WorkspaceError
from seek.serving.guard import error_response
from seek.untrusted import MAX_FOCUS, MAX_PATH_CHARS, MAX_QUERY_CHARS, has_lone_surrogates

log = logging.getLogger("seek.serve")

MAX_BODY_BYTES = 64 * 1024
REQUEST_TIMEOUT_S = 30.0
BODY_TIMEOUT_S = 10.0


def request_deadline() -> float:
    """When a request that starts now must be answered (``REQUEST_TIMEOUT_S`` from its head)."""
    return time.monotonic() + REQUEST_TIMEOUT_S


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


def relative_file(data: dict[str, Any], field: str) -> str:
    """The body's ``field``: a workspace-relative ``/`` path that cannot climb out of the
    workspace (not absolute, no ``..``; ``\\`` read as ``/``)."""
    value = data.get(field)
    if not isinstance(value, str) or not value.strip():
        raise ApiError(400, "bad_request", f"{field} must be a non-empty workspace-relative path")
    if len(value) > MAX_PATH_CHARS:
        raise ApiError(400, "too_long", f"paths are limited to {MAX_PATH_CHARS} characters")
    name = PurePosixPath(check_text(value, field).strip().replace("\\", "/"))
    if name.is_absolute() or ".." in name.parts or name.as_posix() in ("", "."):
        raise ApiError(400, "bad_request", f"{field} must be workspace-relative, without '..'")
    return name.as_posix()


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
