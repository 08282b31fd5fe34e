"""A question across the corpus reads a few files of many repositories (issue 45, deliver 5:
`corpus refs` across 100 importers at 1M chunks, bench/org/scale.py): the importers' graph
rows and the uses' lines come in one read per group of repositories, not one per
repository, and each repository's rows stay its own. Real LanceDB in a temporary folder."""

from __future__ import annotations

import numpy as np
import pytest

from seek.corpus.graph import fill_texts
from seek.corpus.location import CorpusLocation
from seek.store import corpus_graph
from seek.store.corpus_graph import CorpusGraph
from seek.store.corpus_table import CorpusTable, arrow_rows

REPOS = [f"repo-{i}" for i in range(6)]
PATHS = ["a.py", "b.py", "c.py"]


@pytest.fixture
def location(tmp_path) -> CorpusLocation:
    """Six repositories with the same three paths, every row naming its repository."""
    location = CorpusLocation(str(tmp_path / "corpus"))
    table = CorpusTable(location)
    graph = CorpusGraph(table)
    graph.add([(repo, path, f"defs of {repo}/{path}", f"facts of {repo}/{path}")
               for repo in REPOS for path in PATHS])  # fmt: skip
    for repo in REPOS:
        lines = {p: f"first line\n{repo} {p} second line\nthird" for p in PATHS}
        columns = {"path": PATHS, "hash": ["0" * 40] * 3, "chunk": [0] * 3,
                   "start_line": [0] * 3, "end_line": [2] * 3, "part": [0] * 3,
                   "content": [lines[p] for p in PATHS], "keywords": [""] * 3}  # fmt: skip
        table.add(arrow_rows(repo, columns, np.ones((3, 4), np.float32)))
    return location


def reads_of(graph: CorpusGraph) -> list[str]:
    """Every filter the opened graph table is searched with, from now on."""
    table = graph.open()
    seen: list[str] = []
    search = table.search

    def counted(*args, **kwargs):
        query = search(*args, **kwargs)
        where = query.where

        def kept(clause, *rest, **more):
            seen.append(clause)
            return where(clause, *rest, **more)

        query.where = kept
        return query

    table.search = counted
    return seen


def test_the_files_of_many_repositories_come_in_one_read_each_their_own(location):
    graph = CorpusGraph(CorpusTable(location))
    reads = reads_of(graph)
    asked = {"repo-0": ["a.py"], "repo-1": ["b.py", "c.py"], "repo-2": ["a.py", "gone.py"],
             "repo-3": []}  # fmt: skip
    found = graph.load_files_of(asked)
    assert len(reads) == 1  # not one read per repository
    assert found == {
        "repo-0": [("a.py", "defs of repo-0/a.py", "facts of repo-0/a.py")],
        "repo-1": sorted(
            (p, f"defs of repo-1/{p}", f"facts of repo-1/{p}") for p in ("b.py", "c.py")
        ),  # fmt: skip
        "repo-2": [("a.py", "defs of repo-2/a.py", "facts of repo-2/a.py")],
        "repo-3": [],
    }
    assert graph.load_files("repo-4", ["c.py"]) == [
        ("c.py", "defs of repo-4/c.py", "facts of repo-4/c.py")
    ]


def test_many_repositories_are_read_in_groups_within_the_filters_bound(location, monkeypatch):
    monkeypatch.setattr(corpus_graph, "SQL_IN_BATCH", 2)
    graph = CorpusGraph(CorpusTable(location))
    reads = reads_of(graph)
    asked = {repo: ["a.py", "c.py"] for repo in REPOS} | {"repo-5": PATHS}
    found = graph.load_files_of(asked)
    # two repositories of two paths a read; repo-5's three paths in reads of its own
    assert len(reads) == 5
    for repo, paths in asked.items():
        assert sorted(row[0] for row in found[repo]) == sorted(paths)
        assert all(row[1] == f"defs of {repo}/{row[0]}" for row in found[repo])


def test_the_lines_of_uses_in_many_repositories_come_in_one_read(location, monkeypatch):
    fetches = []
    fetch = CorpusTable.fetch_files

    def counted(self, files, *args, **kwargs):
        fetches.append(sorted(files))
        return fetch(self, files, *args, **kwargs)

    monkeypatch.setattr(CorpusTable, "fetch_files", counted)
    rows = [{"repo": repo, "path": path, "line": 2} for repo in REPOS[:4] for path in PATHS[:2]]
    fill_texts(location, rows)
    assert len(fetches) == 1
    assert [row["text"] for row in rows] == [
        f"{repo} {path} second line" for repo in REPOS[:4] for path in PATHS[:2]
    ]
