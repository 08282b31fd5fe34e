"""``seek ui``'s address: a secret token per run, and a browser opened without showing it.

Why a token on loopback (issue 27, finding 3): 127.0.0.1 is shared by every user and
process of the machine, and the page can read code and rewrite the user's config (a
``chat_url`` there receives the next question's code). So each run makes a random token
(``secrets.token_urlsafe``, 256 bits) unless ``SEEK_TOKEN`` names one, and every API call
must send it. The page reads it from its address's fragment (``#token=...``): a fragment is
never sent to a server, logged by one, or passed on in a ``Referer``.

A browser started with that address on its command line would show the token to every
local user (``ps``, ``/proc/PID/cmdline``). As Jupyter does, the browser gets a file
instead, readable by the user alone, that sends it on to the address.
"""

from __future__ import annotations

import html
import os
import secrets
import shutil
import tempfile
import webbrowser
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote


def new_token() -> str:
    return secrets.token_urlsafe(32)


def page_url(port: int, token: str) -> str:
    """The page's address with the token in its fragment (``ui.js`` reads it there)."""
    return f"http://127.0.0.1:{port}/#token={quote(token, safe='')}"


@contextmanager
def redirect_file(url: str) -> Iterator[Path]:
    """A page (mode 0600, in a folder of mode 0700) that sends the browser to ``url``,
    removed when the block ends."""
    folder = Path(tempfile.mkdtemp(prefix="seek-ui-"))  # mkdtemp: 0700, unguessable
    try:
        page = folder / "open.html"
        target = html.escape(url, quote=True)
        fd = os.open(page, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(
                '<!DOCTYPE html>\n<meta charset="utf-8">\n'
                f'<meta http-equiv="refresh" content="0;url={target}">\n'
                f'<title>seek</title>\n<p><a href="{target}">Open seek</a></p>\n'
            )
        yield page
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def open_in_browser(page: Path) -> None:
    webbrowser.open(page.as_uri())
