"""``seek serve`` against a hostile web page and odd requests (issue 12, defects 1, 7, 8, 10):
a real server on 127.0.0.1, raw headers where a browser would send them."""

import json
import socket

import httpx
import pytest
from seek_server import running

from seek.serving.config import ServeConfig
from seek.store import index_dir_for, load_manifest

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


def test_a_configured_origin_is_served_though_its_browser_says_cross_site(config):
    """A page at a ``serve_origins`` origin is on another site than the server, so a browser
    sends ``Sec-Fetch-Site: cross-site`` with every call it makes: that page must be served
    (issue 27). Mutation this pins (guard.py): ``if not origin and headers.get(...)`` ->
    ``if headers.get(...)`` (every allowed page refused with 403)."""
    config.origins = ("https://app.example",)
    browser = {"Origin": "https://app.example", "Sec-Fetch-Site": "cross-site",
               "Sec-Fetch-Mode": "cors"}  # fmt: skip
    with running(config) as url:
        status = httpx.get(f"{url}/v1/status", headers=browser)
        searched = httpx.post(f"{url}/v1/search", json={"query": "HttpClient"}, headers=browser)
        preflight = httpx.options(f"{url}/v1/search", headers={
            **browser, "Access-Control-Request-Method": "POST"})  # fmt: skip
        other = httpx.get(f"{url}/v1/status", headers={**browser, "Origin": "https://b.example"})
        bare = httpx.get(f"{url}/v1/status", headers={"Sec-Fetch-Site": "cross-site"})
    assert status.status_code == 200, status.text
    assert status.headers["access-control-allow-origin"] == "https://app.example"
    assert searched.status_code == 200, searched.text
    assert searched.json()["hits"][0]["path"] == "src/client.py"
    assert preflight.status_code == 204
    # still refused: another site's page, and a cross-site call that hides its origin
    assert other.status_code == 403 and bare.status_code == 403


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
    if "rebuild" in body:  # the field is named, so a client knows what to fix
        assert answer.json()["error"]["message"] == "rebuild must be true or false"
    assert not load_manifest(index_dir_for(config.workspaces[0], settings(config))).has_index


def test_unknown_routes_and_methods_are_json_errors(config):
    with running(config) as url:
        missing = httpx.get(f"{url}/nope")
        method = httpx.get(f"{url}/v1/search")
        document = httpx.get(f"{url}/v1/openapi.json")
        # The GET routes take GET only (and HEAD, which Starlette adds to a GET route).
        gets = ("/v1/status", "/v1/openapi.json")
        posted = [httpx.post(f"{url}{path}", json={}) for path in gets]
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    assert missing.json()["error"]["message"] == "Not Found"
    assert method.status_code == 405 and method.json()["error"]["code"] == "method_not_allowed"
    assert method.json()["error"]["message"] == "Method Not Allowed"
    assert [answer.status_code for answer in posted] == [405, 405]
    assert set(document.json()["paths"]) == {
        "/v1/search",
        "/v1/context",
        "/v1/index",
        "/v1/related",
        "/v1/status",
        *("/v1/def", "/v1/refs", "/v1/callers", "/v1/callees", "/v1/outline", "/v1/map"),
        *("/v1/impact", "/v1/changed", "/v1/review", "/v1/history", "/v1/tests"),
    }


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


# -- the request guard's rules one by one (docs/security.md; seek.serving.guard) ----------


def test_host_names_and_ports_are_read_as_a_host_header_writes_them():
    from seek.serving.guard import address_name, split_host

    assert split_host(" LocalHost:8080 ") == ("localhost", 8080)
    assert split_host("example.org") == ("example.org", None)
    assert split_host("[::1]:9000") == ("[::1]", 9000)
    assert split_host("[::1]") == ("[::1]", None)
    assert split_host("[::1]:") == ("[::1]", None)
    for bad in ("[::1]x", "[::1]:x", "host:8o", "host:123456", "host:-1"):
        with pytest.raises(ValueError):
            split_host(bad)
    assert address_name("::1") == "[::1]" and address_name("fe80::1") == "[fe80::1]"
    assert address_name("192.168.1.5") == "192.168.1.5"
    assert address_name("My-Host") == "my-host"


def guard(**policy):
    from seek.serving.guard import GuardPolicy, RequestGuard

    return RequestGuard(lambda scope, receive, send: None, GuardPolicy(**policy))


def test_the_address_the_connection_came_in_on_is_accepted_with_its_port():
    """README: the Host must name loopback or the address the connection came in on, with
    the server's port, or a name in ``serve_hosts``."""
    lan = ("192.168.1.5", 8000)
    allowed = guard().host_allowed
    assert allowed("192.168.1.5:8000", lan) and allowed("192.168.1.5", lan)
    assert allowed("localhost:8000", lan) and allowed("[::1]:8000", lan)
    assert not allowed("192.168.1.5:8001", lan) and not allowed("192.168.1.6:8000", lan)
    assert not allowed("192.168.1.5:8000", ("127.0.0.1", 8000))
    assert allowed("[fe80::1]:8000", ("fe80::1", 8000))
    assert allowed("localhost:1234", None)  # no known port: the name decides
    assert not allowed("", lan) and not allowed("localhost:x", lan)


def test_serve_hosts_names_are_matched_with_or_without_their_port():
    allowed = guard(extra_hosts=(" Seek.Team.Example ", "proxy.example:8443", " ")).host_allowed
    server = ("10.0.0.2", 8000)
    assert allowed("seek.team.example", server) and allowed("SEEK.team.example:80", server)
    assert allowed("proxy.example:8443", server)
    assert not allowed("proxy.example:9999", server) and not allowed("proxy.example", server)
    assert not allowed("", server)


def test_cors_for_a_configured_origin_and_its_preflight(config):
    """A page at a ``serve_origins`` origin may send a token and a JSON body: the preflight
    allows both headers, and every answer names the origin and varies on it."""
    config.origins = (" HTTPS://App.Example.BOX/ ",)  # spelled loosely in the settings
    config.token = "s3cret"
    origin = {"Origin": "https://app.example.box"}
    with running(config) as url:
        preflight = httpx.options(
            f"{url}/v1/search", headers={**origin, "Access-Control-Request-Method": "POST"}
        )
        answer = httpx.post(f"{url}/v1/search", json={"query": ""}, headers={
            **origin, "Authorization": "Bearer s3cret"})  # fmt: skip
        refused = httpx.post(f"{url}/v1/search", json={"query": ""}, headers=origin)
        slash = {"Origin": "https://app.example.box/", "Authorization": "Bearer s3cret"}
        slashed = httpx.get(f"{url}/v1/status", headers=slash)
        other = httpx.options(f"{url}/v1/search", headers={"Origin": "https://other.example"})
    assert preflight.status_code == 204  # without the token: a browser sends none here
    allowed_headers = {
        h.strip().lower() for h in preflight.headers["access-control-allow-headers"].split(",")
    }  # noqa: E501
    assert {"authorization", "content-type"} <= allowed_headers
    assert {"GET", "POST"} <= {
        m.strip() for m in preflight.headers["access-control-allow-methods"].split(",")
    }  # noqa: E501
    for reply in (preflight, answer):
        assert reply.headers["access-control-allow-origin"] == "https://app.example.box"
        assert reply.headers["vary"] == "Origin"
    assert answer.status_code == 400  # through the guard: the empty query is the complaint
    assert answer.headers["content-type"] == "application/json"  # the app's own headers kept
    assert answer.json()["error"]["code"] == "bad_request"
    assert slashed.status_code == 200
    assert slashed.headers["access-control-allow-origin"] == "https://app.example.box"
    assert refused.status_code == 401
    # the page can read the refusal (it says a token is needed), once, naming its origin
    assert refused.headers.get_list("access-control-allow-origin") == ["https://app.example.box"]
    assert refused.json()["error"]["code"] == "unauthorized"
    assert preflight.headers.get_list("access-control-allow-origin") == ["https://app.example.box"]
    assert other.status_code == 403 and "access-control-allow-origin" not in other.headers


def test_refusals_say_what_to_do(config):
    with running(config) as url:
        host = httpx.get(f"{url}/v1/status", headers={"Host": "evil.example"})
        origin = httpx.get(f"{url}/v1/status", headers={"Origin": "http://evil.example"})
        sneaky = httpx.get(f"{url}/v1/status", headers={"Sec-Fetch-Site": "cross-site"})
        same_site = httpx.get(f"{url}/v1/status", headers={"Sec-Fetch-Site": "same-origin"})
        port = port_of(url)
        own_name = httpx.get(f"http://localhost:{port}/v1/status",
                             headers={"Origin": f"http://LocalHost:{port}"})  # fmt: skip
        long_host = httpx.get(f"{url}/v1/status", headers={"Host": "h" * 300})
        put = httpx.put(f"{url}/v1/search", content=b"{}", headers={"Content-Type": "text/plain"})
        patch = httpx.patch(f"{url}/v1/search", content=b"{}")
        mixed_case = {"Content-Type": "Application/JSON ; charset=utf-8"}
        upper = httpx.post(f"{url}/v1/search", content=b'{"query": ""}', headers=mixed_case)
    assert host.json() == {"error": {"code": "bad_host", "message": (
        "Host 'evil.example' is not an address of this server; add it to the serve_hosts "
        "setting if you reach the server under that name")}}  # fmt: skip
    assert origin.status_code == 403 and origin.json() == {"error": {
        "code": "cross_origin", "message": "requests from the web page 'http://evil.example' "
        "are refused; add it to the serve_origins setting to allow it"}}  # fmt: skip
    assert sneaky.status_code == 403 and sneaky.json()["error"] == {
        "code": "cross_origin", "message": "cross-site requests are refused"}  # fmt: skip
    assert same_site.status_code == 200
    assert own_name.status_code == 200  # the page's own origin, named as the Host names it
    assert long_host.json()["error"]["message"].startswith(f"Host {'h' * 100!r} is not")
    for reply in (put, patch):
        assert reply.status_code == 415 and reply.json()["error"] == {
            "code": "unsupported_media_type",
            "message": "request bodies must be sent as Content-Type: application/json"}  # fmt: skip
    assert upper.status_code == 400  # media types are case-insensitive: parsed


def test_the_token_is_checked_in_constant_form_and_the_scheme_in_any_case(config):
    config.token = "s3cret"
    with running(config) as url:
        lower = httpx.get(f"{url}/v1/status", headers={"Authorization": "bearer s3cret"})
        longer = httpx.get(f"{url}/v1/status", headers={"Authorization": "Bearer s3cret2"})
        bare = httpx.get(f"{url}/v1/status", headers={"Authorization": "s3cret"})
        basic = httpx.get(f"{url}/v1/status", headers={"Authorization": "Basic s3cret"})
        digest = httpx.get(f"{url}/v1/status", headers={"Authorization": "Digest s3cret"})
    assert lower.status_code == 200
    for reply in (longer, bare, basic, digest):  # "Digest " is as long as "Bearer "
        assert reply.status_code == 401 and reply.json() == {"error": {
            "code": "unauthorized",
            "message": "a valid `Authorization: Bearer <token>` is required"}}  # fmt: skip


def test_a_request_without_a_host_is_refused_as_a_bad_host(config):
    with running(config) as url:
        with socket.create_connection(("127.0.0.1", port_of(url)), timeout=10) as sock:
            sock.sendall(b"GET /v1/status HTTP/1.0\r\n\r\n")
            answer = b""
            while piece := sock.recv(4096):
                answer += piece
    assert answer.startswith(b"HTTP/1.1 400"), answer
    body = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert body["error"]["code"] == "bad_host"
    assert body["error"]["message"].startswith("Host '' is not an address of this server")


def test_the_page_loads_without_the_token_and_its_api_calls_need_it(config):
    """README: the browser page's own files hold no data and are fetched without the token
    (a browser cannot send it with the page's first request); every API call needs it."""
    config.ui = True
    config.token = "s3cret"
    with running(config) as url:
        page = httpx.get(f"{url}/", timeout=30)
        api = httpx.get(f"{url}/v1/status", timeout=30)
        posted = httpx.post(f"{url}/", json={}, timeout=30)
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert api.status_code == 401
    assert posted.status_code == 401  # only a GET of the page's files is public
