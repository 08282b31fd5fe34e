"""A corpus in a local folder, indexed in-process: repositories in one table, results that
name their repository, filters, incremental runs, crash recovery, the lock, the CLI and the
HTTP API (issue 17)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import numpy as np
import pytest
from click.testing import CliRunner
from corpus_helpers import (
    REPO_A,
    REPO_B,
    add_repos,
    assert_same_corpus,
    corpus_rows,
    index,
    many_files,
)

import seek.cli.corpus_cmd  # noqa: F401 - registers `seek corpus`
from seek.cli import cli
from seek.corpus.catalog import Catalog
from seek.corpus.location import CorpusError, CorpusLocation, CorpusLockedError
from seek.corpus.search import CorpusSearcher
from seek.corpus.work import prepare_batch
from seek.store.corpus_table import CorpusTable


@pytest.fixture
def two_repos(make_tree):
    return {"alpha": make_tree(REPO_A, "alpha"), "beta": make_tree(REPO_B, "beta")}


def test_one_table_many_repos_and_hits_name_their_repo(tmp_path, settings_for, two_repos):
    location = CorpusLocation(str(tmp_path / "corpus"))
    add_repos(location, two_repos)
    report = index(location, settings_for())
    assert {r.name: r.embedded for r in report.repos} == {"alpha": 4, "beta": 3}
    rows, _ = corpus_rows(location)
    assert {r[0] for r in rows} == {"alpha", "beta"}
    searcher = CorpusSearcher(location, settings_for())
    hits = searcher.search("Router add_route", 10).hits
    assert {(h.repo, h.path) for h in hits} >= {
        ("alpha", "src/router.py"),
        ("beta", "lib/router.py"),
    }
    only_b = searcher.search("Router add_route", 10, repos=["beta"]).hits
    assert only_b and {h.repo for h in only_b} == {"beta"}
    assert only_b[0].path == "lib/router.py"
    under = searcher.search("configure retries", 10, prefixes=["docs/"]).hits
    assert under and {(h.repo, h.path) for h in under} == {("alpha", "docs/guide.md")}
    assert searcher.search("configure retries", 3).to_json()["hits"][0]["repo"] == "alpha"


def test_search_runs_on_the_stores_event_loop_not_on_lancedbs_private_one(
    tmp_path, settings_for, two_repos, monkeypatch
):
    """The corpus queries run on the store's one event loop (``seek.store.event_loop``), not
    on LanceDB's background loop, which is not a public API: a lancedb release without
    ``lancedb.background_loop`` gives the same answers."""
    from seek.store import event_loop

    location = CorpusLocation(str(tmp_path / "corpus"))
    add_repos(location, two_repos)
    index(location, settings_for())
    questions = [("Router add_route", ()), ("configure retries", ("alpha",))]

    def answers() -> list[list[tuple[str, str, int, int]]]:
        searcher = CorpusSearcher(location, settings_for())
        found = [searcher.search(q, 5, repos=repos).hits for q, repos in questions]
        return [[(h.repo, h.path, h.start_line, h.end_line) for h in hits] for hits in found]

    first = answers()
    monkeypatch.setitem(sys.modules, "lancedb.background_loop", None)  # import fails
    assert first[0] and answers() == first
    assert event_loop._loop is not None and event_loop._loop.is_running()


def test_a_second_run_embeds_only_what_changed_and_ends_like_a_clean_index(
    tmp_path, settings_for, two_repos, make_tree
):
    location = CorpusLocation(str(tmp_path / "corpus"))
    add_repos(location, two_repos)
    index(location, settings_for())
    alpha = two_repos["alpha"]
    (alpha / "src/retry.py").write_text("def configure_retries(policy, limit):\n    return 2\n")
    (alpha / "src/router.py").unlink()
    (alpha / "src/new_feature.py").write_text("def brand_new_feature():\n    return 42\n")
    (alpha / "docs/guide.md").write_bytes(b"\x00binary now")  # had rows, now has none
    report = index(location, settings_for())
    by_name = {r.name: r for r in report.repos}
    assert by_name["alpha"].embedded == 2  # retry.py, new_feature.py (guide.md: binary)
    assert by_name["alpha"].removed == 1 and by_name["beta"].embedded == 0
    clean = CorpusLocation(str(tmp_path / "clean"))
    add_repos(clean, two_repos)
    index(clean, settings_for())
    assert_same_corpus(location, clean)
    paths = {r[1] for r in corpus_rows(location)[0] if r[0] == "alpha"}
    assert paths == {"src/retry.py", "src/http_client.py", "src/new_feature.py"}


def test_a_run_that_dies_midway_is_repaired_by_the_next(tmp_path, settings_for, make_tree):
    big = make_tree(many_files("pkg", 40), "big")
    location = CorpusLocation(str(tmp_path / "corpus"))
    add_repos(location, {"big": big})
    calls = []

    def dies_on_the_third(*args):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("the machine went away")
        return prepare_batch(*args)

    with pytest.raises(RuntimeError, match="went away"):
        index(location, settings_for(), files_per_task=5, commit_rows=1, task=dies_on_the_third)
    partial = Catalog(location).load_manifest("big")
    assert partial.run_open and 0 < len(partial.files) < 40
    # A row committed after the last manifest save: a file the manifest does not know.
    assert len({r[1] for r in corpus_rows(location)[0]}) >= len(partial.files)
    index(location, settings_for(), files_per_task=5)
    clean = CorpusLocation(str(tmp_path / "clean"))
    add_repos(clean, {"big": big})
    index(clean, settings_for())
    assert_same_corpus(location, clean)


def test_one_writer_per_repository(tmp_path, settings_for, two_repos):
    location = CorpusLocation(str(tmp_path / "corpus"))
    add_repos(location, two_repos)
    with location.lock("beta", "another indexer"):
        with pytest.raises(CorpusLockedError, match="another indexer"):
            index(location, settings_for())
    assert CorpusTable(location).count_rows() == 0  # refused before any work
    index(location, settings_for())  # the lock went with its holder
    assert CorpusTable(location).count_rows() > 0


def test_bad_input_gets_clear_errors(tmp_path, two_repos):
    with pytest.raises(CorpusError, match="unsupported corpus URI"):
        CorpusLocation("gs://bucket/x")
    location = CorpusLocation(str(tmp_path / "corpus"))
    catalog = Catalog(location)
    with pytest.raises(CorpusError, match="not a folder"):
        catalog.add(str(tmp_path / "missing"))
    with pytest.raises(CorpusError, match="bad repository name"):
        catalog.add(str(two_repos["alpha"]), "../escape")
    catalog.add(str(two_repos["alpha"]), "alpha")
    with pytest.raises(CorpusError, match="already has a repository alpha"):
        catalog.add(str(two_repos["beta"]), "alpha")
    with pytest.raises(CorpusError, match="no index yet"):
        CorpusSearcher(location, None)  # type: ignore[arg-type]


def test_cli_add_index_list_search_remove(tmp_path, seek_home, two_repos, monkeypatch):
    monkeypatch.setenv("SEEK_HOME", str(seek_home))
    uri = str(tmp_path / "corpus")
    run = CliRunner().invoke
    added = run(cli, ["corpus", "add", uri, str(two_repos["alpha"]), str(two_repos["beta"])])
    assert added.exit_code == 0, added.output
    done = run(cli, ["corpus", "index", uri, "--in-process", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["runner"] == "in-process"
    listed = json.loads(run(cli, ["corpus", "list", uri, "--json"]).output)
    assert {r["name"]: r["files"] for r in listed["repos"]} == {"alpha": 4, "beta": 3}
    found = run(cli, ["corpus", "search", uri, "parse tokens", "--repo", "beta", "--json"])
    hits = json.loads(found.output)["hits"]
    assert hits[0]["repo"] == "beta" and hits[0]["path"] == "lib/parser.py"
    assert run(cli, ["corpus", "remove", uri, "beta"]).exit_code == 0
    assert {r[0] for r in corpus_rows(CorpusLocation(uri))[0]} == {"alpha"}
    missing = run(cli, ["corpus", "search", uri, "x", "--repo", "nope"])
    assert missing.exit_code == 0 and missing.output == ""  # a filter that matches nothing


def test_cli_text_output_escapes_control_codes_in_names(
    tmp_path, seek_home, make_tree, monkeypatch
):
    """A file's name (and its folder's, the source) comes from the indexed repository: the
    text output of ``corpus search`` and ``corpus list`` shows its control codes as escapes
    (issue 27 finding 9), JSON keeps them exact."""
    monkeypatch.setenv("SEEK_HOME", str(seek_home))
    title = "\x1b]0;pwned\x07"
    name = f"src/{title}banner\u202eyp.py"
    content = f"# {title} banner\ndef hostile_banner_title():\n    return '\x1b[2J'\n"
    repo = make_tree({name: content}, "repo\u202eevil")
    uri = str(tmp_path / "corpus")
    run = CliRunner().invoke
    added = run(cli, ["corpus", "add", uri, str(repo), "--name", "hostile"])
    indexed = run(cli, ["corpus", "index", uri, "--in-process"])
    listed = run(cli, ["corpus", "list", uri])
    found = run(cli, ["corpus", "search", uri, "hostile banner title"])
    for result in (added, indexed, listed, found):
        assert result.exit_code == 0, result.output
        for raw in ("\x1b", "\x07", "\u202e"):
            assert raw not in result.output, (raw, result.output)
    assert "hostile:src/\\x1b]0;pwned\\x07banner\\u202eyp.py:1-3" in found.output
    assert "repo\\u202eevil" in listed.output
    data = json.loads(run(cli, ["corpus", "search", uri, "hostile banner title", "--json"]).output)
    assert data["hits"][0]["path"] == name and data["hits"][0]["content"] == content.rstrip("\n")


def test_serve_a_corpus_with_a_repos_filter(tmp_path, settings_for, two_repos):
    from seek.corpus.serve import create_corpus_app
    from seek.serving.config import ServeConfig

    location = CorpusLocation(str(tmp_path / "corpus"))
    add_repos(location, two_repos)
    index(location, settings_for())
    config = ServeConfig(workspaces=(), overrides={"home": str(tmp_path / "home")})
    with corpus_server(create_corpus_app(location.uri, config)) as client:
        hits = client.post("/v1/search", json={"query": "Router", "repos": ["alpha"]}).json()
        assert hits["hits"] and {h["repo"] for h in hits["hits"]} == {"alpha"}
        both = client.post("/v1/search", json={"query": "Router add_route"}).json()
        assert {h["repo"] for h in both["hits"]} == {"alpha", "beta"}
        repos = client.get("/v1/repos").json()["repos"]
        assert {r["name"]: r["files"] for r in repos} == {"alpha": 4, "beta": 3}
        unknown = client.post("/v1/search", json={"query": "x", "repos": ["nope"]})
        assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "no_repo"
        bad = client.post("/v1/search", json={"query": "x", "repos": "alpha"})
        assert bad.status_code == 400 and "repos must be a list" in bad.text
        assert client.get("/v1/status").json()["rows"] == CorpusTable(location).count_rows()


def test_a_pool_holds_the_files_both_retrievers_rank_first():
    from seek.corpus.search import pool_files

    vector = [("a", "x.py"), ("a", "x.py"), ("b", "y.py"), ("c", "z.py"), ("d", "w.py")]
    keyword = [("e", "k.py"), ("c", "z.py"), ("f", "m.py")]
    # z.py is third and second: fused, it leads; a keyword-only file is not crowded out
    # by a long vector list (the pool used to take every vector file first).
    assert pool_files(vector, keyword, 0.5, 60, 3) == [("c", "z.py"), ("a", "x.py"),
                                                       ("e", "k.py")]  # fmt: skip
    assert pool_files(vector, [], 0.5, 60, 10) == [("a", "x.py"), ("b", "y.py"),
                                                  ("c", "z.py"), ("d", "w.py")]  # fmt: skip
    assert pool_files(vector, keyword, 1.0, 60, 10) == pool_files(vector, [], 1.0, 60, 10)


def test_a_pools_rows_across_repositories_are_the_asked_files_only(
    tmp_path, settings_for, two_repos
):
    location = CorpusLocation(str(tmp_path / "corpus"))
    add_repos(location, two_repos)
    index(location, settings_for())
    table = CorpusTable(location)
    asked = [("alpha", "src/router.py"), ("beta", "lib/parser.py")]
    ran = []
    data = table.fetch_files(asked, meanwhile=lambda: ran.append(True))
    assert ran == [True] and data == table.fetch_files(asked) | {"vectors": data["vectors"]}
    # router.py is in both repositories, parser.py in beta only: the pairs, not the product.
    assert sorted(set(zip(data["repo"], data["path"], strict=True))) == sorted(asked)
    assert "keywords" not in data and len(data["vectors"]) == len(data["path"])
    firsts = [c for c, part in zip(data["content"], data["part"], strict=True) if part == 0]
    assert all(firsts) and all(
        c is None for c, part in zip(data["content"], data["part"], strict=True) if part
    )


def test_a_whole_corpus_question_takes_the_cheaper_pool_and_ann_pass(
    tmp_path, settings_for, two_repos, monkeypatch
):
    from seek.corpus import search

    location = CorpusLocation(str(tmp_path / "corpus"))
    add_repos(location, two_repos)
    index(location, settings_for())
    searcher = CorpusSearcher(location, settings_for())
    asked: list[tuple[str, int, dict]] = []
    vector_files, fetch_files = CorpusTable.vector_files, CorpusTable.fetch_files

    def spy_vectors(self, q, limit, where, exact, **ann):
        asked.append(("vectors", limit, ann))
        return vector_files(self, q, limit, where, exact, **ann)

    def spy_fetch(self, files, meanwhile=None):
        asked.append(("fetch", len(files), {}))
        return fetch_files(self, files, meanwhile)

    monkeypatch.setattr(CorpusTable, "vector_files", spy_vectors)
    monkeypatch.setattr(CorpusTable, "fetch_files", spy_fetch)
    monkeypatch.setitem(search.WHOLE_CORPUS, "pool_files", 2)
    n = max(settings_for().retrieve_k, 5 * 10)
    assert searcher.search("Router add_route retries parse", 10).hits
    wide = {k: search.WHOLE_CORPUS[k] for k in ("nprobes", "refine_factor")}
    assert asked == [("vectors", search.WHOLE_CORPUS["vector_windows"] * n, wide),
                     ("fetch", 2, {})]  # fmt: skip
    asked.clear()
    assert searcher.search("Router add_route retries parse", 10, repos=["alpha"]).hits
    assert asked[0] == ("vectors", search.VECTOR_WINDOWS * n, {})
    assert asked[1][0] == "fetch" and asked[1][1] > 2  # alpha's 4 files, up to POOL_FILES


def test_a_whole_corpus_question_on_the_ivf_pq_index(tmp_path, settings_for, make_tree):
    """Without a filter the vector pass runs on IVF-PQ with no exact re-scoring
    (``WHOLE_CORPUS``'s ``refine_factor`` None): its files are ranked by their PQ codes,
    and the pool's similarities are exact all the same."""
    from seek.corpus import search

    location = CorpusLocation(str(tmp_path / "corpus"))
    add_repos(location, {"many": make_tree(many_files("pkg", 300), "many")})
    index(location, settings_for(), ann_min_rows=256, files_per_task=100)
    table = CorpusTable(location)
    assert table.has_vector_index()
    searcher = CorpusSearcher(location, settings_for())
    assert not searcher._exact(None) and search.WHOLE_CORPUS["refine_factor"] is None
    q = searcher._query_vector("handler_42 backoff 294")
    assert q is not None
    pq_only = table.vector_files(q, 40, None, False, nprobes=4, refine_factor=None).result()
    exact = table.vector_files(q, 40, None, True).result()
    assert len(pq_only) == 40 and {r for r, _ in pq_only} == {"many"}
    assert len(set(pq_only) & set(exact)) >= 30  # approximate: most of the exact files
    hits = searcher.search("handler_42 backoff 294", 5).hits
    assert (hits[0].repo, hits[0].path) == ("many", "pkg/mod_042.py")


def test_a_pools_paths_are_embedded_while_its_rows_are_read(
    tmp_path, settings_for, two_repos, monkeypatch
):
    """The ranker's path similarities come from vectors made during the fetch (every pool
    file's, before the pool is ranked), the same vectors the ranker would make; a pool over
    two repositories names its files repo/path."""
    from seek.embed import task_prefixes
    from seek.retrieve.embedding import PathVectors

    location = CorpusLocation(str(tmp_path / "corpus"))
    add_repos(location, two_repos)
    index(location, settings_for())
    searcher = CorpusSearcher(location, settings_for())
    during: list[set[str]] = []
    fetch_files = CorpusTable.fetch_files

    def spy(self, files, meanwhile=None):
        data = fetch_files(self, files, meanwhile)
        during.append(set(searcher._path_vectors))
        assert {f"{r}/{p}" for r, p in files} <= during[-1]
        return data

    monkeypatch.setattr(CorpusTable, "fetch_files", spy)
    hits = searcher.search("Router add_route retries parse", 10).hits
    assert {h.repo for h in hits} == {"alpha", "beta"} and len(during) == 1
    kept = dict(searcher._path_vectors)
    fresh = PathVectors(searcher.embedding, task_prefixes(searcher.model_id)[0], 0)
    np.testing.assert_array_equal(np.array(list(kept.values())), fresh(list(kept)))


def test_repos_are_read_from_storage_once_per_refresh_not_per_request(
    tmp_path, settings_for, two_repos, monkeypatch
):
    """Issue 27 finding 10: /v1/repos read corpus.json and every manifest per request."""
    import seek.corpus.serve as serve
    from seek.serving.config import ServeConfig

    location = CorpusLocation(str(tmp_path / "corpus"))
    add_repos(location, two_repos)
    index(location, settings_for())
    reads: list[str] = []
    real_read = CorpusLocation.read

    def counted(self, name):
        reads.append(name)
        return real_read(self, name)

    monkeypatch.setattr(CorpusLocation, "read", counted)
    monkeypatch.setattr(serve, "REFRESH_S", 3600.0)
    config = ServeConfig(workspaces=(), overrides={"home": str(tmp_path / "home")})
    with corpus_server(serve.create_corpus_app(location.uri, config)) as client:
        reads.clear()  # what opening the corpus read
        for _ in range(10):
            repos = client.get("/v1/repos").json()["repos"]
            assert {r["name"]: r["files"] for r in repos} == {"alpha": 4, "beta": 3}
            found = client.post("/v1/search", json={"query": "Router", "repos": ["beta"]})
            assert found.status_code == 200 and {h["repo"] for h in found.json()["hits"]} == {
                "beta"
            }
        assert sorted(reads) == ["corpus.json", "manifests/alpha.json", "manifests/beta.json"]
        Catalog(location).remove("beta")
        monkeypatch.setattr(serve, "REFRESH_S", 0.0)  # the snapshot is now old: read again
        repos = client.get("/v1/repos").json()["repos"]
        assert [r["name"] for r in repos] == ["alpha"]
        assert client.post("/v1/search", json={"query": "x", "repos": ["beta"]}).status_code == 404


@contextmanager
def corpus_server(app) -> Iterator[httpx.Client]:
    """``app`` served by uvicorn on a free 127.0.0.1 port (as ``seek serve --corpus``)."""
    import threading
    import time

    import uvicorn

    from seek.serving import uvicorn_config

    server = uvicorn.Server(uvicorn_config(app, "127.0.0.1", 0, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    base = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    try:
        with httpx.Client(base_url=base, timeout=30) as client:
            yield client
    finally:
        server.should_exit = True
        thread.join(10)


HOSTILE_ENTRIES = {
    "../../pwned": "FOLDER",  # a name that would put the lock and manifest outside
    "bad-scheme": "file:///etc",
    "option": "-oProxyCommand=touch /tmp/x",
    "ssh-option": "ssh://-oProxyCommand=x/repo",
    "not-text": 42,
    "relative": "some/folder",
    "control": "/tmp/a\nb",
    "ext": "ext::sh -c touch% /tmp/x",
}


def test_corpus_json_entries_are_checked_on_every_read(tmp_path, settings_for, make_tree, caplog):
    """Issue 27 finding 7: whoever writes corpus.json does not choose paths or programs."""
    corpus = tmp_path / "area" / "corpus"
    location = CorpusLocation(str(corpus))
    alpha = make_tree(REPO_A, "alpha")
    entries = {name: str(alpha) if v == "FOLDER" else v for name, v in HOSTILE_ENTRIES.items()}
    location.write_json("corpus.json", {"model": "", "repos": {"alpha": str(alpha), **entries}})

    with caplog.at_level("WARNING", logger="seek.corpus.catalog"):
        assert list(Catalog(location).repos()) == ["alpha"]
    skipped = [r.getMessage() for r in caplog.records]
    assert len(skipped) == len(HOSTILE_ENTRIES)
    for name in HOSTILE_ENTRIES:
        assert sum(f"repository {name!r} skipped: " in line for line in skipped) == 1, skipped

    report = index(location, settings_for())  # the other repository is indexed
    assert [r.name for r in report.repos] == ["alpha"]
    assert sorted(p.name for p in (corpus / "manifests").iterdir()) == ["alpha.json"]
    assert sorted(p.name for p in (tmp_path / "area").iterdir()) == ["corpus"]
    assert not (tmp_path / "pwned.json").exists()

    listed = CliRunner().invoke(cli, ["corpus", "list", str(corpus)])
    assert listed.exit_code == 0 and listed.output.startswith("alpha\t4 files")
    with pytest.raises(CorpusError, match="bad repository name"):
        location.lock("../../pwned", "test")
    with pytest.raises(CorpusError, match="bad repository name"):
        Catalog.manifest_name("../x")
    unlock = CliRunner().invoke(cli, ["corpus", "unlock", str(corpus), "../../pwned"])
    assert unlock.exit_code == 1 and isinstance(unlock.exception, CorpusError)


def test_a_folder_source_is_indexed_only_when_this_machine_vouched_for_it(
    tmp_path, settings_for, two_repos, caplog
):
    """Issue 27 finding 7: a folder named by a corpus.json others can write is skipped
    unless the run names it (``--folder``)."""
    location = CorpusLocation(str(tmp_path / "corpus"))
    add_repos(location, two_repos)
    (tmp_path / "corpus" / "corpus.json").chmod(0o666)  # another user could have written it
    with caplog.at_level("WARNING", logger="seek.corpus.catalog"):
        with pytest.raises(CorpusError, match="has no repositories"):
            index(location, settings_for())
    assert "pass `--folder " in caplog.text and "repository alpha skipped" in caplog.text
    report = index(location, settings_for(), folders=[two_repos["beta"]])
    assert [r.name for r in report.repos] == ["beta"]

    (tmp_path / "corpus" / "corpus.json").chmod(0o664)  # the run rewrote it (the model)
    done = CliRunner().invoke(cli, ["corpus", "index", location.uri, "--in-process", "--json",
                                    "--folder", str(two_repos["alpha"])])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert [r["name"] for r in json.loads(done.output)["repos"]] == ["alpha"]


def test_a_repository_and_path_filter_together_keep_both(tmp_path, settings_for, make_tree):
    """A question filtered by repository *and* path prefix answers only from that
    repository's files under that path: both repositories hold ``src/router.py`` and
    ``docs/``, so neither filter alone gives the answer (issue 27). Mutation this pins
    (corpus/search.py ``corpus_filter``): ``" AND ".join`` -> ``" OR ".join``."""
    beta = {**REPO_B, "src/router.py": REPO_A["src/router.py"].replace("pass", "return 2"),
            "docs/notes.md": "# Notes\n\nThe Router retries a route it cannot add.\n"}  # fmt: skip
    repos = {"alpha": make_tree(REPO_A, "alpha"), "beta": make_tree(beta, "beta")}
    location = CorpusLocation(str(tmp_path / "corpus"))
    add_repos(location, repos)
    index(location, settings_for())
    searcher = CorpusSearcher(location, settings_for())
    question = "Router add_route retries configured client"
    everything = {(h.repo, h.path) for h in searcher.search(question, 20).hits}
    assert {("alpha", "docs/guide.md"), ("beta", "src/router.py")} <= everything
    for repo, prefix in (("alpha", "src/"), ("beta", "src/"), ("beta", "docs/")):
        hits = searcher.search(question, 20, repos=[repo], prefixes=[prefix]).hits
        assert hits, (repo, prefix)
        assert {h.repo for h in hits} == {repo}, (repo, prefix)
        assert all(h.path.startswith(prefix) for h in hits), (repo, prefix, hits)
    two = searcher.search(question, 20, repos=["alpha"], prefixes=["docs/", "lib/"]).hits
    assert {(h.repo, h.path) for h in two} == {("alpha", "docs/guide.md")}
