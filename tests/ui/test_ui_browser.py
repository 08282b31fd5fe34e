"""`seek ui` in a real browser (Debian's chromium, driven by selenium through Debian's
chromedriver; nothing is downloaded): a real `seek ui` process on 127.0.0.1, real
workspaces, a real embeddings server and a slow streaming chat server on loopback.

Screenshots of the main screens (light and dark, 1280 and 800 px wide) go to
``$SEEK_UI_SHOTS`` when set, else to a pytest temporary folder. The page's quality (dark
theme, contrast, keyboard, labels, copy, errors) is tested in ``test_ui_page_quality.py``.
"""

from __future__ import annotations

import re
import subprocess
import time

import httpx
import pytest

from ui.ui_harness import (
    RETRY_PY,
    answered,
    ask,
    browser_missing,
    open_page,
    seek_command,
    start_ui,
    stop,
    tab,
    text,
    turns,
    user_config_with,
    wait,
)

pytestmark = pytest.mark.slow

if reason := browser_missing():
    pytest.skip(reason, allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402


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
        assert re.search(r"embedding: \d+ / 60 files · pkg/m\d\d\.py · \d+ chunks",
                         text(browser, "progress-text"))  # fmt: skip
        browser.find_element(By.ID, "cancel").click()
        wait(browser, lambda d: "Cancelled: kept" in text(d, "run-result"), what="cancel")
    finally:
        behaviour.hang_s = 0.0
    kept = int(text(browser, "run-result").split("kept ")[1].split(" ")[0])
    assert 0 < kept < 60
    browser.find_element(By.ID, "update").click()
    wait(browser, lambda d: "files embedded" in text(d, "run-result"), what="the next update")
    assert f"Indexed: {60 - kept} files embedded" in text(browser, "run-result")


def test_a_run_started_from_the_cli_shows_its_progress_and_no_second_writer_starts(
    browser, ui, embedder
):
    _, behaviour = embedder
    open_page(browser, ui, "big")
    behaviour.hang_s = 0.15  # 30 batches: about 5 s to watch
    command = seek_command(ui["home"], "index", str(ui["big"]), "--rebuild", "-q")
    cli = subprocess.Popen(command, env=ui["env"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)  # fmt: skip
    line = re.compile(r"Indexing by pid (\d+) \(seek index .*\) .* — embedding: (\d+) / 60 "
                      r"files · pkg/m\d\d\.py · (\d+) chunks · [\d.]+ s")  # fmt: skip
    done, bar = [], []
    try:

        def advancing(d):
            if m := line.search(text(d, "progress-text")):
                assert int(m[1]) == cli.pid
                done.append(int(m[2]))
                bar.append(float(d.find_element(By.ID, "bar").get_attribute("value")))
            return len(set(done)) >= 3

        wait(browser, advancing, what="the CLI run's numbers to advance")
        assert done == sorted(done) and bar == sorted(bar) and bar[-1] == done[-1]
        assert not browser.find_element(By.ID, "update").is_enabled()
        assert not browser.find_element(By.ID, "rebuild").is_enabled()
        assert not browser.find_element(By.ID, "cancel").is_enabled()  # not the page's run
        for body in ({"path": str(ui["big"])}, {"path": str(ui["big"]), "rebuild": True}):
            refused = httpx.post(f"{ui['base']}ui/api/index", json=body, headers=ui["auth"],
                                 timeout=10)  # fmt: skip
            assert refused.status_code == 409, refused.text
            assert "another process" in refused.json()["error"]["message"]
    finally:
        behaviour.hang_s = 0.0
        assert cli.wait(60) == 0, cli.stderr.read()
    wait(browser, lambda d: d.find_element(By.ID, "update").is_enabled(), what="the end")
    wait(browser, lambda d: "Writer\nnone" in text(d, "status-fields"), what="the status")
    # The page never wrote: the CLI's run is the last one the index records.
    assert not list((ui["home"]).rglob("progress.json"))


def test_search_shows_highlighted_code_and_the_context_line(browser, ui, shots):
    open_page(browser, ui)
    tab(browser, "Search")
    box = browser.find_element(By.ID, "query")
    assert browser.switch_to.active_element == box  # the tab puts the cursor in the box
    box.send_keys("where are retries configured", Keys.ENTER)
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".hit"), what="results")
    first = browser.find_element(By.CSS_SELECTOR, ".hit")
    label = first.find_element(By.CSS_SELECTOR, ".hit-head code").text
    assert re.fullmatch(r"src/retry\.py:\d+-\d+", label), label
    assert "score" in first.text
    assert first.find_elements(By.CSS_SELECTOR, "pre span.k")  # Pygments' keyword spans
    assert "query: 'where are retries configured'" in text(browser, "context-line")
    widened = browser.find_element(By.CSS_SELECTOR, ".hit details summary")
    widened.click()
    assert "Widened block, lines" in widened.text
    # the code shown is exactly the lines the summary names (issue 27)
    first_line, last_line = map(int, re.findall(r"\d+", widened.text)[-2:])
    shown = browser.find_element(By.CSS_SELECTOR, ".hit details pre code")
    expected = "\n".join(RETRY_PY.splitlines()[first_line - 1 : last_line]).rstrip("\n")
    assert shown.get_attribute("textContent").rstrip("\n") == expected
    browser.save_screenshot(str(shots / "ui-search.png"))


# Each change of the chat as the page made it (a DOM observer: no polling can miss one):
# [sources listed, answer text] of the last turn.
RECORD_TURNS = """
window.seenTurns = [];
new MutationObserver(() => {
  const turn = document.querySelector('#chat .turn:last-child');
  if (turn) window.seenTurns.push([turn.querySelectorAll('.sources details').length,
                                   turn.querySelector('.answer-box').innerText]);
}).observe(document.getElementById('chat'), {childList: true, subtree: true});
"""


def test_ask_lists_sources_while_the_answer_streams_and_follows_up(browser, ui, shots, chat):
    open_page(browser, ui)
    tab(browser, "Ask")
    before = len(chat.bodies)
    browser.execute_script(RECORD_TURNS)
    ask(browser, "how are retries configured?")
    wait(browser, answered, what="the answer")
    seen = browser.execute_script("return window.seenTurns")
    partial = [t for _, t in seen if t.startswith("Retries are") and "here" not in t]
    assert partial, f"the answer did not arrive piece by piece: {seen}"
    # The sources were listed before the answer's first word, not after its last.
    assert any(n and not t.startswith("Retries") for n, t in seen), seen
    turn = turns(browser)[-1]
    assert turn.get_attribute("data-state") == "done"
    assert "Retries are configured in src/retry.py <img src=x id=evil> here." in turn.text
    assert not browser.find_elements(By.ID, "evil")  # model text never becomes HTML
    assert turn.find_elements(By.CSS_SELECTOR, ".answer strong")  # markdown rendered
    labels = [s.text for s in turn.find_elements(By.CSS_SELECTOR, ".sources summary")]
    assert any(label.startswith("src/retry.py (lines ") for label in labels), labels
    browser.save_screenshot(str(shots / "ui-ask.png"))

    ask(browser, "and where is it tested?")
    wait(browser, lambda d: len(turns(d)) == 2 and answered(d), what="the follow-up")
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
    try:
        tab(browser, "Ask")
        ask(browser, "how are retries configured?")
        wait(browser, answered, what="the answer")
        sources = browser.find_elements(By.CSS_SELECTOR, ".turn .sources details")
        assert len(sources) == 1
        assert chat.bodies[-1]["messages"][-1]["content"].count("(lines ") == 1
    finally:
        ui["config"].write_text(ui["config"].read_text().replace("snippets = 1\n", ""))


def test_model_mismatch_warning(browser, ui):
    with user_config_with(ui, 'model = "test-embed"', 'model = "nomic-embed-text"'):
        open_page(browser, ui)
        warning = browser.find_element(By.ID, "mismatch")
        assert warning.is_displayed()
        assert "built with ollama/test-embed" in warning.text
        assert "configured model is ollama/nomic-embed-text" in warning.text
        assert "not indexed until you Rebuild" in warning.text


def test_an_untrusted_workspace_config_is_said_in_the_index_tab(browser, ui):
    config = ui["app"] / ".seek.toml"
    config.write_text('team_url = "http://127.0.0.1:9"\nsnippets = 2\n')
    try:
        open_page(browser, ui)
        line = browser.find_element(By.ID, "workspace-config")
        assert line.is_displayed()
        assert f"{config.resolve()} is untrusted: seek ignores its team_url until" in line.text
        assert "run `seek trust` in the workspace" in line.text
    finally:
        config.unlink()
    open_page(browser, ui)
    assert not browser.find_element(By.ID, "workspace-config").is_displayed()


def test_no_chat_model_says_which_setting_to_change(browser, ui):
    with user_config_with(ui, 'chat_model = "llama3"', 'chat_model = ""'):
        open_page(browser, ui)
        tab(browser, "Ask")
        ask(browser, "anything?")
        wait(browser, answered, what="the error")
        assert "set chat_model in Settings" in turns(browser)[-1].text


def test_an_unreachable_chat_server_is_said_with_the_setting_to_change(browser, ui, chat):
    with user_config_with(ui, chat.url, "http://127.0.0.1:9"):
        open_page(browser, ui)
        tab(browser, "Ask")
        ask(browser, "how are retries configured?")
        wait(browser, answered, what="the error")
        turn = turns(browser)[-1]
        assert turn.get_attribute("data-state") == "error"
        error = turn.find_element(By.CSS_SELECTOR, ".error").text
        assert "chat_url=http://127.0.0.1:9" in error and "chat_model=llama3" in error
        assert turn.find_elements(By.CSS_SELECTOR, ".sources details")  # what it found


def test_foreign_origin_and_host_are_refused(ui):
    url, auth = ui["base"], ui["auth"]  # with the token: these are refused for other reasons
    page = httpx.get(url, headers={"Host": "evil.example"}, timeout=10)
    assert page.status_code == 400 and page.json()["error"]["code"] == "bad_host"
    posted = httpx.post(f"{url}ui/api/search", json={"query": "x"},
                        headers={**auth, "Origin": "http://evil.example"}, timeout=10)  # fmt: skip
    assert posted.status_code == 403 and posted.json()["error"]["code"] == "cross_origin"
    simple = httpx.post(f"{url}ui/api/index", content=b"{}",
                        headers={**auth, "Content-Type": "text/plain"}, timeout=10)  # fmt: skip
    assert simple.status_code == 415
    assert httpx.get(f"{url}ui/api/status", timeout=10).status_code == 401  # no token
    own = httpx.get(url, timeout=10)
    assert own.status_code == 200 and "default-src 'none'" in own.headers["content-security-policy"]


def test_with_a_token_the_page_loads_and_sends_it(browser, ui, seek_home):
    from seek_server import running

    from seek.serving.config import ServeConfig

    config = ServeConfig(workspaces=(ui["app"],), token="s3cret-token", ui=True,
                         overrides={"home": str(seek_home)})  # fmt: skip
    with running(config) as url:
        assert httpx.get(f"{url}/ui/api/status", timeout=10).status_code == 401
        assert httpx.get(f"{url}/ui/static/ui.js", timeout=10).status_code == 200
        browser.get(f"{url}/#token=s3cret-token")
        wait(browser, lambda d: "Files" in text(d, "status-fields"), what="the status")
        browser.get(f"{url}/?again#token=wrong")  # a new page, not a hash change
        wait(browser, lambda d: "Bearer" in text(d, "error"), what="the refusal")
        browser.get("about:blank")  # the page's progress stream ends before the server


# `seek ui` whose index folder fills up as it updates: LanceDB's commit fails as it does on a
# full disk (issue 31), injected in the served process before the CLI starts.
FULL_DISK_UI = """
import errno, os, sys
from seek.workspace import live
from seek.store import ChunkTable

def full(table, *args, **kwargs):
    raise RuntimeError("lance error: LanceError(IO): " + os.strerror(errno.ENOSPC)
                       + " (os error 28), chunks.lance/data/1.lance")

ChunkTable.replace_files = full
live.FRESHNESS_S = 0.0
from seek.cli import main
main()
"""


def test_a_stale_index_shows_one_banner_saying_why(browser, ui, tmp_path):
    """The index cannot be updated (the disk is full): the search answers from the last
    complete index and the page shows one banner saying the index is stale and why; after a
    reload the status says the same."""
    app = tmp_path / "full"
    (app / "src").mkdir(parents=True)
    (app / "src/retry.py").write_text(RETRY_PY)
    home = tmp_path / "home"
    built = subprocess.run(seek_command(home, "index", str(app)), env=ui["env"],
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    assert built.returncode == 0, built.stderr
    (app / "src/new.py").write_text("def brand_new_helper():\n    return 1\n")  # to update
    command = [seek_command(home)[0], "-c", FULL_DISK_UI, *seek_command(home, "ui", str(app),
               "--port", "0", "--no-open")[3:]]  # fmt: skip
    proc, url = start_ui(command, ui["env"])
    try:
        page = {**ui, "url": url}
        open_page(browser, page)
        assert browser.find_element(By.ID, "stale").is_displayed() is False
        tab(browser, "Search")
        browser.find_element(By.ID, "query").send_keys("where are retries configured", Keys.ENTER)
        wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".hit"), what="results")
        banner = browser.find_element(By.ID, "stale")
        assert banner.is_displayed()
        assert banner.text.startswith("The index is stale: it cannot be updated (no space left")
        hits = browser.find_elements(By.CSS_SELECTOR, ".hit-head code")
        assert hits[0].text.startswith("src/retry.py:")  # the last complete index answers
        open_page(browser, page)  # a reload: the status says it, with the next try
        wait(browser, lambda d: d.find_element(By.ID, "stale").is_displayed(), what="banner")
        status_banner = text(browser, "stale")
        assert status_banner.startswith("The index is stale: it cannot be updated (no space")
        assert "writing the index in " in status_banner
    finally:
        stop(proc)
