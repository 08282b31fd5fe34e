"""``seek mcp``: an MCP server on stdio for coding agents (official ``mcp`` SDK).

Tools: ``search`` (ranked chunks), ``context`` (labelled blocks for a question),
``related`` (code like a file's line) and ``status`` (what the index holds). A workspace is
indexed on its first use and brought up to date before each search (milliseconds when
nothing changed); concurrent calls on one workspace share one build. Failures come back as
tool errors with one actionable sentence.

Confinement: an agent can be steered by what it reads (prompt injection), so a ``path`` must
lie inside a root the client declared (the MCP roots capability) or, when it declares none,
inside the folder the server started in or a folder of the ``mcp_roots`` setting (user
config, environment or flags only: a workspace cannot widen it). Arguments are type-checked
strictly and questions are capped like the HTTP API's. Lines that are not JSON-RPC get a
JSON-RPC error (:mod:`seek.mcp.stdio`). Tool results are text an agent's UI may print as it
stands, so control characters from the workspace (ESC, BEL, C1, bidirectional overrides) come
back escaped, as in the CLI's text output (:mod:`seek.untrusted`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated
from urllib.parse import unquote, urlparse

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from seek._version import __version__
from seek.errors import SeekError
from seek.mcp.graph_tools import register_graph_tools, workspace_relative
from seek.retrieve.types import Hit, SearchResult
from seek.settings import load_settings
from seek.settings.trust import describe_line
from seek.untrusted import (
    MAX_BUDGET_CHARS,
    MAX_FOCUS,
    MAX_K,
    MAX_PATH_CHARS,
    MAX_QUERY_CHARS,
    check_query,
    printable,
    printable_text,
)
from seek.workspace import Workspaces, resolve_workspace

SNIPPET_LINES = 12
ROOTS_TIMEOUT_S = 5.0

Query = Annotated[str, Field(max_length=MAX_QUERY_CHARS)]
Count = Annotated[int, Field(ge=1, le=MAX_K, strict=True)]
Budget = Annotated[int | None, Field(ge=0, le=MAX_BUDGET_CHARS, strict=True)]
PathArg = Annotated[str | None, Field(max_length=MAX_PATH_CHARS)]
Focus = Annotated[
    list[Annotated[str, Field(max_length=MAX_PATH_CHARS)]] | None, Field(max_length=MAX_FOCUS)
]

INSTRUCTIONS = (
    "seek searches a local code index. Call `search` with a question in plain words or an "
    "identifier to get the few places in the code that answer it (file path, 1-based line "
    "range, score, and the first lines of each chunk); open the files at those lines for "
    "more. The workspace is indexed on first use."
)


class McpWorkspaces(Workspaces):
    """The facade plus MCP's rule for which folder a call may name."""

    def __init__(self, default_root: Path, overrides: dict[str, object] | None = None) -> None:
        super().__init__(overrides)
        self.default_root = Path(default_root).resolve()
        user = load_settings(None, overrides=self.overrides)
        self.allowed = (self.default_root,) + tuple(
            Path(p).expanduser().resolve() for p in user.mcp_roots
        )

    def root(self, path: str | None, declared: tuple[Path, ...] | None = None) -> Path:
        """The workspace a call names, which must lie inside an allowed folder: the client's
        declared roots, else the start folder and ``mcp_roots``."""
        allowed = declared or self.allowed
        if not path:
            default = self.default_root
            if not any(default.is_relative_to(a) for a in allowed):
                default = allowed[0]
            return resolve_workspace(default)
        check_query(path, "path")
        try:
            candidate = Path(path).expanduser()
        except RuntimeError:  # "~nosuchuser"
            candidate = Path(path)
        if not candidate.is_absolute():
            candidate = self.default_root / candidate
        resolved = candidate.resolve()
        if not any(resolved.is_relative_to(a) for a in allowed):
            where = "the client's roots" if declared else "the folder seek mcp started in"
            raise SeekError(
                f"{path} is outside {where}; add it to the mcp_roots setting in your user "
                "config to allow it"
            )
        return resolve_workspace(resolved)


def format_hits(result: SearchResult, where: Callable[[Hit], str] | None = None) -> str:
    """Compact text an agent reads cheaply: one header line per hit (with the qualified name
    of its enclosing definition when it has one), then its first lines. ``where``: the
    hit's file as named in its header (default: its path; a corpus's hit: ``repo:path``)."""
    if not result.hits:
        return "No matching code." + "".join(f"\nnote: {printable(n)}" for n in result.notes)
    blocks = []
    for rank, hit in enumerate(result.hits, 1):
        lines = hit.content.split("\n")
        shown = "\n".join(lines[:SNIPPET_LINES])
        more = f"\n… {len(lines) - SNIPPET_LINES} more lines" if len(lines) > SNIPPET_LINES else ""
        symbol = f" {printable(hit.symbol.qualified)}" if hit.symbol else ""
        blocks.append(
            f"{rank}. {printable(where(hit) if where else hit.path)}:{hit.start_line}-"
            f"{hit.end_line} "
            f"(score {hit.score:.4f}){symbol}\n"
            f"{printable_text(shown)}{more}"
        )
    notes = "".join(f"\nnote: {printable(n)}" for n in result.notes)
    return "\n\n".join(blocks) + notes


async def declared_roots(ctx: Context | None) -> tuple[Path, ...] | None:
    """The client's ``file://`` roots (None when it declares the capability not or fails to
    list them: then the server's own folders apply)."""
    if ctx is None:
        return None
    caps = ctx.client_capabilities
    if caps is None or caps.roots is None:
        return None
    try:
        with anyio.fail_after(ROOTS_TIMEOUT_S):
            listed = await ctx.session.list_roots()
    except Exception:  # no answer means no declared roots
        return None
    roots = [
        Path(unquote(urlparse(str(root.uri)).path)).resolve()
        for root in listed.roots
        if str(root.uri).startswith("file://")
    ]
    return tuple(roots) or None


def build_server(default_root: Path, overrides: dict[str, object] | None = None) -> MCPServer:
    workspaces = McpWorkspaces(default_root, overrides)
    server = MCPServer(name="seek", version=__version__, instructions=INSTRUCTIONS)

    @server.tool()
    async def search(
        query: Query,
        path: PathArg = None,
        k: Count = 10,
        focus: Focus = None,
        ctx: Context | None = None,
    ) -> str:
        """Find the code that answers a question about a codebase.

        Use it before reading files when you need to know where something is implemented,
        configured, defined or used: pass a plain-language question ("how are retries
        configured?") or an identifier ("HttpClient", "parse_config"). Returns up to `k`
        chunks, best first: `path:start-end` (1-based lines), a score, the definition the
        chunk lies in (`Class.method`, when it lies in one), and the chunk's first lines.
        `path` is the workspace folder (default: the server's folder); `focus` lists
        workspace-relative files the question is about (they get extra passes).
        """
        if not query.strip():
            raise ToolError("query is empty: pass a question or an identifier")
        try:  # the facade checks the query (one check per search)
            root = workspaces.root(path, await declared_roots(ctx))
            result = await anyio.to_thread.run_sync(
                workspaces.search, root, query, k, tuple(focus or ())
            )
        except SeekError as exc:
            raise ToolError(str(exc)) from exc
        return format_hits(result)

    @server.tool()
    async def context(
        question: Query, path: PathArg = None, budget: Budget = None, ctx: Context | None = None
    ) -> str:
        """Gather the code a question needs, as labelled blocks ready to read.

        Use it when you want to understand how something works rather than find one place:
        it returns whole functions or classes around the best matches (each headed
        `path (lines a-b)`, then ` · Class.method` when it lies in a definition, in a fenced
        block, imports included), within `budget` characters
        (default 12,000), then a one-line report of what was weighed.
        """
        if not question.strip():
            raise ToolError("question is empty: ask about the code in plain words")
        try:  # the facade checks the question
            root = workspaces.root(path, await declared_roots(ctx))
            result = await anyio.to_thread.run_sync(workspaces.context, root, question, budget)
        except SeekError as exc:
            raise ToolError(str(exc)) from exc
        body = result.prompt() or "No code scored above the threshold."
        return printable_text(f"{body}\n\n{result.context_line()}")  # workspace text

    @server.tool()
    async def related(
        path: Annotated[str, Field(max_length=MAX_PATH_CHARS)],
        line: Annotated[int, Field(strict=True)],  # the library says why 0 is wrong
        workspace: PathArg = None,
        k: Count = 10,
        ctx: Context | None = None,
    ) -> str:
        """Find code like the code at a location: "where else is this pattern?", "who does
        the same?". `path` is the file (workspace-relative, or absolute) and `line` a 1-based
        line in it; the chunk holding that line is matched by meaning and by the names it
        uses, and up to `k` chunks of other files come back, best first, as `search` prints
        them. `workspace` is the workspace folder (default: the server's)."""
        try:
            check_query(path, "path")
            root = workspaces.root(workspace, await declared_roots(ctx))
            file = workspace_relative(root, path)
            result = await anyio.to_thread.run_sync(workspaces.related, root, file, line, k)
        except SeekError as exc:
            raise ToolError(str(exc)) from exc
        return format_hits(result)

    @server.tool()
    async def status(path: PathArg = None, ctx: Context | None = None) -> str:
        """What seek's index of a workspace holds: files, chunks, model, last update, files
        left out by reason, and whether the workspace's own settings file is trusted (the
        user runs `seek trust`). `path` is the workspace folder (default: the server's)."""
        try:
            root = workspaces.root(path, await declared_roots(ctx))
            info = await anyio.to_thread.run_sync(workspaces.status, root)
        except SeekError as exc:
            raise ToolError(str(exc)) from exc
        skipped = ", ".join(f"{k} {v}" for k, v in sorted(info.skipped.items())) or "none"
        lines = [
            f"workspace {info.workspace}",
            f"indexed: {'yes' if info.exists else 'not yet (the first search builds it)'}",
            f"files {info.files}, chunks {info.chunks}",
            f"model {info.model or '-'} (configured {info.configured_model})",
            f"skipped: {skipped}",
        ]
        if info.rebuild_reason:
            lines.append(f"the next search rebuilds the index: {info.rebuild_reason}")
        trust = info.workspace_config
        if trust is not None:  # the agent can tell its user what `seek trust` would change
            lines.append(f"workspace config: {describe_line(trust)}")
        if info.stale:  # searches answer from the last complete index meanwhile
            lines.append(f"stale: {info.stale}")
        return printable_text("\n".join(lines))  # folder and file names are the workspace's

    register_graph_tools(
        server, workspaces, declared_roots
    )  # defs, refs, callers, callees, outline, map
    return server


def run_stdio(default_root: Path, overrides: dict[str, object] | None = None) -> None:
    from seek.mcp.stdio import run_stdio as serve

    anyio.run(serve, build_server(default_root, overrides))
