"""The code graph over HTTP (seek.md §2; issues 28 and 44): ``POST /v1/def``,
``/v1/refs``, ``/v1/callers``, ``/v1/callees``, ``/v1/outline``, ``/v1/map``,
``/v1/impact``, ``/v1/tests``, ``/v1/changed``, ``/v1/review`` and ``/v1/history``, the
facade's :class:`seek.workspace.code_graph.GraphResult` (``review``:
:class:`seek.change.review.Review`) as JSON plus ``workspace``.

Bodies (every one may name the workspace with ``path`` and cap its rows with ``limit``):
``def`` ``{"name"}``; ``refs`` ``{"name"}`` or ``{"file", "line"}``; ``callers`` and
``callees`` ``{"file", "line"}``; ``outline`` ``{"file"}``; ``map`` ``{"question"?,
"budget"?}`` (tokens); ``changed`` ``{"ref"?, "staged"?}`` (a git revision, default
HEAD); ``review`` ``{"ref"?, "staged"?, "budget"?}`` (``budget`` in characters, default
``prompt_budget_chars``); ``history`` ``{"subject", "patch"?}`` (a name, ``PATH:LINE`` or
a relative file); ``impact`` ``{"name"}`` or ``{"file", "line"}``, ``"depth"?``; ``tests``
the same, or ``{"file"}`` (its definitions), or ``{"changed": REF, "staged"?}``,
``"depth"?``.
Checked with the servers' shared rules (:mod:`seek.serving.requests`,
:mod:`seek.serving.graph_requests`): ``file`` is workspace-relative and cannot climb out.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.routing import Route

from seek.serving.graph_requests import (
    change_since,
    file_line,
    history_of,
    impact_depth,
    impact_target,
    lookup_target,
    map_budget,
    map_question,
    row_limit,
    tests_of,
)
from seek.serving.requests import integer, json_body, relative_file, run
from seek.untrusted import MAX_BUDGET_CHARS

TOOLS = ("def", "refs", "callers", "callees", "outline", "map", "impact", "changed", "review",
         "history", "tests")  # fmt: skip


def graph_routes(service: Any, handler: Any) -> list[Route]:
    """The routes for :class:`seek.web.api.Service` ``service``, wrapped by the API's
    ``handler`` (JSON errors, never a traceback)."""
    facade = service.workspaces

    def endpoint(tool: str):
        async def answer(request: Request, deadline: float) -> dict[str, Any]:
            data = await json_body(request, deadline)
            limit = row_limit(data)
            if tool in ("def", "refs"):  # read as seek serve --corpus reads them
                call = facade.defs if tool == "def" else facade.refs
                args = (lookup_target(tool, data), limit)
            elif tool in ("callers", "callees"):
                call, args = getattr(facade, tool), (*file_line(data), limit)
            elif tool == "outline":
                call, args = facade.outline, (relative_file(data, "file"), limit)
            elif tool == "changed":
                call, args = facade.changed, (*change_since(data), limit)
            elif tool == "review":
                budget = integer(data, "budget", None, 0, MAX_BUDGET_CHARS)
                call, args = facade.review, (*change_since(data), budget)
            elif tool == "impact":
                call, args = facade.impact, (impact_target(data), impact_depth(data), limit)
            elif tool == "tests":
                subject, ref, staged = tests_of(data)
                call, args = facade.tests, (subject, ref, staged, impact_depth(data), limit)
            elif tool == "history":
                subject, patch = history_of(data)
                call, args = facade.history, (subject, limit, patch)
            else:
                budget = map_budget(data)
                call, args = facade.map, (map_question(data), budget)
            root = service.root(data.get("path"))

            def find() -> dict[str, Any]:
                found = call(root, *args).to_json()
                found["workspace"] = root.name
                return found

            return await run(deadline, find)

        return answer

    return [Route(f"/v1/{tool}", handler(endpoint(tool)), methods=["POST"]) for tool in TOOLS]
