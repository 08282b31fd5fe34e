"""The error text a server sends back, shared by the embedding and chat clients."""

from __future__ import annotations

import httpx


def server_message(response: httpx.Response) -> str:
    """The server's own error text, from ``{"error": ...}`` or the body, kept to one line."""
    try:
        data = response.json()
    except ValueError:
        data = None
    if isinstance(data, dict) and data.get("error"):
        error = data["error"]
        text = error.get("message", str(error)) if isinstance(error, dict) else str(error)
    else:
        text = response.text or response.reason_phrase
    return " ".join(text.split())[:300]
