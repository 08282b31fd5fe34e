"""The one HTTP client boundary (design "One HTTP boundary with a transport seam").

Every server seek talks to goes through :class:`Remote`: embedding servers
(:mod:`seek.embed.http`), chat servers (:mod:`seek.chat`), the team server
(:mod:`seek.workspace.team`) and the model hub (:mod:`seek.rerank.pull`). It owns what those
used to repeat:

- **auth**: a bearer token read from a *named* environment variable (never stored, never
  logged); a named variable that is empty is a one-line :class:`SettingsError`;
- **routes**: :func:`join_route` turns a base address into an endpoint (``/v1`` handling);
- **errors**: credentials are masked from every message made here (:mod:`seek.redact`:
  ``user:pw@`` in an address, tokens in a query, a server echoing a key); httpx's
  exceptions become the caller's :class:`SeekError` subclass here and nowhere else, in
  three words: *cannot reach* (connection refused, DNS, proxy), *did not
  answer within* (a timeout) or *interrupted* (a connection dropped mid-answer); a refusal
  (HTTP >= 400) becomes "401: check the API key in $VAR", "model ... not found" or
  "answered HTTP <status>: <the server's own message>";
- **a transport seam**: ``transport=`` (an ``httpx.MockTransport`` in tests) or, for a
  whole test, :func:`use_transport`;
- **closing**: a :class:`Remote` is a context manager; one kept for long (an embedder's) is
  closed by ``close()`` or, at the latest, when it is garbage collected.

Only this module imports httpx (``tests/test_boundaries.py`` holds that).
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import httpx

from seek.errors import SeekError, SettingsError
from seek.redact import one_line, origin, redact

Response = httpx.Response
Timeout = httpx.Timeout
MockTransport = httpx.MockTransport
Request = httpx.Request

UNREACHABLE, TIMED_OUT, INTERRUPTED = "unreachable", "timed out", "interrupted"
_test_transport: httpx.BaseTransport | None = None


@contextmanager
def use_transport(transport: httpx.BaseTransport) -> Iterator[None]:
    """Every :class:`Remote` made inside the block talks to ``transport`` (tests)."""
    global _test_transport
    previous, _test_transport = _test_transport, transport
    try:
        yield
    finally:
        _test_transport = previous


def join_route(url: str, route: str, *, named: tuple[str, ...], v1_route: str) -> str:
    """The full endpoint for a base address: one already naming the route (ending in one of
    ``named``) is used as it is; one ending in ``/v1`` gets ``v1_route``; any other gets
    ``route`` appended (so ``http://host/ollama`` becomes ``http://host/ollama/api/embed``)."""
    url = url.rstrip("/")
    path = urlsplit(url).path
    if path.endswith(named):
        return url
    if path.endswith("/v1"):
        return url + v1_route
    return url + route


def bearer(token_env: str, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``Authorization: Bearer`` from the variable named ``token_env`` (none when unnamed)."""
    if not token_env:
        return {}
    token = (os.environ if env is None else env).get(token_env, "").strip()
    if not token:
        raise SettingsError(f"the API key variable ${token_env} is not set")
    return {"Authorization": f"Bearer {token}"}


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
    return one_line(text)


def failure_kind(exc: httpx.HTTPError) -> str:
    """httpx's many exceptions in the three words seek's messages use."""
    unreachable = (
        httpx.ConnectError,
        httpx.ConnectTimeout,
        httpx.ProxyError,
        httpx.UnsupportedProtocol,
    )
    if isinstance(exc, unreachable):  # no connection was made: nothing answered at all
        return UNREACHABLE
    if isinstance(exc, httpx.TimeoutException):
        return TIMED_OUT
    return INTERRUPTED


def reason(exc: BaseException) -> str:
    return one_line(str(exc), 200) or type(exc).__name__


class Remote:
    """One server seek talks to: its address, auth, timeout and how its failures read."""

    def __init__(
        self,
        url: str,
        *,
        error: type[SeekError] = SeekError,
        timeout_s: float | httpx.Timeout = 60.0,
        token_env: str = "",
        token: str = "",
        env: Mapping[str, str] | None = None,
        hint: str = "",
        headers: Mapping[str, str] | None = None,
        follow_redirects: bool = False,
        transport: httpx.BaseTransport | None = None,
        describe: Callable[[str, str, BaseException], str] | None = None,
    ) -> None:
        self.url = url
        self.server = origin(url)
        self.error = error
        self.token_env = token_env
        self.hint = hint
        """Said after "cannot reach <server>" (" — is Ollama running? (`ollama serve`)")."""
        self.describe = describe
        """(kind, server, exception) -> message, for a caller with its own wording."""
        self.timeout_s = timeout_s.read if isinstance(timeout_s, httpx.Timeout) else timeout_s
        auth = {"Authorization": f"Bearer {token}"} if token else bearer(token_env, env)
        self._client = httpx.Client(
            timeout=timeout_s,
            headers={**(headers or {}), **auth},
            follow_redirects=follow_redirects,
            transport=transport or _test_transport,
        )
        self._finalizer = weakref.finalize(self, self._client.close)

    def close(self) -> None:
        self._finalizer()

    def __enter__(self) -> Remote:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- requests -----------------------------------------------------------------------------
    def post(self, url: str | None = None, **kwargs: Any) -> httpx.Response:
        """``POST`` (to ``self.url`` unless told otherwise); transport failures raised as
        ``self.error``."""
        try:
            return self._client.post(url or self.url, **kwargs)
        except httpx.HTTPError as exc:
            raise self.failure(exc) from exc

    @contextmanager
    def stream(self, method: str, url: str | None = None, **kwargs: Any) -> Iterator[Response]:
        """A streamed answer; failures while it streams are translated too."""
        try:
            with self._client.stream(method, url or self.url, **kwargs) as response:
                yield response
        except httpx.HTTPError as exc:
            raise self.failure(exc) from exc

    # -- errors -------------------------------------------------------------------------------
    def failure(self, exc: httpx.HTTPError) -> SeekError:
        kind = failure_kind(exc)
        server = self.server
        try:
            server = origin(str(exc.request.url))
        except RuntimeError:  # an exception raised before a request existed
            pass
        if self.describe is not None:
            return self.error(redact(self.describe(kind, server, exc)))
        if kind == TIMED_OUT:
            return self.error(f"{server} did not answer within {self.timeout_s:g} s")
        return self.error(f"cannot reach {server}{self.hint}")

    def refusal(self, response: httpx.Response, *, model: str = "", key_setting: str = "",
                pull_hint: str = "") -> SeekError:  # fmt: skip
        """The error for an answer with status >= 400, in the caller's error class."""
        status = response.status_code
        message = server_message(response)
        if status == 401:
            where = f"${self.token_env}" if self.token_env else f"{key_setting} (none is set)"
            return self.error(f"401: check the API key in {where}")
        lowered = message.lower()
        if status == 404 and model and "not found" in lowered and "model" in lowered:
            return self.error(f"model {model!r} not found on the server — pull it first{pull_hint}")
        return self.error(f"{self.server} answered HTTP {status}: {message}")

    def check(self, response: httpx.Response, **refusal: str) -> httpx.Response:
        if response.status_code >= 400:
            response.read()
            raise self.refusal(response, **refusal)
        return response

    def json(self, response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError as exc:
            raise self.error(f"{self.server} answered with something that is not JSON") from exc
