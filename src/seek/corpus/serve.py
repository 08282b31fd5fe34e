"""``seek serve --corpus URI``: the HTTP API over a corpus (issue 17, "Serve it").

The same request checks, limits and error shape as ``seek serve`` of workspaces
(:mod:`seek.web.api`, :mod:`seek.serving.guard`), with:

- ``POST /v1/search`` ``{"query", "k"?, "repos"?, "paths"?}`` -> the hits of
  ``seek search --json``, each with its ``repo``; ``repos`` limits the search to those
  repositories, ``paths`` to files under those path prefixes;
- ``GET /v1/repos`` -> the repositories with their file and chunk counts;
- ``GET /v1/status`` -> the corpus's URI, table version and row count;
- ``POST /v1/def``, ``/v1/refs``, ``/v1/callers``, ``/v1/callees``, ``/v1/outline`` and
  ``/v1/map`` (issue 28) -> ``seek corpus def|refs|callers|callees|outline|map --json`` over
  one repository: the workspace server's bodies (:mod:`seek.serving.graph_requests`) plus a
  required ``repo``, answered by :func:`seek.corpus.graph.lookup`. Each repository's graph
  is kept until its manifest changes (:class:`seek.corpus.graph.RepoGraphs`).
  ``/v1/refs`` and ``/v1/callers`` answer across the corpus (issue 45): the uses in ``repo``
  and in every repository importing it, unless ``"this_repo": true``;
  ``POST /v1/dependents`` ``{"repo", "limit"?}`` -> ``seek corpus dependents --json``.
  Their joint graphs are kept until a repository they read changes
  (:class:`seek.corpus.org.JointGraphs`).

Several servers can read one corpus while an indexer writes it: each sees the last committed
table version, and checks for a newer one at most every ``REFRESH_S`` (so a finished commit
is searchable within that time, without a reopen per request). The repositories
(``corpus.json`` and every manifest: one storage read each) are read again at most every
``REFRESH_S`` too, for ``/v1/repos`` and the ``repos`` check of ``/v1/search`` (issue 27,
finding 10: they were read from S3 on every request).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from seek.corpus.catalog import Catalog
from seek.corpus.graph import RepoGraphs, lookup
from seek.corpus.location import CorpusLocation, check_repo_name
from seek.corpus.org import JointGraphs, cross_lookup
from seek.corpus.search import CorpusSearcher
from seek.errors import ApiError, CorpusError
from seek.retrieve.types import SearchResult
from seek.serving import GuardPolicy, RequestGuard
from seek.serving.config import ServeConfig
from seek.serving.graph_requests import lookup_target, map_budget, row_limit
from seek.serving.guard import error_response
from seek.serving.requests import (
    check_text,
    failure_response,
    integer,
    json_body,
    question_text,
    request_deadline,
    run,
)
from seek.settings import load_settings
from seek.untrusted import MAX_K, MAX_PATH_CHARS, MAX_QUERY_CHARS
from seek.workspace.code_graph import GraphResult

REFRESH_S = 5.0
MAX_REPOS = 1_000
GRAPH_TOOLS = {"def": "defs", "refs": "refs", "callers": "callers", "callees": "callees",
               "outline": "outline", "map": "map", "dependents": "dependents"}  # fmt: skip
"""Route -> the tool of :func:`seek.corpus.graph.lookup` (``dependents``, and ``refs`` or
``callers`` across repositories: of :func:`seek.corpus.org.cross_lookup`)."""
CROSS_TOOLS = {"refs_across": "refs", "callers_across": "callers", "dependents": "dependents"}


def this_repo(data: dict[str, Any]) -> bool:
    """The body's optional ``this_repo``: answer from ``repo`` alone."""
    value = data.get("this_repo", False)
    if not isinstance(value, bool):
        raise ApiError(400, "bad_request", "this_repo must be true or false")
    return value


def name_list(data: dict[str, Any], field: str) -> tuple[str, ...]:
    value = data.get(field)
    if value is None:
        return ()
    if (
        not isinstance(value, list)
        or len(value) > MAX_REPOS
        or not all(isinstance(v, str) and 0 < len(v) <= MAX_PATH_CHARS for v in value)
    ):
        message = f"{field} must be a list of at most {MAX_REPOS} non-empty strings"
        raise ApiError(400, "bad_request", message)
    return tuple(check_text(v, field) for v in value)


def repo_field(data: dict[str, Any]) -> str:
    """The body's required ``repo``: one repository's name, as ``seek corpus add`` allows."""
    repo = data.get("repo")
    if not isinstance(repo, str) or not repo:
        message = "repo must name one repository of the corpus (GET /v1/repos lists them)"
        raise ApiError(400, "bad_request", message)
    try:
        return check_repo_name(check_text(repo, "repo"))
    except CorpusError as exc:
        raise ApiError(400, "bad_request", str(exc)) from exc


class CorpusService:
    def __init__(self, uri: str, overrides: dict[str, object] | None) -> None:
        self.location = CorpusLocation(uri)
        self.settings = load_settings(None, overrides=overrides or {})
        self.searcher = CorpusSearcher(self.location, self.settings)
        self._refreshed = time.monotonic()
        self._guard = threading.Lock()
        self._repos: dict[str, Any] | None = None
        self._repos_read = 0.0
        self._repos_guard = threading.Lock()
        self.graphs = RepoGraphs(self.location, self._stamps)
        self.joints = JointGraphs(self.location, self._stamps)

    def _fresh(self) -> None:
        with self._guard:
            if time.monotonic() - self._refreshed >= REFRESH_S:
                self.searcher.refresh()
                self._refreshed = time.monotonic()

    def _known(self, repos: tuple[str, ...]) -> None:
        known = {repo["name"] for repo in self.repos()["repos"]}
        unknown = [r for r in repos if r not in known]
        if unknown:
            raise ApiError(404, "no_repo", f"the corpus has no repository {', '.join(unknown)}")

    def search(self, query: str, k: int, repos: tuple[str, ...], paths: tuple[str, ...]) -> dict:
        return self.hits(query, k, repos, paths).to_json()

    def hits(
        self, query: str, k: int, repos: tuple[str, ...], paths: tuple[str, ...]
    ) -> SearchResult:
        """The search's result (``seek mcp --corpus`` prints it as text)."""
        self._known(repos)
        self._fresh()
        return self.searcher.search(query, k, repos=repos, prefixes=paths)

    def graph(
        self, tool: str, repo: str, target: str, limit: int | None, budget: int | None = None
    ) -> dict[str, Any]:
        """``seek corpus TOOL URI TARGET --repo REPO --json``'s object, from the graphs this
        server keeps (each until its repository's manifest changes)."""
        return {"repo": repo, **self.answer(tool, repo, target, limit, budget).to_json()}

    def answer(
        self, tool: str, repo: str, target: str, limit: int | None, budget: int | None = None
    ) -> GraphResult:
        """:meth:`graph`'s answer as the library gives it (``seek mcp --corpus`` prints its
        text)."""
        self._known((repo,))  # from the snapshot, without a storage read per request
        if tool in CROSS_TOOLS:
            return cross_lookup(self.location, repo, CROSS_TOOLS[tool], target, limit,
                                self.joints)  # fmt: skip
        return lookup(self.location, repo, tool, target, limit, self.graphs, budget)

    def _stamps(self) -> dict[str, object]:
        return {repo["name"]: repo["updated_at"] for repo in self.repos()["repos"]}

    def repos(self) -> dict[str, Any]:
        """The repositories and their counts, as read at most ``REFRESH_S`` ago."""
        with self._repos_guard:  # one reader at a time: a burst of requests reads once
            if self._repos is None or time.monotonic() - self._repos_read >= REFRESH_S:
                self._repos = self._read_repos()
                self._repos_read = time.monotonic()
            return self._repos

    def _read_repos(self) -> dict[str, Any]:
        catalog = Catalog(self.location)
        out = []
        for name in catalog.repos():
            manifest = catalog.load_manifest(name)
            out.append({"name": name, "files": len(manifest.files),
                        "chunks": sum(s.chunks for s in manifest.files.values()),
                        "updated_at": manifest.updated_at})  # fmt: skip
        return {"repos": out}

    def status(self) -> dict[str, Any]:
        self._fresh()
        table = self.searcher.table.open()
        return {"uri": self.location.uri, "version": int(table.version),
                "rows": int(table.count_rows()),
                "vector_index": self.searcher.table.has_vector_index()}  # fmt: skip


def create_corpus_app(uri: str, config: ServeConfig) -> RequestGuard:
    service = CorpusService(uri, config.overrides)

    def handler(endpoint):
        async def wrapped(request: Request) -> Response:
            deadline = request_deadline()
            try:
                fn, args = await endpoint(request, deadline)
                return JSONResponse(await run(deadline, fn, *args))
            except Exception as exc:
                return failure_response(request, exc)

        return wrapped

    async def search(request: Request, deadline: float):
        data = await json_body(request, deadline)
        query = question_text(data, "query", "queries")
        k = integer(data, "k", 10, 1, MAX_K)
        return service.search, (query, k, name_list(data, "repos"), name_list(data, "paths"))

    async def repos(request: Request, deadline: float):
        return service.repos, ()

    async def status(request: Request, deadline: float):
        return service.status, ()

    def graph(tool: str):
        async def answer(request: Request, deadline: float):
            data = await json_body(request, deadline)
            limit = row_limit(data)  # checked in the workspace server's order
            budget = map_budget(data) if tool == "map" else None
            target = lookup_target(tool, data) if tool != "dependents" else ""
            name = GRAPH_TOOLS[tool]
            if tool in ("refs", "callers") and not this_repo(data):
                name = f"{name}_across"
            return service.graph, (name, repo_field(data), target, limit, budget)

        return answer

    routes = [
        Route("/v1/search", handler(search), methods=["POST"]),
        Route("/v1/repos", handler(repos), methods=["GET"]),
        Route("/v1/status", handler(status), methods=["GET"]),
        *(Route(f"/v1/{t}", handler(graph(t)), methods=["POST"]) for t in GRAPH_TOOLS),
    ]

    async def not_found(request: Request, exc: Exception) -> JSONResponse:
        status = getattr(exc, "status_code", 404)
        code = {404: "not_found", 405: "method_not_allowed"}.get(status, "bad_request")
        return error_response(status, code, str(getattr(exc, "detail", "")))

    from starlette.exceptions import HTTPException

    app = Starlette(routes=routes, exception_handlers={HTTPException: not_found})
    policy = GuardPolicy(token=config.token, extra_hosts=config.hosts,
                         allowed_origins=config.origins)  # fmt: skip
    return RequestGuard(app, policy)


__all__ = ["MAX_QUERY_CHARS", "create_corpus_app"]
