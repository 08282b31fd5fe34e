"""A corpus on object storage: an S3 server (moto in server mode) on 127.0.0.1, started by
the tests; LanceDB writes the table there (full text and IVF-PQ indexes included) and boto3
the manifests and locks (issue 17)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from corpus_helpers import REPO_A, REPO_B, add_repos, assert_same_corpus, index, many_files

from seek.corpus.catalog import Catalog
from seek.corpus.location import CorpusError, CorpusLocation, CorpusLockedError
from seek.corpus.search import CorpusSearcher
from seek.store.corpus_table import CorpusTable

pytestmark = pytest.mark.scale
ENV = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("the S3 server did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(10)


@pytest.fixture
def bucket(s3_endpoint, monkeypatch, request) -> str:
    for name, value in (ENV | {"AWS_ENDPOINT_URL": s3_endpoint}).items():
        monkeypatch.setenv(name, value)
    import boto3

    name = request.node.name.replace("_", "-")[:50].lower()
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=name)
    return name


def test_index_search_and_update_on_s3(bucket, tmp_path, settings_for, make_tree):
    repos = {"alpha": make_tree(REPO_A, "alpha"), "beta": make_tree(REPO_B, "beta")}
    location = CorpusLocation(f"s3://{bucket}/team")
    assert location.storage_options()["allow_http"] == "true"
    add_repos(location, repos)
    index(location, settings_for())
    reader = CorpusSearcher(CorpusLocation(location.uri), settings_for())  # another process's view
    hit = reader.search("parse tokens", 5, repos=["beta"]).hits[0]
    assert (hit.repo, hit.path) == ("beta", "lib/parser.py")
    # An update while the reader stays open: it sees the new version after a refresh.
    (repos["beta"] / "lib/limiter.py").write_text("def token_bucket_limiter(rate):\n    pass\n")
    index(location, settings_for())
    assert not any(
        h.path == "lib/limiter.py" for h in reader.search("token bucket limiter", 5).hits
    )
    reader.refresh()
    assert reader.search("token bucket limiter", 5).hits[0].path == "lib/limiter.py"
    # The same corpus in a local folder holds the same rows and manifests.
    local = CorpusLocation(str(tmp_path / "local"))
    add_repos(local, repos)
    index(local, settings_for())
    assert_same_corpus(location, local)


def test_conditional_put_keeps_one_writer_per_repository(bucket, settings_for, make_tree):
    location = CorpusLocation(f"s3://{bucket}/team")
    add_repos(location, {"alpha": make_tree(REPO_A, "alpha")})
    with location.lock("alpha", "indexer on host-1"):
        with pytest.raises(CorpusLockedError, match="indexer on host-1"):
            index(location, settings_for())
        assert not location.create("locks/alpha.json", b"{}")
    assert location.read("locks/alpha.json") is None  # released


def test_vector_and_full_text_indexes_on_s3(bucket, settings_for, make_tree):
    location = CorpusLocation(f"s3://{bucket}/big")
    add_repos(location, {"many": make_tree(many_files("pkg", 300), "many")})
    index(location, settings_for(), ann_min_rows=256, files_per_task=100)
    table = CorpusTable(location)
    kinds = table.index_names()
    assert table.has_vector_index() and "IVF" in kinds["vector"].upper()
    assert {"keywords", "repo", "path"} <= kinds.keys()
    searcher = CorpusSearcher(location, settings_for())
    hits = searcher.search("handler_42 backoff 294", 5, repos=["many"], prefixes=["pkg/"]).hits
    assert hits[0].path == "pkg/mod_042.py"
    assert Catalog(location).load_manifest("many").files.keys() == {
        f"pkg/mod_{i:03d}.py" for i in range(300)
    }


def seek_corpus_list(uri: str, endpoint: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **ENV, "AWS_ENDPOINT_URL": endpoint}
    command = [sys.executable, "-m", "seek", "corpus", "list", uri]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def test_storage_failures_are_one_line_without_credentials(s3_endpoint, make_tree, monkeypatch):
    """Issue 27 finding 10: a missing bucket, a refused connection; the endpoint carries
    ``user:pw@``, which no message repeats."""
    port = s3_endpoint.rsplit(":", 1)[1]
    missing = seek_corpus_list("s3://missing-bucket/x", f"http://user:secretpw@127.0.0.1:{port}")
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr == (
        "seek: error: cannot read s3://missing-bucket/x/corpus.json: "
        "the bucket missing-bucket does not exist\n"
    )
    closed = free_port()
    refused = seek_corpus_list("s3://b/x", f"http://user:secretpw@127.0.0.1:{closed}")
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr == (
        f"seek: error: cannot read s3://b/x/corpus.json: cannot reach http://127.0.0.1:{closed}\n"
    )

    for name, value in (ENV | {"AWS_ENDPOINT_URL": s3_endpoint}).items():
        monkeypatch.setenv(name, value)
    catalog = Catalog(CorpusLocation("s3://missing-bucket/x"))
    with pytest.raises(CorpusError, match=r"^cannot create s3://missing-bucket/x/locks/_corpus"):
        catalog.add(str(make_tree({"a.py": "x = 1\n"})), "a")


def test_a_folder_named_by_a_shared_corpus_json_is_not_indexed_unless_passed(
    bucket, settings_for, make_tree, caplog
):
    """Issue 27 finding 7: whoever can write the bucket's corpus.json names a private folder
    of the indexing machine; it is indexed only when the operator passes it."""
    from seek.corpus.build import CorpusIndexer
    from seek.corpus.fanout import LocalRunner

    private = make_tree({"notes.py": "API_PASSWORD = 'hunter2'\n"}, "private")
    location = CorpusLocation(f"s3://{bucket}/corpus")
    location.write_json("corpus.json", {"model": "", "repos": {"notes": str(private)}})
    with caplog.at_level("WARNING", logger="seek.corpus.catalog"):
        with pytest.raises(CorpusError, match="has no repositories"):
            CorpusIndexer(location, settings_for(), LocalRunner()).run()
    assert "repository notes skipped" in caplog.text and f"--folder {private}" in caplog.text
    assert CorpusTable(location).open() is None  # nothing of the folder was written
    report = CorpusIndexer(location, settings_for(), LocalRunner(), folders=[private]).run()
    assert [(r.name, r.files) for r in report.repos] == [("notes", 1)]

    from click.testing import CliRunner

    import seek.cli.corpus_cmd  # noqa: F401 - registers `seek corpus`
    from seek.cli import cli

    other = make_tree({"b.py": "y = 2\n"}, "other")
    added = CliRunner().invoke(cli, ["corpus", "add", location.uri, str(other)])
    assert added.exit_code == 0, added.output
    assert f"index it with `seek corpus index {location.uri} --folder {other}`" in added.stderr


def test_an_unreadable_table_on_s3_stops_the_run_and_drops_nothing(
    bucket, s3_endpoint, tmp_path, settings_for, make_tree
):
    """On S3 a table read that fails is the storage's one line, never damage to repair: a
    run that cannot read the chunk table stops before it writes, and the table's objects
    stay (a bucket out of reach for a moment must not cost the corpus its rows)."""
    import boto3

    location = CorpusLocation(f"s3://{bucket}/team")
    add_repos(location, {"alpha": make_tree(REPO_A, "alpha")})
    index(location, settings_for())
    s3 = boto3.client("s3", endpoint_url=s3_endpoint)

    def objects() -> dict[str, bytes]:
        listed = s3.list_objects_v2(Bucket=bucket, Prefix="team/lancedb/chunks.lance/")
        return {o["Key"]: s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read()
                for o in listed.get("Contents", [])}  # fmt: skip

    data = [key for key in objects() if "/data/" in key]
    assert data
    for key in data:  # cut short, as a local file was in tests/test_corpus_damage.py
        body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        s3.put_object(Bucket=bucket, Key=key, Body=body[: len(body) // 2])
    before = objects()
    with pytest.raises(CorpusError, match=f"cannot open {location.db_uri}"):
        index(location, settings_for())
    assert objects() == before
    # what mends it: --rebuild drops the tables unread and indexes every repository again
    report = index(location, settings_for(), rebuild=True)
    assert [r.rebuild_reason for r in report.repos] == ["rebuild requested"]
    local = CorpusLocation(str(tmp_path / "local"))
    add_repos(local, {"alpha": make_tree(REPO_A, "alpha")})
    index(local, settings_for())
    assert_same_corpus(location, local)
