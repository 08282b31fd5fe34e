"""The page's routes: the static files and a small JSON/streaming API under ``/ui/``
(issue 16). They sit behind the same request guard as ``seek serve``'s API (Host, Origin,
content type, token), so a foreign page can neither read nor drive them.

Streams (index progress, the answer) are newline-delimited JSON read with ``fetch``: unlike
``EventSource`` it can send the ``Authorization`` header a token-protected server needs.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from importlib import resources
from pathlib import Path
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from seek.errors import ApiError, ChatError, SeekError, SettingsError
from seek.redact import origin
from seek.serving.requests import question_text
from seek.web import user_config
from seek.web.adapter import Page
from seek.workspace import Workspaces

STATIC = {"index.html": "text/html", "ui.js": "text/javascript", "ui.css": "text/css"}
PUBLIC_PATHS = frozenset(("/", *(f"/ui/static/{name}" for name in STATIC)))
"""Fetched without the token (they hold no data); the page then sends the token it finds
after ``#token=`` in its address with every API call."""
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
POLL_S = 0.25
_SESSION_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")

Json = dict[str, Any]
Endpoint = Callable[[Request, Json], Awaitable[Any]]


def ui_routes(
    roots: tuple[Path, ...],
    facade: Workspaces,
    root_of: Callable[[object], Path],
    read_json: Callable[[Request], Awaitable[Json]],
    handler: Callable[[Endpoint], Any],
) -> list[Route]:
    """The page's routes; ``facade`` is the API's own (one searcher per workspace in the
    process), and ``root_of``, ``read_json`` and ``handler`` are the API's own checks
    (allowed workspaces, body limits, JSON errors), so both refuse alike."""
    spaces = Page(facade)

    async def page(request: Request) -> Response:
        name = request.path_params.get("name", "index.html")
        if name not in STATIC:
            return Response("not found", status_code=404, media_type="text/plain")
        body = resources.files("seek.web").joinpath("static", name).read_bytes()
        return Response(body, media_type=STATIC[name], headers={
            "Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
            "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})  # fmt: skip

    def thread(fn: Callable[..., Any], *args: Any) -> Awaitable[Any]:
        return anyio.to_thread.run_sync(fn, *args)

    async def workspaces(request: Request, data: Json) -> Json:
        return {"workspaces": [{"path": str(r), "name": r.name} for r in roots]}

    async def status(request: Request, data: Json) -> Json:
        return await thread(facade.status_json, root_of(request.query_params.get("path")))

    async def index(request: Request, data: Json) -> Json:
        rebuild = data.get("rebuild", False)
        if not isinstance(rebuild, bool):
            raise SettingsError("rebuild must be true or false")
        return await thread(spaces.start_index, root_of(data.get("path")), rebuild)

    async def cancel(request: Request, data: Json) -> Json:
        root = root_of(data.get("path"))
        if not spaces.cancel(root):
            raise SettingsError("no run started from this page is going (a run started "
                                "elsewhere stops with Ctrl-C where it runs)")  # fmt: skip
        return {"cancelling": True}

    async def settings(request: Request, data: Json) -> Json:
        root = root_of(request.query_params.get("path") or data.get("path"))
        notes: list[str] = []
        if request.method == "POST":
            changes = data.get("changes")
            if not isinstance(changes, dict):
                raise SettingsError("changes must be an object of setting names and values")
            try:  # before anything is written: a bad value is the request's fault
                changes = user_config.check_changes(changes)
            except SettingsError as exc:
                raise ApiError(400, "bad_setting", str(exc)) from exc
            notes = await thread(user_config.save, changes, root, facade.overrides)
        effective, problems = await thread(user_config.effective, root, facade.overrides)
        return {"settings": user_config.describe(effective), "notes": problems + notes,
                "config_file": str(user_config.user_config_path())}  # fmt: skip

    async def search(request: Request, data: Json) -> Json:
        query = data.get("query")
        if not isinstance(query, str) or not query.strip():
            raise SettingsError("type something to search for")
        query = question_text(data, "query", "queries")  # the API's limits (issue 27)
        return await thread(spaces.search_page, root_of(data.get("path")), query)

    async def progress(request: Request) -> Response:
        root = root_of(request.query_params.get("path"))

        async def events() -> AsyncIterator[bytes]:
            last = None
            while True:
                state = await thread(spaces.progress, root)
                if state["source"] == "none" or not state["running"]:
                    foreign = await thread(spaces.foreign_writer, root)
                    if foreign["running"]:
                        state = foreign
                line = json.dumps(state)
                if line != last:
                    yield (line + "\n").encode()
                    last = line
                if await request.is_disconnected():
                    return
                await anyio.sleep(POLL_S if state["running"] else 1.0)

        return StreamingResponse(events(), media_type="application/x-ndjson",
                                 headers={"Cache-Control": "no-store"})  # fmt: skip

    async def ask(request: Request) -> Response:
        data = await read_json(request)
        root = root_of(data.get("path"))
        question, session = data.get("question"), data.get("session") or ""
        if not isinstance(question, str) or not question.strip():
            raise SettingsError("type a question")
        question = question_text(data, "question", "questions")
        if not isinstance(session, str) or len(session) > 64 or set(session) - _SESSION_CHARS:
            raise SettingsError("session must be up to 64 letters, digits, '_', '.' or '-'")
        lines: queue.Queue[Json | None] = queue.Queue()

        def work() -> None:
            try:
                if not facade.settings(root).chat_model:
                    raise SettingsError(
                        "no chat model is configured: set chat_model in Settings (or in "
                        f"{user_config.user_config_path()}), e.g. llama3 with Ollama running"
                    )
                done = spaces.ask(root, question, session,
                                  lambda piece: lines.put({"piece": piece}),
                                  lambda sources: lines.put(sources))  # fmt: skip
                lines.put({"done": True, **done})
            except ChatError as exc:
                s = facade.settings(root)
                lines.put({"error": f"{exc} (settings chat_provider={s.chat_provider}, "
                                    f"chat_url={origin(s.chat_url) if s.chat_url else 'default'}, "
                                    f"chat_model={s.chat_model})"})  # fmt: skip
            except SeekError as exc:
                lines.put({"error": str(exc)})
            except Exception as exc:  # shown in the page, never a traceback
                lines.put({"error": f"internal error ({type(exc).__name__})"})
            finally:
                lines.put(None)

        threading.Thread(target=work, daemon=True).start()

        async def events() -> AsyncIterator[bytes]:
            while (item := await thread(lines.get)) is not None:
                yield (json.dumps(item) + "\n").encode()

        return StreamingResponse(events(), media_type="application/x-ndjson")

    def wrap(endpoint: Endpoint, body: bool) -> Any:
        async def call(request: Request, deadline: float) -> Any:
            data = await read_json(request) if body and request.method == "POST" else {}
            return await endpoint(request, data)

        return handler(call)

    def streamed(endpoint: Callable[[Request], Awaitable[Response]]) -> Any:
        async def call(request: Request, deadline: float) -> Any:
            return await endpoint(request)

        return handler(call)

    return [
        Route("/", page, methods=["GET"]),
        Route("/ui/static/{name}", page, methods=["GET"]),
        Route("/ui/api/workspaces", wrap(workspaces, False), methods=["GET"]),
        Route("/ui/api/status", wrap(status, False), methods=["GET"]),
        Route("/ui/api/index", wrap(index, True), methods=["POST"]),
        Route("/ui/api/cancel", wrap(cancel, True), methods=["POST"]),
        Route("/ui/api/settings", wrap(settings, True), methods=["GET", "POST"]),
        Route("/ui/api/search", wrap(search, True), methods=["POST"]),
        Route("/ui/api/progress", streamed(progress), methods=["GET"]),
        Route("/ui/api/ask", streamed(ask), methods=["POST"]),
    ]
