"""The one HTTP boundary (issue 18): routes, auth from a named variable, errors in seek's
words, the transport seam, closing. Real local servers are in test_embed_http, test_chat,
test_server (team) and test_models_pull; these go through ``httpx.MockTransport``."""

from __future__ import annotations

import httpx
import pytest

from seek.chat import stream_chat
from seek.embed.http import HttpEmbedder
from seek.errors import ChatError, EmbeddingError, SettingsError
from seek.remote import Remote, join_route, use_transport
from seek.settings import load_settings
from seek.workspace.team import HOP_HEADER, ask_team


def test_routes_join_once():
    named = ("/embeddings", "/embed")
    assert join_route("http://h/v1/", "/api/embed", named=named, v1_route="/embeddings") == (
        "http://h/v1/embeddings"
    )
    assert (
        join_route("http://h/x", "/api/embed", named=named, v1_route="/e") == "http://h/x/api/embed"
    )
    assert join_route("http://h/api/embed", "/api/embed", named=named, v1_route="/e") == (
        "http://h/api/embed"
    )


def test_an_embedder_sends_the_named_key_and_reads_vectors():
    seen = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"data": [{"index": 0, "embedding": [1.0, 2.0]}]})

    embedder = HttpEmbedder("openai", "m", base_url="http://h/v1", api_key_env="K",
                            env={"K": "s3"}, transport=httpx.MockTransport(answer))  # fmt: skip
    assert embedder.embed(["a"]).tolist() == [[1.0, 2.0]]
    assert str(seen[0].url) == "http://h/v1/embeddings"
    assert seen[0].headers["Authorization"] == "Bearer s3"
    embedder.close()
    with pytest.raises(RuntimeError):  # closed: the pool is gone
        embedder._remote._client.post("http://h/v1/embeddings")


def test_a_named_variable_that_is_empty_is_a_settings_error():
    with pytest.raises(SettingsError, match=r"\$NOPE is not set"):
        Remote("http://h", token_env="NOPE", env={})


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (401, {"error": "bad key"}, "401: check the API key in api_key_env (none is set)"),
        (
            404,
            {"error": "model 'm' not found"},
            "model 'm' not found on the server — pull it first",
        ),
        (500, {"error": {"message": "boom\nagain"}}, "http://h answered HTTP 500: boom again"),
    ],
)
def test_refusals_read_the_same_for_every_client(status, body, message):
    transport = httpx.MockTransport(lambda request: httpx.Response(status, json=body))
    embedder = HttpEmbedder("openai", "m", base_url="http://h/v1", transport=transport)
    with pytest.raises(EmbeddingError) as refused:
        embedder.embed(["a"])
    assert str(refused.value) == message


def test_transport_failures_become_the_callers_error():
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    settings = load_settings(None, overrides={"chat_url": "http://h:1"}, env={})
    with use_transport(httpx.MockTransport(down)):
        with pytest.raises(ChatError, match=r"^cannot reach http://h:1 — is Ollama running"):
            list(stream_chat(settings, "m", "hi"))


def test_a_team_search_says_it_is_one_and_never_raises():
    seen = []

    def team(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        hit = {"path": "a.py", "start_line": 1, "end_line": 2, "score": 0.5, "content": "x"}
        return httpx.Response(200, json={"workspace": "w", "hits": [hit]})

    settings = load_settings(None, overrides={"team_url": "http://team"}, env={})
    with use_transport(httpx.MockTransport(team)):
        hits, note = ask_team(settings, "q")
    assert [hit.path for hit in hits] == ["team:w/a.py"] and note == ""
    assert seen[0].headers[HOP_HEADER] == "1"
    with use_transport(httpx.MockTransport(lambda request: httpx.Response(200, text="<html>"))):
        hits, note = ask_team(settings, "q")
    assert hits == [] and note.startswith("No team hits: the team server at http://team failed")
