"""Where ``seek serve`` leaves the token it made for a run (issue 43, finding 7;
docs/http-api.md, "Token").

Why a token on loopback at all: 127.0.0.1 is shared by every user and process of the
machine, and the API reads code (search, context, the graph) and starts index runs. So a
loopback ``seek serve`` makes a secret token per run (as ``seek ui`` does) unless
``SEEK_TOKEN`` names one or ``--no-token`` turns it off.

Why a file and not the start line: a server's output is often redirected to a log that other
users can read (``seek serve > /tmp/seek.log 2>&1 &`` under umask 022), and a client in
another terminal or an editor has no access to that output anyway. The file,
``$SEEK_HOME/serve/PORT.token``, is created 0600 in a 0700 folder, named by the port the
server really listens on (``--port 0`` included), and removed when the server stops; the
start line names the file, never the token. A script that starts the server itself can set
``SEEK_TOKEN`` instead and needs no file.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from seek.errors import SeekError
from seek.settings import load_settings
from seek.store.location import seek_home
from seek.store.private import private_folder, private_home, write_private

FOLDER = "serve"


def token_path(home: Path, port: int) -> Path:
    """``$SEEK_HOME/serve/PORT.token``: where a client finds the token of the server on
    ``PORT``."""
    return home / FOLDER / f"{port}.token"


@contextlib.contextmanager
def published(overrides: dict[str, str], port: int, token: str) -> Iterator[Path]:
    """The token written to :func:`token_path` in the ``SEEK_HOME`` the settings name (with
    the command line's ``overrides``; 0600, folders 0700) while the block runs; removed
    after unless another server has replaced it since. The CLI's one arrow into the store
    for it: written once, when ``seek serve`` starts (tests/test_boundaries.py)."""
    home = seek_home(load_settings(None, overrides=overrides))
    path = token_path(home, port)
    data = (token + "\n").encode()
    try:
        private_home(home)
        private_folder(path.parent)
        write_private(path, data)
    except OSError as exc:  # a read-only or full SEEK_HOME: one line, and what to do instead
        raise SeekError(
            f"cannot write the token file {path} ({exc.strerror or exc}): set SEEK_TOKEN "
            "to a secret token of your own instead"
        ) from exc
    try:
        yield path
    finally:
        with contextlib.suppress(OSError):
            if path.read_bytes() == data:
                path.unlink()
