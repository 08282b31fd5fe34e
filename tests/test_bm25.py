"""In-memory BM25 (issue 14) gives LanceDB's full-text hits and scores on the same keyword
column: same tokens (simple tokenizer, long tokens dropped, lower case, stem, stop words after
the stem) and the same formula."""

import numpy as np
import pytest

from seek.retrieve.bm25 import Bm25, Postings, split_tokens, tokens
from seek.store.table import ChunkTable, RowBatch
from seek.text import keyword_column, keyword_query

FILES = {
    "src/retry_policy.py": "def configure_retries(policy, max_attempts=3):\n    return RetryPolicy(policy)",  # noqa: E501
    "src/http/client.py": "class HttpClient:\n    def send(self, request):\n        return self.session.send(request)",  # noqa: E501
    "src/router.py": "class Router:\n    def add_route(self, path):\n        self.routes.append(path)",  # noqa: E501
    "docs/guide.md": "Running the runner runs: having been doing these things, we should've been there.",  # noqa: E501
    "lib/long.py": "x_" + "a" * 39 + " = " + "b" * 40 + "\nvalue_utf8 = HTTPServer2Handler",
    "lib/stop.py": "def do_not_do_it(this, that, the_other): return very_much_so and_also_only_once",  # noqa: E501
    "lib/dup.py": "retry retry retry retries retried retrying configure configuration",
    "lib/empty.py": "",
    "lib/ids.py": "MAX_FILE_BYTES = maxFileBytes + __init__ + x1 + _private_thing",
}  # fmt: skip
QUERIES = [
    "configure retries", "retry policy max attempts", "http client send request", "router",
    "running runs runner", "having been doing", "do not do it", "very much only once",
    "a" * 39, "b" * 40, "utf8 decoder", "MAX_FILE_BYTES", "max file bytes", "init private",
    "the", "configuration configure", "retry retry", "route routes routing",
]  # fmt: skip


@pytest.fixture
def table(tmp_path):
    table = ChunkTable(tmp_path, "t")
    rows = RowBatch.empty(4)
    keywords = []
    for path, content in FILES.items():
        text = keyword_column(path, content) if content else ""
        rows.append_row(path, 0, 0, 1, 0, content, text)
        rows.append_row(path, 0, 0, 1, 1, content, "")  # a second window: no keywords
        keywords.append(text)
    rows.vectors = np.random.default_rng(0).random((len(rows), 4), dtype=np.float32)
    table.replace_files([], rows)
    table.finish()
    return table, keywords


@pytest.mark.parametrize("question", QUERIES)
def test_scores_equal_lancedb(table, question):
    table, keywords = table
    paths = list(FILES)
    words = keyword_query(question) or question
    expected = {path: score for path, _, score in table.keyword_scores(words, 50)}
    got = {paths[i]: score for i, score in Bm25(Postings.build(keywords)).top(words, 50)}
    assert got.keys() == expected.keys()
    for path, score in expected.items():
        assert got[path] == pytest.approx(score, rel=1e-5)


def test_tokens_follow_lancedb_rules():
    assert tokens("Running_runs RUNNER") == ["run", "run", "runner"]
    assert tokens("the having of doing") == []  # stop words, some only once stemmed
    assert tokens("a" * 39 + " " + "b" * 40) == ["a" * 39]
    assert split_tokens("max_file_bytes x1") == ["max", "file", "bytes", "x1"]
    assert split_tokens("naïve_café x") == ["naïve", "café", "x"]


def test_scope_and_ties():
    bm25 = Bm25(Postings.build(["alpha beta", "alpha beta", "alpha", "gamma"]))
    assert [i for i, _ in bm25.top("alpha", 10)] == [2, 0, 1]  # shorter first; ties by id
    assert [i for i, _ in bm25.top("alpha", 10, np.array([1, 3]))] == [1]
    assert bm25.top("delta", 10) == [] and bm25.top("alpha", 0) == []
