"""Regenerate the README's two screenshots of `seek ui` (docs/ui-search.png, docs/ui-ask.png).

    .venv/bin/python scripts/ui_screenshots.py [OUT_DIR]      # default: docs/

It writes a small demo workspace to ``$TMPDIR/seek-demo/my-project`` (so the page shows a
clean name and path), indexes it with seek's built-in embedder through the page's Update
button, searches and asks from the page in Debian's headless chromium (as the browser
tests do: tests/ui/ui_harness.py), and saves the screens. The chat answer comes from a
scripted stand-in server on 127.0.0.1 (no chat model runs here); everything else is
seek's real output. Needs chromium and chromium-driver (apt) and the test extra.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests")]

from ui.ui_harness import (  # noqa: E402
    RETRY_PY,
    answered,
    ask,
    browser_missing,
    chat_server,
    chromium,
    seek_command,
    start_ui,
    stop,
    tab,
    text,
    wait,
)

DEMO = {
    "src/my_project/retry.py": RETRY_PY,
    "src/my_project/client.py": '''"""An HTTP client that retries what a server may recover from."""

from my_project.retry import configure_retries
from my_project.settings import load_settings


class HttpClient:
    def __init__(self, transport, settings=None):
        self.transport = transport
        self.policy = configure_retries(settings or load_settings())

    def get(self, url, headers=None):
        request = {"method": "GET", "url": url, "headers": headers or {}}
        return self.policy.call(self.transport.send, request)
''',
    "src/my_project/settings.py": '''"""Settings from my-project.toml, with defaults."""

import tomllib
from pathlib import Path

DEFAULT_PATH = Path("my-project.toml")


def load_settings(path=DEFAULT_PATH):
    if not path.exists():
        return {}
    with path.open("rb") as handle:
        return tomllib.load(handle)
''',
    "tests/test_retry.py": """from my_project.retry import RetryPolicy


def test_gives_up_after_the_last_attempt():
    policy = RetryPolicy(attempts=2)
    assert policy.should_retry(503, 1)
    assert not policy.should_retry(503, 2)
""",
    "my-project.toml": "[retries]\nattempts = 5\nbackoff_s = 0.25\n",
    "README.md": "# my-project\n\nAn HTTP client with retries (see my-project.toml).\n",
}

ANSWER = [
    "Retries are configured by ", "`configure_retries` in `src/my_project/retry.py`, ",
    "which reads the `[retries]` table of `my-project.toml` ", "(here: 5 attempts, ",
    "0.25 s initial backoff).\n\n", "- `RetryPolicy.delay` doubles the wait on each ",
    "attempt, with jitter, capped at `max_backoff_s`\n", "- `should_retry` retries only ",
    "429 and 5xx statuses\n", "- `HttpClient` builds its policy from the settings when ",
    "it is created",
]  # fmt: skip


def main(out: Path) -> None:
    if reason := browser_missing():
        sys.exit(f"ui_screenshots: {reason}")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    demo = Path(tempfile.gettempdir()) / "seek-demo"
    shutil.rmtree(demo, ignore_errors=True)
    project = demo / "my-project"
    for rel, body in DEMO.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(body, encoding="utf-8")
    out.mkdir(parents=True, exist_ok=True)
    with chat_server(ANSWER, 0.02) as chat:
        config = demo / "config" / "seek" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(f'chat_model = "llama3"\nchat_url = "{chat.url}"\n', encoding="utf-8")
        env = {**os.environ, "XDG_CONFIG_HOME": str(demo / "config")}
        env.pop("SEEK_TOKEN", None)
        command = seek_command(demo / "home", "ui", str(project), "--port", "0", "--no-open")
        proc, url = start_ui(command, env)
        try:
            with chromium(demo / "chromium-profile", 1280, 820) as browser:
                browser.get(url)
                wait(browser, lambda d: "Files" in text(d, "status-fields"), what="the status")
                browser.find_element(By.ID, "update").click()
                wait(browser, lambda d: "files embedded" in text(d, "run-result"), 120, "index")
                tab(browser, "Search")
                query = browser.find_element(By.ID, "query")
                query.send_keys("where are retries configured?", Keys.ENTER)
                wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".hit"), 60, "results")
                browser.find_element(By.TAG_NAME, "h1").click()  # no focus ring in the shot
                browser.save_screenshot(str(out / "ui-search.png"))
                tab(browser, "Ask")
                ask(browser, "how are retries configured?")
                wait(browser, answered, 60, "the answer")
                browser.find_element(By.TAG_NAME, "h1").click()
                browser.save_screenshot(str(out / "ui-ask.png"))
        finally:
            stop(proc)
    print(f"ui_screenshots: wrote {out / 'ui-search.png'} and {out / 'ui-ask.png'}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs")
