"""The page names each hit's enclosing symbol (issue 28 deliver 2, "every search hit names
its enclosing symbol"), as the CLI's text does: a real server on 127.0.0.1 with the page, a
real index of a real workspace (tree-sitter's definitions), the real embeddings server of
the browser tests, and Debian's chromium.

A symbol's name is workspace text: Kotlin's backquoted names may hold ``<img ...>``, and
tree-sitter keeps them whole, so the hostile name below comes from a valid source file.
"""

from __future__ import annotations

import httpx
import pytest

from ui.ui_harness import browser_missing, tab, wait

pytestmark = pytest.mark.slow

if reason := browser_missing():
    pytest.skip(reason, allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

TOKEN = "symbols-page-token"
HOSTILE = "`<img src=x id=evil-symbol onerror=document.title='owned'>`"
FILES = {
    # One chunk each: the method holds most of the file's lines, so it is the hit's symbol.
    "src/client.py": (
        "class HttpClient:\n"
        "    def send_with_backoff(self, request):\n"
        "        attempts = 0\n"
        "        while attempts < 5:\n"
        "            attempts += 1\n"
        "            answer = request.transmit()\n"
        "            if answer.ok:\n"
        "                return answer\n"
        "        return None\n"
    ),
    "src/widget.kt": (
        "class Widget {\n"
        f"    fun {HOSTILE}(size: Int): Int {{\n"
        "        val frobnicated = size * 2\n"
        "        val doubled = frobnicated + 1\n"
        "        val tripled = doubled * 3\n"
        "        return tripled\n"
        "    }\n"
        "}\n"
    ),
    # File-level code: no definition holds it, so its hit names none.
    "src/limits.py": "GLACIER_LIMIT = 5\nGLACIER_TIMEOUT_S = 30\nGLACIER_NAME = 'cold'\n",
    # The README's screenshot's case (issue 46): the chunk starts with a colour table, the
    # function it is found for lies below, and holds most of the lines.
    "src/palette.py": (
        "COLOURS = {\n"
        '    "colour_55": "#0380a7",\n'
        '    "colour_56": "#0380a8",\n'
        "}\n"
        "\n"
        "\n"
        "def retry_with_exponential_backoff(call, attempts=5):\n"
        "    delay = 0.1\n"
        "    for attempt in range(attempts):\n"
        "        answer = call()\n"
        "        if answer is not None:\n"
        "            return answer\n"
        "        time.sleep(delay)\n"
        "        delay = delay * 2\n"
        "    return None\n"
    ),
}


@pytest.fixture(scope="module")
def page(browser, embedder, tmp_path_factory):
    """The page of a server for one workspace, its index built by the first search."""
    from seek_server import running

    from seek.serving.config import ServeConfig

    base = tmp_path_factory.mktemp("symbols")
    root = base / "ws"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    config = base / "config" / "seek" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'provider = "ollama"\nbase_url = "{embedder[0]}"\nmodel = "test-embed"\n')
    with pytest.MonkeyPatch.context() as env:
        env.setenv("XDG_CONFIG_HOME", str(base / "config"))  # read by the server's thread
        serve = ServeConfig(workspaces=(root,), token=TOKEN, ui=True,
                            overrides={"home": str(base / "home")})  # fmt: skip
        with running(serve) as url:
            try:
                yield url, root
            finally:
                browser.get("about:blank")  # the page's progress stream ends before the server


def search(browser, url: str, query: str) -> dict[str, object]:
    """The page's hits for ``query``, by label: the symbol line each shows (None: none)."""
    if browser.current_url.startswith(url):
        browser.get("about:blank")
    browser.get(f"{url}/#token={TOKEN}")
    tab(browser, "Search")
    browser.find_element(By.ID, "query").send_keys(query, Keys.ENTER)
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".hit"), what="results")
    shown = {}
    for hit in browser.find_elements(By.CSS_SELECTOR, ".hit"):
        label = hit.find_element(By.CSS_SELECTOR, ".hit-head code").text
        symbols = hit.find_elements(By.CSS_SELECTOR, ".hit-head .symbol")
        assert len(symbols) <= 1, label
        shown[label] = symbols[0].get_attribute("textContent") if symbols else None
    return shown


def page_json(url: str, root, query: str) -> dict[str, object]:
    answer = httpx.post(f"{url}/ui/api/search", json={"path": str(root), "query": query},
                        headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)  # fmt: skip
    assert answer.status_code == 200, answer.text
    return {f"{h['path']}:{h['start_line']}-{h['end_line']}": h["symbol"]
            for h in answer.json()["hits"]}  # fmt: skip


def test_a_hit_inside_a_method_shows_the_method_and_file_level_code_shows_none(browser, page):
    url, root = page
    query = "send with backoff transmit attempts glacier limit"
    shown = search(browser, url, query)
    client = [label for label in shown if label.startswith("src/client.py:")]
    limits = [label for label in shown if label.startswith("src/limits.py:")]
    assert client and limits, shown
    assert shown[client[0]] == "in HttpClient.send_with_backoff (method)"
    assert shown[limits[0]] is None  # no definition holds it: nothing, not "in null"
    sent = page_json(url, root, query)  # what the page shows is the JSON's symbol
    assert sent[client[0]]["container"] == "HttpClient"
    assert sent[client[0]]["name"] == "send_with_backoff" and sent[limits[0]] is None


def test_a_hostile_symbol_name_is_shown_as_text(browser, page):
    url, _ = page
    shown = search(browser, url, "frobnicated doubled tripled widget size")
    widget = [label for label in shown if label.startswith("src/widget.kt:")]
    assert widget, shown
    assert shown[widget[0]] == f"in Widget.{HOSTILE} (method)"
    assert not browser.find_elements(By.ID, "evil-symbol")
    assert not browser.find_elements(By.CSS_SELECTOR, ".hit img")
    assert browser.title == "seek"  # no handler ran


def shown_lines(browser, url: str, query: str) -> dict[str, str | None]:
    """The page's hits for ``query``, by label: the line each names above its code (None:
    none), and, where there is one, the block's marked line."""
    search(browser, url, query)
    shown: dict[str, str | None] = {}
    for hit in browser.find_elements(By.CSS_SELECTOR, ".hit"):
        label = hit.find_element(By.CSS_SELECTOR, ".hit-head code").text
        lines = hit.find_elements(By.CSS_SELECTOR, ".hit-line")
        assert len(lines) <= 1, label
        if lines:
            marked = hit.find_elements(By.CSS_SELECTOR, "pre .hll")
            assert len(marked) == 1, label  # the same line, marked in the code below
            assert marked[0].get_attribute("textContent").strip() in lines[0].text, label
        shown[label] = lines[0].text if lines else None
    return shown


def test_a_hit_shows_its_definitions_signature_not_its_first_line(browser, page):
    """Issue 46 deliver 4: the hit whose chunk starts with a colour table names the function
    it was found for, with its line number, instead of ``COLOURS = {``."""
    url, _ = page
    shown = shown_lines(browser, url, "retry with exponential backoff")
    palette = [label for label in shown if label.startswith("src/palette.py:")]
    assert palette, shown
    assert palette[0].startswith("src/palette.py:1-")  # the chunk does start at the table
    assert shown[palette[0]] == "L7 def retry_with_exponential_backoff(call, attempts=5):"


def test_file_level_code_shows_its_best_matching_line(browser, page):
    """No definition holds it: the line sharing the most words with the question, not the
    first (GLACIER_LIMIT shares one word of "glacier timeout", GLACIER_TIMEOUT_S two)."""
    url, _ = page
    shown = shown_lines(browser, url, "glacier timeout")
    limits = [label for label in shown if label.startswith("src/limits.py:")]
    assert limits, shown
    assert shown[limits[0]] == "L2 GLACIER_TIMEOUT_S = 30"
