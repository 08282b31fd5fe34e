"""``seek mcp``'s stdio transport: the SDK's, plus answers to lines it cannot read.

The SDK drops a line that is not a valid JSON-RPC message (it hands the server an exception
the server only logs), so a client that sent one waits forever. A JSON text with a lone
surrogate (``"\\ud800"``) is such a line: Python's JSON reads it, the SDK's does not. Here
every dropped line gets the JSON-RPC answer (spec §5.1): ``-32700`` parse error for what is
not JSON, ``-32600`` invalid request for JSON that is not a request, ``-32602`` invalid
params for a request whose text is not valid Unicode, with the request's ``id`` when it can
be read (else ``null``). Answers go through the SDK's own writer, so lines never interleave.
No line ends the server: JSON nested past Python's recursion limit (3,000 ``[``) is a parse
error too, and the surrogate check walks values without recursing.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import anyio
from mcp import types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

log = logging.getLogger(__name__)

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
_SURROGATE = re.compile("[\ud800-\udfff]")
PARSE_MESSAGE = "Parse error: the line is not JSON"


def _raw_message(exc: Exception) -> Any:
    """The JSON value of the dropped line, recovered from the validation error: the line
    itself for a JSON error, else the object that failed (``None`` when unreadable)."""
    errors = exc.errors() if hasattr(exc, "errors") else []
    for error in errors:
        value = error.get("input")
        if isinstance(value, str):
            try:
                return json.loads(value)
            except (ValueError, RecursionError):  # RecursionError: nested too deeply
                return None
    for error in errors:
        if isinstance(error.get("input"), dict):
            return error["input"]
    return None


def _has_surrogates(value: Any) -> bool:
    """Whether any string in ``value`` holds a lone surrogate; iterative, because a value
    nested just under ``json``'s limit would pass the interpreter's when walked recursively."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item) is not None:
                return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


def error_for(exc: Exception) -> types.JSONRPCError | None:
    """The answer to a line the SDK could not read (None for a malformed response or
    notification from the client, which gets no answer)."""
    data = _raw_message(exc)
    if data is None:
        return _error(None, PARSE_ERROR, PARSE_MESSAGE)
    raw_id = data.get("id") if isinstance(data, dict) else None
    request_id = raw_id if isinstance(raw_id, str | int) and not isinstance(raw_id, bool) else None
    if isinstance(data, dict) and ("result" in data or "error" in data):
        return None  # a reply to a server request: nothing to answer
    if isinstance(data, dict) and request_id is not None and _has_surrogates(data):
        return _error(
            request_id, INVALID_PARAMS,
            "Invalid params: the request holds invalid Unicode (a lone surrogate such as "
            "\\ud800); send UTF-8 text",
        )  # fmt: skip
    if isinstance(data, dict) and request_id is None and isinstance(data.get("method"), str):
        return None  # a notification: never answered, even when malformed
    return _error(request_id, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message")


def _answer(exc: Exception) -> types.JSONRPCError | None:
    """``error_for``, and a parse error should reading the line fail in a way not foreseen:
    one line from the client must never end the server."""
    try:
        return error_for(exc)
    except Exception:
        log.warning("cannot read a line from the client: answered as a parse error")
        return _error(None, PARSE_ERROR, PARSE_MESSAGE)


def _error(request_id: str | int | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )


async def run_stdio(server: Any) -> None:
    """Run an ``MCPServer`` on stdin/stdout, answering unreadable lines."""
    lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs, with our streams
    async with stdio_server() as (sdk_read, write_stream):
        send, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def pump() -> None:
            async with send, sdk_read:
                async for item in sdk_read:
                    if isinstance(item, Exception):
                        answer = _answer(item)
                        if answer is not None:
                            await write_stream.send(SessionMessage(answer))
                        continue
                    await send.send(item)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(pump)
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
            tasks.cancel_scope.cancel()
