"""Shared fixtures: a temp index home, a workspace builder and a deterministic embedder."""

from __future__ import annotations

import hashlib
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from seek.settings import Settings, load_settings
from seek.workspace import Workspaces

# Hypothesis judges speed per example (200 ms by default): on a shared 2-core machine a test
# writing files or LanceDB rows fails that by chance, not because behaviour broke. A hanging
# test is still caught by pytest-timeout (pyproject.toml).
hypothesis_settings.register_profile(
    "seek", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
hypothesis_settings.load_profile("seek")

FAKE_DIMS = 16


def pytest_report_header() -> str:
    """What this machine's clock reads, to see at a glance that a run under
    ``tests/near_zero_clock`` (issue 42) really ran as on a machine booted a moment ago."""
    return f"time.monotonic() at start: {time.monotonic():.1f} s"


SMALL_PROJECT = {
    "src/retry.py": "def configure_retries(policy):\n    return RetryPolicy(policy)\n",
    "src/http_client.py": "class HttpClient:\n    def send(self, request):\n        return 1\n",
    "src/router.py": "class Router:\n    def add_route(self, path):\n        pass\n",
    "tests/test_router.py": "def test_router():\n    Router().add_route('/')\n",
    "README.md": "# Demo\n\nHow retries are configured.\n",
}
"""A workspace of three small sources, a test and a README, for search tests."""


class HashEmbedder:
    """Vectors derived from a hash of each text; counts what it was asked to embed."""

    model_id = "test/hash"

    def __init__(self, dims: int = FAKE_DIMS) -> None:
        self.dims = dims
        self.calls: list[int] = []
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        self.texts.extend(texts)
        out = np.empty((len(texts), self.dims), dtype=np.float32)
        for i, text in enumerate(texts):
            digest = hashlib.sha256(text.encode()).digest()
            out[i] = np.frombuffer(digest, dtype=np.uint8)[: self.dims] / 255.0
        return out

    def files_embedded(self) -> set[str]:
        return {text.split("\n", 1)[0] for text in self.texts}


def recv_until(sock: socket.socket, marker: bytes, size: int = 4096) -> bytes:
    """What a raw HTTP connection answers, read until ``marker`` or the connection's end."""
    answer = b""
    while marker not in answer:
        piece = sock.recv(size)
        if not piece:
            break
        answer += piece
    return answer


@pytest.fixture
def seek_home(tmp_path: Path) -> Path:
    home = tmp_path / "seek-home"
    home.mkdir()
    return home


@pytest.fixture
def library(settings_for: Callable[..., Settings], hash_provider: str) -> Workspaces:
    """The library's facade (one call at a time, no server), embedding with the hash
    embedder."""
    return Workspaces(live=False, settings=settings_for(provider=hash_provider))


@pytest.fixture
def in_home(seek_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The CLI and MCP server run in this process, on the test's index home."""
    monkeypatch.setenv("SEEK_HOME", str(seek_home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(seek_home / "config"))
    return seek_home


@pytest.fixture
def settings_for(seek_home: Path) -> Callable[..., Settings]:
    def make(workspace: Path | None = None, **overrides: object) -> Settings:
        return load_settings(
            workspace,
            overrides={"home": str(seek_home), **overrides},
            env={},
            user_config=seek_home / "no-user-config.toml",
        )

    return make


@pytest.fixture
def make_tree(tmp_path: Path) -> Callable[[dict[str, str | bytes]], Path]:
    """Write ``{relative path: text or bytes}`` under a fresh folder and return it."""

    def make(files: dict[str, str | bytes], name: str = "ws") -> Path:
        root = tmp_path / name
        root.mkdir(exist_ok=True)
        for rel, content in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        return root

    return make


@pytest.fixture
def hash_provider() -> Iterator[str]:
    """``provider = "test-hash"``: the hash embedder, registered in the real registry the
    way a third-party provider is (and removed afterwards)."""
    from seek.embed import PROVIDERS, register_provider

    register_provider("test-hash", lambda settings: HashEmbedder())
    try:
        yield "test-hash"
    finally:
        PROVIDERS.pop("test-hash", None)


@pytest.fixture
def lance_keywords(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every table gets LanceDB's full-text index, for tests of that path (normally only
    tables of ``KEYWORD_INDEX_MIN_CHUNKS`` chunks do: smaller ones are searched in memory)."""
    monkeypatch.setattr("seek.store.table.KEYWORD_INDEX_MIN_CHUNKS", 1)
    monkeypatch.setattr("seek.store.health._SOUND", {})
