"""The page's quality in a real browser (issue 16, "Quality of the page"): light and dark by
``prefers-color-scheme`` (emulated through the DevTools protocol), readable at 1280 and
800 px (nothing wider than the window, text contrast at least WCAG AA's 4.5:1), usable from
the keyboard with every control labelled, the copy-path button, and every error said in the
page when the server stops.
"""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

import httpx
import pytest

from ui.ui_harness import (
    answered,
    ask,
    browser_missing,
    color_scheme,
    open_page,
    seek_command,
    start_ui,
    stop,
    tab,
    text,
    turns,
    wait,
)

pytestmark = pytest.mark.slow

if reason := browser_missing():
    pytest.skip(reason, allow_module_level=True)

from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

UNREACHABLE = "cannot reach seek ui (is it still running?)"
PANELS = ("Index", "Search", "Ask", "Settings")
CONTROLS = "button, input, select, textarea, progress, summary, a[href], [tabindex]"

# The lowest contrast of any visible text against the background it is drawn on (the
# nearest opaque ancestor's), by WCAG 2's formula; disabled controls are exempt.
WORST_CONTRAST = """
const channels = (c) => c.match(/[\\d.]+/g).map(Number);
const luminance = (c) => {
  const [r, g, b] = channels(c).slice(0, 3).map((v) => {
    v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const background = (node) => {
  for (; node; node = node.parentElement) {
    const c = channels(getComputedStyle(node).backgroundColor);
    if (c.length < 4 || c[3] > 0.5) return getComputedStyle(node).backgroundColor;
  }
  return "rgb(255, 255, 255)";
};
let worst = [99, "", ""];
for (const node of document.querySelectorAll("body *")) {
  const own = [...node.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
  if (!own || !node.getClientRects().length || node.closest(":disabled")) continue;
  if (getComputedStyle(node).visibility === "hidden") continue;
  const fg = luminance(getComputedStyle(node).color), bg = luminance(background(node));
  const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
  const where = node.tagName + "." + node.className;
  if (ratio < worst[0]) worst = [ratio, where, node.textContent.slice(0, 40)];
}
return worst;
"""


@pytest.fixture(scope="module")
def indexed(ui):
    """The app workspace indexed (an update: nothing to do when the other module did it)."""
    url, auth = ui["base"], ui["auth"]
    started = httpx.post(f"{url}ui/api/index", json={"path": str(ui["app"])}, headers=auth,
                         timeout=30)  # fmt: skip
    assert started.status_code in (200, 409), started.text
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = httpx.get(f"{url}ui/api/status", params={"path": str(ui["app"])},
                           headers=auth, timeout=30)  # fmt: skip
        if status.json()["files"] == 2 and not status.json()["writer"]:
            return
        time.sleep(0.2)
    raise AssertionError(f"the app workspace was not indexed: {status.text}")


def fill_panels(browser, ui) -> None:
    """Every panel with something in it: status, results (one widened), an answer."""
    open_page(browser, ui)
    tab(browser, "Search")
    browser.find_element(By.ID, "query").send_keys("retry backoff delay", Keys.ENTER)
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".hit"), what="results")
    for summary in browser.find_elements(By.CSS_SELECTOR, ".hit details summary")[:1]:
        summary.click()
    tab(browser, "Ask")
    ask(browser, "how are retries configured?")
    wait(browser, answered, what="the answer")
    tab(browser, "Settings")
    wait(browser, lambda d: d.find_elements(By.ID, "set-snippets"), what="the settings")


def test_light_and_dark_are_readable_at_1280_and_800_px(browser, ui, indexed, shots):
    try:
        for scheme in ("light", "dark"):
            color_scheme(browser, scheme)
            browser.set_window_size(1280, 900)
            fill_panels(browser, ui)
            body = browser.execute_script("return getComputedStyle(document.body).backgroundColor")
            level = sum(int(v) for v in body[body.index("(") + 1 : -1].split(",")[:3]) / 3
            assert (level < 60) if scheme == "dark" else (level > 200), (scheme, body)
            for width in (1280, 800):
                browser.set_window_size(width, 900)
                for panel in PANELS:
                    tab(browser, panel)
                    wide = browser.execute_script(
                        "return [document.documentElement.scrollWidth, innerWidth]"
                    )
                    assert wide[0] <= wide[1] <= width, (scheme, width, panel, wide)
                    ratio, where, sample = browser.execute_script(WORST_CONTRAST)
                    assert ratio >= 4.5, (scheme, width, panel, ratio, where, sample)
                    if panel in ("Search", "Ask"):
                        name = f"ui-{panel.lower()}-{scheme}-{width}.png"
                        browser.save_screenshot(str(shots / name))
    finally:
        color_scheme(browser, "")
        browser.set_window_size(1280, 900)


def press(browser, *keys) -> None:
    ActionChains(browser).send_keys(*keys).perform()


def focused(browser):
    return browser.switch_to.active_element


def clipboard(browser) -> str:
    return browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "navigator.clipboard.readText().then(done, (e) => done('refused: ' + e));"
    )


def test_keyboard_only_search_copy_path_and_labelled_controls(browser, ui, indexed):
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(ui["url"]))
    permissions = ["clipboardReadWrite", "clipboardSanitizedWrite"]
    browser.execute_cdp_cmd(
        "Browser.grantPermissions", {"origin": origin, "permissions": permissions}
    )
    open_page(browser, ui)
    for _ in range(12):  # from the top of the page: workspace menu, then the section tabs
        press(browser, Keys.TAB)
        if focused(browser).get_attribute("data-panel") == "search-panel":
            break
    else:
        raise AssertionError("Tab never reached the Search tab")
    press(browser, Keys.ENTER)
    assert focused(browser).get_attribute("id") == "query"  # the cursor lands in the box
    press(browser, "where are retries configured", Keys.ENTER)
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".hit"), what="results")
    labels = [c.text for c in browser.find_elements(By.CSS_SELECTOR, ".hit-head code")]

    for _ in range(4):  # the Search button, then the first result's copy button
        press(browser, Keys.TAB)
        if focused(browser).text == "Copy path":
            break
    assert focused(browser).accessible_name == f"Copy {labels[0]}"
    press(browser, Keys.ENTER)
    wait(browser, lambda d: focused(d).text == "Copied", what="the copy")
    assert clipboard(browser) == labels[0]

    # Without the clipboard API (a plain-http address other than localhost) it still copies.
    browser.execute_script(
        "Object.defineProperty(navigator, 'clipboard', {value: undefined, configurable: true})"
    )
    second = browser.find_elements(By.CSS_SELECTOR, ".hit-head button")[1]
    second.click()
    wait(browser, lambda d: second.text == "Copied", what="the fallback copy")
    browser.execute_script("delete navigator.clipboard")
    assert clipboard(browser) == labels[1]

    tab(browser, "Ask")
    ask(browser, "how are retries configured?")
    wait(browser, answered, what="the answer")
    unlabelled = []
    for panel in PANELS:
        tab(browser, panel)
        if panel == "Settings":
            wait(browser, lambda d: d.find_elements(By.ID, "set-snippets"), what="settings")
        for control in browser.find_elements(By.CSS_SELECTOR, CONTROLS):
            if control.is_displayed() and not control.accessible_name.strip():
                unlabelled.append((panel, control.get_attribute("outerHTML")[:80]))
    assert not unlabelled


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_stopped_server_is_said_in_every_panel_and_the_page_recovers(browser, ui, indexed):
    port = str(free_port())
    command = seek_command(ui["home"], "ui", str(ui["app"]), "--port", port, "--no-open")
    env = {**ui["env"], "SEEK_TOKEN": "kept-across-restarts"}  # else each run makes its own
    proc, url = start_ui(command, env)
    try:
        open_page(browser, {**ui, "url": url})
        proc.kill()  # as a crash or a closed terminal would
        proc.wait(10)
        wait(browser, lambda d: "is it still running?" in text(d, "error"), what="the break")
        assert text(browser, "error").startswith("Progress: ")
        tab(browser, "Search")
        browser.find_element(By.ID, "query").send_keys("retries", Keys.ENTER)
        wait(browser, lambda d: text(d, "search-error"), what="the search error")
        assert text(browser, "search-error") == f"Search: {UNREACHABLE}"
        tab(browser, "Ask")
        ask(browser, "how are retries configured?")
        wait(browser, answered, what="the ask error")
        assert f"Ask: {UNREACHABLE}" in turns(browser)[-1].text
        tab(browser, "Settings")
        wait(browser, lambda d: text(d, "error").startswith("Settings: cannot reach"), what="x")
        tab(browser, "Index")
        browser.find_element(By.ID, "update").click()
        wait(browser, lambda d: text(d, "error").startswith("Update: cannot reach"), what="y")

        proc, url = start_ui(command, env)  # back on the same port: the page recovers
        wait(browser, lambda d: not d.find_element(By.ID, "error").is_displayed(), 30, "it")
        assert "Files\n2" in text(browser, "status-fields")
    finally:
        if proc.poll() is None:
            stop(proc)
