"""Ollama and OpenAI-compatible providers against a real HTTP server on 127.0.0.1."""

import json

import numpy as np
import pytest
from embed_server import Behaviour, serve, vector_for

from seek.embed.http import HttpEmbedder, endpoint, parse_vectors
from seek.errors import EmbeddingError, SettingsError
from seek.index.indexer import index_workspace
from seek.index.status import workspace_status
from seek.retrieve import Searcher
from seek.store import index_dir_for, load_manifest


class Clock:
    """Records the back-off delays instead of sleeping."""

    def __init__(self):
        self.slept = []

    def __call__(self, seconds):
        self.slept.append(seconds)


def make(provider, url, **kw):
    return HttpEmbedder(
        provider, kw.pop("model", "test-embed"), base_url=url, sleep=kw.pop("sleep", Clock()), **kw
    )


TEXTS = [f"text number {i}" for i in range(40)]


@pytest.mark.parametrize("provider", ["ollama", "openai"])
def test_happy_path_batches_of_16(provider):
    with serve() as (url, b):
        vectors = make(provider, url).embed(TEXTS)
    assert vectors.shape == (40, 8)
    assert vectors.dtype == np.float32  # docs/library.md: embed(texts) -> float32 array
    assert np.allclose(vectors[7], vector_for("text number 7", 8))  # openai order restored
    lists = [r["body"]["input"] for r in b.requests]
    assert sorted(len(x) for x in lists) == [8, 16, 16]
    assert {r["path"] for r in b.requests} == {
        "/api/embed" if provider == "ollama" else "/v1/embeddings"
    }
    assert all(r["auth"] is None for r in b.requests)  # no key, no header
    assert ("stream" in b.requests[0]["body"]) is (provider == "ollama")
    assert b.requests[0]["body"].get("stream", False) is False  # one answer, not a stream


def test_a_single_text_is_sent_as_a_plain_string():
    with serve() as (url, b):
        make("ollama", url).embed(["only one"])
    assert b.requests[0]["body"]["input"] == "only one"


def test_list_refused_with_4xx_switches_to_singles_for_the_run():
    with serve(Behaviour(refuse_lists=True)) as (url, b):
        embedder = make("ollama", url)
        vectors = embedder.embed(TEXTS[:20])
        assert embedder.single_only
        embedder.embed(TEXTS[20:40])
    assert vectors.shape == (20, 8)
    list_requests = [r for r in b.requests if isinstance(r["body"]["input"], list)]
    assert len(list_requests) <= 2  # probed once per batch in flight, then never again
    assert len(b.requests) - len(list_requests) == 40


def test_wrong_vector_count_switches_to_singles():
    with serve(Behaviour(wrong_count=True)) as (url, _):
        embedder = make("openai", url, concurrency=1)
        vectors = embedder.embed(TEXTS[:16])
    assert vectors.shape == (16, 8) and embedder.single_only


def test_two_429s_then_success_resends_the_list():
    clock = Clock()
    with serve(Behaviour(rate_limits=2)) as (url, b):
        vectors = make("ollama", url, sleep=clock).embed(TEXTS[:16])
    assert vectors.shape == (16, 8)
    assert clock.slept == [0.5, 1.0]
    assert [len(r["body"]["input"]) for r in b.requests] == [16, 16, 16]


def test_retry_after_is_honoured_and_capped():
    clock = Clock()
    with serve(Behaviour(rate_limits=2, retry_after="30")) as (url, _):
        make("ollama", url, sleep=clock).embed(TEXTS[:2])
    assert clock.slept == [8.0, 8.0]


def test_persistent_429_is_a_clear_error():
    clock = Clock()
    with serve(Behaviour(rate_limits=100)) as (url, _):
        with pytest.raises(EmbeddingError, match=r"kept refusing with 429 .* after 7 retries"):
            make("ollama", url, sleep=clock).embed(TEXTS[:2])
    # The schedule the README promises ("Embedding with Ollama...": "429 answers are retried
    # after 0.5, 1, 2, 4, 8, 8, 8 s"), not the code's own constant.
    assert clock.slept == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]


def test_timeout():
    with serve(Behaviour(hang_s=1.0)) as (url, _):
        with pytest.raises(EmbeddingError, match=r"did not answer within 0.2 s"):
            make("ollama", url, timeout_s=0.2).embed(["slow"])


def test_errors_a_user_can_act_on():
    with pytest.raises(EmbeddingError) as unreachable:
        make("ollama", "http://127.0.0.1:9").embed(["x"])
    assert (
        str(unreachable.value)
        == "cannot reach http://127.0.0.1:9 — is Ollama running? (`ollama serve`)"
    )
    with serve() as (url, _):
        with pytest.raises(EmbeddingError) as missing:
            make("ollama", url, model="nope").embed(["x"])
    assert (
        str(missing.value)
        == "model 'nope' not found on the server — pull it first (`ollama pull nope`)"
    )
    with serve(Behaviour(api_key="right")) as (url, b):
        with pytest.raises(EmbeddingError) as denied:
            make("openai", url, api_key_env="MY_KEY", env={"MY_KEY": "wrong"}).embed(["x"])
        assert b.requests[0]["auth"] == "Bearer wrong"
        ok = make("openai", url, api_key_env="MY_KEY", env={"MY_KEY": "right"}).embed(["x"])
    assert str(denied.value) == "401: check the API key in $MY_KEY" and ok.shape == (1, 8)
    with pytest.raises(SettingsError, match=r"\$MISSING is not set"):
        make("openai", "http://127.0.0.1:9", api_key_env="MISSING", env={})
    with serve(Behaviour(fail_after=0)) as (url, _):
        with pytest.raises(EmbeddingError, match=r"HTTP 500: the model crashed \(out of memory\)"):
            make("ollama", url).embed(["x"])


@pytest.mark.parametrize(
    ("provider", "base", "url"),
    [
        ("ollama", "", "http://localhost:11434/api/embed"),
        ("ollama", "http://h:1", "http://h:1/api/embed"),
        ("ollama", "http://h/ollama", "http://h/ollama/api/embed"),
        ("openai", "", "https://api.openai.com/v1/embeddings"),
        ("openai", "http://localhost:1234/v1", "http://localhost:1234/v1/embeddings"),
        ("openai", "http://h:8080/embedding", "http://h:8080/embedding"),
        # an address that already names the route is used as it is
        ("openai", "http://h/gateway/embeddings", "http://h/gateway/embeddings"),
        ("ollama", "http://h/proxy/api/embed", "http://h/proxy/api/embed"),
    ],
)
def test_endpoints(provider, base, url):
    assert endpoint(provider, base) == url


def test_response_dialects():
    assert parse_vectors({"data": [{"index": 1, "embedding": [2]}, {"embedding": [1]}]}) == [
        [1],
        [2],
    ]
    assert parse_vectors({"embeddings": [[1], [2]]}) == [[1], [2]]
    assert parse_vectors({"embedding": [3]}) == [[3]]
    assert parse_vectors({"embedding": []}) == [] and parse_vectors([1]) == []


# -- through the indexer ---------------------------------------------------------------------


@pytest.fixture
def workspace(make_tree):
    return make_tree({f"src/m{i:02d}.py": f"def f{i}():\n    return {i}\n" for i in range(60)})


def server_settings(settings_for, url, **kw):
    return settings_for(provider="ollama", model=kw.pop("model", "test-embed"), base_url=url, **kw)


def test_index_and_search_through_the_server(workspace, settings_for):
    with serve() as (url, _):
        settings = server_settings(settings_for, url)
        report = index_workspace(workspace, settings)
        result = Searcher.open(workspace, settings).search("f7", k=3)
    assert report.embedded == 60
    manifest = load_manifest(index_dir_for(workspace, settings))
    assert (manifest.model, manifest.dimensions) == ("ollama/test-embed", 8)
    assert result.hits and result.notes == ()


def test_5xx_mid_run_keeps_embedded_files_and_the_next_run_resumes(workspace, settings_for):
    with serve(Behaviour(fail_after=3)) as (url, b):
        settings = server_settings(settings_for, url, flush_every_files=10, embed_concurrency=1)
        with pytest.raises(EmbeddingError, match="HTTP 500"):
            index_workspace(workspace, settings)
        kept = set(load_manifest(index_dir_for(workspace, settings)).files)
        assert 0 < len(kept) < 60
        b.fail_after = None
        sent_before = len(b.requests)
        report = index_workspace(workspace, settings)
        resent = {
            text.split("\n", 1)[0]
            for r in b.requests[sent_before:]
            for text in (
                r["body"]["input"] if isinstance(r["body"]["input"], list) else [r["body"]["input"]]
            )
        }
    assert report.embedded == 60 - len(kept)
    assert not resent & kept  # nothing already embedded was sent again


def test_model_switch_rebuilds_and_status_says_why(workspace, settings_for):
    with serve() as (url, _):
        index_workspace(workspace, server_settings(settings_for, url))
        other = server_settings(settings_for, url, model="nomic-embed-text")
        status = workspace_status(workspace, other)
        assert (
            status.rebuild_reason == "model changed (ollama/test-embed -> ollama/nomic-embed-text)"
        )
        report = index_workspace(workspace, other)
    assert report.rebuild_reason.startswith("model changed") and report.embedded == 60


def test_dimension_change_on_the_server_rebuilds(workspace, settings_for):
    with serve() as (url, b):
        settings = server_settings(settings_for, url)
        index_workspace(workspace, settings)
        b.dims = 12
        (workspace / "src/m00.py").write_text("def changed():\n    pass\n")
        report = index_workspace(workspace, settings)
    assert report.rebuild_reason == "vector dimensions changed (8 -> 12)"
    assert load_manifest(index_dir_for(workspace, settings)).dimensions == 12


def test_nomic_models_get_task_prefixes_on_both_sides(workspace, settings_for):
    with serve() as (url, b):
        settings = server_settings(settings_for, url, model="nomic-embed-text")
        index_workspace(workspace, settings)
        Searcher.open(workspace, settings).search("where is f3")
    inputs = [r["body"]["input"] for r in b.requests]
    texts = [[i] if isinstance(i, str) else i for i in inputs]
    queries = [t for t in texts if any(x.startswith("search_query: ") for x in t)]
    assert queries == [["search_query: where is f3"]]
    # Chunks at index time, and file paths for the ranker at search time, are documents.
    documents = [x for t in texts if t not in queries for x in t]
    assert documents and all(x.startswith("search_document: src/") for x in documents)


def test_search_with_a_mismatched_model_falls_back_to_keywords(workspace, settings_for):
    with serve() as (url, _):
        index_workspace(workspace, server_settings(settings_for, url))
        other = server_settings(settings_for, url, model="nomic-embed-text")
        result = Searcher.open(workspace, other).search("f3")
    assert result.hits and result.notes == (
        "The index was built with ollama/test-embed, not ollama/nomic-embed-text, so only "
        "keywords were matched.",
    )


def test_the_key_never_reaches_the_index_folder(workspace, settings_for, monkeypatch):
    monkeypatch.setenv("SEEK_TEST_KEY", "sk-very-secret")
    with serve(Behaviour(api_key="sk-very-secret")) as (url, _):
        settings = settings_for(
            provider="openai", model="test-embed", base_url=url, api_key_env="SEEK_TEST_KEY"
        )
        index_workspace(workspace, settings)
    folder = index_dir_for(workspace, settings)
    for path in folder.rglob("*"):
        if path.is_file():
            assert b"sk-very-secret" not in path.read_bytes()
    assert "sk-very-secret" not in json.dumps(load_manifest(folder).to_json())


@pytest.mark.parametrize("status", [400, 404, 413, 422])
def test_any_4xx_to_a_list_switches_to_singles(status):
    # README: "a server that refuses lists gets one text per request"; the module docstring
    # (reference §5): any 4xx answer to a list other than 429. 413 (too large) and 422
    # (unprocessable) are what OpenAI-compatible gateways answer to lists they do not take.
    with serve(Behaviour(refuse_lists=True, refuse_status=status)) as (url, b):
        embedder = make("openai", url, concurrency=1)
        vectors = embedder.embed(TEXTS[:16])
    assert vectors.shape == (16, 8) and embedder.single_only
    assert np.allclose(vectors[3], vector_for("text number 3", 8))
    assert sum(isinstance(r["body"]["input"], list) for r in b.requests) == 1


def test_settings_reach_the_embedder(settings_for):
    from seek.embed import make_embedder

    with serve() as (url, b):
        settings = settings_for(
            provider="ollama", model="test-embed", base_url=url, embed_batch_size=5,
            embed_concurrency=1, embed_timeout_s=0.3,
        )  # fmt: skip
        embedder = make_embedder(settings)
        b.hang_s = 0.1  # long enough for requests to overlap if more than one were allowed
        embedder.embed(TEXTS[:12])
        assert [len(r["body"]["input"]) for r in b.requests] == [5, 5, 2]  # in order: 1 at once
        assert b.max_in_flight == 1
        b.hang_s = 0.0
        b.hang_s = 1.0
        with pytest.raises(EmbeddingError, match=r"did not answer within 0.3 s"):
            embedder.embed(["slow"])


def test_a_reply_without_a_vector_is_a_clear_error():
    with serve(Behaviour(no_vectors=True)) as (url, _):
        with pytest.raises(EmbeddingError) as error:
            make("ollama", url).embed(["x"])
    assert str(error.value) == f"{url} answered but returned no embedding vector"


def test_a_negative_retry_after_means_no_wait():
    clock = Clock()
    with serve(Behaviour(rate_limits=1, retry_after="-3")) as (url, _):
        make("ollama", url, sleep=clock).embed(["x"])
    assert clock.slept == [0.0]


@pytest.mark.parametrize(("concurrency", "texts"), [(1, 6), (2, 4), (2, 12), (4, 12)])
def test_requests_in_flight_follow_embed_concurrency(concurrency, texts):
    """README: "up to 4 requests in flight" (``embed_concurrency``): as many as there are
    batches, never more than the setting."""
    with serve(Behaviour(hang_s=0.2)) as (url, b):
        vectors = make("ollama", url, concurrency=concurrency, batch_size=2).embed(TEXTS[:texts])
    assert b.max_in_flight == min(concurrency, texts // 2)
    assert np.allclose(vectors[texts - 1], vector_for(TEXTS[texts - 1], 8))


@pytest.mark.parametrize(("batch_size", "sizes"), [(1, [1, 1, 1]), (2, [2, 1]), (0, [1, 1, 1])])
def test_texts_go_in_batches_of_embed_batch_size(batch_size, sizes):
    with serve() as (url, b):
        make("ollama", url, batch_size=batch_size, concurrency=1).embed(TEXTS[:3])
    inputs = [r["body"]["input"] for r in b.requests]
    assert [len(x) if isinstance(x, list) else 1 for x in inputs] == sizes


def test_nothing_to_embed_sends_nothing():
    with serve() as (url, b):
        vectors = make("ollama", url).embed([])
    assert len(vectors) == 0 and vectors.dtype == np.float32
    assert b.requests == []


def test_requests_are_declared_json():
    """Servers that parse by media type (FastAPI's, OpenAI's) need ``application/json``."""
    with serve() as (url, b):
        make("openai", url).embed(TEXTS[:3])
        make("ollama", url).embed(TEXTS[:1])
    assert [r["content_type"] for r in b.requests] == ["application/json"] * 2


def test_server_errors_a_user_can_act_on():
    def error(behaviour, texts=("x",), provider="ollama", **kw):
        with serve(behaviour) as (url, _):
            with pytest.raises(EmbeddingError) as raised:
                make(provider, url, **kw).embed(list(texts))
        return str(raised.value).replace(url, "URL")

    crashed = "URL answered HTTP {}: the model crashed (out of memory)"
    assert error(Behaviour(fail_after=0, fail_status=400)) == crashed.format(400)
    assert error(Behaviour(fail_after=0, fail_status=404)) == crashed.format(404)
    # A 5xx to a list stops the run: it is not a refusal of lists.
    assert error(Behaviour(fail_after=0), texts=("a", "b")) == crashed.format(500)
    assert error(Behaviour(not_json=True)) == "URL answered with something that is not JSON"
    assert error(Behaviour(api_key="k")) == "401: check the API key in api_key_env (none is set)"
    assert error(Behaviour(), provider="openai", model="nope") == (
        "model 'nope' not found on the server — pull it first"
    )


def test_the_switch_to_single_texts_is_logged_with_its_reason(caplog):
    with caplog.at_level("INFO", logger="seek.embed.http"):
        with serve(Behaviour(refuse_lists=True)) as (url, _):
            make("ollama", url, concurrency=1).embed(TEXTS[:2])
        with serve(Behaviour(wrong_count=True)) as (other, _):
            make("ollama", other, concurrency=1).embed(TEXTS[:3])
    assert caplog.messages == [
        f"{url}: a list was refused with HTTP 400; sending one text per request from now on",
        f"{other}: 2 vectors came back for 3 texts; sending one text per request from now on",
    ]


def test_vectors_of_different_lengths_are_a_clear_error():
    with serve(Behaviour(ragged=True)) as (url, _):
        with pytest.raises(EmbeddingError) as error:
            make("ollama", url).embed(TEXTS[:3])
    assert str(error.value) == f"{url} returned vectors of different lengths [7, 8]"


def test_a_5xx_to_a_list_is_not_taken_for_a_refusal_of_lists():
    with serve(Behaviour(fail_after=0)) as (url, b):
        embedder = make("ollama", url, concurrency=1)
        with pytest.raises(EmbeddingError, match="HTTP 500"):
            embedder.embed(["a", "b"])
    assert not embedder.single_only and len(b.requests) == 1  # no retry one text at a time


def test_setup_errors_hints_and_the_model_name_an_index_records():
    # Bad settings are named; an unreachable server says what to start; the model name
    # (`provider/model`) is what the index records and compares (README: changing the model
    # rebuilds the index).
    with pytest.raises(SettingsError, match=r"^unknown embedding server kind 'nope'$"):
        HttpEmbedder("nope", "m", base_url="http://127.0.0.1:9")
    with pytest.raises(SettingsError, match=r"^provider openai needs a model name \(--model"):
        HttpEmbedder("openai", "", base_url="http://127.0.0.1:9")
    assert HttpEmbedder("ollama", "nomic", base_url="http://127.0.0.1:9").model_id == "ollama/nomic"
    with pytest.raises(EmbeddingError) as unreachable:
        HttpEmbedder("openai", "m", base_url="http://127.0.0.1:9", timeout_s=5).embed(["x"])
    assert str(unreachable.value).endswith(" — is the embeddings server running?")
