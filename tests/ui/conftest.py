"""Fixtures the browser tests share (session-scoped: one `seek ui` process and one
chromium for both modules): a real `seek ui` on 127.0.0.1 serving two real workspaces, a
real embeddings server and a slow streaming chat server on loopback.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from embed_server import serve as embed_serve

from ui.ui_harness import (
    RETRY_PY,
    browser_missing,
    chat_server,
    chromium,
    seek_command,
    start_ui,
    stop,
)

ANSWER = ["Retries are ", "configured in ", "`src/retry.py` ", "<img src=x id=evil> **here**."]
PIECE_DELAY_S = 0.3


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
    # The printed address holds this run's token (`#token=...`): the browser opens it as
    # printed; direct API calls send the token and use the address without it.
    base, _, fragment = url.partition("#")
    auth = {"Authorization": f"Bearer {fragment.removeprefix('token=')}"}
    try:
        yield {"url": url, "base": base, "auth": auth, "app": app, "big": big,
               "config": config, "env": env, "home": home}  # fmt: skip
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
