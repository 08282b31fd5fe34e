"""``POST /v1/related`` ``{"file", "line", "path"?, "k"?}``: the code most like the chunk at
a file's line, in other files (``seek related`` over HTTP; the editor's "Find related code",
issue 30). Hits are shaped like ``/v1/search``'s, plus ``workspace``.

Why its own module: the editor needs it and the API's module is shared; the route reuses
the servers' shared checks (:mod:`seek.serving.requests`: body limits, strict types, time
limit) and the API's allowed workspaces. ``file`` is workspace-relative and may not climb
out of the workspace (``..``) or be absolute.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from starlette.requests import Request
from starlette.routing import Route

from seek.errors import ApiError
from seek.serving.requests import check_text, integer, json_body, run
from seek.untrusted import MAX_K, MAX_LINE, MAX_PATH_CHARS


def related_route(service: Any, handler: Any) -> Route:
    """The route for :class:`seek.web.api.Service` ``service``, wrapped by the API's
    ``handler`` (JSON errors, never a traceback)."""

    async def related(request: Request, deadline: float) -> dict[str, Any]:
        data = await json_body(request, deadline)
        file = data.get("file")
        if not isinstance(file, str) or not file.strip():
            raise ApiError(400, "bad_request", "file must be a non-empty workspace-relative path")
        if len(file) > MAX_PATH_CHARS:
            raise ApiError(400, "too_long", f"paths are limited to {MAX_PATH_CHARS} characters")
        name = PurePosixPath(check_text(file, "file").replace("\\", "/"))
        if name.is_absolute() or ".." in name.parts:
            raise ApiError(400, "bad_request", "file must be workspace-relative, without '..'")
        line = integer(data, "line", 0, 1, MAX_LINE)
        k = integer(data, "k", 10, 1, MAX_K)
        root = service.root(data.get("path"))

        def find() -> dict[str, Any]:
            found = service.workspaces.related(root, name.as_posix(), line, k).to_json()
            found["workspace"] = root.name
            return found

        return await run(deadline, find)

    return Route("/v1/related", handler(related), methods=["POST"])
