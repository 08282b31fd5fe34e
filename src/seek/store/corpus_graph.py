"""The corpus's code graph: one row per source file of every repository, beside the corpus
chunk table in the same LanceDB database (issue 28 deliver 1, "... and in the corpus").

Rows: ``repo``, ``path``, ``definitions`` and ``facts``, the same encoded columns as a
workspace's graph table (:mod:`seek.store.graph_table`, encoded by
:mod:`seek.index.graph_rows`; the store does not read them). The table is named as the
workspace's graph of the chunk table is (``chunks_graph<GRAPH_FORMAT>``), so rows of
another format are never read as this version's graph: the next run fills the new table.

Each repository whose graph is stored has one marker row, ``path`` empty (no file has an
empty path): a repository indexed before the graph was stored (or under another graph
format) has none, and the next run fills its graph from its files (``CorpusIndexer``). The
writers commit a batch's graph rows after its chunk rows and before its stamps, so the
corpus's stamp protocol (rows before stamps, ``runOpen``, orphans removed) keeps the graph
as crash-safe as the chunks (:mod:`seek.corpus.build`). A changed file's row is swapped in
one ``merge_insert`` commit, as its chunk rows are.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from seek.store.corpus_side import SideTable
from seek.store.corpus_table import (
    TABLE,
    delete_files,
    delete_repo,
    files_filter,
    read_problem,
    repo_filter,
)
from seek.store.graph_table import graph_table_name
from seek.store.table import SQL_IN_BATCH, in_batches, sql_quote

if TYPE_CHECKING:
    pass

GRAPH_TABLE = graph_table_name(TABLE)
COLUMNS = ("repo", "path", "definitions", "facts")
KEY = ["repo", "path"]
MARKER = ""
"""The path of a repository's marker row: its graph is stored."""

Row = tuple[str, str, str]
"""A file's (path, definitions, facts), as :func:`seek.index.graph_rows.file_facts` encodes
them."""


class CorpusGraph(SideTable):
    """The corpus's graph table (:class:`SideTable`: opened lazily through the chunk table's
    connection). Dropped, each repository's graph is filled again from its stamped files by
    its next run (:meth:`seek.corpus.build.CorpusIndexer._fill_graph`)."""

    NAME = GRAPH_TABLE
    COLUMNS = COLUMNS

    # -- writing ---------------------------------------------------------------------
    def add(self, rows: Sequence[tuple[str, str, str, str]]) -> None:
        """Append (repo, path, definitions, facts) rows in one commit."""
        if not rows:
            return
        self._append(rows)

    def commit(self, batches: Sequence[tuple[str, Sequence[Row], Sequence[str]]]) -> None:
        """Write task results: ``(repo, graph rows, files that had chunk rows before)`` each.
        Rows of new files go in one append; a changed file's row is replaced (or removed,
        when it has none now) in one merge per repository and batch of paths."""
        new: list[tuple[str, str, str, str]] = []
        changed: dict[str, tuple[list[str], list[tuple[str, str, str, str]]]] = {}
        for repo, rows, had_rows in batches:
            had = set(had_rows)
            if had:
                changed.setdefault(repo, ([], []))[0].extend(had_rows)
            for row in rows:
                if row[0] in had:
                    changed[repo][1].append((repo, *row))
                else:
                    new.append((repo, *row))
        for repo, (paths, rows) in changed.items():
            self._replace(repo, paths, rows)
        self.add(new)

    def _replace(self, repo: str, paths: list[str], rows: list[tuple[str, str, str, str]]) -> None:
        table = self.open()
        if table is None:
            self.add(rows)
            return
        for batch in in_batches(paths):
            wanted = set(batch)
            data = [row for row in rows if row[1] in wanted]
            if not data:
                table.delete(files_filter(repo, batch))
                continue
            (
                table.merge_insert(KEY)
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .when_not_matched_by_source_delete(files_filter(repo, batch))
                .execute(self._arrow(data))
            )

    def delete(self, repo: str, paths: Sequence[str]) -> None:
        delete_files(self.open(), repo, paths)

    def delete_repo(self, repo: str) -> None:
        """Every row of ``repo``, its marker included."""
        delete_repo(self.open(), repo)

    def fill(self, repo: str, rows: Sequence[Row]) -> None:
        """``repo``'s whole graph in one commit: its old rows are dropped first, then its
        rows and its marker appended together (a run killed in between leaves no marker,
        and the next run fills it again)."""
        self.delete_repo(repo)
        self.add([(repo, *row) for row in rows] + [(repo, MARKER, "[]", "{}")])

    def finish(self) -> None:
        """A scalar index on ``repo`` (a reader reads one repository's rows) and compaction
        of what the run wrote."""
        table = self.open()
        if table is None:
            return
        from lancedb.index import BTree

        if not any(idx.columns == ["repo"] for idx in table.list_indices()):
            table.create_index("repo", config=BTree())
        table.optimize()

    # -- reading ---------------------------------------------------------------------
    def _scan(self, repo: str, columns: list[str]) -> Any | None:
        table = self.open()
        if table is None:
            return None
        where = repo_filter([repo])
        count = table.count_rows(where)
        if not count:
            return None
        return table.search().where(where).select(columns).limit(count).to_arrow()

    def problem(self) -> str:
        """What is wrong with the table ("" when nothing is, or when there is none), as
        :meth:`CorpusTable.problem` finds it."""
        return read_problem(self.chunks, self.open, "path", "the corpus's code graph table")

    def has_graph(self, repo: str) -> bool:
        """Whether ``repo``'s graph is stored (its marker row is there)."""
        table = self.open()
        return table is not None and bool(table.count_rows(f"{repo_filter([repo])} AND path = ''"))

    def stored_paths(self, repo: str) -> set[str]:
        data = self._scan(repo, ["path"])
        return set() if data is None else set(data.column("path").to_pylist()) - {MARKER}

    def load_repo(self, repo: str) -> list[tuple[str, str, str]] | None:
        """Every (path, definitions, facts) row of ``repo``; None when its graph is not
        stored."""
        data = self._scan(repo, list(COLUMNS[1:]))
        if data is None:
            return None
        rows = list(zip(*(data.column(c).to_pylist() for c in COLUMNS[1:]), strict=True))
        if not any(row[0] == MARKER for row in rows):
            return None
        return [row for row in rows if row[0] != MARKER]

    def load_files(self, repo: str, paths: Sequence[str]) -> list[tuple[str, str, str]]:
        """The (path, definitions, facts) rows of some files of ``repo`` (those stored)."""
        return self.load_files_of({repo: paths}).get(repo, [])

    def load_files_of(
        self, files: Mapping[str, Sequence[str]]
    ) -> dict[str, list[tuple[str, str, str]]]:
        """The (path, definitions, facts) rows of some files of each repository of ``files``
        (repository -> paths; those stored), in one read per group of repositories: every
        asked path in every asked repository, the other pairs dropped here. A question
        across the corpus reads a few files of each of its importers, often the same paths
        (one read instead of one per importer: 0.36 s -> 0.06 s for 100 importers on the
        1M-chunk corpus, bench/org/scale.py)."""
        table = self.open()
        found: dict[str, list[tuple[str, str, str]]] = {repo: [] for repo in files}
        if table is None:
            return found
        wanted = {(repo, p) for repo, paths in files.items() for p in paths if p != MARKER}
        for repos, paths in _groups(files):
            where = f"{repo_filter(repos)} AND path IN ({', '.join(map(sql_quote, paths))})"
            count = table.count_rows(where)
            if not count:
                continue
            data = table.search().where(where).select(list(COLUMNS)).limit(count).to_arrow()
            for repo, *row in zip(*(data.column(c).to_pylist() for c in COLUMNS), strict=True):
                if (repo, row[0]) in wanted:
                    found[repo].append((row[0], row[1], row[2]))
        return found

    def paths_of(self, repos: Sequence[str]) -> dict[str, list[str]]:
        """Every stored file path of each of ``repos``, in one read."""
        table = self.open()
        found: dict[str, list[str]] = {repo: [] for repo in repos}
        if table is None or not repos:
            return found
        where = repo_filter(sorted(set(repos)))
        count = table.count_rows(where)
        if count:
            data = table.search().where(where).select(["repo", "path"]).limit(count).to_arrow()
            for repo, path in zip(
                data.column("repo").to_pylist(), data.column("path").to_pylist(), strict=True
            ):
                if path != MARKER:
                    found[repo].append(path)
        return found


def _groups(files: Mapping[str, Sequence[str]]) -> Iterator[tuple[list[str], list[str]]]:
    """``files``' repositories in groups of at most ``SQL_IN_BATCH`` repositories whose
    paths together are at most ``SQL_IN_BATCH`` (a repository asking for more gets groups
    of its own): each group one filter within what LanceDB takes."""
    repos: list[str] = []
    paths: set[str] = set()
    for repo in sorted(files):
        asked = sorted(set(files[repo]) - {MARKER})
        if not asked:
            continue
        if len(asked) > SQL_IN_BATCH:
            for i in range(0, len(asked), SQL_IN_BATCH):
                yield [repo], asked[i : i + SQL_IN_BATCH]
            continue
        if repos and (len(repos) >= SQL_IN_BATCH or len(paths | set(asked)) > SQL_IN_BATCH):
            yield repos, sorted(paths)
            repos, paths = [], set()
        repos.append(repo)
        paths.update(asked)
    if repos:
        yield repos, sorted(paths)
