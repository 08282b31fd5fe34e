"""`seek serve` request checking, one real server for the whole table (docs/http-api.md:
bodies to 64 KiB, queries to 2,000 characters, `k` 1-50, errors as
``{"error": {"code", "message"}}`` with status 400/403/413, never a traceback)."""

import socket

import httpx
import pytest
from conftest import SMALL_PROJECT, recv_until
from test_server import running

from seek.serving.config import ServeConfig, is_loopback

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("served")
    for rel, text in SMALL_PROJECT.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    home = tmp_path_factory.mktemp("home")
    with running(ServeConfig(workspaces=(root,), overrides={"home": str(home)})) as url:
        yield url, root


@pytest.mark.parametrize(
    ("route", "body", "fragment"),
    [
        ("search", {"query": "x", "k": 51}, "k must be an integer from 1 to 50"),
        ("search", {"query": "x", "k": "3"}, "k must be an integer"),
        ("search", {"query": "x", "focus": "src/a.py"}, "focus must be a list"),
        ("search", {"query": "x", "focus": [1]}, "focus must be a list"),
        ("search", {"query": "   "}, "query must be a non-empty string"),
        ("search", {"query": 5}, "query must be a non-empty string"),
        ("search", {"query": "x", "path": 5}, "path must be a string"),
        ("search", [1, 2], "must be a JSON object"),
        ("context", {}, "question must be a non-empty string"),
        ("context", {"question": "x" * 2001}, "questions are limited to 2000 characters"),
        ("context", {"question": "x", "budget": -1}, "budget must be an integer from 0 to"),
        ("context", {"question": "x", "budget": "big"}, "budget must be an integer from 0 to"),
        ("index", "nope", "must be a JSON object"),
    ],
)
def test_bad_requests_are_400_with_a_message(served, route, body, fragment):
    url, _ = served
    answer = httpx.post(f"{url}/v1/{route}", json=body, timeout=30)
    assert answer.status_code == 400, answer.text
    assert fragment in answer.json()["error"]["message"]
    # docs/http-api.md: the code for programs
    assert answer.json()["error"]["code"] == (
        "too_long" if "limited" in fragment else "bad_request"
    )


@pytest.mark.parametrize(
    ("path", "status", "error"),
    [
        (5, 400, {"code": "bad_request", "message": "path must be a string"}),
        ("a" * 4097, 400, {"code": "too_long", "message": "paths are limited to 4096 characters"}),
        ("a" * 4096, 403, {"code": "forbidden",
                           "message": "path is not a workspace this server serves"}),
    ],
)  # fmt: skip
def test_paths_are_checked_before_they_are_used(served, path, status, error):
    url, _ = served
    answer = httpx.post(f"{url}/v1/search", json={"query": "x", "path": path}, timeout=30)
    assert answer.status_code == status
    assert answer.json() == {"error": error}


def test_limits_at_their_exact_values(served):
    url, _ = served
    k50 = httpx.post(f"{url}/v1/search", json={"query": "HttpClient", "k": 50}, timeout=60)
    q2000 = httpx.post(f"{url}/v1/search", json={"query": "a" * 2000, "k": 1}, timeout=60)
    assert k50.status_code == 200 and q2000.status_code == 200
    # A body streamed without a length is cut at 64 KiB as well.
    chunks = iter([b'{"query": "', b"a" * (64 * 1024), b'"}'])
    streamed = httpx.post(
        f"{url}/v1/search",
        content=chunks,
        headers={"Content-Type": "application/json"},
        timeout=30,
    )
    assert streamed.status_code == 413 and streamed.json()["error"]["code"] == "too_large"
    assert streamed.json()["error"]["message"] == "request bodies are limited to 65536 bytes"


def test_the_served_workspace_can_be_named_in_any_spelling(served):
    url, root = served
    for path in (str(root), ".", "src/..", ""):
        answer = httpx.post(
            f"{url}/v1/search", json={"query": "HttpClient", "path": path}, timeout=60
        )
        assert answer.status_code == 200, path
        assert answer.json()["workspace"] == root.name
    status = httpx.get(f"{url}/v1/status", params={"path": str(root)}, timeout=30)
    assert status.status_code == 200


def test_focus_budget_and_rebuild_reach_the_library(served):
    url, _ = served
    focused = httpx.post(
        f"{url}/v1/search",
        json={"query": "send request", "k": 5, "focus": ["src/router.py"]},
        timeout=60,
    ).json()
    assert "src/router.py" in [hit["path"] for hit in focused["hits"]]
    small = httpx.post(
        f"{url}/v1/context", json={"question": "HttpClient", "budget": 0}, timeout=60
    )
    assert small.status_code == 200 and small.json()["blocks"] == []
    rebuilt = httpx.post(f"{url}/v1/index", json={"rebuild": True}, timeout=120).json()
    assert rebuilt["mode"] == "rebuild" and rebuilt["embedded"] == len(SMALL_PROJECT)
    again = httpx.post(f"{url}/v1/index", json={}, timeout=60).json()
    assert again["mode"] == "update" and again["embedded"] == 0
    assert again["unchanged"] == len(SMALL_PROJECT) and again["files"] == len(SMALL_PROJECT)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("localhost", True), ("127.0.0.1", True), ("127.1.2.3", True), ("::1", True),
     ("0.0.0.0", False), ("10.0.0.1", False), ("example.com", False), ("::", False)],
)  # fmt: skip
def test_loopback_addresses(host, loopback):
    assert is_loopback(host) is loopback


def test_focus_changes_what_is_found(served):
    """docs/http-api.md: `focus` files get passes of their own (here the retry module, which
    the query alone does not reach)."""
    url, _ = served

    def paths(**extra):
        body = {"query": "HttpClient", "k": 2, **extra}
        answer = httpx.post(f"{url}/v1/search", json=body, timeout=60)
        assert answer.status_code == 200, answer.text
        return [hit["path"] for hit in answer.json()["hits"]]

    assert "src/retry.py" not in paths()
    assert "src/retry.py" in paths(focus=["src/retry.py"])


def test_focus_limits_at_their_exact_values(served):
    url, _ = served

    def status(focus):
        body = {"query": "HttpClient", "k": 1, "focus": focus}
        return httpx.post(f"{url}/v1/search", json=body, timeout=60).status_code

    assert status([f"src/f{i}.py" for i in range(50)]) == 200
    assert status([f"src/f{i}.py" for i in range(51)]) == 400
    assert status(["a" * 4096]) == 200
    assert status(["a" * 4097]) == 400


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"query": "x", "path": "src\\u0000"}', "path must not contain NUL characters"),
        (b'{"query": "x", "focus": ["a\\u0000"]}', "focus must not contain NUL characters"),
        (
            b'{"query": "x\\ud800"}',
            "query holds invalid Unicode (a lone surrogate such as \\ud800)",
        ),
    ],
)
def test_odd_text_is_refused_naming_the_field(served, body, message):
    url, _ = served
    answer = httpx.post(f"{url}/v1/search", content=body,
                        headers={"Content-Type": "application/json"}, timeout=30)  # fmt: skip
    assert answer.status_code == 400
    assert answer.json() == {"error": {"code": "bad_request", "message": message}}


def test_a_body_declared_too_large_is_refused_before_it_is_read(served):
    """64 KiB bodies (docs/security.md): a declared length over it is answered at once, not
    after the client has been waited for."""
    url, _ = served
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        head = b"Content-Type: application/json\r\nContent-Length: 70000\r\n\r\n"
        sock.sendall(b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\n" + head)
        answer = recv_until(sock, b'"too_large"', 1000)
    assert answer.startswith(b"HTTP/1.1 413"), answer
    assert b'"too_large"' in answer
