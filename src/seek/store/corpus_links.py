"""The corpus's links between repositories: what each repository provides and what its files
import from outside it, one small row each, beside the corpus's chunk and graph tables in the
same LanceDB database (issue 45, deliver 1 and 2).

Rows: ``repo``, ``kind``, ``ecosystem``, ``name``, ``path``, ``root``:

* ``provides``: ``name`` is an import name the repository provides in ``ecosystem`` (a Python
  package, a Go module path, an npm package...), ``root`` what it denotes in the repository
  and ``path`` the file that declared it (:mod:`seek.corpus.provides`);
* ``imports``: the file ``path`` imports something its own repository does not hold, which a
  repository providing ``name`` in ``ecosystem`` would answer (one row per file and name);
* ``marker``: the repository's links are complete (``path``, ``name`` and ``root`` empty).

A repository's rows are replaced whole, in one delete and one append that ends with its
marker, after its graph rows are committed (:mod:`seek.corpus.links`): a run stopped in
between leaves no marker, and the next run writes them again. The rows are few (a file's
imports from outside its repository, by top-level name) and looked up by name through a
scalar index, so finding who imports a name does not read the corpus.

The store does not judge the rows: they come from repositories' content, and their reader
(:mod:`seek.corpus.links`) checks each one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from seek.store.corpus_side import SideTable
from seek.store.corpus_table import TABLE, delete_repo, read_problem, repo_filter
from seek.store.table import in_batches, sql_quote

if TYPE_CHECKING:
    pass

LINKS_FORMAT = 1
LINKS_TABLE = f"{TABLE}_links{LINKS_FORMAT}"
COLUMNS = ("repo", "kind", "ecosystem", "name", "path", "root")
PROVIDES, IMPORTS, MARKER = "provides", "imports", "marker"

Row = tuple[str, str, str, str, str, str]
"""(repo, kind, ecosystem, name, path, root), as :data:`COLUMNS` names them."""


class CorpusLinks(SideTable):
    """The corpus's links table (:class:`SideTable`: opened lazily through the chunk table's
    connection)."""

    NAME = LINKS_TABLE
    COLUMNS = COLUMNS

    # -- writing ---------------------------------------------------------------------
    def replace_repo(self, repo: str, rows: Sequence[Row]) -> None:
        """``repo``'s rows, whole: the old ones deleted, then the new ones and the marker
        appended in one commit."""
        self.delete_repo(repo)
        self._append([*rows, (repo, MARKER, "", "", "", "")])

    def unmark(self, repo: str) -> None:
        """Say ``repo``'s links are out of date (its files are about to change)."""
        table = self.open()
        if table is not None:
            table.delete(f"{repo_filter([repo])} AND kind = '{MARKER}'")

    def delete_repo(self, repo: str) -> None:
        delete_repo(self.open(), repo)

    def finish(self) -> None:
        """Scalar indexes on ``name`` (who provides or imports a name) and ``repo``, and
        compaction of what the run wrote."""
        table = self.open()
        if table is None:
            return
        from lancedb.index import BTree

        have = {tuple(idx.columns) for idx in table.list_indices()}
        for column in ("name", "repo"):
            if (column,) not in have:
                table.create_index(column, config=BTree())
        table.optimize()

    def problem(self) -> str:
        return read_problem(self.chunks, self.open, "name", "the corpus's links table")

    # -- reading ---------------------------------------------------------------------
    def has_links(self, repo: str) -> bool:
        table = self.open()
        return table is not None and bool(
            table.count_rows(f"{repo_filter([repo])} AND kind = '{MARKER}'")
        )

    def _rows(self, where: str) -> list[Row]:
        table = self.open()
        if table is None:
            return []
        count = table.count_rows(where)
        if not count:
            return []
        data = table.search().where(where).select(list(COLUMNS)).limit(count).to_arrow()
        return list(zip(*(data.column(c).to_pylist() for c in COLUMNS), strict=True))

    def of_repo(self, repo: str, kind: str) -> list[Row]:
        """``repo``'s rows of one kind."""
        return self._rows(f"{repo_filter([repo])} AND kind = {sql_quote(kind)}")

    def named(self, kind: str, ecosystem: str, names: Sequence[str]) -> list[Row]:
        """Every row of ``kind`` in ``ecosystem`` whose name is one of ``names``."""
        found: list[Row] = []
        for batch in in_batches(sorted(set(names))):
            listed = ", ".join(sql_quote(n) for n in batch)
            found += self._rows(
                f"name IN ({listed}) AND kind = {sql_quote(kind)} "
                f"AND ecosystem = {sql_quote(ecosystem)}"
            )
        return found
