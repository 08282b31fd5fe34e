"""`seek serve` on loopback needs a token made for the run (issue 43, finding 7;
docs/http-api.md, "Token"; docs/security.md, "Other local users").

127.0.0.1 is shared by every user of the machine: without a token, another account read
code through `/v1/def` and started index runs. Each test runs the real `seek serve`
process on a free port and asks it as another local process would.
"""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from conftest import SMALL_PROJECT
from corpus_helpers import REPO_B, indexed_corpus

from seek.errors import SeekError
from seek.store.token_file import token_path
from seek.web.api import serve_config

pytestmark = pytest.mark.slow

START = re.compile(r"^seek: serving .* on http://127\.0\.0\.1:(\d+) \((.*)\)$")


def serve_env(seek_home: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "SEEK_HOME": str(seek_home), "XDG_CONFIG_HOME": str(seek_home / "cfg")}
    env.pop("SEEK_TOKEN", None)
    return {**env, **extra}


@contextmanager
def seek_serve(env: dict[str, str], *args: str) -> Iterator[tuple[str, str, list[str]]]:
    """`seek serve --port 0 ARGS`: yields its base URL, what its start line says of the
    token, and every line it printed before that; stopped with SIGTERM after."""
    command = [sys.executable, "-m", "seek", "serve", "--port", "0", *args]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        lines: list[str] = []
        while not (found := START.match(lines[-1] if lines else "")):
            line = proc.stderr.readline()
            assert line, f"seek serve ended: {''.join(lines)}"
            lines.append(line.rstrip("\n"))
        url = f"http://127.0.0.1:{found.group(1)}"
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/v1/openapi.json", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "seek serve did not answer"
                time.sleep(0.1)
        yield url, found.group(2), lines
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_loopback_serve_refuses_requests_without_the_token_it_made(make_tree, seek_home):
    root = make_tree(SMALL_PROJECT)
    with seek_serve(serve_env(seek_home), "--workspace", str(root)) as (url, how, _):
        assert how.startswith("token in ")
        token_file = Path(how.removeprefix("token in "))
        port = int(url.rsplit(":", 1)[1])
        assert token_file == token_path(seek_home.resolve(), port)
        token = token_file.read_text().strip()
        asked = {"json": {"name": "HttpClient"}, "timeout": 60}
        bare = httpx.post(f"{url}/v1/def", **asked)
        wrong = httpx.post(f"{url}/v1/def", headers={"Authorization": "Bearer nope"}, **asked)
        right = httpx.post(f"{url}/v1/def", headers={"Authorization": f"Bearer {token}"},
                           **asked)  # fmt: skip
        # Only the user may read the token: the file 0600 in a 0700 folder.
        modes = [mode(token_file), mode(token_file.parent)]
    assert bare.status_code == 401 and wrong.status_code == 401
    assert right.status_code == 200, right.text
    assert len(token) >= 40  # secrets.token_urlsafe(32)
    assert modes == [0o600, 0o700]
    assert not token_file.exists()  # removed when the server stops


def test_two_runs_make_different_tokens(make_tree, seek_home):
    root = make_tree(SMALL_PROJECT)
    tokens = []
    for _ in range(2):
        with seek_serve(serve_env(seek_home), "--workspace", str(root)) as (_, how, _):
            tokens.append(Path(how.removeprefix("token in ")).read_text())
    assert tokens[0] != tokens[1]


def test_no_token_is_an_explicit_opt_out_with_a_warning(make_tree, seek_home):
    root = make_tree(SMALL_PROJECT)
    with seek_serve(serve_env(seek_home), "--workspace", str(root), "--no-token") as served:
        url, how, lines = served
        status = httpx.get(f"{url}/v1/status", timeout=60)
    assert status.status_code == 200
    assert how == "no token"
    assert any(line.startswith("seek: warning: --no-token: any user") for line in lines)
    assert not (seek_home / "serve").exists()


def test_seek_token_is_used_when_set_and_no_file_is_written(make_tree, seek_home):
    root = make_tree(SMALL_PROJECT)
    env = serve_env(seek_home, SEEK_TOKEN="chosen-by-the-script")
    with seek_serve(env, "--workspace", str(root)) as (url, how, _):
        bare = httpx.get(f"{url}/v1/status", timeout=60)
        right = httpx.get(f"{url}/v1/status", timeout=60,
                          headers={"Authorization": "Bearer chosen-by-the-script"})  # fmt: skip
    assert how == "token: $SEEK_TOKEN"
    assert bare.status_code == 401 and right.status_code == 200
    assert not (seek_home / "serve").exists()


def test_corpus_serve_needs_the_token_too(tmp_path, seek_home, settings_for, make_tree):
    corpus = tmp_path / "corpus"
    indexed_corpus(corpus, {"beta": make_tree(REPO_B, "beta")}, settings_for())
    with seek_serve(serve_env(seek_home), "--corpus", str(corpus)) as (url, how, _):
        token = Path(how.removeprefix("token in ")).read_text().strip()
        bare = httpx.get(f"{url}/v1/repos", timeout=60)
        right = httpx.get(f"{url}/v1/repos", headers={"Authorization": f"Bearer {token}"},
                          timeout=60)  # fmt: skip
    assert bare.status_code == 401
    assert right.status_code == 200, right.text


def test_serve_config_makes_a_token_on_loopback_only_when_none_is_given(make_tree, monkeypatch):
    root = make_tree(SMALL_PROJECT)
    monkeypatch.delenv("SEEK_TOKEN", raising=False)
    made = serve_config("127.0.0.1", (root,), {})
    assert len(made.token) >= 40
    assert serve_config("::1", (root,), {}).token not in ("", made.token)
    assert serve_config("127.0.0.1", (root,), {}, no_token=True).token == ""
    with pytest.raises(SeekError, match="set SEEK_TOKEN"):
        serve_config("0.0.0.0", (root,), {}, no_token=True)
    monkeypatch.setenv("SEEK_TOKEN", "s3cret")
    assert serve_config("127.0.0.1", (root,), {}).token == "s3cret"
    with pytest.raises(SeekError, match="--no-token and SEEK_TOKEN contradict"):
        serve_config("127.0.0.1", (root,), {}, no_token=True)


def test_an_unwritable_token_file_is_one_line_with_what_to_do(make_tree, tmp_path):
    root = make_tree(SMALL_PROJECT)
    not_a_folder = tmp_path / "home-is-a-file"
    not_a_folder.write_text("")
    env = {**serve_env(not_a_folder), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    command = [sys.executable, "-m", "seek", "serve", "--port", "0", "--workspace", str(root)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.startswith("seek: error: cannot write the token file "), done.stderr
    assert "set SEEK_TOKEN" in done.stderr and "Traceback" not in done.stderr
