"""The HTTP API against a real server on 127.0.0.1 (uvicorn in a thread)."""

import os

import httpx
import pytest
from seek_server import running

from seek.errors import SeekError
from seek.serving.config import ServeConfig
from seek.serving.requests import MAX_BODY_BYTES
from seek.web.api import serve_config

pytestmark = pytest.mark.slow


@pytest.fixture
def workspace(make_tree, tmp_path):
    root = make_tree({
        "src/retry.py": "def configure_retries(policy):\n    return RetryPolicy(policy)\n",
        "src/client.py": "class HttpClient:\n    def send(self, request):\n        return 1\n",
    })  # fmt: skip
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("password = 'x'\n")
    os.symlink(outside, root / "link-out")
    return root, outside


@pytest.fixture
def config(workspace, seek_home):
    root, _ = workspace
    return ServeConfig(workspaces=(root,), overrides={"home": str(seek_home)})


def test_search_status_and_index(config, workspace):
    root, _ = workspace
    with running(config) as url:
        found = httpx.post(f"{url}/v1/search", json={"query": "HttpClient", "k": 3}, timeout=60)
        status = httpx.get(f"{url}/v1/status", timeout=30)
        (root / "src/new.py").write_text("def brand_new():\n    pass\n")
        indexed = httpx.post(f"{url}/v1/index", json={}, timeout=60)
        again = httpx.post(f"{url}/v1/search", json={"query": "brand_new"}, timeout=60)
        context = httpx.post(f"{url}/v1/context", json={"question": "HttpClient send"}, timeout=60)
        no_question = httpx.post(f"{url}/v1/context", json={}, timeout=30)
    assert found.status_code == 200
    assert found.json()["hits"][0]["path"] == "src/client.py"
    assert found.json()["hits"][0]["start_line"] == 1
    assert status.json()["files"] == 2
    assert indexed.json()["embedded"] == 1
    assert again.json()["hits"][0]["path"] == "src/new.py"
    blocks = context.json()["blocks"]
    assert blocks[0]["path"] == "src/client.py" and blocks[0]["kind"] == "code"
    heading = "src/client.py (lines 1-3) · HttpClient.send"  # send holds lines 2-3 of 3
    assert context.json()["prompt"].startswith(f"{heading}\n```py\n")
    assert no_question.status_code == 400


@pytest.mark.parametrize("path", ["..", "../outside", "link-out", "/etc", "src/../.."])
def test_paths_outside_the_served_workspaces_are_refused(config, path):
    with running(config) as url:
        answer = httpx.post(f"{url}/v1/search", json={"query": "x", "path": path}, timeout=30)
        status = httpx.get(f"{url}/v1/status", params={"path": path}, timeout=30)
    assert answer.status_code == 403 and status.status_code == 403
    assert answer.json()["error"]["code"] == "forbidden"


def test_limits_and_bad_requests(config):
    with running(config) as url:
        huge = httpx.post(
            f"{url}/v1/search",
            content=b'{"query": "' + b"a" * (MAX_BODY_BYTES + 10) + b'"}',
            headers={"Content-Type": "application/json"},
            timeout=30,
        )
        long_query = httpx.post(f"{url}/v1/search", json={"query": "a" * 2001}, timeout=30)
        not_json = httpx.post(
            f"{url}/v1/search",
            content=b"{nope",
            headers={"Content-Type": "application/json"},
            timeout=30,
        )
        bad_k = httpx.post(f"{url}/v1/search", json={"query": "x", "k": 0}, timeout=30)
    assert huge.status_code == 413 and huge.json()["error"]["code"] == "too_large"
    assert long_query.status_code == 400 and long_query.json()["error"]["code"] == "too_long"
    assert not_json.status_code == 400 and not_json.json()["error"]["code"] == "bad_json"
    assert bad_k.status_code == 400


def test_binding_beyond_loopback_needs_a_token(workspace, monkeypatch):
    root, _ = workspace
    monkeypatch.delenv("SEEK_TOKEN", raising=False)
    with pytest.raises(SeekError, match="set SEEK_TOKEN"):
        serve_config("0.0.0.0", (root,), {})
    assert serve_config("127.0.0.1", (root,), {}, no_token=True).token == ""
    assert serve_config("127.0.0.1", (root,), {}).token  # made for the run (issue 43)
    monkeypatch.setenv("SEEK_TOKEN", "s3cret")
    assert serve_config("0.0.0.0", (root,), {}).token == "s3cret"


def test_token_is_checked(config):
    config.token = "s3cret"
    with running(config) as url:
        missing = httpx.get(f"{url}/v1/status", timeout=30)
        wrong = httpx.get(f"{url}/v1/status", headers={"Authorization": "Bearer nope"}, timeout=30)
        right = httpx.get(
            f"{url}/v1/status", headers={"Authorization": "Bearer s3cret"}, timeout=30
        )
    assert missing.status_code == 401 and wrong.status_code == 401
    assert missing.json()["error"]["code"] == "unauthorized"
    assert right.status_code == 200


def test_team_hits_follow_the_local_ones(make_tree, seek_home, monkeypatch):
    from seek.settings import load_settings
    from seek.workspace import search

    shared = make_tree({"lib/auth.py": "def check_token(token):\n    return token\n"}, "shared")
    local = make_tree({"app.py": "def check_token_locally(token):\n    return True\n"}, "mine")
    team_config = ServeConfig(workspaces=(shared,), token="t0k", overrides={"home": str(seek_home)})
    monkeypatch.setenv("TEAM_TOKEN", "t0k")
    with running(team_config) as url:
        settings = load_settings(
            local,
            overrides={"home": str(seek_home), "team_url": url, "team_token_env": "TEAM_TOKEN"},
            env={},
        )
        result = search(local, "check_token", settings, k=3)
    paths = [hit.path for hit in result.hits]
    assert paths[0] == "app.py"
    assert "team:shared/lib/auth.py" in paths and paths.index("team:shared/lib/auth.py") > 0
    assert result.notes == ()


def test_a_failing_team_server_means_a_note_not_an_error(make_tree, seek_home):
    from seek.settings import load_settings
    from seek.workspace import search

    local = make_tree({"app.py": "def check_token_locally(token):\n    return True\n"}, "mine")
    settings = load_settings(
        local, overrides={"home": str(seek_home), "team_url": "http://127.0.0.1:9"}, env={}
    )
    result = search(local, "check_token", settings, k=3)
    assert [hit.path for hit in result.hits] == ["app.py"]
    assert result.notes[0].startswith("No team hits: the team server at http://127.0.0.1:9 failed")


def shop_class(name: str, verbs: list[str]) -> str:
    lines = [f"class {name}:", f'    """The {name.lower()} of the shop."""', ""]
    for verb in verbs:
        lines += [f"    def {verb}(self, item, count=1):",
                  f'        """{verb.title()} ``count`` of ``item`` in the {name.lower()}."""',
                  "        total = self.ledger.get(item, 0)",
                  "        self.ledger[item] = total + count",
                  f"        self.log.append(({verb!r}, item, count))",
                  "        return self.ledger[item]", ""]  # fmt: skip
    return "\n".join(lines) + "\n\n"


def test_the_pages_widen_shows_exactly_the_blocks_lines(make_tree, seek_home):
    """The page's search (``/ui/api/search``) gives each hit the wider block the context kept
    around it: its line numbers and its code must be the same lines of the file, not one
    off (issue 27). Mutation this pins (web/adapter.py ``search_page``): the widened
    ``"start_line": b.start + 1`` -> ``b.start`` (the label one line above the code)."""
    import html
    import re

    source = (shop_class("Inventory", ["stock", "restock", "count", "audit", "shelve"])
              + shop_class("Checkout", ["scan", "refund", "discount", "weigh", "bag", "pay"])
              + shop_class("Shipping", ["pack", "label", "post", "track", "insure"]))  # fmt: skip
    root = make_tree({"src/shop.py": source})
    lines = source.splitlines()
    config = ServeConfig(workspaces=(root,), overrides={"home": str(seek_home)}, ui=True)
    with running(config) as url:
        asked = {"path": str(root), "query": "discount in the checkout"}
        answer = httpx.post(f"{url}/ui/api/search", json=asked, timeout=120)
    assert answer.status_code == 200, answer.text

    def code(markup: str) -> str:
        return html.unescape(re.sub(r"<[^>]*>", "", markup)).rstrip("\n")

    def file_lines(start: int, end: int) -> str:  # 1-based, inclusive; a block may end blank
        return "\n".join(lines[start - 1 : end]).rstrip("\n")

    hits = answer.json()["hits"]
    widened = [h for h in hits if h["widened"]]
    assert widened and any(h["widened"]["start_line"] > 1 for h in widened)  # not from line 1
    for hit in hits:
        assert code(hit["html"]) == file_lines(hit["start_line"], hit["end_line"])
    for hit in widened:
        block = hit["widened"]
        assert block["start_line"] <= hit["start_line"] <= block["end_line"]
        assert (block["start_line"], block["end_line"]) != (hit["start_line"], hit["end_line"])
        assert code(block["html"]) == file_lines(block["start_line"], block["end_line"])
