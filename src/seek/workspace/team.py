"""Team context (reference §9.1): every search also asks a shared seek server.

With ``team_url`` set, the question is sent to ``POST <team_url>/v1/search`` with ``k = 6``
(``team_k``) and an 8 s timeout (``team_timeout_s``), in parallel with the local search. Its
hits are appended after the local ones as ``team:<workspace>/<path>``: not reranked, not
counted in any limit; each keeps the enclosing symbol the server named (none when it sent
none or a malformed one). Any failure means no team hits and a note, never an error.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace

from seek.errors import SeekError, SettingsError
from seek.redact import redact
from seek.remote import Remote, reason
from seek.retrieve.types import Hit, SearchResult, Symbol
from seek.settings import Settings

TEAM_PREFIX = "team:"
HOP_HEADER = "X-Seek-Team"
"""Sent with a team search: the server answering it does not ask its own team server in
turn (no loops, no team hits of team hits)."""
_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="seek-team")


def ask_team(settings: Settings, query: str) -> tuple[list[Hit], str]:
    """The team server's hits for ``query`` and a note ("" when all went well)."""
    failed = f"No team hits: the team server at {redact(settings.team_url)} failed"
    try:
        remote = Remote(
            settings.team_url.rstrip("/") + "/v1/search", timeout_s=settings.team_timeout_s,
            token_env=settings.team_token_env, headers={HOP_HEADER: "1"},
            describe=lambda kind, server, exc: f"{failed} ({reason(exc)}).",
        )  # fmt: skip
    except SettingsError:
        return [], f"No team hits: ${settings.team_token_env} is not set."
    try:
        with remote:
            response = remote.check(remote.post(json={"query": query, "k": settings.team_k}))
            data = response.json()
        workspace = str(data.get("workspace") or "team")
        hits = [  # a seek 0.1 team server answers camelCase keys: both are read
            Hit(
                f"{TEAM_PREFIX}{workspace}/{hit['path']}",
                int(hit["start_line"] if "start_line" in hit else hit["startLine"]),
                int(hit["end_line"] if "end_line" in hit else hit["endLine"]),
                float(hit["score"]),
                str(hit["content"]),
                symbol=Symbol.from_json(hit.get("symbol")),  # an older server sends none
            )
            for hit in data.get("hits", [])
        ]
    except SeekError as exc:
        return [], str(exc) if str(exc).startswith(failed) else f"{failed} ({exc})."
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return [], f"{failed} ({reason(exc)})."
    return hits, ""


def start_team_search(settings: Settings, query: str) -> Future[tuple[list[Hit], str]] | None:
    """Ask the team server in the background (None when no team server is configured)."""
    if not settings.team_url or not query.strip():
        return None
    return _pool.submit(ask_team, settings, query)


def with_team_hits(
    result: SearchResult, pending: Future[tuple[list[Hit], str]] | None
) -> SearchResult:
    """``result`` with the team's hits appended after the local ones, and its note."""
    if pending is None:
        return result
    hits, note = pending.result()
    # replace() keeps every other field (``calibrated`` was once lost here).
    return replace(
        result,
        hits=[*result.hits, *hits],
        notes=(*result.notes, note) if note else result.notes,
    )
