"""Shared by the corpus tests: small repositories, a corpus run, and a corpus's rows in a
comparable form."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from seek.corpus.build import CorpusIndexer, CorpusReport
from seek.corpus.catalog import Catalog
from seek.corpus.fanout import LocalRunner, Runner
from seek.corpus.location import CorpusLocation
from seek.settings import Settings
from seek.store.corpus_table import CorpusTable

REPO_A = {
    "src/retry.py": "def configure_retries(policy):\n    return RetryPolicy(policy)\n",
    "src/http_client.py": "class HttpClient:\n    def send(self, request):\n        return 1\n",
    "src/router.py": "class Router:\n    def add_route(self, path):\n        pass\n",
    "docs/guide.md": "# Guide\n\nHow retries are configured for the client.\n",
}
REPO_B = {
    "lib/parser.py": "def parse_tokens(text):\n    return [t for t in text.split()]\n",
    "lib/cache.py": "class LruCache:\n    def evict_oldest(self):\n        return None\n",
    "lib/router.py": "class Router:\n    def add_route(self, path):\n        return path\n",
}


def many_files(prefix: str, count: int) -> dict[str, str]:
    """``count`` distinct small modules (enough tasks to fan out)."""
    return {
        f"{prefix}/mod_{i:03d}.py": (
            f"def handler_{i}(request, retries={i}):\n"
            f"    '''Handle request number {i} with backoff {i * 7}.'''\n"
            f"    return request.send(timeout={i % 13})\n\n\n"
            f"class Worker{i}:\n    def run_{i}(self):\n        return handler_{i}(self)\n"
        )
        for i in range(count)
    }


def index(
    location: CorpusLocation,
    settings: Settings,
    runner: Runner | None = None,
    **options: object,
) -> CorpusReport:
    if location.is_s3:  # the test is the operator who added these folders: it vouches for them
        folders = [e.source for e in Catalog(location).repos().values() if not e.is_git]
        options.setdefault("folders", folders)
    return CorpusIndexer(location, settings, runner or LocalRunner(), **options).run()


def indexed_corpus(folder: Path, repos: dict[str, Path], settings: Settings) -> CorpusLocation:
    """A corpus in ``folder`` with ``repos`` added and indexed in this process."""
    location = CorpusLocation(str(folder))
    add_repos(location, repos)
    index(location, settings)
    return location


def add_repos(location: CorpusLocation, repos: dict[str, Path]) -> None:
    catalog = Catalog(location)
    for name, folder in repos.items():
        catalog.add(str(folder), name)


def corpus_rows(location: CorpusLocation) -> tuple[list[tuple], np.ndarray]:
    """Every row's identity and text, sorted, and their vectors in the same order."""
    table = CorpusTable(location).open()
    if table is None:
        return [], np.zeros((0, 0), dtype=np.float32)
    data = table.search().limit(max(1, table.count_rows())).to_arrow()
    columns = ["repo", "path", "chunk", "part", "start_line", "end_line", "hash", "content",
               "keywords"]  # fmt: skip
    rows = list(zip(*(data.column(c).to_pylist() for c in columns), strict=True))
    vectors = np.array(data.column("vector").to_pylist(), dtype=np.float32)
    order = sorted(range(len(rows)), key=lambda i: rows[i][:4])
    return [rows[i] for i in order], vectors[order] if len(order) else vectors


def assert_same_corpus(left: CorpusLocation, right: CorpusLocation) -> None:
    """Same rows (no row lost, none twice), same vectors, same manifests."""
    rows_l, vec_l = corpus_rows(left)
    rows_r, vec_r = corpus_rows(right)
    assert len(rows_l) == len(set(r[:4] for r in rows_l)), "a row is stored twice"
    assert rows_l == rows_r
    np.testing.assert_allclose(vec_l, vec_r, rtol=0, atol=1e-6)
    cat_l, cat_r = Catalog(left), Catalog(right)
    for name in cat_l.repos():
        files_l = {p: s.hash for p, s in cat_l.load_manifest(name).files.items()}
        files_r = {p: s.hash for p, s in cat_r.load_manifest(name).files.items()}
        assert files_l == files_r
        assert not cat_l.load_manifest(name).run_open
