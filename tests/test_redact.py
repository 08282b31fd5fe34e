"""Credentials never show in errors or logs (issue 27, finding 10): the one helper
(:mod:`seek.redact`), the HTTP boundary, the page's ask error and the CLI's log lines."""

from __future__ import annotations

import io
import json
import logging
import socket

import httpx
import pytest
from seek_server import running

from seek.embed.http import HttpEmbedder
from seek.errors import EmbeddingError
from seek.redact import RedactingFilter, one_line, origin, redact
from seek.serving.config import ServeConfig

SECRET = "sk-live-0123456789abcdef"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens once the socket is closed


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("cannot reach http://user:pw@127.0.0.1:9/v1", "cannot reach http://***@127.0.0.1:9/v1"),
        ('endpoint "https://u:p@ss@s3.example/b/k"', 'endpoint "https://***@s3.example/b/k"'),
        ("GET /a?x=1&access_token=abc123&y=2", "GET /a?x=1&access_token=***&y=2"),
        (
            "?X-Amz-Signature=dead&X-Amz-Credential=AK/1",
            "?X-Amz-Signature=***&X-Amz-Credential=***",
        ),
        ("Authorization: Bearer sk-abc", "Authorization: Bearer ***"),
        ('{"Authorization": "Basic dXNlcjpw"}', '{"Authorization": "Basic ***"}'),
        ("aws_secret_access_key=wJalrXUtnFEMI/K7", "aws_secret_access_key=***"),
        ("key id AKIAIOSFODNN7EXAMPLE", "key id ***"),
        (f"the server said: bad key {SECRET}", "the server said: bad key ***"),
    ],
)
def test_credentials_are_masked(text, masked):
    assert redact(text, env={"MY_API_TOKEN": SECRET}) == masked


def test_ordinary_text_is_left_alone():
    text = "basic settings, max_tokens: 512, the token bucket, http://127.0.0.1:9/v1?q=retry"
    assert redact(text, env={"SHORT_KEY": "test", "HOME_DIR": "/home/someone"}) == text
    assert origin("https://user:pw@host:8443/v1/chat?key=k") == "https://host:8443"
    assert one_line("a\nb   c" + "x" * 400, 20) == "a b c" + "x" * 14 + "…"


def test_a_log_record_and_its_traceback_are_masked():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger("seek.test_redact")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        try:
            raise ValueError("connect to http://admin:hunter2@db:5432 failed")
        except ValueError:
            logger.exception("request to %s failed", "http://u:pw@h/x?token=abc")
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
    written = stream.getvalue()
    assert "http://***@h/x?token=***" in written and "ValueError" in written
    assert "hunter2" not in written and ":pw@" not in written and "abc" not in written


def test_an_unreachable_server_is_named_without_its_credentials():
    port = closed_port()
    embedder = HttpEmbedder("openai", "m", base_url=f"http://user:secretpw@127.0.0.1:{port}/v1")
    with pytest.raises(EmbeddingError) as failed:
        embedder.embed(["a"])
    embedder.close()
    assert str(failed.value).startswith(f"cannot reach http://127.0.0.1:{port}")
    assert "secretpw" not in str(failed.value)


def test_a_server_echoing_the_key_does_not_show_it(monkeypatch):
    monkeypatch.setenv("SEEK_TEST_EMBED_TOKEN", SECRET)

    def echo(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, json={"error": f"bad {request.headers['Authorization']}"})

    embedder = HttpEmbedder("openai", "m", base_url="http://h/v1",
                            api_key_env="SEEK_TEST_EMBED_TOKEN",
                            transport=httpx.MockTransport(echo))  # fmt: skip
    with pytest.raises(EmbeddingError) as refused:
        embedder.embed(["a"])
    embedder.close()
    assert str(refused.value) == "http://h answered HTTP 500: bad Bearer ***"


def test_the_pages_ask_error_names_the_chat_server_without_credentials(
    make_tree, seek_home, hash_provider
):
    root = make_tree({"src/retry.py": "def configure_retries(policy):\n    return policy\n"})
    port = closed_port()
    chat_url = f"http://user:secretpw@127.0.0.1:{port}/v1?api_key=abc123"
    overrides = {"home": str(seek_home), "provider": hash_provider, "chat_provider": "openai",
                 "chat_url": chat_url, "chat_model": "m"}  # fmt: skip
    with running(ServeConfig(workspaces=(root,), overrides=overrides, ui=True)) as base:
        answer = httpx.post(f"{base}/ui/api/ask", json={"question": "retries?", "path": str(root)},
                            timeout=60)  # fmt: skip
    errors = [
        line["error"] for line in map(json.loads, answer.text.splitlines()) if "error" in line
    ]
    assert len(errors) == 1, answer.text
    assert f"cannot reach http://127.0.0.1:{port}" in errors[0]
    assert f"chat_url=http://127.0.0.1:{port}," in errors[0]
    assert "secretpw" not in answer.text and "abc123" not in answer.text


def test_a_team_note_names_the_team_server_without_credentials():
    from seek.settings import load_settings
    from seek.workspace.team import ask_team

    port = closed_port()
    url = f"http://alice:secretpw@127.0.0.1:{port}/team?token=abc123"
    settings = load_settings(None, overrides={"team_url": url}, env={})
    hits, note = ask_team(settings, "retries")
    assert hits == [] and note.startswith(
        f"No team hits: the team server at http://***@127.0.0.1:{port}/team?token=*** failed"
    )
    assert "secretpw" not in note and "abc123" not in note


def test_the_cli_masks_a_credential_in_any_error_it_prints(tmp_path, monkeypatch, capsys):
    from seek.cli import main

    monkeypatch.setattr("sys.argv", ["seek", "corpus", "unlock", str(tmp_path), "x?token=abcdef"])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("seek: error: bad repository name 'x?token=***'") and "abcdef" not in err


def test_the_clis_log_lines_are_masked(tmp_path):
    import subprocess
    import sys

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "corpus.json").write_text(json.dumps({"repos": {"x?token=abcdef": "/nowhere"}}))
    command = [sys.executable, "-m", "seek", "corpus", "list", str(corpus)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("seek: WARNING: corpus.json: repository 'x?token=***' skipped")
    assert "abcdef" not in done.stderr


def test_a_malformed_log_call_is_still_written_masked():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    record = logging.LogRecord("seek", logging.WARNING, "f", 1, "to %s %s", ("http://u:p@h",), None)
    handler.handle(record)  # one argument for two placeholders: no exception escapes
    assert stream.getvalue() == "to %s %s ('http://***@h',)\n"


def test_environment_values_are_masked_from_eight_characters_and_only_secret_names():
    """``MIN_SECRET_CHARS`` is inclusive, and a long value of a variable whose name says
    nothing secret (HOME, PATH) is ordinary text."""
    env = {"MY_TOKEN": "abcdefgh", "HOME": "/home/someone-long"}
    assert redact("got abcdefgh from /home/someone-long", env=env) == (
        "got *** from /home/someone-long"
    )
    assert redact("got abcdefg", env={"MY_TOKEN": "abcdefg"}) == "got abcdefg"


def test_one_line_keeps_exactly_limit_characters():
    assert one_line("x" * 300) == "x" * 300  # the default limit, 300, is inclusive
    assert one_line("x" * 301) == "x" * 299 + "…"


@pytest.mark.parametrize("message", ["token=abc123 X", "token=abc123  "])
def test_a_traceback_is_redacted_as_written_and_nothing_else_changes(message):
    """The filter's traceback is the one logging would write (its lines joined as they are,
    only the last line break dropped), with the credential masked."""
    try:
        raise ValueError(message)
    except ValueError as exc:
        info = (type(exc), exc, exc.__traceback__)
    record = logging.LogRecord("seek", logging.ERROR, "f", 1, "failed", (), info)
    RedactingFilter().filter(record)
    expected = logging.Formatter().formatException(info).replace("abc123", "***")
    assert record.exc_text == expected


def test_redact_logs_puts_one_filter_on_each_handler():
    from seek.redact import redact_logs

    logger = logging.getLogger("seek.test_redact_logs")
    stream = io.StringIO()
    handlers = [logging.StreamHandler(stream), logging.StreamHandler(io.StringIO())]
    for handler in handlers:
        logger.addHandler(handler)
    logger.propagate = False
    try:
        redact_logs(logger)
        redact_logs(logger)  # twice: still one filter each
        logger.warning("to http://u:pw@h/x")
    finally:
        for handler in handlers:
            logger.removeHandler(handler)
        logger.propagate = True
    assert [len(h.filters) for h in handlers] == [1, 1]
    assert all(isinstance(h.filters[0], RedactingFilter) for h in handlers)
    assert stream.getvalue() == "to http://***@h/x\n"
