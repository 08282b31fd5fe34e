"""Embedding servers: Ollama (``/api/embed``) and OpenAI-compatible (``/v1/embeddings``:
OpenAI, LM Studio, vLLM, llama.cpp, LiteLLM), with the reference's behaviour (§5):

- texts go in batches of ``embed_batch_size`` (16), up to ``embed_concurrency`` requests in
  flight (4 for your own server, 1 for a shared gateway);
- a 4xx answer to a list (other than 429), or a reply with the wrong number of vectors,
  switches this embedder to one text per request for the rest of the run; a single text is
  always sent as a plain string;
- 429 is retried after 0.5, 1, 2, 4, 8, 8, 8 s (a ``Retry-After`` header wins, capped at
  8 s), then the refusal stands;
- every request has a timeout (60 s); connection errors, timeouts and 5xx stop the run with
  a one-line message (files already embedded are kept by the indexer);
- the API key is read from the environment variable named by ``api_key_env`` and sent as
  ``Authorization: Bearer`` only when set; it is never stored or logged.

HTTP goes through :class:`seek.remote.Remote` (auth, routes, errors become
:class:`EmbeddingError`, the client is closed with the embedder).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from seek.errors import EmbeddingError, SettingsError
from seek.remote import Remote, Response, join_route
from seek.settings import Settings
from seek.settings.providers import register_provider

log = logging.getLogger(__name__)

RATE_LIMIT_DELAYS_S = (0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0)
MAX_RETRY_AFTER_S = 8.0
DEFAULT_URLS = {"ollama": "http://localhost:11434", "openai": "https://api.openai.com"}
DEFAULT_ROUTES = {"ollama": "/api/embed", "openai": "/v1/embeddings"}


def endpoint(provider: str, base_url: str) -> str:
    """The full embeddings URL. An address naming the route is used as it is; one ending in
    ``/v1`` gets ``/embeddings``; any other gets the provider's usual route appended (so
    ``http://host/ollama`` becomes Open WebUI's ``http://host/ollama/api/embed``)."""
    return join_route(
        base_url or DEFAULT_URLS[provider], DEFAULT_ROUTES[provider],
        named=("/embeddings", "/embed", "/embedding"), v1_route="/embeddings",
    )  # fmt: skip


def parse_vectors(data: Any) -> list[list[float]]:
    """Vectors from any of the three reply dialects: OpenAI ``data[]`` (sorted by ``index``),
    Ollama ``embeddings``, legacy single ``embedding``."""
    if isinstance(data, dict):
        if isinstance(data.get("data"), list):
            items = sorted(data["data"], key=lambda item: item.get("index", 0) or 0)
            return [item["embedding"] for item in items if "embedding" in item]
        if isinstance(data.get("embeddings"), list):
            return list(data["embeddings"])
        if isinstance(data.get("embedding"), list) and data["embedding"]:
            return [data["embedding"]]
    return []


class _ListRefused(Exception):
    """The server would not take a list (4xx) or answered with the wrong count."""


class HttpEmbedder:
    """Embeds through an Ollama or OpenAI-compatible server."""

    def __init__(
        self,
        provider: str,
        model: str,
        *,
        base_url: str = "",
        api_key_env: str = "",
        batch_size: int = 16,
        concurrency: int = 4,
        timeout_s: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        env: dict[str, str] | None = None,
        transport: Any = None,
    ) -> None:
        if provider not in DEFAULT_ROUTES:
            raise SettingsError(f"unknown embedding server kind {provider!r}")
        if not model:
            raise SettingsError(
                f"provider {provider} needs a model name (--model, or `model` in the settings)"
            )
        self.provider = provider
        self.model = model
        self.model_id = f"{provider}/{model}"
        self.url = endpoint(provider, base_url)
        self.api_key_env = api_key_env
        hint = (
            " — is Ollama running? (`ollama serve`)"
            if provider == "ollama"
            else " — is the embeddings server running?"
        )
        self._remote = Remote(
            self.url, error=EmbeddingError, timeout_s=timeout_s, token_env=api_key_env, env=env,
            hint=hint, headers={"Content-Type": "application/json"}, transport=transport,
        )  # fmt: skip
        self.server = self._remote.server
        self.batch_size = max(1, batch_size)
        self.concurrency = max(1, concurrency)
        self.sleep = sleep
        self.single_only = False
        self._lock = threading.Lock()
        self.timeout_s = timeout_s

    def close(self) -> None:
        """Close the connection pool (also done when the embedder is garbage collected)."""
        self._remote.close()

    # -- the public call ---------------------------------------------------------------------
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        batches = [
            list(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)
        ]
        if not batches:
            return np.zeros((0, 0), dtype=np.float32)
        if self.concurrency == 1 or len(batches) == 1:
            results = [self._embed_batch(batch) for batch in batches]
        else:
            with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
                results = list(pool.map(self._embed_batch, batches))
        vectors = [vector for batch in results for vector in batch]
        dims = {len(v) for v in vectors}
        if len(dims) != 1:
            raise EmbeddingError(
                f"{self.server} returned vectors of different lengths {sorted(dims)}"
            )
        return np.asarray(vectors, dtype=np.float32)

    # -- batching and fallback -------------------------------------------------------------------
    def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        if len(batch) > 1 and not self.single_only:
            try:
                return self._request_list(batch)
            except _ListRefused as why:
                with self._lock:
                    if not self.single_only:
                        log.info(
                            "%s: %s; sending one text per request from now on", self.server, why
                        )
                    self.single_only = True
        return [self._request_one(text) for text in batch]

    def _request_list(self, batch: list[str]) -> list[list[float]]:
        response = self._post(batch)
        if 400 <= response.status_code < 500:
            raise _ListRefused(f"a list was refused with HTTP {response.status_code}")
        self._raise_for_status(response)
        vectors = parse_vectors(self._remote.json(response))
        if len(vectors) != len(batch):
            raise _ListRefused(f"{len(vectors)} vectors came back for {len(batch)} texts")
        return vectors

    def _request_one(self, text: str) -> list[float]:
        response = self._post(text)
        self._raise_for_status(response)
        vectors = parse_vectors(self._remote.json(response))
        if not vectors:
            raise EmbeddingError(f"{self.server} answered but returned no embedding vector")
        return vectors[0]

    # -- one HTTP exchange ------------------------------------------------------------------------
    def _post(self, payload: str | list[str]) -> Response:
        body: dict[str, Any] = {"model": self.model, "input": payload}
        if self.provider == "ollama":
            body["stream"] = False  # OpenAI's API rejects unknown fields such as this one
        for attempt in range(len(RATE_LIMIT_DELAYS_S) + 1):
            response = self._remote.post(json=body)
            if response.status_code != 429:
                return response
            if attempt == len(RATE_LIMIT_DELAYS_S):
                break
            self.sleep(self._retry_delay(response, attempt))
        raise EmbeddingError(
            f"{self.server} kept refusing with 429 (rate limited) after "
            f"{len(RATE_LIMIT_DELAYS_S)} retries; try again later or lower embed_concurrency"
        )

    @staticmethod
    def _retry_delay(response: Response, attempt: int) -> float:
        header = response.headers.get("Retry-After", "")
        try:
            return min(max(float(header), 0.0), MAX_RETRY_AFTER_S)
        except ValueError:
            return RATE_LIMIT_DELAYS_S[attempt]

    def _raise_for_status(self, response: Response) -> None:
        if response.status_code >= 400:
            hint = f" (`ollama pull {self.model}`)" if self.provider == "ollama" else ""
            raise self._remote.refusal(
                response, model=self.model, key_setting="api_key_env", pull_hint=hint
            )


def _from_settings(settings: Settings) -> HttpEmbedder:
    return HttpEmbedder(
        settings.provider,
        settings.model,
        base_url=settings.base_url,
        api_key_env=settings.api_key_env,
        batch_size=settings.embed_batch_size,
        concurrency=settings.embed_concurrency,
        timeout_s=settings.embed_timeout_s,
    )


register_provider("ollama", _from_settings)
register_provider("openai", _from_settings)
