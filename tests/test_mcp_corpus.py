"""`seek mcp --corpus URI` (issue 45, deliver 3: "the same through HTTP and MCP when a corpus
is served"): the real server over stdio, driven by the SDK's own client, on a corpus of real
code (the venv's installed `requests` and `urllib3` as two repositories, `requests`
importing `urllib3`). Each answer is the text the library gives for the same question."""

from __future__ import annotations

import anyio
import pytest
from test_corpus_org import line_of, make_corpus
from test_mcp import session_calls, text_of

from seek.corpus.catalog import Catalog
from seek.corpus.graph import lookup
from seek.corpus.org import cross_lookup

pytestmark = pytest.mark.slow

RETRY = "src/urllib3/util/retry.py"
POOLMANAGER = "src/urllib3/poolmanager.py"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("mcp-org"))


def test_an_agent_asks_the_corpus_who_uses_a_definition_across_repositories(corpus):
    location, repos, home = corpus
    retry_line = line_of(repos["urllib3"] / RETRY, r"^class Retry\b")
    retry = f"{RETRY}:{retry_line}"
    proxy = line_of(repos["urllib3"] / POOLMANAGER, r"^def proxy_from_url\b")
    calls = [
        ("refs", {"target": retry, "repo": "urllib3", "limit": 200}),
        ("refs", {"target": retry, "repo": "urllib3", "limit": 200, "this_repo": True}),
        ("callers", {"path": POOLMANAGER, "line": proxy, "repo": "urllib3"}),
        ("callers", {"path": POOLMANAGER, "line": proxy, "repo": "urllib3", "this_repo": True}),
        ("dependents", {"repo": "urllib3"}),
        ("dependents", {"repo": "requests"}),
        ("def", {"name": "Retry", "repo": "urllib3"}),
        ("repos", {}),
        ("search", {"query": "retry backoff factor", "repos": ["urllib3"], "k": 3}),
        ("search", {"query": "session cookies", "paths": ["src/requests/"], "k": 2}),
    ]
    listed, *answers = anyio.run(session_calls, home, home, calls, ["--corpus", location.uri])
    assert {t.name for t in listed.tools} == {
        "search", "repos", "def", "refs", "callers", "dependents"
    }  # fmt: skip
    assert not any(a.is_error for a in answers), [text_of(a) for a in answers if a.is_error]
    refs, own_refs, callers, own_callers, dependents, nobody, found, listing, hits, under = (
        text_of(a) for a in answers
    )
    # the library's answers to the same questions, as text
    assert refs == cross_lookup(location, "urllib3", "refs", retry, 200).to_text()
    assert own_refs == lookup(location, "urllib3", "refs", retry, 200).to_text()
    target = f"{POOLMANAGER}:{proxy}"
    assert callers == cross_lookup(location, "urllib3", "callers", target, 50).to_text()
    assert own_callers == lookup(location, "urllib3", "callers", target, 50).to_text()
    assert dependents == cross_lookup(location, "urllib3", "dependents", "", 50).to_text()
    assert found == lookup(location, "urllib3", "defs", "Retry", 20).to_text()
    # and what the agent reads: requests' uses under their repository, after urllib3's
    lines = refs.splitlines()
    assert lines.index("urllib3:") < lines.index("requests:")
    assert "  src/requests/adapters.py  HTTPAdapter.__init__" in lines
    assert "requests:" not in own_refs.splitlines() and "src/requests/" not in own_refs
    assert "requests:" in callers.splitlines() and "proxy_manager_for" in callers
    assert "proxy_manager_for" not in own_callers
    assert dependents.startswith("requests  ") and "Retry" in dependents
    assert nobody == "Nothing found."
    assert found.startswith(f"{RETRY}:")
    catalog = Catalog(location)
    assert sorted(listing.splitlines()) == sorted(
        f"{name}  {len(m.files)} files, {sum(s.chunks for s in m.files.values())} chunks"
        for name, m in ((n, catalog.load_manifest(n)) for n in catalog.repos())
    )
    heads = [line for line in hits.splitlines() if line[:1].isdigit()]
    assert heads and all(h.split(". ", 1)[1].startswith("urllib3:src/urllib3/") for h in heads)
    heads = [line for line in under.splitlines() if line[:1].isdigit()]
    assert heads and all(h.split(". ", 1)[1].startswith("requests:src/requests/") for h in heads)


BAD_CALLS = [  # (tool, arguments, a phrase of the one-sentence error)
    ("refs", {"target": "Retry", "repo": "urllib3", "this_repo": "yes"}, "this_repo"),
    ("refs", {"target": "Retry", "repo": "nope"}, "no repository nope"),
    ("refs", {"target": "Retry"}, "repo"),
    ("refs", {"target": "Retry", "repo": "../urllib3"}, "bad repository name"),
    ("refs", {"target": "Retry", "repo": "urllib3", "limit": "5"}, "limit"),
    ("refs", {"target": "Retry", "repo": "urllib3", "limit": 0}, "limit"),
    ("refs", {"target": "", "repo": "urllib3"}, "target"),
    ("callers", {"path": POOLMANAGER, "line": 0, "repo": "urllib3"}, "line"),
    ("callers", {"path": POOLMANAGER, "line": "3", "repo": "urllib3"}, "line"),
    ("dependents", {"repo": "x" * 129}, "repo"),
    ("dependents", {"repo": "nope"}, "no repository"),
    ("def", {"name": "Retry", "repo": "urllib3", "limit": True}, "limit"),
    ("search", {"query": "  "}, "query is empty"),
    ("search", {"query": "retry", "repos": ["nope"]}, "no repository nope"),
    ("search", {"query": "retry", "k": 10_000}, "k"),
    ("search", {"query": "retry", "paths": ["src\x00"]}, "NUL"),
]


def test_bad_arguments_are_tool_errors_of_one_sentence(corpus):
    location, _, home = corpus
    _, *answers = anyio.run(
        session_calls, home, home, [(t, a) for t, a, _ in BAD_CALLS], ["--corpus", location.uri]
    )
    for (tool, arguments, phrase), answer in zip(BAD_CALLS, answers, strict=True):
        text = text_of(answer)
        assert answer.is_error, (tool, arguments, text)
        assert phrase in text and "Traceback" not in text, (tool, arguments, text)
