"""`seek serve --corpus` answers the code graph's `def`, `refs`, `callers`, `callees`,
`outline` and `map` (issue 28 deliver 2, "... and in the corpus"): the workspace server's
bodies plus a required `repo`, the answers of `seek corpus TOOL --json`, and the server's
checks (token, body size, one-line JSON errors) as for search. A real corpus (tree-sitter,
LanceDB) in a temporary folder, served by uvicorn on 127.0.0.1."""

from __future__ import annotations

import json
import os
import string
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from corpus_helpers import REPO_B, index, indexed_corpus
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_corpus import corpus_server
from test_graph_index import PROJECT

import seek.cli.corpus_cmd  # noqa: F401 - registers `seek corpus`
from seek.cli import cli
from seek.corpus.graph import RepoGraphs, lookup
from seek.corpus.location import CorpusError, CorpusLocation
from seek.corpus.serve import create_corpus_app
from seek.serving.config import ServeConfig
from seek.serving.requests import MAX_BODY_BYTES
from seek.untrusted import MAX_QUERY_CHARS

GRAPH_ROUTES = ("def", "refs", "callers", "callees", "outline", "map")
JSON_TYPE = {"Content-Type": "application/json"}


@pytest.fixture
def corpus(tmp_path, settings_for, make_tree) -> CorpusLocation:
    repos = {"shop": make_tree(PROJECT, "shop"), "beta": make_tree(REPO_B, "beta")}
    return indexed_corpus(tmp_path / "corpus", repos, settings_for())


def serve_corpus(location: CorpusLocation, seek_home, token: str = ""):
    config = ServeConfig(workspaces=(), token=token, overrides={"home": str(seek_home)})
    return corpus_server(create_corpus_app(location.uri, config))


def cli_json(location: CorpusLocation, *args: str) -> dict:
    out = CliRunner().invoke(cli, ["corpus", args[0], location.uri, *args[1:], "--json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def library_answer(location: CorpusLocation, repo: str, route: str, body: dict):
    """The body's question to :func:`seek.corpus.graph.lookup`, written out by hand."""
    limit = body.get("limit")
    if route == "map":
        return lookup(location, repo, "map", body.get("question", ""), budget=body.get("budget"))
    if "file" in body and route != "outline":
        target = f"{body['file']}:{body['line']}"
    else:
        target = body.get("file", body.get("name"))
    tool = "defs" if route == "def" else route
    return lookup(location, repo, tool, target, limit if limit else None)


def test_the_graph_routes_answer_as_seek_corpus_does(corpus, seek_home, monkeypatch):
    monkeypatch.setenv("SEEK_HOME", str(seek_home))
    asked = [  # (route, body, the same question to `seek corpus`)
        ("def", {"name": "price_of"}, ("def", "price_of", "--repo", "shop")),
        ("def", {"name": "Cart.total"}, ("def", "Cart.total", "--repo", "shop")),
        ("def", {"name": "price_of"}, ("def", "price_of", "--repo", "beta")),  # not there
        ("refs", {"name": "price_of"}, ("refs", "price_of", "--repo", "shop")),
        ("refs", {"file": "py/shop/prices.py", "line": 4},
         ("refs", "py/shop/prices.py:4", "--repo", "shop")),
        ("refs", {"name": "Cart", "limit": 1}, ("refs", "Cart", "--repo", "shop", "-n", "1")),
        ("callers", {"file": "py/shop/prices.py", "line": 5},
         ("callers", "py/shop/prices.py:5", "--repo", "shop")),
        ("callers", {"file": "go/store/store.go", "line": 4},
         ("callers", "go/store/store.go:4", "--repo", "shop")),
        ("callees", {"file": "py/main.py", "line": 5},
         ("callees", "py/main.py:5", "--repo", "shop")),
        ("callees", {"file": "py/main.py", "line": 5, "limit": 1},
         ("callees", "py/main.py:5", "--repo", "shop", "-n", "1")),
        ("outline", {"file": "py/shop/cart.py"}, ("outline", "py/shop/cart.py", "--repo", "shop")),
        ("outline", {"file": "lib/cache.py", "limit": 1},
         ("outline", "lib/cache.py", "--repo", "beta", "-n", "1")),
        ("outline", {"file": "README.md"}, ("outline", "README.md", "--repo", "shop")),
        ("map", {}, ("map", "--repo", "shop")),
        ("map", {"question": "price", "budget": 40},
         ("map", "price", "--repo", "shop", "--budget", "40")),
        ("map", {"budget": 30}, ("map", "--repo", "beta", "--budget", "30")),
    ]  # fmt: skip
    with serve_corpus(corpus, seek_home) as client:
        for route, body, question in asked:
            repo = question[question.index("--repo") + 1]
            answer = client.post(f"/v1/{route}", json={"repo": repo, **body})
            assert answer.status_code == 200, answer.text
            assert answer.json() == cli_json(corpus, *question), (route, body)
            library = library_answer(corpus, repo, route, body)
            assert answer.json() == {"repo": repo, **library.to_json()}, (route, body)
        found = client.post("/v1/def", json={"repo": "shop", "name": "price_of"}).json()
        assert [(r["path"], r["line"], r["kind"]) for r in found["rows"]] == [
            ("py/shop/prices.py", 4, "function")
        ]
        uses = client.post("/v1/refs", json={"repo": "shop", "name": "price_of"}).json()
        assert {(r["path"], r["line"]) for r in uses["rows"]} == {
            ("py/shop/cart.py", 1),
            ("py/shop/cart.py", 9),
        }
        assert uses["rows"][0]["text"]  # each use's line, from the corpus's chunks
        capped = client.post("/v1/refs", json={"repo": "shop", "name": "Cart", "limit": 1})
        assert len(capped.json()["rows"]) == 1 and capped.json()["truncated"] is True
        # the new routes' answers are not empty ones
        callers = {"repo": "shop", "file": "go/store/store.go", "line": 4}
        assert [r["name"] for r in client.post("/v1/callers", json=callers).json()["rows"]] == [
            "main"
        ]
        callees = {"repo": "shop", "file": "py/main.py", "line": 5}
        assert {r["name"] for r in client.post("/v1/callees", json=callees).json()["rows"]} == {
            "Cart", "total",
        }  # fmt: skip
        outline = client.post("/v1/outline", json={"repo": "shop", "file": "py/shop/cart.py"})
        assert [(r["line"], r["name"], r["repo"]) for r in outline.json()["rows"]] == [
            (4, "Cart", "shop"), (5, "__init__", "shop"), (8, "total", "shop"),
        ]  # fmt: skip
        overview = client.post("/v1/map", json={"repo": "shop", "budget": 60}).json()
        assert overview["rows"] and 0 < len(overview["map"]) <= 60 * 4
        assert (
            f"{overview['rows'][0]['line']}: {overview['rows'][0]['signature']}"
            in (overview["map"])
        )


def count_graph_loads(monkeypatch) -> list[str]:
    """The repositories whose graph is assembled from here on, one entry a load."""
    import functools

    import seek.corpus.graph as corpus_graph

    loads: list[str] = []
    real_load = corpus_graph.load_repo_graph

    @functools.wraps(real_load)
    def counted(location, repo):
        loads.append(repo)
        return real_load(location, repo)

    monkeypatch.setattr(corpus_graph, "load_repo_graph", counted)
    return loads


def test_a_server_keeps_a_repositorys_graph_until_its_next_run(
    corpus, seek_home, settings_for, tmp_path, monkeypatch
):
    """A burst of questions assembles a repository's graph once (seconds for a few hundred
    files); a corpus run that changes the repository is seen at the next repository read."""
    import seek.corpus.serve as serve

    loads = count_graph_loads(monkeypatch)
    monkeypatch.setattr(serve, "REFRESH_S", 0.0)  # the repositories' stamps read per request
    questions = {  # every route's question about shop, each with rows
        "def": {"name": "price_of"}, "refs": {"name": "price_of"},
        "callers": {"file": "py/shop/prices.py", "line": 5},
        "callees": {"file": "py/main.py", "line": 5},
        "outline": {"file": "py/shop/cart.py"}, "map": {"question": "price"},
    }  # fmt: skip
    with serve_corpus(corpus, seek_home) as client:
        for _ in range(3):
            for route, body in questions.items():
                answer = client.post(f"/v1/{route}", json={"repo": "shop", **body})
                assert answer.status_code == 200 and answer.json()["rows"], route
        assert loads == ["shop"]
        (tmp_path / "shop/py/shop/prices.py").write_text(
            "def price_with_tax(item):\n    return 1\n"
        )
        index(corpus, settings_for())
        gone = client.post("/v1/def", json={"repo": "shop", "name": "price_of"}).json()
        new = client.post("/v1/def", json={"repo": "shop", "name": "price_with_tax"}).json()
        assert gone["rows"] == [] and [r["path"] for r in new["rows"]] == ["py/shop/prices.py"]
        assert loads == ["shop", "shop"]


def test_kept_graphs_stay_within_their_bound(corpus, monkeypatch):
    import seek.corpus.graph as corpus_graph

    loads = count_graph_loads(monkeypatch)
    real_load = corpus_graph.load_repo_graph.__wrapped__
    shop_facts = corpus_graph._facts(real_load(corpus, "shop"))
    beta_facts = corpus_graph._facts(real_load(corpus, "beta"))
    monkeypatch.setattr(corpus_graph, "MAX_KEPT_FACTS", shop_facts + beta_facts - 1)
    graphs = RepoGraphs(corpus, lambda: {"shop": 1, "beta": 1})
    for repo in ("shop", "shop", "beta", "beta", "shop"):  # beta's turn pushes shop out
        assert graphs.get(repo) is not None
    assert loads == ["shop", "beta", "shop"]
    monkeypatch.setattr(corpus_graph, "MAX_KEPT_FACTS", beta_facts - 1)  # beta: too large
    graphs = RepoGraphs(corpus, lambda: {"shop": 1, "beta": 1})
    loads.clear()
    for _ in range(2):
        assert graphs.get("beta") is not None
    assert loads == ["beta", "beta"]
    with pytest.raises(CorpusError, match="no repository 'gamma'"):
        graphs.get("gamma")


def test_kept_graphs_fill_their_bound_exactly_and_let_go_of_a_replaced_one(corpus, monkeypatch):
    """Graphs that make exactly the bound together are all kept, as is one graph of exactly
    the bound; a repository whose stamp changed is not kept under its old graph when its new
    one is not stored (yet)."""
    import seek.corpus.graph as corpus_graph
    from seek.store.corpus_graph import GRAPH_TABLE
    from seek.store.corpus_table import CorpusTable

    loads = count_graph_loads(monkeypatch)
    real_load = corpus_graph.load_repo_graph.__wrapped__
    shop_facts = corpus_graph._facts(real_load(corpus, "shop"))
    beta_facts = corpus_graph._facts(real_load(corpus, "beta"))
    monkeypatch.setattr(corpus_graph, "MAX_KEPT_FACTS", shop_facts + beta_facts)
    stamps = {"shop": 1, "beta": 1}
    graphs = RepoGraphs(corpus, lambda: stamps)
    for repo in ("shop", "beta", "shop", "beta"):
        assert graphs.get(repo) is not None
    assert loads == ["shop", "beta"]
    monkeypatch.setattr(corpus_graph, "MAX_KEPT_FACTS", beta_facts)
    graphs = RepoGraphs(corpus, lambda: stamps)
    loads.clear()
    for _ in range(2):
        assert graphs.get("beta") is not None
    assert loads == ["beta"]
    CorpusTable(corpus).connect().drop_table(GRAPH_TABLE)  # a run rewriting the table
    stamps["beta"] = 2
    assert graphs.get("beta") is None
    assert list(graphs._kept) == []  # the old graph is memory no answer uses


def test_bad_graph_requests_get_one_line_json_errors(corpus, seek_home):
    cases = [  # (route, body, status, code, words in the message)
        ("def", {"name": "Cart"}, 400, "bad_request", "repo must name one repository"),
        ("refs", {"name": "Cart", "repo": ""}, 400, "bad_request", "repo must name"),
        ("def", {"name": "Cart", "repo": ["shop"]}, 400, "bad_request", "repo must name"),
        ("def", {"name": "Cart", "repo": "../shop"}, 400, "bad_request", "bad repository name"),
        ("def", {"name": "Cart", "repo": "sh\x00op"}, 400, "bad_request", "NUL"),
        ("def", {"name": "Cart", "repo": "gamma"}, 404, "no_repo", "no repository gamma"),
        ("def", {"repo": "shop"}, 400, "bad_request", "name must be a non-empty string"),
        ("def", {"repo": "shop", "name": "x" * 501}, 400, "too_long", "names are limited"),
        ("refs", {"repo": "shop", "name": "Cart", "limit": 0}, 400, "bad_request", "limit"),
        ("refs", {"repo": "shop", "file": "../x.py", "line": 1}, 400, "bad_request", "'..'"),
        ("refs", {"repo": "shop", "file": "py/shop/cart.py"}, 400, "bad_request", "line"),
        ("refs", {"repo": "shop", "file": "a.py", "line": True}, 400, "bad_request", "line"),
        ("callers", {"file": "py/shop/cart.py", "line": 8}, 400, "bad_request", "repo must"),
        ("callers", {"repo": "shop", "file": "py/shop/cart.py"}, 400, "bad_request", "line"),
        ("callers", {"repo": "shop", "file": "a.py", "line": 0}, 400, "bad_request", "line"),
        ("callees", {"repo": "shop", "line": 3}, 400, "bad_request", "file must be"),
        ("callees", {"repo": "shop", "file": "/etc/passwd", "line": 1}, 400, "bad_request",
         "'..'"),
        ("callees", {"repo": "gamma", "file": "a.py", "line": 1}, 404, "no_repo", "gamma"),
        ("callers", {"repo": "shop", "file": "a.py", "line": 2, "limit": 1001}, 400,
         "bad_request", "limit"),
        ("outline", {"repo": "shop"}, 400, "bad_request", "file must be"),
        ("outline", {"repo": "shop", "file": "../../x.py"}, 400, "bad_request", "'..'"),
        ("outline", {"repo": "shop", "file": 7}, 400, "bad_request", "file must be"),
        ("outline", {"repo": "shop", "file": "a\x00.py"}, 400, "bad_request", "NUL"),
        ("map", {"repo": "shop", "question": 3}, 400, "bad_request", "question must be a string"),
        ("map", {"repo": "shop", "question": "x" * (MAX_QUERY_CHARS + 1)}, 400, "too_long",
         "questions are limited"),
        ("map", {"repo": "shop", "budget": 0}, 400, "bad_request", "budget"),
        ("map", {"repo": "shop", "budget": "40"}, 400, "bad_request", "budget"),
        ("map", {"question": "price"}, 400, "bad_request", "repo must name"),
    ]  # fmt: skip
    with serve_corpus(corpus, seek_home) as client:
        for route, body, status, code, words in cases:
            answer = client.post(f"/v1/{route}", json=body)
            assert answer.status_code == status, (route, body, answer.text)
            error = answer.json()["error"]
            assert error["code"] == code and words in error["message"], (route, body, error)
            assert "\n" not in error["message"] and "Traceback" not in answer.text
        assert client.post("/v1/def", content=b"{", headers=JSON_TYPE).json()["error"]["code"] == (
            "bad_json"
        )
        huge = {"repo": "shop", "name": "Cart", "pad": "x" * MAX_BODY_BYTES}
        assert client.post("/v1/def", json=huge).status_code == 413
        assert client.get("/v1/refs").status_code == 405


def test_a_token_guards_the_graph_routes_as_it_does_search(corpus, seek_home):
    body = {"repo": "shop", "name": "price_of"}
    with serve_corpus(corpus, seek_home, token="s3cret") as client:
        for route in GRAPH_ROUTES:
            for headers in ({}, {"Authorization": "Bearer wrong"}):
                refused = client.post(f"/v1/{route}", json=body, headers=headers)
                assert refused.status_code == 401, (route, refused.text)
                assert refused.json()["error"]["code"] == "unauthorized"
        token = {"Authorization": "Bearer s3cret"}
        allowed = client.post("/v1/def", json=body, headers=token)
        assert allowed.status_code == 200 and allowed.json()["rows"][0]["name"] == "price_of"
        outline = {"repo": "shop", "file": "py/shop/prices.py"}
        allowed = client.post("/v1/outline", json=outline, headers=token)
        assert allowed.status_code == 200 and allowed.json()["rows"][0]["name"] == "TAX"


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=6,
)
FIELD_VALUES = {
    "repo": st.sampled_from(["shop", "beta", "gamma", "", "../shop", ".x"]) | JSON_VALUES,
    "name": st.sampled_from(["price_of", "Cart.total", " ", "a:1", "py/shop/cart.py:8"])
    | st.text(alphabet=string.printable + "\x00\u202e\udc80", max_size=40)
    | JSON_VALUES,
    "file": st.sampled_from(["py/shop/cart.py", "/etc/passwd", "..", "./a", "a\\..\\b", ""])
    | JSON_VALUES,
    "line": st.integers(-2, 12) | st.sampled_from([10**7, 10**7 + 1, 2**70]) | JSON_VALUES,
    "limit": st.integers(-1, 1002) | JSON_VALUES,
    "question": st.sampled_from(["", "price", "how are prices taxed"])
    | st.text(alphabet=string.printable + "\x00\u202e\udc80", max_size=40)
    | JSON_VALUES,
    "budget": st.integers(-1, 100_002) | JSON_VALUES,
}


@st.composite
def bodies(draw) -> dict:
    fields = draw(st.sets(st.sampled_from(sorted(FIELD_VALUES))))
    return {field: draw(FIELD_VALUES[field]) for field in sorted(fields)}


VALID_BODIES = st.fixed_dictionaries(
    {
        "repo": st.sampled_from(["shop", "beta", "gamma"]),  # gamma: 404 no_repo
        "name": st.sampled_from(["price_of", "Cart"]),
        "file": st.sampled_from(["py/shop/cart.py", "lib/cache.py", "nowhere.py"]),
        "line": st.integers(1, 12),
    },
    optional={
        "limit": st.integers(1, 3),
        "question": st.sampled_from(["", "price", "cache"]),
        "budget": st.integers(1, 200),
    },
)
"""Questions the server answers (every route's fields), so a run sees 200s beside the
refusals."""


def every_route_answered(check):
    """A valid body for each route and one of an unknown repository, tried on every run
    besides the generated ones."""
    body = {"repo": "shop", "name": "Cart", "file": "py/shop/cart.py", "line": 8}
    for route in GRAPH_ROUTES:
        check = example(route, body)(check)
    return example("outline", {**body, "repo": "gamma"})(check)


def test_generated_graph_requests_never_get_a_server_error(corpus, seek_home):
    """Hypothesis writes the bodies (near-valid ones and any JSON): every answer is a 200 with
    rows or a JSON error below 500, on all six graph routes."""
    seen: set[int] = set()
    answered: set[str] = set()
    with serve_corpus(corpus, seek_home) as client:

        @settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
        @given(st.sampled_from(GRAPH_ROUTES), bodies() | VALID_BODIES)
        @every_route_answered
        def check(route, body):
            raw = json.dumps(body).encode()  # ASCII escapes: a lone surrogate travels too
            answer = client.post(f"/v1/{route}", content=raw, headers=JSON_TYPE)
            seen.add(answer.status_code)
            assert answer.status_code < 500, (route, body, answer.text)
            data = answer.json()
            if answer.status_code >= 400:
                assert isinstance(data["error"]["code"], str) and data["error"]["message"]
                assert "\n" not in data["error"]["message"]
            else:
                assert answer.status_code == 200 and isinstance(data["rows"], list)
                assert route != "map" or isinstance(data["map"], str)
                answered.add(route)

        check()
    assert {200, 400, 404} <= seen  # the generator reached answers and both kinds of refusal
    assert answered == set(GRAPH_ROUTES), answered


SEARCH_VALUES = {
    "query": st.sampled_from(["price of an item", "Cart total", "", " ", "x" * 5000])
    | st.text(alphabet=string.printable + "\x00\u202e\udc80", max_size=60)
    | JSON_VALUES,
    "k": st.integers(-1, 300) | st.sampled_from([2**70]) | JSON_VALUES,
    "repos": st.lists(st.sampled_from(["shop", "beta", "gamma", "", "../x"]), max_size=3)
    | JSON_VALUES,
    "paths": st.lists(st.sampled_from(["py/", "lib", "", "/etc", "../", "a'b"]), max_size=3)
    | JSON_VALUES,
}


@st.composite
def search_bodies(draw) -> dict:
    fields = draw(st.sets(st.sampled_from(sorted(SEARCH_VALUES))))
    return {field: draw(SEARCH_VALUES[field]) for field in sorted(fields)}


VALID_SEARCHES = st.fixed_dictionaries(
    {"query": st.sampled_from(["price of an item", "Cart total", "evict the oldest"])},
    optional={
        "k": st.integers(1, 50),  # MAX_K
        "repos": st.lists(st.sampled_from(["shop", "beta"]), max_size=2),
        "paths": st.lists(st.sampled_from(["py/", "lib/", "web/src"]), max_size=2),
    },
)
"""Searches the server answers, so a run sees 200s beside the refusals."""


def test_generated_search_requests_never_get_a_server_error(corpus, seek_home):
    """Hypothesis writes `POST /v1/search` bodies (near-valid ones and any JSON): every answer
    is a 200 with hits or a one-line JSON error below 500."""
    seen: set[int] = set()
    with serve_corpus(corpus, seek_home) as client:

        @settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
        @given(search_bodies() | VALID_SEARCHES)
        @example({"query": "price of an item", "k": 3, "repos": ["shop"], "paths": ["py/"]})
        @example({"query": "cache", "repos": ["gamma"]})
        def check(body):
            raw = json.dumps(body).encode()  # ASCII escapes: a lone surrogate travels too
            answer = client.post("/v1/search", content=raw, headers=JSON_TYPE)
            seen.add(answer.status_code)
            assert answer.status_code < 500, (body, answer.text)
            data = answer.json()
            if answer.status_code >= 400:
                assert isinstance(data["error"]["code"], str) and data["error"]["message"]
                assert "\n" not in data["error"]["message"]
            else:
                assert isinstance(data["hits"], list)

        check()
    assert {200, 400, 404} <= seen  # answers and both kinds of refusal were reached


def test_an_unreadable_graph_is_one_line_from_the_cli_and_a_json_error_from_the_server(
    corpus, seek_home
):
    """A corpus graph table whose data files were cut short: `seek corpus def` says so in
    one line (exit 1, no traceback), and the server answers a JSON error naming it."""
    from seek.store.corpus_graph import GRAPH_TABLE

    graph_dir = Path(corpus.uri) / "lancedb" / f"{GRAPH_TABLE}.lance"
    data_files = list((graph_dir / "data").iterdir())
    assert data_files
    for data in data_files:
        data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])
    env = {**os.environ, "SEEK_HOME": str(seek_home)}
    found = subprocess.run(
        [sys.executable, "-m", "seek", "corpus", "def", corpus.uri, "price_of", "--repo", "shop"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert found.returncode == 1 and "Traceback" not in found.stderr
    lines = found.stderr.strip().splitlines()
    assert lines[-1].startswith("seek: error: the code graph of shop stored in the corpus")
    assert "cannot be read" in lines[-1]
    with serve_corpus(corpus, seek_home) as client:
        answer = client.post("/v1/def", json={"repo": "shop", "name": "price_of"})
        assert answer.status_code == 422
        assert "the code graph of shop" in answer.json()["error"]["message"]
