"""The OpenAPI 3.0 document of ``seek serve``'s API (``GET /v1/openapi.json``).

Written by hand from :mod:`seek.web.api`'s checks so that an API fuzzer (the test suite runs
schemathesis against it) generates requests near the real limits, which it reads from the
one set every front-end uses (:mod:`seek.untrusted`).
"""

from __future__ import annotations

from typing import Any

from seek.untrusted import (
    MAX_BUDGET_CHARS,
    MAX_DEPTH,
    MAX_FOCUS,
    MAX_K,
    MAX_PATH_CHARS,
    MAX_QUERY_CHARS,
    MAX_REF_CHARS,
)
from seek.workspace.code_graph import MAX_MAP_TOKENS, MAX_NAME_CHARS, MAX_ROWS

JSON = "application/json"


def _error() -> dict[str, Any]:
    return {
        "description": "an error",
        "content": {JSON: {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _post(summary: str, schema: str, required: list[str]) -> dict[str, Any]:
    return {
        "post": {
            "summary": summary,
            "requestBody": {
                "required": bool(required),
                "content": {JSON: {"schema": {"$ref": f"#/components/schemas/{schema}"}}},
            },
            "responses": {
                "200": {
                    "description": "the answer",
                    "content": {JSON: {"schema": {"type": "object"}}},
                },
                "202": {
                    "description": "an index run that goes on in the background",
                    "content": {JSON: {"schema": {"type": "object"}}},
                },
                **{
                    code: _error()
                    for code in (
                        "400",
                        "401",
                        "403",
                        "404",
                        "408",
                        "409",
                        "413",
                        "415",
                        "422",
                        "504",
                    )
                },
            },  # fmt: skip
        }
    }


def openapi_document() -> dict[str, Any]:
    path = {"type": "string", "maxLength": MAX_PATH_CHARS}
    text = {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS}
    name = {"type": "string", "minLength": 1, "maxLength": MAX_NAME_CHARS}
    line = {"type": "integer", "minimum": 1}
    limit = {"type": "integer", "minimum": 1, "maximum": MAX_ROWS}
    ref = {"type": "string", "minLength": 1, "maxLength": MAX_REF_CHARS}  # a git revision
    return {
        "openapi": "3.0.3",
        "info": {"title": "seek serve", "version": "1"},
        "paths": {
            "/v1/search": _post("Ranked chunks for a question", "SearchRequest", ["query"]),
            "/v1/context": _post("Prompt blocks for a question", "ContextRequest", ["question"]),
            "/v1/index": _post("Bring the index up to date (or rebuild it)", "IndexRequest", []),
            "/v1/related": _post(
                "The code most like the chunk at a file's line", "RelatedRequest", ["file", "line"]
            ),
            "/v1/def": _post("Where a name is defined", "DefRequest", ["name"]),
            "/v1/refs": _post("Uses of a name or of the definition at a line", "RefsRequest", []),
            "/v1/callers": _post(
                "What calls the function at a line", "LineRequest", ["file", "line"]
            ),
            "/v1/callees": _post(
                "What the function at a line calls", "LineRequest", ["file", "line"]
            ),
            "/v1/outline": _post("A file's definitions", "OutlineRequest", ["file"]),
            "/v1/map": _post("The most central definitions, within a budget", "MapRequest", []),
            "/v1/impact": _post(
                "What uses a definition, directly and through its users", "ImpactRequest", []
            ),
            "/v1/history": _post(
                "The commits that changed a definition or a file", "HistoryRequest", ["subject"]
            ),
            "/v1/changed": _post(
                "The definitions changed since a git revision", "ChangedRequest", []
            ),
            "/v1/review": _post(
                "Review context for the change since a git revision", "ReviewRequest", []
            ),
            "/v1/tests": _post(
                "The tests that reach a definition, or what changed since a git revision",
                "TestsRequest",
                [],
            ),
            "/v1/status": {
                "get": {
                    "summary": "What the index holds",
                    "parameters": [
                        {"name": "path", "in": "query", "required": False, "schema": path}
                    ],
                    "responses": {
                        "200": {
                            "description": "the status",
                            "content": {JSON: {"schema": {"type": "object"}}},
                        },
                        **{code: _error() for code in ("400", "401", "403", "404")},
                    },  # fmt: skip
                }
            },
        },
        "components": {
            "schemas": {
                "SearchRequest": {
                    "type": "object",
                    "required": ["query"],
                    "properties": {
                        "query": text,
                        "path": path,
                        "k": {"type": "integer", "minimum": 1, "maximum": MAX_K},
                        "focus": {"type": "array", "items": path, "maxItems": MAX_FOCUS},
                    },
                },
                "ContextRequest": {
                    "type": "object",
                    "required": ["question"],
                    "properties": {
                        "question": text,
                        "path": path,
                        "budget": {"type": "integer", "minimum": 0, "maximum": MAX_BUDGET_CHARS},
                    },
                },
                "RelatedRequest": {
                    "type": "object",
                    "required": ["file", "line"],
                    "properties": {
                        "file": path,
                        "line": {"type": "integer", "minimum": 1},
                        "path": path,
                        "k": {"type": "integer", "minimum": 1, "maximum": MAX_K},
                    },
                },
                "DefRequest": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {"name": name, "path": path, "limit": limit},
                },
                "RefsRequest": {
                    "type": "object",
                    "properties": {
                        "name": name,
                        "file": path,
                        "line": line,
                        "path": path,
                        "limit": limit,
                    },
                },  # fmt: skip
                "LineRequest": {
                    "type": "object",
                    "required": ["file", "line"],
                    "properties": {"file": path, "line": line, "path": path, "limit": limit},
                },
                "OutlineRequest": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {"file": path, "path": path, "limit": limit},
                },
                "MapRequest": {
                    "type": "object",
                    "properties": {
                        "question": {"type": "string", "maxLength": MAX_QUERY_CHARS},
                        "budget": {"type": "integer", "minimum": 1, "maximum": MAX_MAP_TOKENS},
                        "path": path,
                    },
                },
                "ImpactRequest": {
                    "type": "object",
                    "properties": {
                        "name": name,
                        "file": path,
                        "line": line,
                        "depth": {"type": "integer", "minimum": 1, "maximum": MAX_DEPTH},
                        "path": path,
                        "limit": limit,
                    },
                },
                "HistoryRequest": {
                    "type": "object",
                    "required": ["subject"],
                    "properties": {
                        "subject": {"type": "string", "minLength": 1, "maxLength": MAX_PATH_CHARS},
                        "patch": {"type": "boolean"},
                        "path": path,
                        "limit": limit,
                    },
                },
                "ChangedRequest": {
                    "type": "object",
                    "properties": {
                        "ref": ref,
                        "staged": {"type": "boolean"},
                        "path": path,
                        "limit": limit,
                    },
                },
                "ReviewRequest": {
                    "type": "object",
                    "properties": {
                        "ref": ref,
                        "staged": {"type": "boolean"},
                        "budget": {"type": "integer", "minimum": 0, "maximum": MAX_BUDGET_CHARS},
                        "path": path,
                    },
                },
                "TestsRequest": {
                    "type": "object",
                    "properties": {
                        "name": name,
                        "file": path,
                        "line": line,
                        "changed": ref,
                        "staged": {"type": "boolean"},
                        "depth": {"type": "integer", "minimum": 1, "maximum": MAX_DEPTH},
                        "path": path,
                        "limit": limit,
                    },
                },
                "IndexRequest": {
                    "type": "object",
                    "properties": {"path": path, "rebuild": {"type": "boolean"}},
                },
                "Error": {
                    "type": "object",
                    "required": ["error"],
                    "properties": {
                        "error": {
                            "type": "object",
                            "required": ["code", "message"],
                            "properties": {
                                "code": {"type": "string"},
                                "message": {"type": "string"},
                            },
                        }
                    },
                },
            }
        },
    }
