"""`seek serve`'s error answers, its CLI token path, `seek status` naming the writer and the
team timeout, each against real servers on 127.0.0.1. What is promised comes from README
"HTTP API" (errors are ``{"error": {"code", "message"}}`` with a fitting status, requests are
limited to 30 s, a token is required beyond loopback) and "Team context" (8 s timeout)."""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler

import httpx
import pytest
from conftest import SMALL_PROJECT, HashEmbedder, recv_until
from embed_server import serve
from local_http import serving
from test_server import running

from seek.errors import SeekError
from seek.index.indexer import index_workspace
from seek.index.status import workspace_status
from seek.serving import requests as request_checks
from seek.serving.config import ServeConfig
from seek.store import WriterLock, index_dir_for
from seek.web import api as server_module
from seek.workspace.team import ask_team

pytestmark = pytest.mark.slow


def error_of(answer: httpx.Response) -> str:
    body = answer.json()
    assert set(body) == {"error"} and body["error"]["message"], body
    return body["error"]["message"]


@contextmanager
def served_through_an_embedding_server(root, seek_home):
    """`seek serve` of ``root`` whose embeddings come from the test embedding server:
    yields the API's URL and the embedding server's :class:`Behaviour` (to slow it down)."""
    with serve() as (embed_url, behaviour):
        overrides = {
            "home": str(seek_home), "provider": "ollama", "model": "test-embed",
            "base_url": embed_url,
        }  # fmt: skip
        with running(ServeConfig(workspaces=(root,), overrides=overrides)) as url:
            yield url, behaviour


def test_the_request_time_limit_is_thirty_seconds_as_documented():
    assert request_checks.REQUEST_TIMEOUT_S == 30  # docs/http-api.md: requests to 30 s


def test_a_request_over_the_time_limit_is_answered_504(make_tree, seek_home, monkeypatch):
    root = make_tree(SMALL_PROJECT)
    with served_through_an_embedding_server(root, seek_home) as (url, behaviour):
        assert httpx.post(f"{url}/v1/index", json={}, timeout=60).status_code == 200
        behaviour.hang_s = 3.0  # the query's embedding now takes 3 s
        monkeypatch.setattr(request_checks, "REQUEST_TIMEOUT_S", 0.5)
        started = time.monotonic()
        answer = httpx.post(f"{url}/v1/search", json={"query": "HttpClient"}, timeout=30)
        elapsed = time.monotonic() - started
    assert answer.status_code == 504
    assert answer.json()["error"]["code"] == "timeout"  # docs/http-api.md
    assert error_of(answer) == "the request took longer than 0.5 s"
    assert elapsed < 2.5  # answered at the limit, not when the work finished


def test_the_time_limit_has_no_grace(make_tree, seek_home, monkeypatch):
    """Work that outlasts the limit by a little is cut at the limit too."""
    root = make_tree(SMALL_PROJECT)
    with served_through_an_embedding_server(root, seek_home) as (url, behaviour):
        assert httpx.post(f"{url}/v1/index", json={}, timeout=60).status_code == 200
        behaviour.hang_s = 0.6
        monkeypatch.setattr(request_checks, "REQUEST_TIMEOUT_S", 0.2)
        answer = httpx.post(f"{url}/v1/search", json={"query": "HttpClient"}, timeout=30)
    assert answer.status_code == 504, answer.text


def test_an_unexpected_failure_is_500_without_a_traceback(make_tree, seek_home, monkeypatch,
                                                          caplog):  # fmt: skip
    """docs/http-api.md: `internal` (500, never with a traceback); the server logs one line
    naming the request and the failure."""
    from seek.serving import connections
    from seek.workspace import Workspaces

    def broken(self, root):
        raise RuntimeError("disk on fire\n  at /secret/place")

    monkeypatch.setattr(Workspaces, "status", broken)
    monkeypatch.setattr(connections, "_limit", connections._RateLimit(100.0))
    root = make_tree(SMALL_PROJECT)
    with caplog.at_level("ERROR", logger="seek.serve"):
        with running(ServeConfig(workspaces=(root,), overrides={"home": str(seek_home)})) as url:
            answer = httpx.get(f"{url}/v1/status", timeout=30)
    assert answer.status_code == 500
    assert answer.json() == {
        "error": {"code": "internal", "message": "internal error (RuntimeError)"}
    }
    lines = [r.getMessage() for r in caplog.records if r.name == "seek.serve"]
    assert lines == ["GET /v1/status failed: RuntimeError: disk on fire at /secret/place"]


def test_the_index_route_indexes_the_workspace_its_path_names(make_tree, seek_home):
    # docs/http-api.md: `POST /v1/index` `{"path"?}` runs on the workspace that path names.
    first = make_tree(SMALL_PROJECT, name="first")
    second = make_tree({"lib/only_here.py": "def only_here():\n    return 1\n"}, name="second")
    config = ServeConfig(workspaces=(first, second), overrides={"home": str(seek_home)})
    with running(config) as url:
        answer = httpx.post(f"{url}/v1/index", json={"path": str(second)}, timeout=60)
        status = httpx.get(f"{url}/v1/status", params={"path": str(first)}, timeout=30)
    assert answer.status_code == 200, answer.text
    assert answer.json()["workspace"] == str(second) and answer.json()["files"] == 1
    assert status.json()["files"] == 0  # the first workspace was not indexed


def test_a_served_workspace_that_vanished_is_404(make_tree, seek_home):
    root = make_tree(SMALL_PROJECT)
    with running(ServeConfig(workspaces=(root,), overrides={"home": str(seek_home)})) as url:
        shutil.rmtree(root)
        answer = httpx.post(f"{url}/v1/search", json={"query": "HttpClient"}, timeout=60)
    assert answer.status_code == 404
    assert "does not exist" in error_of(answer)
    assert answer.json()["error"]["code"] == "no_workspace"  # docs/http-api.md


def test_an_index_being_written_by_another_process_is_409_naming_it(make_tree, seek_home):
    root = make_tree(SMALL_PROJECT)
    config = ServeConfig(workspaces=(root,), overrides={"home": str(seek_home)})
    with running(config) as url:
        settings = server_module.Service(config).workspaces.settings(root)
        with WriterLock(index_dir_for(root, settings), "seek index (elsewhere)"):
            answer = httpx.post(f"{url}/v1/index", json={}, timeout=60)
    assert answer.status_code == 409
    assert f"pid {os.getpid()} (seek index (elsewhere))" in error_of(answer)
    assert answer.json()["error"]["code"] == "locked"  # docs/http-api.md


def test_a_seek_error_is_422_with_its_message_not_a_traceback(make_tree, seek_home):
    root = make_tree(SMALL_PROJECT)
    overrides = {"home": str(seek_home), "provider": "no-such-provider"}
    with running(ServeConfig(workspaces=(root,), overrides=overrides)) as url:
        answer = httpx.post(f"{url}/v1/search", json={"query": "HttpClient"}, timeout=60)
    assert answer.status_code == 422
    assert answer.json()["error"]["code"] == "seek_error"  # docs/http-api.md
    message = error_of(answer)
    assert "no-such-provider" in message and "Traceback" not in answer.text


# -- the CLI's token path --------------------------------------------------------------------
def seek_env(seek_home, **extra):
    env = {**os.environ, "SEEK_HOME": str(seek_home), "XDG_CONFIG_HOME": str(seek_home / "cfg")}
    env.pop("SEEK_TOKEN", None)
    return {**env, **extra}


def test_serve_refuses_to_bind_beyond_loopback_without_a_token(make_tree, seek_home):
    root = make_tree(SMALL_PROJECT)
    args = [sys.executable, "-m", "seek", "-C", str(root), "serve", "--host", "0.0.0.0"]
    proc = subprocess.run(args, env=seek_env(seek_home), capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.startswith("seek: error: binding 0.0.0.0 exposes your code")
    assert "set SEEK_TOKEN" in proc.stderr and "Traceback" not in proc.stderr


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_seek_serve_with_seek_token_requires_it_on_every_request(make_tree, seek_home):
    root = make_tree(SMALL_PROJECT)
    port = free_port()
    args = [sys.executable, "-m", "seek", "serve", "--port", str(port), "--workspace", str(root)]
    proc = subprocess.Popen(args, env=seek_env(seek_home, SEEK_TOKEN="s3cret"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1/status"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                refused = httpx.get(url, timeout=5)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.communicate()[1]
                assert time.monotonic() < deadline, "seek serve did not start"
                time.sleep(0.1)
        wrong = httpx.get(url, headers={"Authorization": "Bearer nope"}, timeout=5)
        right = httpx.get(url, headers={"Authorization": "Bearer s3cret"}, timeout=30)
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    assert refused.status_code == 401 and wrong.status_code == 401
    assert right.status_code == 200 and right.json()["workspace"] == str(root)


# -- `seek status` names the writer ----------------------------------------------------------
def test_status_names_the_process_writing_the_index(make_tree, settings_for, seek_home):
    # docs/commands.md, "seek status": "who is writing it".
    root = make_tree(SMALL_PROJECT)
    settings = settings_for()
    index_workspace(root, settings, embedder=HashEmbedder())
    assert workspace_status(root, settings).writer == ""
    holder = f"pid {os.getpid()} (seek watch {root}) on {socket.gethostname()} since "
    with WriterLock(index_dir_for(root, settings), f"seek watch {root}"):
        assert workspace_status(root, settings).writer.startswith(holder)
        shown = subprocess.run(
            [sys.executable, "-m", "seek", "status", str(root)], env=seek_env(seek_home),
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert f"writer      {holder}" in shown.stdout
    assert workspace_status(root, settings).writer == ""


# -- the team timeout ---------------------------------------------------------------------------
def test_a_slow_team_server_is_given_up_after_team_timeout_s(settings_for):
    # docs/team.md: each search asks the team server with an 8 s timeout
    # (team_timeout_s); a failure is a note, never an error. The server here answers well,
    # but only after 3 s: with a 0.5 s timeout there must be no hits and a note.
    class Slow(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):  # stdlib name
            time.sleep(3.0)
            data = b'{"workspace": "w", "hits": []}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    with serving(Slow) as url:
        started = time.monotonic()
        hits, note = ask_team(settings_for(team_url=url, team_timeout_s=0.5), "retries")
        elapsed = time.monotonic() - started
    assert hits == [] and note.startswith(f"No team hits: the team server at {url} failed")
    assert elapsed < 2.5


def test_the_served_workspaces_own_settings_apply(make_tree, seek_home):
    # A workspace's .seek.toml counts for every endpoint (docs/settings.md).
    root = make_tree({**SMALL_PROJECT, ".seek.toml": "chunk_max_chars = 500\n"})
    with running(ServeConfig(workspaces=(root,), overrides={"home": str(seek_home)})) as url:
        assert httpx.post(f"{url}/v1/index", json={}, timeout=60).status_code == 200
        context = httpx.post(f"{url}/v1/context", json={"question": "HttpClient"}, timeout=60)
        search = httpx.post(f"{url}/v1/search", json={"query": "HttpClient"}, timeout=60)
        status = httpx.get(f"{url}/v1/status", timeout=30).json()
    assert context.status_code == 200 and search.status_code == 200
    # Had any endpoint used the default settings, its refresh would have rebuilt the index
    # with 1,000-character chunks and the status would now ask for a rebuild.
    assert status["exists"] and not status["rebuild_reason"]


def test_serve_config_keeps_what_it_was_given(make_tree, monkeypatch):
    root = make_tree(SMALL_PROJECT)
    monkeypatch.setenv("SEEK_TOKEN", "s3cret")
    config = server_module.serve_config("0.0.0.0", (root,), {"home": "/tmp/h"})
    assert (config.workspaces, config.token, config.overrides) == (
        (root,),
        "s3cret",
        {"home": "/tmp/h"},
    )
    monkeypatch.delenv("SEEK_TOKEN")
    with pytest.raises(SeekError) as refused:
        server_module.serve_config("10.0.0.1", (root,), {})
    assert str(refused.value) == (
        "binding 10.0.0.1 exposes your code to the network: set SEEK_TOKEN to a secret token "
        "first (clients send `Authorization: Bearer <token>`)"
    )


# -- an index run longer than the request limit, and team searches that do not loop ------------
def test_an_index_run_over_the_time_limit_is_202_and_goes_on(make_tree, seek_home, monkeypatch):
    # docs/http-api.md: `POST /v1/index` answers 202 when its run outlasts the request
    # limit; it goes on, and `/v1/status` shows when it is done.
    root = make_tree(SMALL_PROJECT)
    with served_through_an_embedding_server(root, seek_home) as (url, behaviour):
        behaviour.hang_s = 1.0  # each embedding request takes a second
        monkeypatch.setattr(request_checks, "REQUEST_TIMEOUT_S", 0.3)
        answer = httpx.post(f"{url}/v1/index", json={}, timeout=30)
        assert answer.status_code == 202, answer.text
        assert answer.json()["running"] is True
        assert "/v1/status" in answer.json()["summary"]
        monkeypatch.setattr(request_checks, "REQUEST_TIMEOUT_S", 30.0)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            status = httpx.get(f"{url}/v1/status", timeout=30).json()
            if status["files"] == len(SMALL_PROJECT) and not status["writer"]:
                break
            time.sleep(0.2)
        assert status["files"] == len(SMALL_PROJECT), status


def test_a_team_search_does_not_ask_the_servers_own_team(make_tree, seek_home):
    # docs/team.md: a team search carries `X-Seek-Team: 1`; a server answering it
    # does not ask its own team server in turn (no loops). Its own users' searches do.
    asked = []

    class Team(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):  # stdlib name
            asked.append(self.headers.get("X-Seek-Team"))
            data = b'{"workspace": "shared", "hits": []}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    root = make_tree(SMALL_PROJECT)
    with serving(Team) as team_url:
        overrides = {"home": str(seek_home), "team_url": team_url}
        with running(ServeConfig(workspaces=(root,), overrides=overrides)) as url:
            hop = {"X-Seek-Team": "1"}
            relayed = httpx.post(f"{url}/v1/search", json={"query": "retries"}, headers=hop,
                                 timeout=60)  # fmt: skip
            assert relayed.status_code == 200 and asked == []
            own = httpx.post(f"{url}/v1/search", json={"query": "retries"}, timeout=60)
            assert own.status_code == 200 and asked == ["1"]


def test_serve_hosts_and_origins_come_from_the_users_settings(make_tree, monkeypatch, tmp_path):
    """docs/security.md: a name in `serve_hosts` is accepted in `Host`, beyond loopback the
    machine's host name too; `serve_origins` get CORS. Both from the user's settings."""
    root = make_tree(SMALL_PROJECT)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("SEEK_TOKEN", "s3cret")
    overrides = {"home": str(tmp_path / "h"), "serve_hosts": "seek.team.example",
                 "serve_origins": "https://app.example"}  # fmt: skip
    local = server_module.serve_config("127.0.0.1", (root,), overrides)
    assert local.hosts == ("seek.team.example",)
    assert local.origins == ("https://app.example",)
    shared = server_module.serve_config("0.0.0.0", (root,), overrides)
    assert shared.hosts[0] == "seek.team.example"
    assert set(shared.hosts[1:]) == {socket.gethostname(), socket.getfqdn()}
    assert shared.origins == ("https://app.example",)


def test_each_endpoint_reads_its_fields_with_their_limits(make_tree, seek_home, monkeypatch):
    """docs/http-api.md and "Security": `k` 1-50 (10 by default), `budget` from 0, questions
    and queries to 2,000 characters, bodies to 64 KiB, JSON objects only; each answer with its
    code. One server of its own (the handlers are made with the app)."""
    root = make_tree(
        {f"src/m{i:02d}.py": f"def handler_{i}():\n    return {i}\n" for i in range(12)}
    )
    config = ServeConfig(workspaces=(root,), overrides={"home": str(seek_home)})

    def error(answer):
        return answer.status_code, answer.json()["error"]

    with running(config) as url:
        post = lambda route, **kw: httpx.post(f"{url}/v1/{route}", timeout=60, **kw)  # noqa: E731
        raw = {"headers": {"Content-Type": "application/json"}}
        hits = post("search", json={"query": "handler"}).json()["hits"]
        budget = {b: post("context", json={"question": "handler", "budget": b})
                  for b in (0, 10_000_000, 10_000_001)}  # fmt: skip
        elsewhere = post("context", json={"question": "handler", "path": "/"})
        long_query = post("search", json={"query": "q" * 2001})
        long_question = post("context", json={"question": "q" * 2001})
        empty = post("search", content=b"", **raw)
        broken = post("search", content=b"{", **raw)
        listed = post("search", content=b"[1]", **raw)
        # exactly 64 KiB is allowed (the complaint is the query's length), one byte more is not
        exact = b'{"query": "' + b"q" * (64 * 1024 - 13) + b'"}'
        at_limit = post("search", content=exact, **raw)
        over = post("search", content=exact[:-2] + b'q"}', **raw)
    assert len(hits) == 10
    assert budget[0].status_code == 200 and budget[0].json()["blocks"] == []
    assert budget[10_000_000].status_code == 200 and budget[10_000_000].json()["blocks"]
    too_big = "budget must be an integer from 0 to 10000000"
    assert error(budget[10_000_001]) == (400, {"code": "bad_request", "message": too_big})
    assert error(elsewhere) == (403, {
        "code": "forbidden", "message": "path is not a workspace this server serves"})  # fmt: skip
    assert error(long_query) == (400, {
        "code": "too_long", "message": "queries are limited to 2000 characters"})  # fmt: skip
    assert error(long_question) == (400, {
        "code": "too_long", "message": "questions are limited to 2000 characters"})  # fmt: skip
    assert error(empty) == (
        400,
        {"code": "bad_request", "message": "query must be a non-empty string"},
    )  # noqa: E501
    assert error(broken) == (
        400,
        {"code": "bad_json", "message": "the request body is not valid JSON"},
    )  # noqa: E501
    assert error(listed) == (400, {
        "code": "bad_request", "message": "the request body must be a JSON object"})  # fmt: skip
    assert len(exact) == 64 * 1024
    assert error(at_limit) == (400, {
        "code": "too_long", "message": "queries are limited to 2000 characters"})  # fmt: skip
    assert error(over) == (413, {
        "code": "too_large", "message": "request bodies are limited to 65536 bytes"})  # fmt: skip


def test_a_body_that_does_not_arrive_in_time_is_408(make_tree, seek_home, monkeypatch):
    """docs/security.md: bodies are read within 10 s (here 0.5 s), else 408; and never past
    the request's own limit (here 0.3 s with 10 s for the body)."""
    root = make_tree(SMALL_PROJECT)
    config = ServeConfig(workspaces=(root,), overrides={"home": str(seek_home)})

    def trickled(url):
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            head = b"Content-Type: application/json\r\nContent-Length: 40\r\n\r\n{"
            sock.sendall(b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\n" + head)
            started = time.monotonic()
            answer = recv_until(sock, b"}}")
        return answer, time.monotonic() - started

    monkeypatch.setattr(request_checks, "BODY_TIMEOUT_S", 0.5)
    with running(config) as url:
        answer, _ = trickled(url)
    assert answer.startswith(b"HTTP/1.1 408"), answer
    body = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert body == {"error": {"code": "timeout",
                              "message": "the request body must arrive within 0.5 s"}}  # fmt: skip
    monkeypatch.setattr(request_checks, "BODY_TIMEOUT_S", 10.0)
    monkeypatch.setattr(request_checks, "REQUEST_TIMEOUT_S", 0.3)
    with running(config) as url:
        answer, elapsed = trickled(url)
    assert answer.startswith(b"HTTP/1.1 408") and elapsed < 5, (answer, elapsed)
