"""`seek ui`'s token, the settings the page saves and the page's request limits (issue 27,
findings 3, 4 and 8): a real `seek ui` process, or the same app under uvicorn, on
127.0.0.1; the user config in a temporary folder."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from seek_server import running
from ui.ui_harness import seek_command, start_ui, stop

from seek.serving.config import ServeConfig
from seek.untrusted import MAX_QUERY_CHARS

pytestmark = pytest.mark.slow

TOKEN = "t0ken-for-the-test"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def user_config(tmp_path, monkeypatch) -> Path:
    """The user config the page writes (the server thread reads ``XDG_CONFIG_HOME``)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    path = tmp_path / "config" / "seek" / "config.toml"
    path.parent.mkdir(parents=True)
    return path


@pytest.fixture
def page(make_tree, seek_home, user_config):
    root = make_tree({"src/client.py": "class HttpClient:\n    def send(self):\n        pass\n"})
    config = ServeConfig(workspaces=(root,), token=TOKEN, ui=True,
                         overrides={"home": str(seek_home)})  # fmt: skip
    with running(config) as url:
        yield url, root


# -- finding 3: a token per run ------------------------------------------------------------

# Written beside and renamed: the test waits for the file to exist, and under load it could
# read it between its creation and its write (a SyntaxError from an empty file).
RECORDER = """#!{python}
import os, pathlib, sys
given = pathlib.Path(sys.argv[1].removeprefix("file://"))
pathlib.Path({out!r} + ".tmp").write_text(repr([sys.argv, given.read_text(), given.stat().st_mode]))
os.replace({out!r} + ".tmp", {out!r})
"""


def test_seek_ui_makes_a_token_per_run_and_every_api_call_needs_it(tmp_path, seek_home):
    """Finding 3: `seek ui` answered any local process without a token."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("def handler():\n    return 1\n")
    config = tmp_path / "config" / "seek" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("snippets = 4\n")
    record = tmp_path / "browser.txt"
    browser = tmp_path / "browser.py"  # webbrowser runs $BROWSER with the address it opens
    browser.write_text(RECORDER.format(python=sys.executable, out=str(record)))
    browser.chmod(0o700)
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "BROWSER": str(browser)}
    env.pop("SEEK_TOKEN", None)
    proc, url = start_ui(seek_command(seek_home, "ui", str(ws), "--port", "0"), env)
    try:
        found = re.fullmatch(r"(http://127\.0\.0\.1:\d+/)#token=([A-Za-z0-9_-]{43})", url)
        assert found, url
        base, token = found.groups()
        deadline = time.monotonic() + 30
        while not record.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        argv, opened, mode = eval(record.read_text())  # noqa: S307 (our recorder's repr)
        # Other local users see a browser's command line: the token is in a private file.
        assert token not in " ".join(argv) and url in opened
        assert stat.S_IMODE(mode) == 0o600
        changes = {"changes": {"chat_url": "http://127.0.0.1:9", "chat_model": "m"}}
        refused = [
            httpx.get(f"{base}ui/api/status", timeout=30),
            httpx.get(f"{base}ui/api/settings", timeout=30),
            httpx.post(f"{base}ui/api/settings", json=changes, timeout=30),
            httpx.post(f"{base}ui/api/search", json={"query": "handler"}, timeout=30),
            httpx.get(f"{base}v1/status", timeout=30),
            httpx.get(f"{base}ui/api/status", headers={"Authorization": "Bearer x"}, timeout=30),
        ]
        for answer in refused:
            assert answer.status_code == 401, (answer.request.url, answer.text)
            assert answer.json()["error"]["code"] == "unauthorized"
        assert config.read_text() == "snippets = 4\n"  # the refused write wrote nothing
        auth = {"Authorization": f"Bearer {token}"}
        assert httpx.get(base, timeout=30).status_code == 200  # the page itself holds no data
        assert httpx.get(f"{base}ui/api/workspaces", headers=auth, timeout=30).status_code == 200
        saved = httpx.post(f"{base}ui/api/settings", json={"changes": {"snippets": 3}},
                           headers=auth, timeout=30)  # fmt: skip
        assert saved.status_code == 200, saved.text
        assert config.read_text() == "snippets = 3\n"
    finally:
        stop(proc)
    assert not Path(argv[1].removeprefix("file://")).exists()  # removed with the run


def test_an_explicit_seek_token_is_the_page_token(tmp_path, seek_home):
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "SEEK_TOKEN": "my token"}
    proc, url = start_ui(seek_command(seek_home, "ui", str(ws), "--port", "0", "--no-open"), env)
    try:
        assert url.endswith("/#token=my%20token")  # the page's URLSearchParams decodes it
        base = url.partition("#")[0]
        mine = {"Authorization": "Bearer my token"}
        assert httpx.get(f"{base}ui/api/workspaces", headers=mine, timeout=30).status_code == 200
        assert httpx.get(f"{base}ui/api/workspaces", timeout=30).status_code == 401
    finally:
        stop(proc)


# -- finding 4: settings are checked before anything is written ----------------------------

BAD_CHANGES = {
    '{"rerank_threshold": NaN}': ("rerank_threshold", "finite number"),
    '{"rerank_threshold": Infinity}': ("rerank_threshold", "finite number"),
    '{"rerank_threshold": -Infinity}': ("rerank_threshold", "finite number"),
    '{"rerank_threshold": 1.5}': ("rerank_threshold", ">= 0 and <= 1"),
    '{"snippets": -5}': ("snippets", ">= 0 and <= 30"),
    '{"snippets": 1e308}': ("snippets", ">= 0 and <= 30"),
    '{"snippets": 2.5}': ("snippets", "an integer"),
    '{"snippets": true}': ("snippets", "an integer"),
    '{"snippets": "many"}': ("snippets", "an integer"),
    '{"prompt_budget_chars": 12345678901234567890123}': ("prompt_budget_chars", "<= 10000000"),
    '{"chat_model": "\\ud800"}': ("chat_model", "lone surrogates"),
    '{"chat_url": "http://x\\u0000"}': ("chat_url", "NUL"),
    '{"chat_url": null}': ("chat_url", "a string"),
    '{"ignored_globs": ["build/", 1]}': ("ignored_globs", "a list of strings"),
    '{"ignored_globs": ["\\udc80"]}': ("ignored_globs", "lone surrogates"),
    '{"snippets": 3, "rerank_threshold": NaN}': ("rerank_threshold", "finite number"),
    '{"home": "/elsewhere"}': ("home", "cannot be changed from the page"),
}


def test_settings_from_the_page_are_checked_before_anything_is_written(page, user_config):
    """Finding 4: NaN answered 500 but was saved (every later call then failed); -5, 1e308
    and a 23-digit budget were saved; a lone surrogate answered 500."""
    url, _ = page
    before = '# my settings\nchat_model = "llama3"\n'
    user_config.write_text(before)
    for changes, (name, why) in BAD_CHANGES.items():
        answer = httpx.post(f"{url}/ui/api/settings", timeout=30,
                            content=f'{{"changes": {changes}}}'.encode(),
                            headers={**AUTH, "Content-Type": "application/json"})  # fmt: skip
        assert answer.status_code == 400, (changes, answer.text)
        error = answer.json()["error"]
        assert error["code"] == "bad_setting" and name in error["message"], (changes, error)
        assert why in error["message"], (changes, error)
        assert "\n" not in error["message"] and len(error["message"]) < 300
        assert user_config.read_text() == before, changes
        assert list(user_config.parent.iterdir()) == [user_config], changes
    shown = httpx.get(f"{url}/ui/api/settings", headers=AUTH, timeout=30)
    assert shown.status_code == 200, shown.text  # nothing bad was kept to fail on later
    saved = httpx.post(f"{url}/ui/api/settings", headers=AUTH, timeout=30,
                       json={"changes": {"snippets": 3.0, "rerank_threshold": 0,
                                         "ignored_globs": ["build/"]}})  # fmt: skip
    assert saved.status_code == 200, saved.text
    assert user_config.read_text() == (
        before + 'snippets = 3\nrerank_threshold = 0.0\nignored_globs = ["build/"]\n'
    )


def test_a_bad_config_file_is_named_and_the_page_can_still_fix_it(page, user_config, seek_home):
    """Finding 4: a bad value already on disk made every settings call fail; the form must
    still load (naming the key) and saving a good value must repair the file."""
    url, root = page
    user_config.write_text("rerank_threshold = nan\nsnippets = 4\n")
    status = httpx.get(f"{url}/v1/status", headers=AUTH, timeout=30)
    assert status.status_code == 422, status.text  # a JSON error naming the key, no 500
    message = status.json()["error"]["message"]
    assert message == f"rerank_threshold in {user_config} must be a finite number, not nan"
    shown = httpx.get(f"{url}/ui/api/settings", headers=AUTH, timeout=30)
    assert shown.status_code == 200, shown.text
    assert any(message in note for note in shown.json()["notes"]), shown.json()["notes"]
    values = {s["name"]: s["value"] for s in shown.json()["settings"]}
    assert values["rerank_threshold"] == 0.01  # shown without the broken file
    other = httpx.post(f"{url}/ui/api/settings", headers=AUTH, timeout=30,
                       json={"changes": {"snippets": 5}})  # fmt: skip
    assert other.status_code == 422 and "rerank_threshold" in other.json()["error"]["message"]
    assert str(user_config) + ".tmp" not in other.json()["error"]["message"]
    assert user_config.read_text() == "rerank_threshold = nan\nsnippets = 4\n"
    fixed = httpx.post(f"{url}/ui/api/settings", headers=AUTH, timeout=30,
                       json={"changes": {"rerank_threshold": 0.05}})  # fmt: skip
    assert fixed.status_code == 200, fixed.text
    assert fixed.json()["notes"] == []
    assert httpx.get(f"{url}/v1/status", headers=AUTH, timeout=30).status_code == 200
    assert user_config.read_text() == "rerank_threshold = 0.05\nsnippets = 4\n"


def test_the_cli_names_a_bad_key_in_one_line(tmp_path, seek_home):
    config = tmp_path / "config" / "seek" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("prompt_budget_chars = 12345678901234567890\n")
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    done = subprocess.run(seek_command(seek_home, "-C", str(tmp_path), "config"), env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        f"seek: error: prompt_budget_chars must be >= 0 and <= 10000000, not 12345678901234567890 "
        f"(from {config})\n"
    )


# -- finding 8: the page keeps the API's request limits ------------------------------------


def test_the_page_keeps_the_query_limit_of_the_api(page):
    """Finding 8: a 62,399-character query to /ui/api/search answered 200."""
    url, _ = page
    long = "x" * (MAX_QUERY_CHARS + 1)
    answers = {
        "/v1/search": httpx.post(f"{url}/v1/search", json={"query": long}, headers=AUTH,
                                 timeout=30),
        "/v1/context": httpx.post(f"{url}/v1/context", json={"question": long}, headers=AUTH,
                                  timeout=30),
        "/ui/api/search": httpx.post(f"{url}/ui/api/search", json={"query": long},
                                     headers=AUTH, timeout=30),
        "/ui/api/ask": httpx.post(f"{url}/ui/api/ask", json={"question": long}, headers=AUTH,
                                  timeout=30),
    }  # fmt: skip
    for route, answer in answers.items():
        assert answer.status_code == 400, (route, answer.text[:200])
        assert answer.json()["error"]["code"] == "too_long", route
        assert f"limited to {MAX_QUERY_CHARS} characters" in answer.json()["error"]["message"]
    odd = httpx.post(f"{url}/ui/api/search", content=b'{"query": "a\\ud800"}', timeout=30,
                     headers={**AUTH, "Content-Type": "application/json"})  # fmt: skip
    assert odd.status_code == 400 and "surrogate" in odd.json()["error"]["message"]


def test_one_set_of_limits_for_every_front_end():
    """Finding 8: MAX_K and MAX_FOCUS were defined twice (API and MCP) and could drift."""
    import anyio
    from click.testing import CliRunner

    from seek import untrusted
    from seek.cli import cli, load_commands
    from seek.mcp import build_server
    from seek.web.openapi import openapi_document

    schemas = openapi_document()["components"]["schemas"]
    search, context = (
        schemas["SearchRequest"]["properties"],
        schemas["ContextRequest"]["properties"],
    )
    assert search["query"]["maxLength"] == context["question"]["maxLength"] == MAX_QUERY_CHARS
    assert search["k"]["maximum"] == untrusted.MAX_K
    assert search["focus"]["maxItems"] == untrusted.MAX_FOCUS
    assert context["budget"]["maximum"] == untrusted.MAX_BUDGET_CHARS
    tools = {t.name: t.input_schema for t in anyio.run(build_server(Path.cwd()).list_tools)}
    search, context = tools["search"]["properties"], tools["context"]["properties"]
    assert search["query"]["maxLength"] == context["question"]["maxLength"] == MAX_QUERY_CHARS
    assert search["k"]["maximum"] == untrusted.MAX_K
    assert search["focus"]["anyOf"][0]["maxItems"] == untrusted.MAX_FOCUS
    assert context["budget"]["anyOf"][0]["maximum"] == untrusted.MAX_BUDGET_CHARS
    load_commands(["search"])
    load_commands(["context"])
    runner = CliRunner()
    too_many = runner.invoke(cli, ["search", "x", "-k", str(untrusted.CLI_MAX_K + 1)])
    assert too_many.exit_code == 2 and f"1<=x<={untrusted.CLI_MAX_K}" in too_many.output
    budget = runner.invoke(cli, ["context", "x", "--budget", str(untrusted.MAX_BUDGET_CHARS + 1)])
    assert budget.exit_code == 2 and str(untrusted.MAX_BUDGET_CHARS) in budget.output
    focus = ["--focus", "a.py"] * (untrusted.MAX_FOCUS + 1)
    refused = runner.invoke(cli, ["search", "x", *focus])
    assert refused.exit_code == 2 and f"at most {untrusted.MAX_FOCUS} files" in refused.output
