"""The code-graph tools of ``seek mcp``: ``defs``, ``refs``, ``callers``, ``callees``,
``outline``, ``map`` (seek.md §2; issue 28 deliver 2), ``impact``, ``tests``, ``changed``,
``review`` and ``history`` (issue 44), answered
by the facade from the graph stored with the index (:mod:`seek.workspace.code_graph`).

Each description says when the tool beats grep, since that is the choice an agent makes.
The same confinement as the other tools: the workspace must lie inside an allowed root
(:meth:`seek.mcp.McpWorkspaces.root`), a file is named inside it, arguments are strictly
typed and bounded, and the text that comes back is escaped
(:meth:`seek.workspace.code_graph.GraphResult.to_text`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from seek.errors import SeekError
from seek.untrusted import (
    MAX_BUDGET_CHARS,
    MAX_DEPTH,
    MAX_PATH_CHARS,
    MAX_QUERY_CHARS,
    MAX_REF_CHARS,
    check_query,
)
from seek.workspace.code_graph import MAX_MAP_TOKENS, MAX_NAME_CHARS, MAX_ROWS

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from mcp.server.mcpserver import MCPServer

Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]
File = Annotated[str, Field(min_length=1, max_length=MAX_PATH_CHARS)]
Line = Annotated[int, Field(ge=1, strict=True)]
Limit = Annotated[int, Field(ge=1, le=MAX_ROWS, strict=True)]
Tokens = Annotated[int, Field(ge=1, le=MAX_MAP_TOKENS, strict=True)]
Question = Annotated[str, Field(max_length=MAX_QUERY_CHARS)]
PathArg = Annotated[str | None, Field(max_length=MAX_PATH_CHARS)]
Ref = Annotated[str, Field(min_length=1, max_length=MAX_REF_CHARS)]
Depth = Annotated[int, Field(ge=1, le=MAX_DEPTH, strict=True)]
Chars = Annotated[int | None, Field(ge=0, le=MAX_BUDGET_CHARS, strict=True)]


def register_graph_tools(
    server: MCPServer,
    workspaces: Any,
    declared_roots: Callable[[Context | None], Awaitable[tuple[Path, ...] | None]],
) -> None:
    """Add the tools to ``server``; ``workspaces`` is the server's ``McpWorkspaces`` (the
    facade with its ``root`` rule), ``declared_roots`` how it reads the client's roots."""

    async def call(ctx, workspace, method, *args):
        try:
            root = workspaces.root(workspace, await declared_roots(ctx))
            resolved = [_resolve(root, a) for a in args]
            result = await anyio.to_thread.run_sync(method, root, *resolved)
        except SeekError as exc:
            raise ToolError(str(exc)) from exc
        return result.to_text()

    @server.tool(name="defs")
    async def defs(
        name: Name, workspace: PathArg = None, limit: Limit = 20, ctx: Context | None = None
    ) -> str:
        """Where a function, class, method, type or constant is defined.

        Use it instead of grep when you know a name and want its definition: it returns
        only definition sites (`path:line-end_line  kind  Container.name` and the signature
        line), best first, not every line that mentions the name. `Container.name` narrows
        it (`Cache.get`). `workspace` is the workspace folder (default: the server's)."""
        return await call(ctx, workspace, workspaces.defs, name, limit)

    @server.tool(name="refs")
    async def refs(
        target: Name, workspace: PathArg = None, limit: Limit = 50, ctx: Context | None = None
    ) -> str:
        """Who uses a symbol: `target` is a name, or `path:line` of a definition or of a use
        of it (1-based line; a use line means the symbol used there).

        Use it instead of grep for "who calls / uses X": uses are grouped by the function or
        class they are in, calls marked, and comments, strings and other symbols that share
        the name are left out. Each use is `line:column` and its line of code."""
        return await call(ctx, workspace, workspaces.refs, _Target(target), limit)

    @server.tool(name="callers")
    async def callers(
        path: File, line: Line, workspace: PathArg = None, limit: Limit = 50,
        ctx: Context | None = None,
    ) -> str:  # fmt: skip
        """The functions that call the function at `path:line` (its name's line or any
        line inside it; `path` workspace-relative or absolute). Use it to walk up a call
        chain without reading every file that mentions the name. The first line names the
        definition the line was taken to mean (a line between methods: their class)."""
        return await call(ctx, workspace, workspaces.callers, _File(path), line, limit)

    @server.tool(name="callees")
    async def callees(
        path: File, line: Line, workspace: PathArg = None, limit: Limit = 50,
        ctx: Context | None = None,
    ) -> str:  # fmt: skip
        """What the function at `path:line` calls, each resolved to its definition
        (`path:line-end_line` and signature), after a first line naming the function the
        line was taken to mean. Use it to see what a function depends on before opening
        those files."""
        return await call(ctx, workspace, workspaces.callees, _File(path), line, limit)

    @server.tool(name="outline")
    async def outline(
        path: File, workspace: PathArg = None, limit: Limit = MAX_ROWS,
        ctx: Context | None = None,
    ) -> str:  # fmt: skip
        """A file's definitions in order, with line spans and signatures: what is in a file
        without reading all of it (far fewer tokens than the file itself)."""
        return await call(ctx, workspace, workspaces.outline, _File(path), limit)

    @server.tool(name="map")
    async def repo_map(
        question: Question = "", budget: Tokens = 1024, workspace: PathArg = None,
        ctx: Context | None = None,
    ) -> str:  # fmt: skip
        """An overview of a repository: its most central definitions (ranked by how much
        the rest of the code uses them), as signatures under their files, within `budget`
        tokens. With `question`, centred on the definitions near its words. Use it first
        in an unfamiliar codebase, instead of listing and reading files."""
        check_query(question, "the question")
        return await call(ctx, workspace, workspaces.map, question, budget)

    @server.tool(name="changed")
    async def changed(
        ref: Ref = "HEAD", staged: bool = False, workspace: PathArg = None,
        limit: Limit = MAX_ROWS, ctx: Context | None = None,
    ) -> str:  # fmt: skip
        """The definitions added, modified, removed, renamed or moved since git revision
        `ref` (default HEAD) in the working tree, new files included (`staged`: in what is
        staged instead), each with `(signature changed)` and how many functions call it
        now; a removed one's callers are the calls left pointing at nothing.

        Use it instead of `git diff` to see what a change did to the definitions before
        reviewing or committing it: whitespace-only edits are left out, renames and moves
        are named as such."""
        return await call(ctx, workspace, workspaces.changed, ref, staged, limit)

    @server.tool(name="review")
    async def review(
        ref: Ref = "HEAD", staged: bool = False, workspace: PathArg = None,
        budget: Chars = None, ctx: Context | None = None,
    ) -> str:  # fmt: skip
        """Review context for the change since git revision `ref` (default HEAD) in the
        working tree (`staged`: in what is staged): each changed definition's code (a long
        one as its changed lines), the lines that use it (for a removed one, the calls that
        now break), the tests that reach it and the signatures of what it calls, as
        labelled blocks within `budget` characters (default 12,000), most useful first,
        then a one-line report.

        Call it before you review or commit a change, instead of `git diff` plus grep for
        each changed name: it shows who the change reaches and which tests to run."""
        return await call(ctx, workspace, workspaces.review, ref, staged, budget)

    @server.tool(name="impact")
    async def impact(
        target: Name, depth: Depth = 3, workspace: PathArg = None, limit: Limit = 50,
        ctx: Context | None = None,
    ) -> str:  # fmt: skip
        """What changing a definition would reach: `target` is its name or `path:line`.
        The definitions that use it directly (depth 1) and through their own users up to
        `depth`, each with the use that reaches it (`calls X at line:column` and its line),
        nearest and most used first, tests listed apart after `tests:`, and the files that
        import it.

        Use it before changing a signature, instead of grepping for the name level by level:
        it lists what else must change and which tests to run."""
        return await call(ctx, workspace, workspaces.impact, _Target(target), depth, limit)

    @server.tool(name="tests")
    async def tests(
        target: Name | None = None, changed: Ref | None = None, staged: bool = False,
        depth: Depth | None = None, workspace: PathArg = None, limit: Limit = 50,
        ctx: Context | None = None,
    ) -> str:  # fmt: skip
        """The tests to run after a change: those that reach `target` (a definition's name,
        `path:line` of it, or a file's path: its definitions) or, with `changed` (a git
        revision, e.g. HEAD), every definition changed since in the working tree
        (`staged`: in what is staged). Each test with its depth (1: it uses the target
        itself), the use that reaches it, and the id its runner takes (pytest node id,
        `go test -run`, vitest/jest `-t`, cargo, JUnit, RSpec, ExUnit); last, one command
        line that runs them all when they share a runner.

        Use it instead of grepping test files for the name: it follows calls through
        helpers, fixtures and setUp/beforeEach hooks, and finds tests that never spell the
        name."""
        subject = _Target(target) if target is not None else None
        return await call(ctx, workspace, workspaces.tests, subject, changed, staged, depth,
                          limit)  # fmt: skip

    @server.tool(name="history")
    async def history(
        subject: Name, patch: bool = False, workspace: PathArg = None, limit: Limit = 20,
        ctx: Context | None = None,
    ) -> str:  # fmt: skip
        """The commits that changed a definition (`subject`: its name, or `path:line` of
        it) or a file (its workspace-relative path), newest first: hash, date, author and
        subject line; `patch` adds each commit's hunks for it.

        Use it instead of `git log -L` to learn why code is as it is: the definition's
        lines (as of HEAD) are found for you."""
        return await call(ctx, workspace, workspaces.history, _Target(subject), limit, patch)


class _File(str):
    """A file argument, made workspace-relative once the workspace is known."""


class _Target(str):
    """A name, or ``path:line`` whose path is made workspace-relative like a file's."""


def _resolve(root: Path, arg: object) -> object:
    if isinstance(arg, _File):
        return workspace_relative(root, arg)
    if isinstance(arg, _Target):
        name, sep, line = arg.rpartition(":")
        if sep and name and line.isdigit():
            return f"{workspace_relative(root, name)}:{line}"
        return str(arg)
    return arg


def workspace_relative(root: Path, name: str) -> str:
    """A file the agent named (workspace-relative, or absolute inside ``root``) as the
    workspace-relative path the facade takes; one outside the workspace is an error."""
    check_query(name, "path")
    file = Path(name)
    if file.is_absolute():
        file = file.resolve()
        if not file.is_relative_to(root):
            raise SeekError(f"{name} is not in the workspace {root}")
        file = file.relative_to(root)
    return file.as_posix()
