"""Credentials out of every message seek shows or logs (issue 27, finding 10).

seek's promise is that a key never leaves the variable that holds it: no error, log line or
page shows one. Messages are built from addresses and servers' answers, so they can carry a
credential by accident: ``http://user:pw@host`` in an endpoint, ``?token=...`` in a URL a
server echoes, an ``Authorization`` header in a library's text, or the value of a secret
environment variable a server repeats. :func:`redact` masks each of those; it is used where
errors are made (:mod:`seek.remote`, :mod:`seek.chat`, :mod:`seek.corpus.location`), where
the CLI prints an error, and by :class:`RedactingFilter` on the CLI's log handlers.

Masked: a URL's user-info (``scheme://***@host``), query parameters whose names say
token/key/secret/password/signature/credential/auth, ``Authorization`` values and ``Bearer``
credentials, AWS
access key ids, ``name=value`` pairs naming a secret, and the value (8 characters or more)
of every environment variable whose name says TOKEN, SECRET, PASSWORD, KEY or CREDENTIAL.
"""

from __future__ import annotations

import logging
import os
import re
import traceback
from collections.abc import Mapping
from urllib.parse import urlsplit

MASK = "***"

_SECRET_WORDS = r"token|secret|passw(?:or)?d|pwd|api[_-]?key|access[_-]?key|signature|credential"
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/?#]*@")
_QUERY = re.compile(
    rf"(?i)([?&;][a-z0-9_.-]*(?:{_SECRET_WORDS}|sig|auth|key)[a-z0-9_.-]*=)[^&#\s\"'<>]+"
)
_AUTH = re.compile(
    r"(?i)\b(authorization[\"']?\s*[=:]\s*[\"']?(?:(?:bearer|basic|token)\s+)?)[^\s\"',;&]+"
)
_BEARER = re.compile(r"(?i)\b(bearer)\s+[a-z0-9._~+/=-]{4,}")
_PAIR = re.compile(rf"(?i)\b((?:[a-z0-9_]*_)?(?:{_SECRET_WORDS})\s*[=:]\s*[\"']?)[^\s\"',;&]+")
_AWS_KEY_ID = re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")
_SECRET_ENV = re.compile(r"(?i)token|secret|passw|key|credential")
MIN_SECRET_CHARS = 8
"""Shorter environment values are not searched for (``test`` would mask ordinary words)."""


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with every credential it holds replaced by ``***`` (see the module doc)."""
    environ = os.environ if env is None else env
    for name, value in environ.items():
        if len(value) >= MIN_SECRET_CHARS and _SECRET_ENV.search(name) and value in text:
            text = text.replace(value, MASK)
    text = _USERINFO.sub(rf"\1{MASK}@", text)
    text = _QUERY.sub(rf"\1{MASK}", text)
    text = _AUTH.sub(rf"\1{MASK}", text)
    text = _BEARER.sub(rf"\1 {MASK}", text)
    text = _PAIR.sub(rf"\1{MASK}", text)
    return _AWS_KEY_ID.sub(MASK, text)


def origin(url: str) -> str:
    """``scheme://host:port`` of ``url``: what a message names a server by (no
    ``user:password@``, no path or query, which may hold a key)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"


def one_line(text: str, limit: int = 300, env: Mapping[str, str] | None = None) -> str:
    """``text`` redacted (secrets of ``env`` too, see :func:`redact`), on one line, at most
    ``limit`` characters."""
    flat = " ".join(redact(text, env).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class RedactingFilter(logging.Filter):
    """Redacts a record's message (and its traceback) before a handler writes it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed call: logging reports those itself, never raises
            message = f"{record.msg} {record.args}"
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact("".join(traceback.format_exception(*record.exc_info)))
            record.exc_text = record.exc_text.rstrip("\n")
        return True


def redact_logs(logger: logging.Logger | None = None) -> None:
    """Put :class:`RedactingFilter` on every handler of ``logger`` (the root by default)."""
    for handler in (logger or logging.getLogger()).handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
