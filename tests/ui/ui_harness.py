"""What the browser tests and ``scripts/ui_screenshots.py`` share: a streaming chat server
that answers from a script, a `seek ui` process on 127.0.0.1, and Debian's chromium driven
headless through Debian's chromedriver (nothing is downloaded).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from local_http import serving

RETRY_PY = '''"""Retrying failed HTTP requests."""

import random
import time


class RetryPolicy:
    """How often and how long a failed request is tried again."""

    def __init__(self, attempts=3, backoff_s=0.5, max_backoff_s=30.0, jitter=0.1):
        self.attempts = attempts
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.jitter = jitter
        self.retry_on = {429, 500, 502, 503, 504}

    def delay(self, attempt):
        """Seconds to wait before ``attempt``: exponential with jitter, capped."""
        base = min(self.max_backoff_s, self.backoff_s * 2 ** (attempt - 1))
        return base * (1 + random.uniform(-self.jitter, self.jitter))

    def should_retry(self, status, attempt):
        return status in self.retry_on and attempt < self.attempts

    def call(self, send, request):
        for attempt in range(1, self.attempts + 1):
            response = send(request)
            if not self.should_retry(response.status, attempt):
                return response
            time.sleep(self.delay(attempt))
        return response


def configure_retries(settings):
    """Build the retry policy from the ``[retries]`` table of the settings file."""
    table = settings.get("retries", {})
    return RetryPolicy(
        attempts=int(table.get("attempts", 3)),
        backoff_s=float(table.get("backoff_s", 0.5)),
        max_backoff_s=float(table.get("max_backoff_s", 30.0)),
    )
'''
"""A module with a class and a function, long enough to be cut into several chunks (so a
hit has a wider block to expand to); the browser tests' and the screenshots' workspace."""

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def browser_missing() -> str:
    """Why no browser test can run here, or "" when one can."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    for binary in (CHROMIUM, CHROMEDRIVER):
        if not os.access(binary, os.X_OK):
            return f"no browser: {binary} is missing (apt-get install chromium chromium-driver)"
    return ""


@dataclass
class Chat:
    """An Ollama-style chat server that streams ``pieces`` with ``delay_s`` between them;
    ``bodies`` records what it was asked."""

    pieces: Sequence[str]
    delay_s: float
    url: str = ""
    bodies: list[dict] = field(default_factory=list)


@contextmanager
def chat_server(pieces: Sequence[str], delay_s: float) -> Iterator[Chat]:
    record = Chat(pieces, delay_s)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            record.bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()
            for piece in record.pieces:  # a model takes a while to its first word too
                time.sleep(record.delay_s)
                line = {"message": {"role": "assistant", "content": piece}, "done": False}
                self.wfile.write((json.dumps(line) + "\n").encode())
                self.wfile.flush()
            self.wfile.write(b'{"message": {"content": ""}, "done": true}\n')

    with serving(Handler) as url:
        record.url = url
        yield record


def seek_command(home: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "seek", "--set", f"home={home}", *args]


def start_ui(command: list[str], env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    """A `seek ui ... --port 0 --no-open` process and the address it prints."""
    proc = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    if "is at http://127.0.0.1:" not in line:
        proc.kill()
        raise RuntimeError(f"seek ui did not start: {line}{proc.stderr.read()}")
    return proc, line.rsplit(" ", 1)[1].strip()


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()  # open pages' streams end within seek ui's 2 s grace period
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


@contextmanager
def chromium(profile: Path, width: int = 1280, height: int = 900) -> Iterator[object]:
    """Headless chromium, offline and quiet (no sync, updates or background requests)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking", "--disable-sync",
                 "--disable-component-update", f"--window-size={width},{height}",
                 "--hide-scrollbars", f"--user-data-dir={profile}"):  # fmt: skip
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(20)
    try:
        yield driver
    finally:
        driver.quit()


def color_scheme(driver, scheme: str) -> None:
    """Emulate ``prefers-color-scheme`` (``light``, ``dark``, or "" for the system's)."""
    features = [{"name": "prefers-color-scheme", "value": scheme}] if scheme else []
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": features})


def wait(driver, condition, timeout: float = 20.0, what: str = "the page"):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(
        lambda d: condition(d), message=f"waiting for {what}"
    )


def text(driver, element_id: str) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, element_id).text


def tab(driver, name: str) -> None:
    from selenium.webdriver.common.by import By

    driver.find_element(By.XPATH, f"//nav/button[.='{name}']").click()


def ask(driver, question: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    area = driver.find_element(By.ID, "question")
    area.clear()
    area.send_keys(question, Keys.CONTROL, Keys.ENTER)


def turns(driver) -> list:
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, "#chat .turn")


def answered(driver) -> bool:
    """The last question's turn has ended (its answer, or its error, is complete)."""
    last = turns(driver)
    return bool(last) and last[-1].get_attribute("data-state") in ("done", "error")


def open_page(driver, ui, workspace: str = "app") -> None:
    from selenium.webdriver.common.by import By

    if driver.current_url.partition("#")[0] == ui["url"].partition("#")[0]:
        driver.get("about:blank")  # the same address again would only move to its fragment
    driver.get(ui["url"])
    wait(driver, lambda d: "Files" in text(d, "status-fields"), what="the status")
    if workspace != "app":
        select = driver.find_element(By.ID, "workspace")
        select.find_element(By.XPATH, f"option[contains(., '{ui[workspace]}')]").click()
        wait(driver, lambda d: str(ui[workspace]) in text(d, "status-fields"), what="switch")


@contextmanager
def user_config_with(ui, old: str, new: str):
    """The user config with ``old`` replaced by ``new`` for the block (the server reads it
    on each request)."""
    config = ui["config"]
    saved = config.read_text()
    assert old in saved
    config.write_text(saved.replace(old, new))
    try:
        yield
    finally:
        config.write_text(saved)
