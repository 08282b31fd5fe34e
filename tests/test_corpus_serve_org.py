"""`seek serve --corpus` answers who in the organisation uses a definition (issue 45, deliver
3, "the same through HTTP"): `/v1/refs` and `/v1/callers` across the repositories that
import the asked one unless `"this_repo": true`, `POST /v1/dependents`, bad bodies refused as
one-line JSON errors, and an answer current once the importing repository changed and was
re-indexed alone (the server keeps joint graphs until a repository they read changes). On
real code: the venv's installed `requests` and `urllib3` as two repositories of one corpus,
served by uvicorn on 127.0.0.1."""

from __future__ import annotations

import pytest
from test_corpus import corpus_server
from test_corpus_org import line_of, make_corpus, settings_in

import seek.corpus.serve
from seek.corpus.build import CorpusIndexer
from seek.corpus.fanout import LocalRunner
from seek.corpus.graph import lookup
from seek.corpus.location import CorpusLocation
from seek.corpus.org import cross_lookup
from seek.corpus.serve import create_corpus_app
from seek.serving.config import ServeConfig

RETRY = "src/urllib3/util/retry.py"
POOLMANAGER = "src/urllib3/poolmanager.py"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("serve-org"))


def serve(location: CorpusLocation, home):
    config = ServeConfig(workspaces=(), token="", overrides={"home": str(home)})
    return corpus_server(create_corpus_app(location.uri, config))


def retry_line(repos) -> int:
    return line_of(repos["urllib3"] / RETRY, r"^class Retry\b")


def test_refs_and_callers_answer_across_the_repositories_unless_this_repo(corpus):
    location, repos, home = corpus
    line = retry_line(repos)
    proxy = line_of(repos["urllib3"] / POOLMANAGER, r"^def proxy_from_url\b")
    with serve(location, home) as client:
        across = client.post("/v1/refs", json={"repo": "urllib3", "file": RETRY, "line": line,
                                               "limit": 500})  # fmt: skip
        own = client.post("/v1/refs", json={"repo": "urllib3", "file": RETRY, "line": line,
                                            "limit": 500, "this_repo": True})  # fmt: skip
        by_name = client.post("/v1/refs", json={"repo": "urllib3", "name": "Retry",
                                                "limit": 500})  # fmt: skip
        callers = client.post("/v1/callers", json={"repo": "urllib3", "file": POOLMANAGER,
                                                   "line": proxy})  # fmt: skip
        explicit = {"repo": "urllib3", "file": POOLMANAGER, "line": proxy, "this_repo": False}
        own_callers = client.post("/v1/callers", json=explicit)
    for answer in (across, own, by_name, callers, own_callers):
        assert answer.status_code == 200, answer.text
    target = f"{RETRY}:{line}"
    # the library's answers, the repository named once more as the CLI's JSON names it
    assert across.json() == {
        "repo": "urllib3",
        **cross_lookup(location, "urllib3", "refs", target, 500).to_json(),
    }
    assert own.json() == {
        "repo": "urllib3",
        **lookup(location, "urllib3", "refs", target, 500).to_json(),
    }
    rows = across.json()["rows"]
    assert {r["repo"] for r in rows} == {"urllib3", "requests"}
    assert all(set(r) >= {"repo", "path", "line", "kind", "name", "container"} for r in rows)
    assert ("requests", "src/requests/adapters.py") in {(r["repo"], r["path"]) for r in rows}
    # urllib3's own uses first; this_repo: those alone
    repos_in_order = [r["repo"] for r in rows]
    assert repos_in_order == sorted(repos_in_order, key=lambda r: r != "urllib3")
    assert {(r["repo"], r["path"], r["line"]) for r in own.json()["rows"]} == {
        (r["repo"], r["path"], r["line"]) for r in rows if r["repo"] == "urllib3"
    }
    assert "requests" in {r["repo"] for r in by_name.json()["rows"]}
    found = {(r["repo"], r["name"]) for r in callers.json()["rows"]}
    assert ("requests", "proxy_manager_for") in found
    assert callers.json() == own_callers.json()  # "this_repo": false is the default


def test_dependents_name_the_importing_repositories(corpus):
    location, _, home = corpus
    with serve(location, home) as client:
        urllib3 = client.post("/v1/dependents", json={"repo": "urllib3"})
        requests = client.post("/v1/dependents", json={"repo": "requests", "limit": 5})
    assert urllib3.status_code == 200 and requests.status_code == 200, urllib3.text
    assert urllib3.json() == {
        "repo": "urllib3",
        **cross_lookup(location, "urllib3", "dependents", "").to_json(),
    }
    (row,) = urllib3.json()["rows"]
    assert row["repo"] == "requests" and row["files"] >= 3 and row["uses"] >= 10
    assert "Retry" in {n.rpartition(".")[2] for n in row["names"]}
    assert requests.json()["rows"] == []  # nobody here imports requests


@pytest.mark.parametrize(
    ("route", "body", "status", "phrase"),
    [
        ("refs", {"repo": "urllib3", "name": "Retry", "this_repo": "yes"}, 400, "this_repo"),
        ("callers", {"repo": "urllib3", "file": RETRY, "line": 3, "this_repo": 1}, 400,
         "this_repo"),
        ("refs", {"name": "Retry"}, 400, "repo must name one repository"),
        ("dependents", {}, 400, "repo must name one repository"),
        ("dependents", {"repo": "../urllib3"}, 400, "bad repository name"),
        ("dependents", {"repo": "nope"}, 404, "no repository nope"),
        ("refs", {"repo": "nope", "name": "Retry"}, 404, "no repository nope"),
        ("dependents", {"repo": "urllib3", "limit": 0}, 400, "limit"),
        ("dependents", {"repo": ["urllib3"]}, 400, "repo must name one repository"),
    ],
)  # fmt: skip
def test_bad_bodies_are_json_errors(corpus, route, body, status, phrase):
    location, _, home = corpus
    with serve(location, home) as client:
        answer = client.post(f"/v1/{route}", json=body)
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert phrase in error["message"] and "\n" not in error["message"], error


def test_an_answer_is_current_once_the_importing_repository_is_indexed_again(tmp_path, monkeypatch):
    location, repos, home = make_corpus(tmp_path)
    # the server re-reads the repositories' stamps at once rather than every few seconds
    monkeypatch.setattr(seek.corpus.serve, "REFRESH_S", 0.0)
    body = {"repo": "urllib3", "file": RETRY, "line": retry_line(repos), "limit": 500}
    added = "src/requests/retrying.py"
    with serve(location, home) as client:
        before = client.post("/v1/refs", json=body).json()
        assert client.post("/v1/refs", json=body).json() == before  # kept, and the same
        dependents = client.post("/v1/dependents", json={"repo": "urllib3"}).json()
        (repos["requests"] / added).write_text(
            "from urllib3.util.retry import Retry\n\n\n"
            "def patient():\n    return Retry(total=9, backoff_factor=2)\n"
        )
        report = CorpusIndexer(location, settings_in(home), LocalRunner()).run(["requests"])
        assert [r.name for r in report.repos] == ["requests"]  # urllib3 was not read again
        after = client.post("/v1/refs", json=body).json()
        dependents_after = client.post("/v1/dependents", json={"repo": "urllib3"}).json()
    assert added not in {r["path"] for r in before["rows"]}
    new = [(r["repo"], r["path"], r["line"], r["container"]) for r in after["rows"]
           if r["path"] == added]  # fmt: skip
    assert new == [("requests", added, 1, None), ("requests", added, 5, "patient")]
    assert after == {
        "repo": "urllib3",
        **cross_lookup(location, "urllib3", "refs", f"{RETRY}:{body['line']}", 500).to_json(),
    }
    assert dependents_after["rows"][0]["files"] == dependents["rows"][0]["files"] + 1
