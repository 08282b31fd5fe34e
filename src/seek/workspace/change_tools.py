"""The facade's tools about change (issue 44): ``impact``, ``changed``, ``review`` and
``history``, on
the code graph stored with the index (:mod:`seek.change` does the work). A part of
:class:`seek.workspace.Workspaces`, kept apart so the facade's module holds its core:
searches, context, the graph's lookups, status and index runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seek.untrusted import check_query

if TYPE_CHECKING:
    from seek.change.review import Review
    from seek.settings import Settings
    from seek.workspace.code_graph import GraphResult, Lookup


class ChangeTools:
    """Mixed into :class:`seek.workspace.Workspaces`, whose lookups these use."""

    settings: Callable[[Path | None], Settings]
    _lookup: Callable[..., Lookup]
    _graph_answer: Callable[[Path, Callable[[bool], GraphResult]], GraphResult]

    def changed(
        self, root: Path, ref: str = "HEAD", staged: bool = False, limit: int | None = None
    ) -> GraphResult:
        """The definitions added, modified, removed, renamed or moved between ``ref`` and the
        working tree (``staged``: the git index), each with whether its signature changed
        and how many definitions call it now (issue 44 deliver 4; :mod:`seek.change`)."""
        from seek.change.definitions import callers_of, compare
        from seek.change.git import diff_sides
        from seek.workspace import change_rows as cr
        from seek.workspace import code_graph as cg

        limit = cg.check_limit(limit or cg.MAX_ROWS)
        changes = compare(diff_sides(root, ref, staged, self.settings(root).max_file_bytes))
        query = f"{ref} --staged" if staged else ref

        def answer(update: bool) -> GraphResult:
            lookup = self._lookup(root, update) if changes else cg.Lookup(root, None)
            graph = lookup.graph
            rows = [
                {
                    **cg.definition_row(c.current),
                    **c.to_json(),
                    "callers": callers_of(graph, c) if graph is not None else None,
                }  # fmt: skip
                for c in changes
            ]
            return lookup.result("changed", query, rows, limit, render_rows=cr.changed_text)

        return self._graph_answer(root, answer)

    def review(
        self, root: Path, ref: str = "HEAD", staged: bool = False, budget: int | None = None
    ) -> Review:
        """Review context for what changed since ``ref`` (``staged``: in the git index): the
        changed definitions, the lines that use them, the tests that reach them and the
        definitions they call, as labelled blocks within ``budget`` characters (default
        ``prompt_budget_chars``) (issue 44 deliver 5; :mod:`seek.change.review`)."""
        from seek.change.definitions import compare
        from seek.change.git import diff_sides
        from seek.change.review import review
        from seek.errors import SeekError
        from seek.scan.beneath import read_beneath
        from seek.untrusted import MAX_BUDGET_CHARS
        from seek.workspace import code_graph as cg

        settings = self.settings(root)
        budget = settings.prompt_budget_chars if budget is None else budget
        if isinstance(budget, bool) or not isinstance(budget, int) or not (
            0 <= budget <= MAX_BUDGET_CHARS):  # fmt: skip
            raise SeekError(f"the budget must be from 0 to {MAX_BUDGET_CHARS:,} characters")
        pairs = diff_sides(root, ref, staged, settings.max_file_bytes)
        changes = compare(pairs)
        before = {b.path: b.data for b, _ in pairs if b is not None}
        after = {a.path: a.data for _, a in pairs if a is not None}
        query = f"{ref} --staged" if staged else ref

        def answer(update: bool) -> Review:
            lookup = self._lookup(root, update) if changes else cg.Lookup(root, None)
            lines = cg.Lines()

            def read(path: str) -> bytes | None:  # for the tests written as calls
                try:
                    return read_beneath(root, path)
                except OSError:
                    return None

            def line_text(path: str, line: int) -> str:
                return lines.get(root, path, line)

            found = review(query, lookup.graph, changes, (before, after), line_text, budget, read)
            return replace(found, notes=(*lookup.notes, *found.notes))

        return self._graph_answer(root, answer)  # type: ignore[arg-type, return-value]

    def impact(
        self, root: Path, subject: str, depth: int | None = None, limit: int | None = None
    ) -> GraphResult:
        """What uses ``subject`` (NAME or PATH:LINE of a definition), directly and up to
        ``depth`` (default 3) steps through their users, tests apart, and the files that
        import it (issue 44 deliver 2; :mod:`seek.change.impact`)."""
        from seek.change.impact import impact, importers
        from seek.workspace import change_rows as cr
        from seek.workspace import code_graph as cg

        subject, limit = check_query(subject, "the subject").strip(), cg.check_limit(limit)
        depth = cr.check_depth(depth)
        location = cg.parse_location(subject)

        def answer(update: bool) -> GraphResult:
            lookup = self._lookup(root, update)
            graph, definition = lookup.graph, None
            if graph is not None and location is not None:
                definition = lookup.at(*location, uses=True)
            elif graph is not None:
                found = graph.defs(cg.check_name(subject))
                definition = found[0] if found else None
                if definition is None:
                    lookup.notes.append(f"No definition of {subject}.")
            rows: list[dict[str, Any]] = []
            imported: list[str] = []
            if graph is not None and definition is not None:
                rows = cr.reached_rows(root, impact(graph, definition, depth))
                rows.sort(key=lambda row: row["test"])  # tests apart, after the code
                imported = importers(graph, definition)
            about = cg.definition_row(definition) if definition is not None else None
            return lookup.result("impact", subject, rows, limit, subject=about,
                                 render_rows=cr.impact_text,
                                 importers=imported)  # fmt: skip

        return self._graph_answer(root, answer)

    def history(
        self, root: Path, subject: str, limit: int | None = None, patch: bool = False
    ) -> GraphResult:
        """The commits that changed ``subject`` (a definition's NAME or PATH:LINE, or a
        workspace file), newest first, from git (issue 44 deliver 6; :mod:`seek.change`)."""
        from seek.change.history import head_span, history
        from seek.workspace import change_rows as cr
        from seek.workspace import code_graph as cg

        subject, limit = check_query(subject, "the subject").strip(), cg.check_limit(limit or 20)
        location = cg.parse_location(subject)
        is_file = location is None and ("/" in subject or (root / subject).is_file())

        def answer(update: bool) -> GraphResult:
            lookup = cg.Lookup(root, None) if is_file else self._lookup(root, update)
            definition, path, span = None, cg.check_path(subject) if is_file else None, None
            if lookup.graph is not None:
                if location is not None:
                    definition = lookup.at(*location)
                else:
                    found = lookup.graph.defs(cg.check_name(subject))
                    definition = found[0] if found else None
                    if definition is None:
                        lookup.notes.append(f"No definition of {subject}.")
            if definition is not None:
                path, span = definition.path, head_span(root, definition)
                if span is None:
                    lookup.notes.append(f"{definition.qualified} is not in HEAD: added since.")
                    path = None
            commits = history(root, path, span, limit + 1, patch) if path is not None else []
            rows = [c.to_json() for c in commits]
            about = cg.definition_row(definition) if definition is not None else None
            return lookup.result("history", subject, rows, limit, subject=about,
                                 render_rows=cr.history_text)  # fmt: skip

        return self._graph_answer(root, answer)
