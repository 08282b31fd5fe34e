"""The code graph's request fields, read alike by every server that answers them (seek.md §2
`seek def` / `refs` / `callers` / `callees` / `outline` / `map`; issue 28 deliver 2):
``seek serve``'s graph routes (:mod:`seek.web.graph`) and ``seek serve --corpus``'s
(:mod:`seek.corpus.serve`). One reading, so the two servers take the same bodies and refuse
the same ones with the same errors.

``def`` takes ``{"name"}``; ``refs`` ``{"name"}`` or ``{"file", "line"}``; ``callers`` and
``callees`` ``{"file", "line"}``; ``outline`` ``{"file"}``; ``map`` ``{"question"?,
"budget"?}`` (tokens); ``changed`` ``{"ref"?, "staged"?}``, ``history`` ``{"subject",
"patch"?}``, ``impact`` and ``tests`` (issue 44); any may cap its rows with ``limit``. A
``file`` is relative and cannot climb out (:func:`relative_file`): it is only ever a key
into a stored graph.
"""

from __future__ import annotations

from typing import Any

from seek.errors import ApiError
from seek.serving.requests import check_text, integer, relative_file
from seek.untrusted import (
    MAX_DEPTH,
    MAX_LINE,
    MAX_MAP_TOKENS,
    MAX_NAME_CHARS,
    MAX_QUERY_CHARS,
    MAX_REF_CHARS,
    MAX_ROWS,
)


def symbol_name(data: dict[str, Any]) -> str:
    """The body's ``name``: a non-empty string of at most ``MAX_NAME_CHARS``, stripped."""
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ApiError(400, "bad_request", "name must be a non-empty string")
    if len(name) > MAX_NAME_CHARS:
        raise ApiError(400, "too_long", f"names are limited to {MAX_NAME_CHARS} characters")
    return check_text(name, "name").strip()


def file_line(data: dict[str, Any]) -> tuple[str, int]:
    """The body's ``file`` (relative, ``/``-separated) and 1-based ``line``."""
    return relative_file(data, "file"), integer(data, "line", 0, 1, MAX_LINE)


def row_limit(data: dict[str, Any]) -> int | None:
    """The body's ``limit`` (None: the tool's default)."""
    return integer(data, "limit", None, 1, MAX_ROWS)


def map_question(data: dict[str, Any]) -> str:
    """The body's optional ``question`` of ``map`` (empty: the whole repository's map)."""
    question = data.get("question", "")
    if not isinstance(question, str):
        raise ApiError(400, "bad_request", "question must be a string")
    if len(question) > MAX_QUERY_CHARS:
        raise ApiError(400, "too_long", f"questions are limited to {MAX_QUERY_CHARS} characters")
    return check_text(question, "question")


def map_budget(data: dict[str, Any]) -> int | None:
    """The body's ``budget`` of ``map``, in tokens (None: the tool's default)."""
    return integer(data, "budget", None, 1, MAX_MAP_TOKENS)


def change_since(data: dict[str, Any]) -> tuple[str, bool]:
    """``changed``'s git revision ``ref`` (default ``HEAD``; the facade checks it is a
    commit) and ``staged`` (compare with git's index instead of the files)."""
    ref, staged = data.get("ref", "HEAD"), data.get("staged", False)
    if not isinstance(ref, str) or not ref.strip():
        raise ApiError(400, "bad_request", "ref must be a non-empty string")
    if len(ref) > MAX_REF_CHARS:
        raise ApiError(400, "too_long", f"refs are limited to {MAX_REF_CHARS} characters")
    if not isinstance(staged, bool):
        raise ApiError(400, "bad_request", "staged must be true or false")
    return check_text(ref, "ref"), staged


def impact_target(data: dict[str, Any]) -> str:
    """``impact``'s subject: ``name``, or ``file`` and ``line`` as ``PATH:LINE``."""
    if "file" in data:
        file, line = file_line(data)
        return f"{file}:{line}"
    return symbol_name(data)


def impact_depth(data: dict[str, Any]) -> int | None:
    """``impact``'s ``depth`` (None: 3)."""
    return integer(data, "depth", None, 1, MAX_DEPTH)


def tests_of(data: dict[str, Any]) -> tuple[str | None, str | None, bool]:
    """``tests``' subject, or the ref it compares with: ``{"name"}``, ``{"file", "line"}``
    (``PATH:LINE``), ``{"file"}`` (the file's definitions) or ``{"changed": REF,
    "staged"?}``; as (subject, ref, staged), one of the first two None."""
    if "changed" in data:
        if "name" in data or "file" in data:
            raise ApiError(400, "bad_request", "name a subject or changed, not both")
        ref, staged = change_since({"ref": data["changed"], "staged": data.get("staged", False)})
        return None, ref, staged
    if "file" in data and "line" not in data:
        return relative_file(data, "file"), None, False
    return impact_target(data), None, False


def history_of(data: dict[str, Any]) -> tuple[str, bool]:
    """``history``'s ``subject`` (a name, ``PATH:LINE`` or a file, read as a relative path
    that cannot climb out: the facade tells which) and ``patch`` (each commit's hunks)."""
    patch = data.get("patch", False)
    if not isinstance(patch, bool):
        raise ApiError(400, "bad_request", "patch must be true or false")
    return relative_file(data, "subject"), patch


def lookup_target(tool: str, data: dict[str, Any]) -> str:
    """What ``tool`` (a route's name) looks up, as :func:`seek.corpus.graph.lookup` takes it:
    a name, or for ``refs`` with a ``file`` the ``PATH:LINE`` of a definition; the
    ``PATH:LINE`` of ``callers`` and ``callees``; the file of ``outline``; the question of
    ``map``."""
    if tool in ("callers", "callees") or (tool == "refs" and "file" in data):
        file, line = file_line(data)
        return f"{file}:{line}"
    if tool == "outline":
        return relative_file(data, "file")
    if tool == "map":
        return map_question(data)
    return symbol_name(data)
