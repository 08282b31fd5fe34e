"""Fixtures the browser tests share (session-scoped: one `seek ui` process and one
chromium for both modules): a real `seek ui` on 127.0.0.1 serving two real workspaces, a
real embeddings server and a slow streaming chat server on loopback.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from embed_server import serve as embed_serve
from ui_harness import browser_missing, chat_server, chromium, seek_command, start_ui, stop

ANSWER = ["Retries are ", "configured in ", "`src/retry.py` ", "<img src=x id=evil> **here**."]
PIECE_DELAY_S = 0.3
RETRY_PY = '''import time


class RetryPolicy:
    """How often and how long a failed request is tried again."""

    def __init__(self, attempts=3, backoff_s=0.5, max_backoff_s=30.0):
        self.attempts = attempts
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.retry_on = {429, 500, 502, 503, 504}

    def delay(self, attempt):
        """Seconds to wait before ``attempt``: exponential, capped at max_backoff_s."""
        return min(self.max_backoff_s, self.backoff_s * 2 ** (attempt - 1))

    def should_retry(self, status, attempt):
        """Retry only the statuses a server may recover from, and only so often."""
        return status in self.retry_on and attempt < self.attempts

    def call(self, send, request):
        """Send ``request`` until it succeeds or the attempts run out, sleeping between."""
        for attempt in range(1, self.attempts + 1):
            response = send(request)
            if not self.should_retry(response.status, attempt):
                return response
            time.sleep(self.delay(attempt))
        return response


def configure_retries(settings):
    """Set up retries from the settings file: attempts and backoff."""
    policy = RetryPolicy(settings.get("attempts", 3), settings.get("backoff_s", 0.5))
    policy.max_backoff_s = float(settings.get("max_backoff_s", 30.0))
    return policy
'''


def write_workspaces(base: Path) -> tuple[Path, Path]:
    """app: two small modules and a binary file; big: 60 files, slow enough to watch."""
    app, big = base / "app", base / "big"
    (app / "src").mkdir(parents=True)
    (app / "src/retry.py").write_text(RETRY_PY)
    (app / "src/client.py").write_text(
        "class HttpClient:\n    def send(self, request):\n        return request.retry()\n"
    )
    (app / "notes.bin").write_bytes(b"\x00\x01binary" * 10)
    (big / "pkg").mkdir(parents=True)
    for i in range(60):
        (big / f"pkg/m{i:02}.py").write_text(f"def handler_{i}(event):\n    return event + {i}\n")
    return app, big


@pytest.fixture(scope="session")
def chat():
    with chat_server(ANSWER, PIECE_DELAY_S) as record:
        yield record


@pytest.fixture(scope="session")
def embedder():
    with embed_serve() as (url, behaviour):
        yield url, behaviour


@pytest.fixture(scope="session")
def ui(tmp_path_factory, chat, embedder):
    """A `seek ui` process serving two workspaces: app (small) and big (60 files)."""
    base = tmp_path_factory.mktemp("ui")
    app, big = write_workspaces(base)
    config = base / "config" / "seek" / "config.toml"
    config.parent.mkdir(parents=True)
    embed_url, _ = embedder
    config.write_text(
        f'provider = "ollama"\nbase_url = "{embed_url}"\nmodel = "test-embed"\n'
        f'chat_provider = "ollama"\nchat_url = "{chat.url}"\nchat_model = "llama3"\n'
        "flush_every_files = 2\nembed_batch_size = 4\n"
    )
    env = {**os.environ, "XDG_CONFIG_HOME": str(base / "config")}
    env.pop("SEEK_TOKEN", None)
    home = base / "home"
    proc, url = start_ui(seek_command(home, "ui", str(app), str(big), "--port", "0",
                                      "--no-open"), env)  # fmt: skip
    try:
        yield {"url": url, "app": app, "big": big, "config": config, "env": env, "home": home}
    finally:
        stop(proc)


@pytest.fixture(scope="session")
def shots(tmp_path_factory):
    folder = Path(os.environ.get("SEEK_UI_SHOTS") or tmp_path_factory.mktemp("ui-shots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    if reason := browser_missing():
        pytest.skip(reason)
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as driver:
        yield driver
