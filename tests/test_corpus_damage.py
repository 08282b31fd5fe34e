"""A corpus whose tables cannot be read (seek.md §4: a damaged index is rebuilt): a search
says so in one line (CLI) or one JSON error (server), never LanceDB's traceback, and the next
`seek corpus index` over every repository rebuilds the chunk table; a damaged graph table is
read again from the stamped files, with nothing embedded again. A real corpus (tree-sitter,
LanceDB) in a temporary folder; the server is uvicorn on 127.0.0.1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from corpus_helpers import REPO_A, REPO_B, index, indexed_corpus
from test_corpus import corpus_server

import seek.corpus.serve
from seek.corpus.build import CorpusIndexer
from seek.corpus.fanout import LocalRunner
from seek.corpus.graph import lookup
from seek.corpus.location import CorpusError, CorpusLocation
from seek.corpus.search import CorpusSearcher
from seek.corpus.serve import create_corpus_app
from seek.serving.config import ServeConfig
from seek.store.corpus_graph import GRAPH_TABLE, CorpusGraph
from seek.store.corpus_table import TABLE, CorpusTable


@pytest.fixture
def corpus(tmp_path, settings_for, make_tree) -> CorpusLocation:
    repos = {"alpha": make_tree(REPO_A, "alpha"), "beta": make_tree(REPO_B, "beta")}
    return indexed_corpus(tmp_path / "corpus", repos, settings_for())


def cut_short(location: CorpusLocation, table: str) -> None:
    """Every data file of ``table`` loses its second half (its footer with it)."""
    files = list((Path(location.uri) / "lancedb" / f"{table}.lance" / "data").iterdir())
    assert files
    for data in files:
        data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])


def hits(location: CorpusLocation, settings) -> list[tuple]:
    found = CorpusSearcher(location, settings).search("retry policy for the client", k=5)
    return [(h.repo, h.path, h.start_line, h.end_line) for h in found.hits]


def run_over(location: CorpusLocation, settings, *names: str):
    return CorpusIndexer(location, settings, LocalRunner()).run(list(names))


def corpus_files(location: CorpusLocation) -> dict[str, bytes]:
    root = Path(location.uri)
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_damaged_chunk_table_is_one_line_until_the_next_run_rebuilds_it(
    corpus, settings_for, seek_home, monkeypatch
):
    settings = settings_for()
    before = hits(corpus, settings)
    assert before
    monkeypatch.setattr(seek.corpus.serve, "REFRESH_S", 0.0)
    config = ServeConfig(workspaces=(), overrides={"home": str(seek_home)})
    with corpus_server(create_corpus_app(corpus.uri, config)) as client:
        assert client.post("/v1/search", json={"query": "retry policy"}).status_code == 200
        cut_short(corpus, TABLE)

        answer = client.post("/v1/search", json={"query": "retry policy"})
        assert answer.status_code == 422
        message = answer.json()["error"]["message"]
        assert "cannot be read" in message and "seek corpus index" in message

        env = {**os.environ, "SEEK_HOME": str(seek_home)}
        found = subprocess.run(
            [sys.executable, "-m", "seek", "corpus", "search", corpus.uri, "retry policy"],
            capture_output=True, text=True, env=env, timeout=120,
        )  # fmt: skip
        assert found.returncode == 1 and "Traceback" not in found.stderr
        last = found.stderr.strip().splitlines()[-1]
        assert last.startswith(f"seek: error: the corpus {corpus.uri} cannot be read (")
        assert last.endswith(f"`seek corpus index {corpus.uri}` rebuilds it")

        report = index(corpus, settings)
        assert [r.rebuild_reason.startswith("corpus table damaged: ") for r in report.repos] == [
            True,
            True,
        ]
        assert sum(r.embedded for r in report.repos) == len(REPO_A) + len(REPO_B)
        assert hits(corpus, settings) == before
        # the server that answered the errors sees the rebuilt table
        answer = client.post("/v1/search", json={"query": "retry policy for the client", "k": 5})
        assert answer.status_code == 200
        served = [(h["repo"], h["path"], h["start_line"], h["end_line"])
                  for h in answer.json()["hits"]]  # fmt: skip
        assert served == before


def test_a_run_over_some_repositories_leaves_a_damaged_table_as_it_is(corpus, settings_for):
    cut_short(corpus, TABLE)
    files = corpus_files(corpus)
    with pytest.raises(CorpusError, match="without naming repositories"):
        run_over(corpus, settings_for(), "alpha")
    assert corpus_files(corpus) == files


def test_a_damaged_graph_table_is_read_again_with_nothing_embedded(corpus, settings_for):
    answer = lookup(corpus, "beta", "defs", "LruCache")
    cut_short(corpus, GRAPH_TABLE)
    with pytest.raises(CorpusError, match="cannot be read"):
        lookup(corpus, "beta", "defs", "LruCache")
    report = run_over(corpus, settings_for(), "alpha")
    assert [r.embedded for r in report.repos] == [0]
    assert lookup(corpus, "alpha", "defs", "HttpClient").rows
    # beta was not in the run: its graph comes back with its next one, and meanwhile a
    # lookup says it is not stored
    waiting = lookup(corpus, "beta", "defs", "LruCache")
    assert not waiting.rows and "not stored in the corpus yet" in " ".join(waiting.notes)
    run_over(corpus, settings_for(), "beta")
    assert lookup(corpus, "beta", "defs", "LruCache") == answer


def test_rebuild_drops_both_tables_and_indexes_every_repository(corpus, seek_home):
    env = {**os.environ, "SEEK_HOME": str(seek_home)}

    def seek(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "seek", "corpus", *args], env=env,
                              capture_output=True, text=True, timeout=120)  # fmt: skip

    some = seek("index", corpus.uri, "alpha", "--rebuild")
    assert some.returncode == 1 and "Traceback" not in some.stderr
    assert some.stderr.strip().splitlines()[-1] == (
        f"seek: error: a rebuild indexes every repository: run `seek corpus index "
        f"{corpus.uri} --rebuild` without naming repositories"
    )
    done = seek("index", corpus.uri, "--rebuild")
    assert done.returncode == 0, done.stderr
    assert "Rebuilt alpha, beta: rebuild requested." in done.stderr
    assert f"alpha: {len(REPO_A)} files embedded" in done.stdout
    assert f"beta: {len(REPO_B)} files embedded" in done.stdout


def test_an_unreadable_corpus_names_no_credential(corpus, settings_for, monkeypatch):
    """LanceDB's message for a failed read can carry the endpoint with its user:password@
    (an S3 corpus): the one line a search or a graph tool gives masks it."""
    secret = "http://indexer:hunter2-very-secret@minio.internal:9000/code-index"

    def fails(*args, **kwargs):
        raise RuntimeError(f"lance error: Generic S3 error: {secret}: connection reset")

    monkeypatch.setattr(CorpusGraph, "load_repo", fails)
    monkeypatch.setattr(CorpusTable, "keyword_hits", fails)
    searcher = CorpusSearcher(corpus, settings_for())
    for ask in (lambda: lookup(corpus, "beta", "defs", "LruCache"),
                lambda: searcher.search("retry policy")):  # fmt: skip
        with pytest.raises(CorpusError, match="cannot be read") as caught:
            ask()
        assert "hunter2" not in str(caught.value) and "minio.internal" in str(caught.value)
