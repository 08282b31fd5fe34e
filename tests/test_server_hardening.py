"""``seek serve`` against a hostile web page and odd requests (issue 12, defects 1, 7, 8, 10):
a real server on 127.0.0.1, raw headers where a browser would send them."""

import httpx
import pytest
from seek_server import running

from seek.store import index_dir_for, load_manifest
from seek.web.api import ServeConfig

pytestmark = pytest.mark.slow


@pytest.fixture
def config(make_tree, seek_home):
    root = make_tree({"src/client.py": "class HttpClient:\n    def send(self):\n        pass\n"})
    return ServeConfig(workspaces=(root,), overrides={"home": str(seek_home)})


def port_of(url):
    return int(url.rsplit(":", 1)[1])


def test_dns_rebinding_hosts_are_refused(config):
    """Defect 1: a page on evil.example re-pointed at 127.0.0.1 sends `Host: evil.example`."""
    with running(config) as url:
        port = port_of(url)
        answers = {
            host: httpx.get(f"{url}/v1/status", headers={"Host": host}, timeout=30)
            for host in ("evil.example", f"evil.example:{port}", f"localhost:{port + 1}",
                         f"localhost:{port}", f"127.0.0.1:{port}", "localhost", "[::1]")
        }  # fmt: skip
    for host in ("evil.example", f"evil.example:{port}", f"localhost:{port + 1}"):
        assert answers[host].status_code == 400, host
        assert answers[host].json()["error"]["code"] == "bad_host"
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", "localhost", "[::1]"):
        assert answers[host].status_code == 200, host


def test_configured_host_names_are_accepted(config):
    config.hosts = ("seek.team.example",)
    with running(config) as url:
        named = httpx.get(f"{url}/v1/status", headers={"Host": "seek.team.example"}, timeout=30)
        other = httpx.get(f"{url}/v1/status", headers={"Host": "other.example"}, timeout=30)
    assert named.status_code == 200 and other.status_code == 400


def test_cross_origin_requests_are_refused_and_get_no_cors_headers(config):
    """Defect 1: any page could POST `/v1/index {"rebuild": true}` cross-site."""
    with running(config) as url:
        evil = httpx.post(
            f"{url}/v1/index", json={"rebuild": True},
            headers={"Origin": "http://evil.example"}, timeout=30,
        )  # fmt: skip
        sneaky = httpx.get(f"{url}/v1/status", headers={"Sec-Fetch-Site": "cross-site"})
        own = httpx.get(f"{url}/v1/status", headers={"Origin": url}, timeout=30)
    assert evil.status_code == 403 and evil.json()["error"]["code"] == "cross_origin"
    assert sneaky.status_code == 403
    assert own.status_code == 200
    for answer in (evil, own):
        assert not any(h.lower().startswith("access-control") for h in answer.headers)
    assert not load_manifest(index_dir_for(config.workspaces[0], settings(config))).has_index


def settings(config):
    from seek.settings import load_settings

    return load_settings(config.workspaces[0], overrides=config.overrides)


def test_configured_origins_get_cors_headers(config):
    config.origins = ("https://app.example",)
    with running(config) as url:
        allowed = httpx.get(f"{url}/v1/status", headers={"Origin": "https://app.example"})
        preflight = httpx.options(
            f"{url}/v1/search", headers={"Origin": "https://app.example",
                                         "Access-Control-Request-Method": "POST"},
        )  # fmt: skip
        other = httpx.get(f"{url}/v1/status", headers={"Origin": "https://other.example"})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "https://app.example"
    assert preflight.status_code == 204
    assert "POST" in preflight.headers["access-control-allow-methods"]
    assert other.status_code == 403 and "access-control-allow-origin" not in other.headers


@pytest.mark.parametrize(
    "content_type", [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]
)
def test_post_bodies_must_be_declared_json(config, content_type):
    """Defect 1: `text/plain` bodies need no CORS preflight, so they must not be parsed."""
    headers = {"Content-Type": content_type} if content_type else {}
    with running(config) as url:
        answer = httpx.post(f"{url}/v1/index", content=b'{"rebuild": true}', headers=headers)
        charset = httpx.post(
            f"{url}/v1/search", content=b'{"query": ""}',
            headers={"Content-Type": "application/json; charset=utf-8"},
        )  # fmt: skip
    assert answer.status_code == 415
    assert answer.json()["error"]["code"] == "unsupported_media_type"
    assert charset.status_code == 400  # parsed: the empty query is the complaint
    assert not load_manifest(index_dir_for(config.workspaces[0], settings(config))).has_index


def post_raw(url, endpoint, body: bytes):
    return httpx.post(f"{url}{endpoint}", content=body,
                      headers={"Content-Type": "application/json"}, timeout=60)  # fmt: skip


def test_odd_text_and_deep_json_are_400_json_errors(config):
    """Defects 7 and 8: lone surrogates, NUL in paths, deeply nested JSON."""
    with running(config) as url:
        answers = [
            post_raw(url, "/v1/search", b'{"query": "\\ud800abc"}'),
            post_raw(url, "/v1/context", b'{"question": "why \\udfff"}'),
            post_raw(url, "/v1/search", b'{"query": "x", "path": "src\\u0000x"}'),
            post_raw(url, "/v1/search", b'{"query": "x", "focus": ["a\\u0000"]}'),
            post_raw(url, "/v1/search", b"[" * 30_000),
            post_raw(url, "/v1/search", b'{"query": ' + b"[" * 30_000 + b"]" * 30_000 + b"}"),
            httpx.get(f"{url}/v1/status?path=src%00x", timeout=30),
        ]
    for answer in answers:
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"]["message"]


@pytest.mark.parametrize(
    ("endpoint", "body"),
    [
        ("/v1/index", {"rebuild": "no"}),
        ("/v1/index", {"rebuild": 1}),
        ("/v1/search", {"query": "x", "k": True}),
        ("/v1/search", {"query": "x", "k": 2.0}),
        ("/v1/search", {"query": "x", "focus": "src/client.py"}),
        ("/v1/context", {"question": "x", "budget": True}),
        ("/v1/context", {"question": "x", "budget": -100}),
    ],
)
def test_types_are_strict(config, endpoint, body):
    """Defect 10: `{"rebuild": "no"}` ran a rebuild; `k: true` counted as 1."""
    with running(config) as url:
        answer = httpx.post(f"{url}{endpoint}", json=body, timeout=60)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["code"] == "bad_request"
    assert not load_manifest(index_dir_for(config.workspaces[0], settings(config))).has_index


def test_unknown_routes_and_methods_are_json_errors(config):
    with running(config) as url:
        missing = httpx.get(f"{url}/nope")
        method = httpx.get(f"{url}/v1/search")
        document = httpx.get(f"{url}/v1/openapi.json")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    assert method.status_code == 405 and method.json()["error"]["code"] == "method_not_allowed"
    assert set(document.json()["paths"]) == {"/v1/search", "/v1/context", "/v1/index", "/v1/status"}


def test_a_workspace_file_cannot_widen_who_may_reach_seek(make_tree, seek_home, caplog):
    """A cloned repository's .seek.toml must not let a web page or an agent in."""
    from seek.settings import load_settings

    toml = (
        'serve_hosts = ["evil.example"]\nmcp_roots = ["/"]\n'
        'serve_origins = ["http://evil.example"]\nchunk_max_chars = 800\n'
    )
    root = make_tree({".seek.toml": toml})
    settings = load_settings(root, env={}, user_config=seek_home / "none.toml")
    assert settings.serve_hosts == () and settings.mcp_roots == () and not settings.serve_origins
    assert settings.chunk_max_chars == 800  # the rest of the file still counts
    assert "serve_hosts in" in caplog.text and "is ignored" in caplog.text
    user = seek_home / "config.toml"
    user.write_text('serve_hosts = ["seek.team.example"]\n')
    assert load_settings(root, env={}, user_config=user).serve_hosts == ("seek.team.example",)
