"""``seek mcp --corpus URI``: the MCP server over a corpus (issue 45, deliver 3: "the same
through HTTP and MCP when a corpus is served").

An organisation's agent asks the corpus what ``seek serve --corpus`` answers over HTTP:
``search`` (every repository, or some), ``repos``, ``def``, ``refs`` and ``callers`` (across
the corpus: the uses in ``repo`` and in every repository that imports it, unless
``this_repo``; :mod:`seek.corpus.org`) and ``dependents``. The questions go to the HTTP
server's :class:`seek.corpus.serve.CorpusService`, so both front ends keep the same
snapshot of the repositories' stamps (re-read at most every few seconds) and the same
graphs between calls (a repository's until its manifest changes, a joint graph until one of
the repositories it read changes).

As the workspace tools (:mod:`seek.mcp.graph_tools`): arguments strictly typed and bounded,
answers as the CLI's text (:meth:`seek.workspace.code_graph.GraphResult.to_text`, uses
grouped by repository, file and enclosing definition), text from the repositories escaped,
and a refused question a tool error of one sentence. No file of this machine is named: a
``path`` is a key into a repository's stored graph, never opened.
"""

from __future__ import annotations

from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from seek._version import __version__
from seek.errors import SeekError
from seek.mcp.graph_tools import File, Limit, Line, Name
from seek.untrusted import MAX_K, MAX_PATH_CHARS, MAX_QUERY_CHARS, check_query, printable

MAX_REPO_CHARS = 128
"""A repository's name, as `seek corpus add` allows it (:func:`check_repo_name`)."""
MAX_LISTED = 1_000
"""Repositories or path prefixes one search may name (as ``POST /v1/search``)."""

Repo = Annotated[str, Field(min_length=1, max_length=MAX_REPO_CHARS)]
Query = Annotated[str, Field(max_length=MAX_QUERY_CHARS)]
Count = Annotated[int, Field(ge=1, le=MAX_K, strict=True)]
Flag = Annotated[bool, Field(strict=True)]
Repos = Annotated[list[Repo] | None, Field(max_length=MAX_LISTED)]
Prefixes = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=MAX_PATH_CHARS)]] | None,
    Field(max_length=MAX_LISTED),
]

INSTRUCTIONS = (
    "seek answers questions about an organisation's repositories, indexed together as one "
    "corpus. `repos` lists them. `search` finds the code that answers a question in all of "
    "them (or those named). `def`, `refs`, `callers` and `dependents` read the code graph: "
    "`refs` and `callers` of a definition list its uses in its repository and in every "
    "repository that imports it, grouped by repository; `dependents` names the repositories "
    "that import a repository and what they use of it."
)


def build_corpus_server(uri: str, overrides: dict[str, object] | None = None) -> MCPServer:
    """The MCP server answering from the corpus at ``uri``."""
    from seek.corpus.location import check_repo_name
    from seek.corpus.serve import CorpusService

    service = CorpusService(uri, overrides)
    server = MCPServer(name="seek", version=__version__, instructions=INSTRUCTIONS)

    async def call(method: Any, *args: Any) -> Any:
        try:
            return await anyio.to_thread.run_sync(method, *args)
        except SeekError as exc:  # ApiError and CorpusError too: one sentence each
            raise ToolError(str(exc)) from exc

    async def graph(tool: str, repo: str, target: str, limit: int) -> str:
        def answer() -> str:
            check_repo_name(repo)  # before the catalog is asked: the name's own fault
            check_query(target, "the target")
            return service.answer(tool, repo, target, limit).to_text()

        return await call(answer)

    @server.tool()
    async def search(
        query: Query, repos: Repos = None, paths: Prefixes = None, k: Count = 10
    ) -> str:
        """Find the code that answers a question, in every repository of the corpus.

        Use it before reading files when you need to know where something is implemented,
        configured or used: pass a plain-language question or an identifier. Returns up to
        `k` chunks, best first: `repo:path:start-end` (1-based lines), a score, the
        definition the chunk lies in, and the chunk's first lines. `repos` limits it to those
        repositories, `paths` to files under those path prefixes."""
        from seek.mcp import format_hits

        if not query.strip():
            raise ToolError("query is empty: pass a question or an identifier")

        def found() -> Any:  # the corpus searcher's SearchResult
            wanted = tuple(check_query(p, "a path") for p in paths or ())
            return service.hits(query, k, tuple(repos or ()), wanted)

        return format_hits(await call(found), lambda hit: f"{hit.repo}:{hit.path}")

    @server.tool()
    async def repos() -> str:
        """The corpus's repositories, each with its file and chunk counts: the names the
        other tools take as `repo`."""
        listed = (await call(service.repos))["repos"]
        if not listed:
            return "The corpus has no repository yet."
        return "\n".join(
            f"{printable(r['name'])}  {r['files']} files, {r['chunks']} chunks" for r in listed
        )

    @server.tool(name="def")
    async def definition(name: Name, repo: Repo, limit: Limit = 20) -> str:
        """Where a function, class, method, type or constant is defined in the repository
        `repo`: definition sites only (`path:line-end_line  kind  Container.name` and the
        signature line), best first. `Container.name` narrows it (`FlagSet.Parse`)."""
        return await graph("defs", repo, name, limit)

    @server.tool()
    async def refs(target: Name, repo: Repo, this_repo: Flag = False, limit: Limit = 50) -> str:
        """Who in the organisation uses a symbol of the repository `repo`: `target` is its
        name, or `path:line` of its definition or of a use of it (a path of `repo`, 1-based
        line).

        Use it instead of grepping every repository before changing a shared library: the
        uses in `repo` first, then in each repository that imports it, grouped by repository,
        file and enclosing definition, calls marked, `line:column` and the line of code each.
        `this_repo`: only the uses inside `repo`. Notes say what could not be bound for sure
        (a name two repositories provide)."""
        return await graph("refs" if this_repo else "refs_across", repo, target, limit)

    @server.tool()
    async def callers(
        path: File, line: Line, repo: Repo, this_repo: Flag = False, limit: Limit = 50
    ) -> str:
        """The functions that call the function at `path:line` of the repository `repo` (its
        name's line or any line inside it), in `repo` and in every repository that imports
        it, grouped by repository (`this_repo`: in `repo` alone). The first line names the
        definition the line was taken to mean."""
        tool = "callers" if this_repo else "callers_across"
        return await graph(tool, repo, f"{path}:{line}", limit)

    @server.tool()
    async def dependents(repo: Repo, limit: Limit = 50) -> str:
        """The repositories that import what the repository `repo` provides (its packages,
        modules, crates...): for each, how many of its files import it, how many of its uses
        bind to `repo`'s definitions, and the names it uses most. Use it to learn who a
        change to a shared library reaches."""
        return await graph("dependents", repo, "", limit)

    return server


def run_corpus_stdio(uri: str, overrides: dict[str, object] | None = None) -> None:
    from seek.mcp.stdio import run_stdio as serve

    anyio.run(serve, build_corpus_server(uri, overrides))
