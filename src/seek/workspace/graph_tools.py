"""The facade's code-graph lookups: ``defs``, ``refs``, ``callers``, ``callees``, ``outline``
and ``map`` (seek.md §2; issue 28 deliver 2), each a checked call of
:mod:`seek.workspace.code_graph` on the graph :meth:`Workspaces._lookup` reads, repaired
once when damaged (:meth:`Workspaces._graph_answer`). A part of
:class:`seek.workspace.Workspaces`, kept apart (issue 46) as the change tools are.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from seek.untrusted import check_query

if TYPE_CHECKING:
    from seek.settings import Settings
    from seek.workspace.code_graph import GraphResult, Lookup
    from seek.workspace.live import LiveIndexes


class GraphTools:
    """Mixed into :class:`seek.workspace.Workspaces`, whose lookups these use."""

    live: LiveIndexes | None
    settings: Callable[[Path | None], Settings]
    _lookup: Callable[..., Lookup]
    _graph_answer: Callable[[Path, Callable[[bool], GraphResult]], GraphResult]

    def defs(self, root: Path, name: str, limit: int | None = None) -> GraphResult:
        """Definition sites of ``name`` (or ``Container.name``), best first."""
        from seek.workspace import code_graph as cg

        name, limit = cg.check_name(name), cg.check_limit(limit)
        return self._graph_answer(
            root, lambda update: cg.defs(self._lookup(root, update), name, limit)
        )

    def refs(self, root: Path, target: str, limit: int | None = None) -> GraphResult:
        """Uses of NAME, or of the definition at PATH:LINE, grouped by enclosing definition."""
        from seek.workspace import code_graph as cg

        target, limit = check_query(target, "the name"), cg.check_limit(limit)
        if cg.parse_location(target) is None:
            cg.check_name(target)
        target = target.strip()
        return self._graph_answer(
            root, lambda update: cg.refs(self._lookup(root, update), target, limit)
        )

    def callers(self, root: Path, path: str, line: int, limit: int | None = None) -> GraphResult:
        """Definitions that call the definition at (or around) ``path:line``."""
        from seek.workspace import code_graph as cg

        path, line, limit = cg.check_path(path), cg.check_line(line), cg.check_limit(limit)
        return self._graph_answer(
            root, lambda update: cg.callers(self._lookup(root, update), path, line, limit)
        )

    def callees(self, root: Path, path: str, line: int, limit: int | None = None) -> GraphResult:
        """What the definition at (or around) ``path:line`` calls."""
        from seek.workspace import code_graph as cg

        path, line, limit = cg.check_path(path), cg.check_line(line), cg.check_limit(limit)
        return self._graph_answer(
            root, lambda update: cg.callees(self._lookup(root, update), path, line, limit)
        )

    def outline(self, root: Path, path: str, limit: int | None = None) -> GraphResult:
        """A file's definitions with their spans and signatures, in file order."""
        from seek.workspace import code_graph as cg

        path, limit = cg.check_path(path), cg.check_limit(limit or cg.MAX_ROWS)

        def answer(update: bool) -> GraphResult:
            if self.live is not None:  # a server keeps its whole graph: it answers from that
                return cg.outline(self._lookup(root, update), path, limit)
            # one call (the CLI, the library): the file's stored row alone
            from seek.index.refresh import refresh_before_search
            from seek.store import index_dir_for

            settings = self.settings(root)
            notes = refresh_before_search(root, settings) if update else []
            from seek.workspace.stored_graph import file_outline

            return file_outline(root, index_dir_for(root, settings), path, limit, notes)

        return self._graph_answer(root, answer)

    def map(self, root: Path, question: str = "", budget: int | None = None) -> GraphResult:
        """The repository's most central definitions as signatures within ``budget`` tokens,
        personalised toward ``question`` when given."""
        from seek.workspace import code_graph as cg

        question, budget = check_query(question, "the question"), cg.check_budget(budget)
        question = question.strip()
        return self._graph_answer(
            root, lambda update: cg.repo_map(self._lookup(root, update), question, budget)
        )
