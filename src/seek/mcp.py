"""``seek mcp``: an MCP server on stdio for coding agents (official ``mcp`` SDK).

Tools: ``search`` (ranked chunks), ``context`` (labelled blocks for a question),
``related`` (code like a file's line) and ``status`` (what the index holds). A workspace is
indexed on its first use and brought up to date before each search (milliseconds when
nothing changed); concurrent calls on one workspace share one build. Failures come back as
tool errors with one actionable sentence.
"""

from __future__ import annotations

from pathlib import Path

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from seek import __version__
from seek.errors import SeekError
from seek.indexer import resolve_workspace
from seek.live import LiveIndexes
from seek.retrieve import SearchResult
from seek.retrieve.context import ContextResult, build_context
from seek.settings import Settings, load_settings
from seek.status import workspace_status
from seek.team import start_team_search, with_team_hits

SNIPPET_LINES = 12
MAX_K = 50

INSTRUCTIONS = (
    "seek searches a local code index. Call `search` with a question in plain words or an "
    "identifier to get the few places in the code that answer it (file path, 1-based line "
    "range, score, and the first lines of each chunk); open the files at those lines for "
    "more. The workspace is indexed on first use."
)


class Workspaces:
    """The server's workspaces: which folder a call names, and their live indexes."""

    def __init__(self, default_root: Path, overrides: dict[str, object] | None = None) -> None:
        self.default_root = default_root
        self.overrides = dict(overrides or {})
        self.live = LiveIndexes()

    def root(self, path: str | None) -> Path:
        if not path:
            return resolve_workspace(self.default_root)
        candidate = Path(path).expanduser()
        if not candidate.is_absolute():
            candidate = self.default_root / candidate
        return resolve_workspace(candidate)

    def settings(self, root: Path) -> Settings:
        return load_settings(root, overrides=self.overrides)

    def search(self, root: Path, query: str, k: int, focus: tuple[str, ...]) -> SearchResult:
        settings = self.settings(root)
        team = start_team_search(settings, query)
        return with_team_hits(self.live.search(root, settings, query, k, focus), team)

    def related(self, root: Path, file: str, line: int, k: int) -> SearchResult:
        from seek.retrieve.related import related

        searcher, notes = self.live.searcher(root, self.settings(root))
        return related(searcher, file, line, k).with_notes_first(notes)

    def context(self, root: Path, question: str, budget: int | None) -> ContextResult:
        settings = self.settings(root)
        found = self.search(root, question, settings.rerank_top, ())
        return build_context(root, found, settings, budget=budget)


def format_hits(result: SearchResult) -> str:
    """Compact text an agent reads cheaply: one header line per hit, then its first lines."""
    if not result.hits:
        return "No matching code." + "".join(f"\nnote: {n}" for n in result.notes)
    blocks = []
    for rank, hit in enumerate(result.hits, 1):
        lines = hit.content.split("\n")
        shown = "\n".join(lines[:SNIPPET_LINES])
        more = f"\n… {len(lines) - SNIPPET_LINES} more lines" if len(lines) > SNIPPET_LINES else ""
        blocks.append(
            f"{rank}. {hit.path}:{hit.start_line}-{hit.end_line} (score {hit.score:.4f})\n"
            f"{shown}{more}"
        )
    notes = "".join(f"\nnote: {n}" for n in result.notes)
    return "\n\n".join(blocks) + notes


def build_server(default_root: Path, overrides: dict[str, object] | None = None) -> MCPServer:
    workspaces = Workspaces(default_root, overrides)
    server = MCPServer(name="seek", version=__version__, instructions=INSTRUCTIONS)

    @server.tool()
    async def search(
        query: str, path: str | None = None, k: int = 10, focus: list[str] | None = None
    ) -> str:
        """Find the code that answers a question about a codebase.

        Use it before reading files when you need to know where something is implemented,
        configured, defined or used: pass a plain-language question ("how are retries
        configured?") or an identifier ("HttpClient", "parse_config"). Returns up to `k`
        chunks, best first: `path:start-end` (1-based lines), a score, and the chunk's first
        lines. `path` is the workspace folder (default: the server's folder); `focus` lists
        workspace-relative files the question is about (they get extra passes).
        """
        if not query.strip():
            raise ToolError("query is empty: pass a question or an identifier")
        k = max(1, min(int(k), MAX_K))
        try:
            root = workspaces.root(path)
            result = await anyio.to_thread.run_sync(
                workspaces.search, root, query, k, tuple(focus or ())
            )
        except SeekError as exc:
            raise ToolError(str(exc)) from exc
        return format_hits(result)

    @server.tool()
    async def context(question: str, path: str | None = None, budget: int | None = None) -> str:
        """Gather the code a question needs, as labelled blocks ready to read.

        Use it when you want to understand how something works rather than find one place:
        it returns whole functions or classes around the best matches (each headed
        `path (lines a-b)` in a fenced block, imports included), within `budget` characters
        (default 12,000), then a one-line report of what was weighed.
        """
        if not question.strip():
            raise ToolError("question is empty: ask about the code in plain words")
        try:
            root = workspaces.root(path)
            result = await anyio.to_thread.run_sync(workspaces.context, root, question, budget)
        except SeekError as exc:
            raise ToolError(str(exc)) from exc
        body = result.prompt() or "No code scored above the threshold."
        return f"{body}\n\n{result.context_line()}"

    @server.tool()
    async def related(path: str, line: int, workspace: str | None = None, k: int = 10) -> str:
        """Find code like the code at a location: "where else is this pattern?", "who does
        the same?". `path` is the file (workspace-relative, or absolute) and `line` a 1-based
        line in it; the chunk holding that line is matched by meaning and by the names it
        uses, and up to `k` chunks of other files come back, best first, as `search` prints
        them. `workspace` is the workspace folder (default: the server's)."""
        k = max(1, min(int(k), MAX_K))
        try:
            root = workspaces.root(workspace)
            file = Path(path).expanduser()
            if file.is_absolute():
                file = file.resolve()
                if not file.is_relative_to(root):
                    raise ToolError(f"{path} is not in the workspace {root}")
                file = file.relative_to(root)
            result = await anyio.to_thread.run_sync(
                workspaces.related, root, file.as_posix(), int(line), k
            )
        except SeekError as exc:
            raise ToolError(str(exc)) from exc
        return format_hits(result)

    @server.tool()
    async def status(path: str | None = None) -> str:
        """What seek's index of a workspace holds: files, chunks, model, last update, and
        files left out by reason. `path` is the workspace folder (default: the server's)."""
        try:
            root = workspaces.root(path)
            info = await anyio.to_thread.run_sync(workspace_status, root, workspaces.settings(root))
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
        return "\n".join(lines)

    return server


def run_stdio(default_root: Path, overrides: dict[str, object] | None = None) -> None:
    build_server(default_root, overrides).run("stdio")
