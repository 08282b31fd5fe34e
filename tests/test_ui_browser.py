"""`seek ui` in a real browser (Debian's chromium, driven by selenium through Debian's
chromedriver; nothing is downloaded): a real `seek ui` process on 127.0.0.1, real
workspaces, a real embeddings server and a slow streaming chat server on loopback.

Screenshots of the main screens go to ``$SEEK_UI_SHOTS`` when set, else to a pytest
temporary folder (printed at the end of the run with ``-s``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import httpx
import pytest
from embed_server import serve as embed_serve
from local_http import serving

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
ANSWER = ["Retries are ", "configured in ", "`src/retry.py` ", "<img src=x id=evil> **here**."]
PIECE_DELAY_S = 0.4


def _browser_missing() -> str:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    for binary in (CHROMIUM, CHROMEDRIVER):
        if not os.access(binary, os.X_OK):
            return f"no browser: {binary} is missing (apt-get install chromium chromium-driver)"
    return ""


if reason := _browser_missing():
    pytest.skip(reason, allow_module_level=True)

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


class Chat:
    """An Ollama-style chat server that streams its answer a piece at a time."""

    def __init__(self) -> None:
        self.bodies: list[dict] = []


@pytest.fixture(scope="module")
def chat():
    record = Chat()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            record.bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()
            for piece in ANSWER:
                line = {"message": {"role": "assistant", "content": piece}, "done": False}
                self.wfile.write((json.dumps(line) + "\n").encode())
                self.wfile.flush()
                time.sleep(PIECE_DELAY_S)
            self.wfile.write(b'{"message": {"content": ""}, "done": true}\n')

    with serving(Handler) as url:
        record.url = url
        yield record


@pytest.fixture(scope="module")
def embedder():
    with embed_serve() as (url, behaviour):
        yield url, behaviour


@pytest.fixture(scope="module")
def ui(tmp_path_factory, chat, embedder):
    """A `seek ui` process serving two workspaces: app (small) and big (60 files)."""
    base = tmp_path_factory.mktemp("ui")
    app, big, config = base / "app", base / "big", base / "config" / "seek" / "config.toml"
    (app / "src").mkdir(parents=True)
    (app / "src/retry.py").write_text(
        'def configure_retries(policy):\n    """Set up retries."""\n'
        "    return RetryPolicy(policy)\n"
    )
    (app / "src/client.py").write_text(
        "class HttpClient:\n    def send(self, request):\n        return request.retry()\n"
    )
    (app / "notes.bin").write_bytes(b"\x00\x01binary" * 10)
    for i in range(60):
        (big / "pkg").mkdir(parents=True, exist_ok=True)
        (big / f"pkg/m{i:02}.py").write_text(f"def handler_{i}(event):\n    return event + {i}\n")
    config.parent.mkdir(parents=True)
    embed_url, _ = embedder
    config.write_text(
        f'provider = "ollama"\nbase_url = "{embed_url}"\nmodel = "test-embed"\n'
        f'chat_provider = "ollama"\nchat_url = "{chat.url}"\nchat_model = "llama3"\n'
        "flush_every_files = 2\nembed_batch_size = 4\n"
    )
    env = {**os.environ, "XDG_CONFIG_HOME": str(base / "config")}
    env.pop("SEEK_TOKEN", None)
    cmd = [sys.executable, "-m", "seek", "--set", f"home={base / 'home'}", "ui", str(app),
           str(big), "--port", "0", "--no-open"]  # fmt: skip
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    assert "is at http://127.0.0.1:" in line, line
    url = line.rsplit(" ", 1)[1].strip()
    try:
        yield {"url": url, "app": app, "big": big, "config": config, "env": env, "cmd": cmd}
    finally:
        proc.terminate()  # the open page's streams end within the 2 s grace period
        proc.wait(15)


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    folder = Path(os.environ.get("SEEK_UI_SHOTS") or tmp_path_factory.mktemp("ui-shots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking", "--disable-sync",
                 "--disable-component-update", "--window-size=1280,900",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):  # fmt: skip
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(20)
    try:
        yield driver
    finally:
        driver.quit()


def wait(driver, condition, timeout=20.0, what="the page"):
    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(
        lambda d: condition(d), message=f"waiting for {what}"
    )


def text(driver, element_id: str) -> str:
    return driver.find_element(By.ID, element_id).text


def open_page(driver, ui, workspace: str = "app") -> None:
    driver.get(ui["url"])
    wait(driver, lambda d: "Files" in text(d, "status-fields"), what="the status")
    if workspace != "app":
        select = driver.find_element(By.ID, "workspace")
        select.find_element(By.XPATH, f"option[contains(., '{ui[workspace]}')]").click()
        wait(driver, lambda d: str(ui[workspace]) in text(d, "status-fields"), what="switch")


def tab(driver, name: str) -> None:
    driver.find_element(By.XPATH, f"//nav/button[.='{name}']").click()


def test_open_rebuild_and_status(browser, ui, shots, embedder):
    _, behaviour = embedder
    open_page(browser, ui)
    assert "No index yet" in text(browser, "mismatch")
    behaviour.hang_s = 0.1  # slow enough to watch the bar move
    browser.find_element(By.ID, "rebuild").click()
    seen = set()

    def finished(d):
        bar = d.find_element(By.ID, "bar")
        if bar.is_displayed() and bar.get_attribute("value"):
            seen.add(float(bar.get_attribute("value")))
        return "files embedded" in text(d, "run-result")

    wait(browser, finished, what="the rebuild to finish")
    behaviour.hang_s = 0.0
    assert "Indexed: 2 files embedded" in text(browser, "run-result")
    assert seen, "the progress bar never showed"
    wait(browser, lambda d: "\n2\n" in "\n" + text(d, "status-fields") + "\n", what="counts")
    fields = text(browser, "status-fields")
    assert "ollama/test-embed" in fields and "Chunks" in fields
    assert time.strftime("%Y") in fields.split("Last update")[1].split("\n")[1]
    skipped = browser.find_element(By.ID, "skipped")
    skipped.find_element(By.TAG_NAME, "summary").click()
    assert "notes.bin" in skipped.text
    browser.save_screenshot(str(shots / "ui-index.png"))


def test_cancel_mid_run_keeps_files_and_update_carries_on(browser, ui, embedder):
    _, behaviour = embedder
    open_page(browser, ui, "big")
    behaviour.hang_s = 0.15
    try:
        browser.find_element(By.ID, "update").click()
        values = []

        def advanced(d):
            value = d.find_element(By.ID, "bar").get_attribute("value")
            values.append(float(value or 0))
            return values[-1] >= 6

        wait(browser, advanced, what="the bar to advance")
        assert len(set(values)) >= 2, values  # it moved while we watched
        browser.find_element(By.ID, "cancel").click()
        wait(browser, lambda d: "Cancelled: kept" in text(d, "run-result"), what="cancel")
    finally:
        behaviour.hang_s = 0.0
    kept = int(text(browser, "run-result").split("kept ")[1].split(" ")[0])
    assert 0 < kept < 60
    browser.find_element(By.ID, "update").click()
    wait(browser, lambda d: "files embedded" in text(d, "run-result"), what="the next update")
    assert f"Indexed: {60 - kept} files embedded" in text(browser, "run-result")


def test_a_run_started_from_the_cli_shows_and_no_second_writer_starts(browser, ui, embedder):
    _, behaviour = embedder
    open_page(browser, ui, "big")
    behaviour.hang_s = 0.1
    command = [*ui["cmd"][:5], "index", str(ui["big"]), "--rebuild", "-q"]
    cli = subprocess.Popen(
        command, env=ui["env"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        wait(browser, lambda d: "Indexing by pid" in text(d, "progress-text"), what="the CLI run")
        assert "seek" in text(browser, "progress-text")
        assert not browser.find_element(By.ID, "update").is_enabled()
        refused = httpx.post(f"{ui['url']}ui/api/index", json={"path": str(ui["big"])}, timeout=10)
        assert (
            refused.status_code == 409 and "another process" in refused.json()["error"]["message"]
        )
    finally:
        behaviour.hang_s = 0.0
        assert cli.wait(60) == 0, cli.stderr.read()
    wait(browser, lambda d: d.find_element(By.ID, "update").is_enabled(), what="the end")


def test_search_shows_highlighted_code_and_the_context_line(browser, ui, shots):
    open_page(browser, ui)
    tab(browser, "Search")
    box = browser.find_element(By.ID, "query")
    assert browser.switch_to.active_element == box  # the tab puts the cursor in the box
    box.send_keys("where are retries configured", Keys.ENTER)
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".hit"), what="results")
    first = browser.find_element(By.CSS_SELECTOR, ".hit")
    assert first.find_element(By.CSS_SELECTOR, ".hit-head code").text.startswith("src/retry.py:1-")
    assert "score" in first.text
    assert first.find_elements(By.CSS_SELECTOR, "pre span.k")  # Pygments' keyword spans
    assert "query: 'where are retries configured'" in text(browser, "context-line")
    first.find_element(By.TAG_NAME, "summary").click()
    assert "Widened block" in first.text
    browser.save_screenshot(str(shots / "ui-search.png"))
    browser.set_window_size(800, 900)  # readable at 800 px: nothing wider than the window
    try:
        width = browser.execute_script("return document.documentElement.scrollWidth")
        assert width <= 800
    finally:
        browser.set_window_size(1280, 900)


def ask(driver, question: str) -> None:
    area = driver.find_element(By.ID, "question")
    area.clear()
    area.send_keys(question, Keys.CONTROL, Keys.ENTER)


def turns(driver):
    return driver.find_elements(By.CSS_SELECTOR, "#chat .turn")


def test_ask_streams_lists_sources_and_follows_up(browser, ui, shots, chat):
    open_page(browser, ui)
    tab(browser, "Ask")
    before = len(chat.bodies)
    ask(browser, "how are retries configured?")
    seen = []

    def answered(d):
        seen.append(d.execute_script(
            "const b = document.querySelectorAll('#chat .answer-box');"
            "return b.length ? b[b.length - 1].innerText : ''"))  # fmt: skip
        return d.find_elements(By.CSS_SELECTOR, "#chat .turn .sources details")

    wait(browser, answered, what="the answer")
    partial = [t for t in seen if t.startswith("Retries are") and "here" not in t]
    assert partial, f"the answer did not arrive piece by piece: {sorted(set(seen))}"
    turn = turns(browser)[-1]
    assert "Retries are configured in src/retry.py <img src=x id=evil> here." in turn.text
    assert not browser.find_elements(By.ID, "evil")  # model text never becomes HTML
    assert turn.find_elements(By.CSS_SELECTOR, ".answer strong")  # markdown rendered
    labels = [s.text for s in turn.find_elements(By.CSS_SELECTOR, ".sources summary")]
    assert any(label.startswith("src/retry.py (lines 1-3)") for label in labels), labels
    browser.save_screenshot(str(shots / "ui-ask.png"))

    ask(browser, "and where is it tested?")
    wait(browser, lambda d: len(turns(d)) == 2 and turns(d)[1].find_elements(
        By.CSS_SELECTOR, ".sources"), what="the follow-up")  # fmt: skip
    history = chat.bodies[-1]["messages"]
    assert len(chat.bodies) == before + 2
    assert history[0] == {"role": "user", "content": "how are retries configured?"}
    assert history[1]["content"].startswith("Retries are configured")


def test_settings_change_applies_to_the_next_question(browser, ui, shots, chat):
    open_page(browser, ui)
    tab(browser, "Settings")
    wait(browser, lambda d: d.find_elements(By.ID, "set-snippets"), what="the settings")
    assert "from default" in browser.find_element(By.ID, "settings-fields").text
    assert "needs a rebuild" in text(browser, "rebuild-fields")
    snippets = browser.find_element(By.ID, "set-snippets")
    snippets.clear()
    snippets.send_keys("1")
    browser.find_element(By.CSS_SELECTOR, "#settings-form button[type=submit]").click()
    wait(browser, lambda d: "Saved snippets" in text(d, "settings-notes"), what="the save")
    assert "snippets = 1" in ui["config"].read_text()
    assert f"from {ui['config']}" in browser.find_element(By.ID, "settings-fields").text
    browser.save_screenshot(str(shots / "ui-settings.png"))
    tab(browser, "Ask")
    ask(browser, "how are retries configured?")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".turn .sources"), what="answer")
    sources = browser.find_elements(By.CSS_SELECTOR, ".turn .sources details")
    assert len(sources) == 1
    assert chat.bodies[-1]["messages"][-1]["content"].count("(lines ") == 1


@contextmanager
def user_config_with(ui, old: str, new: str):
    """The user config with ``old`` replaced by ``new`` for the block (the server reads it
    on each request)."""
    config = ui["config"]
    saved = config.read_text()
    config.write_text(saved.replace(old, new))
    try:
        yield
    finally:
        config.write_text(saved)


def test_model_mismatch_warning(browser, ui):
    with user_config_with(ui, 'model = "test-embed"', 'model = "nomic-embed-text"'):
        open_page(browser, ui)
        warning = browser.find_element(By.ID, "mismatch")
        assert warning.is_displayed()
        assert "built with ollama/test-embed" in warning.text
        assert "configured model is ollama/nomic-embed-text" in warning.text
        assert "not indexed until you Rebuild" in warning.text


def test_no_chat_model_says_which_setting_to_change(browser, ui):
    with user_config_with(ui, 'chat_model = "llama3"', 'chat_model = ""'):
        open_page(browser, ui)
        tab(browser, "Ask")
        ask(browser, "anything?")
        wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".turn .error"), what="error")
        assert "set chat_model in Settings" in turns(browser)[-1].text


def test_foreign_origin_and_host_are_refused(ui):
    url = ui["url"]
    page = httpx.get(url, headers={"Host": "evil.example"}, timeout=10)
    assert page.status_code == 400 and page.json()["error"]["code"] == "bad_host"
    posted = httpx.post(f"{url}ui/api/search", json={"query": "x"},
                        headers={"Origin": "http://evil.example"}, timeout=10)  # fmt: skip
    assert posted.status_code == 403 and posted.json()["error"]["code"] == "cross_origin"
    simple = httpx.post(f"{url}ui/api/index", content=b"{}",
                        headers={"Content-Type": "text/plain"}, timeout=10)  # fmt: skip
    assert simple.status_code == 415
    own = httpx.get(url, timeout=10)
    assert own.status_code == 200 and "default-src 'none'" in own.headers["content-security-policy"]


def test_with_a_token_the_page_loads_and_sends_it(browser, ui, seek_home):
    from seek_server import running

    from seek.web.api import ServeConfig

    config = ServeConfig(workspaces=(ui["app"],), token="s3cret-token", ui=True,
                         overrides={"home": str(seek_home)})  # fmt: skip
    with running(config) as url:
        assert httpx.get(f"{url}/ui/api/status", timeout=10).status_code == 401
        assert httpx.get(f"{url}/ui/static/ui.js", timeout=10).status_code == 200
        browser.get(f"{url}/#token=s3cret-token")
        wait(browser, lambda d: "Files" in text(d, "status-fields"), what="the status")
        browser.get(f"{url}/?again#token=wrong")  # a new page, not a hash change
        wait(browser, lambda d: "Bearer" in text(d, "error"), what="the refusal")
