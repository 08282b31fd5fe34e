"""`seek corpus def|refs|callers|callees|outline|map`: the code-graph tools over one
repository of a corpus (issue 28 deliver 1, "... and in the corpus", and deliver 2; seek.md
§2 `seek def/refs/callers/callees/outline/map`).

A question names one repository: its graph is assembled from its rows of the corpus graph
table (:mod:`seek.store.corpus_graph`) with the workspace's own decoding and import
resolution (:func:`seek.index.graph_rows.assemble`) and answered by the workspace's tools
(:mod:`seek.workspace.code_graph`), so a repository's answers are those `seek def`, `refs`,
`callers`, `callees`, `outline` and `map` give in its checkout. One repository, not the
whole corpus: imports resolve to files of the same repository, and two repositories' paths
and names would otherwise mix.

A use's line of text comes from the corpus's own chunk rows, not from a checkout: the
reader may run on a machine without the repositories, and a folder named by a shared
``corpus.json`` is not read on its say-so.

A one-shot call (the CLI, the library) assembles the repository's graph for its one answer.
A server (``seek serve --corpus``) keeps the graphs it assembled in a :class:`RepoGraphs`,
each until its repository's manifest stamp changes, as a workspace server keeps one graph
per workspace (:class:`seek.workspace.code_graph.GraphCache`): assembling a repository's
graph and counting the uses that rank its definitions is seconds for a few hundred files,
and a lookup on a kept graph is milliseconds.
"""

from __future__ import annotations

import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from seek.corpus.location import CorpusError, CorpusLocation, check_repo_name
from seek.errors import SeekError
from seek.store.corpus_graph import CorpusGraph
from seek.store.corpus_table import CorpusTable
from seek.store.table import SQL_IN_BATCH
from seek.untrusted import MAX_ROWS, check_query
from seek.workspace import code_graph as cg
from seek.workspace.code_graph import LINE_TEXT_CHARS, GraphResult, Lookup

if TYPE_CHECKING:
    from seek.graph import CodeGraph

TOOLS = cg.TOOLS
"""The workspace's six tools: ``defs``, ``refs``, ``callers``, ``callees``, ``outline``, ``map``."""
MAX_KEPT_FACTS = 1_000_000
"""A :class:`RepoGraphs` keeps graphs of at most this many definitions and uses together
(zod's graph, 105,742 uses, held 28 MB: about 270 MB at the bound); the least recently asked
go first, and a larger graph is assembled per question instead of kept."""


def not_stored(repo: str) -> str:
    return (
        f"The code graph of {repo} is not stored in the corpus yet (indexed by an older "
        f"seek): run `seek corpus index URI {repo}`."
    )


def load_repo_graph(location: CorpusLocation, repo: str) -> CodeGraph | None:
    """The code graph of ``repo`` as the corpus stores it; None when it has none stored."""
    from seek.index.graph_rows import assemble

    check_repo_name(repo)
    table = CorpusTable(location)
    try:
        rows = CorpusGraph(table).load_repo(repo)
        return None if rows is None else assemble(rows)
    except SeekError:
        raise
    except Exception as exc:  # noqa: BLE001 - lance reports damage as many error types
        # one line, not LanceDB's traceback (a data file cut short or replaced); a server
        # answers it as a JSON error
        what = f"the code graph of {repo} stored in the corpus {location.uri}"
        raise CorpusError(table.unreadable(what, exc)) from exc


def _facts(graph: CodeGraph) -> int:
    return sum(len(f.definitions) + len(f.references) for f in graph.files.values())


class RepoGraphs:
    """A server's repository graphs, each kept until its repository's stamp changes.

    ``stamps`` gives every repository of the corpus with its stamp (the server's snapshot of
    the manifests' ``updated_at``, re-read at most every few seconds): a corpus run ends by
    saving each repository's manifest with a new one, after its graph rows are committed."""

    def __init__(
        self, location: CorpusLocation, stamps: Callable[[], Mapping[str, object]]
    ) -> None:
        self.location = location
        self.stamps = stamps
        self._guard = threading.Lock()
        self._kept: OrderedDict[str, tuple[object, CodeGraph, int]] = OrderedDict()

    def get(self, repo: str) -> CodeGraph | None:
        stamps = self.stamps()
        if repo not in stamps:
            raise CorpusError(f"the corpus {self.location.uri} has no repository {repo!r}")
        # one assembly at a time: a burst of questions about a repository assembles it once
        with self._guard:
            kept = self._kept.get(repo)
            if kept is not None and kept[0] == stamps[repo]:
                self._kept.move_to_end(repo)
                return kept[1]
            self._kept.pop(repo, None)
            graph = load_repo_graph(self.location, repo)
            if graph is None:  # not stored yet: asked again, it may be there
                return None
            graph.inbound()  # the uses' count that ranks definitions, once per graph
            facts = _facts(graph)
            if facts <= MAX_KEPT_FACTS:
                self._kept[repo] = (stamps[repo], graph, facts)
                while sum(k[2] for k in self._kept.values()) > MAX_KEPT_FACTS:
                    self._kept.popitem(last=False)
            return graph


def lookup(
    location: CorpusLocation,
    repo: str,
    tool: str,
    target: str,
    limit: int | None = None,
    graphs: RepoGraphs | None = None,
    budget: int | None = None,
) -> GraphResult:
    """One of :data:`TOOLS` over ``repo`` of the corpus at ``location``: ``defs NAME``,
    ``refs NAME|PATH:LINE``, ``callers``/``callees PATH:LINE``, ``outline PATH`` or ``map
    [QUESTION]`` within ``budget`` tokens (``limit`` is not used by ``map``). Rows as the
    workspace's tools give them (``path`` relative to the repository), each with ``repo``
    added; a use's ``text`` is its line from the corpus's chunks. ``graphs``: a server's
    kept graphs (the repositories it knows), else the graph is read for this answer."""
    from seek.corpus.catalog import Catalog

    if tool not in TOOLS:
        raise CorpusError(f"unknown graph tool {tool!r}: one of {', '.join(TOOLS)}")
    check_repo_name(repo)
    # checked before the graph is read, with the workspace facade's rules and defaults
    answer = _tool(tool, target, limit, budget)
    if graphs is not None:
        graph = graphs.get(repo)
    elif repo not in Catalog(location).repos():
        raise CorpusError(f"the corpus {location.uri} has no repository {repo!r}")
    else:
        graph = load_repo_graph(location, repo)
    # an empty folder as the root: the tools read no file; use_row's text comes from the
    # chunk rows below
    with tempfile.TemporaryDirectory(prefix="seek-corpus-graph-") as empty:
        found = Lookup(Path(empty), graph)
        if graph is None:
            found.notes.append(not_stored(repo))
        result = answer(found)
    for row in result.rows:
        row["repo"] = repo
    if result.subject is not None:
        result.subject["repo"] = repo
    if tool == "refs" and result.rows:
        fill_texts(location, result.rows)
    return result


def _tool(
    tool: str, target: str, limit: int | None, budget: int | None
) -> Callable[[Lookup], GraphResult]:
    """``tool``'s checked question as a call of the workspace's function over a Lookup."""
    if tool == "map":
        question, budget = check_query(target, "the question").strip(), cg.check_budget(budget)
        return lambda found: cg.repo_map(found, question, budget)
    if tool == "outline":
        path, rows = cg.check_path(target), cg.check_limit(limit or MAX_ROWS)  # all by default
        return lambda found: cg.outline(found, path, rows)
    rows = cg.check_limit(limit)
    if tool in ("callers", "callees"):
        location = cg.parse_location(target)
        if location is None:
            raise SeekError(f"expected PATH:LINE, e.g. src/app.py:42, not {target.strip()!r}")
        call = cg.callers if tool == "callers" else cg.callees
        return lambda found: call(found, *location, rows)
    name = cg.check_name(target)
    call = cg.defs if tool == "defs" else cg.refs
    return lambda found: call(found, name, rows)


def fill_texts(location: CorpusLocation, rows: list[dict]) -> None:
    """Each use's line, cut from the first chunk of its file that holds it; ``rows`` name
    their ``repo`` and ``path``. One read of the chunk table per group of repositories
    (a question across the corpus names files of many: one read instead of one per
    repository, 0.70 s -> 0.05 s for 101 repositories on the 1M-chunk corpus,
    bench/org/scale.py)."""
    table = CorpusTable(location)
    files = sorted({(r["repo"], r["path"]) for r in rows})
    chunks: dict[tuple[str, str], list[tuple[int, int, str]]] = {}
    for group in _file_groups(files):
        data = table.fetch_files(group)
        columns = ("repo", "path", "start_line", "end_line", "content")
        for repo, path, start, end, content in zip(*(data[c] for c in columns), strict=True):
            if content is not None:
                chunks.setdefault((repo, path), []).append((start, end, content))
    for row in rows:
        line = row["line"] - 1  # the rows' lines are 1-based, the stored chunks' 0-based
        for start, end, content in chunks.get((row["repo"], row["path"]), ()):
            if start <= line <= end:
                lines = content.split("\n")
                if line - start < len(lines):
                    row["text"] = lines[line - start].strip()[:LINE_TEXT_CHARS]
                    break


def _file_groups(files: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    """``(repo, path)`` pairs in groups of at most ``SQL_IN_BATCH`` repositories and paths
    each (:meth:`CorpusTable.fetch_files` asks every path in every repository of a group)."""
    groups: list[list[tuple[str, str]]] = []
    repos: set[str] = set()
    paths: set[str] = set()
    for repo, path in files:
        if (
            groups
            and (repo in repos or len(repos) < SQL_IN_BATCH)
            and (path in paths or len(paths) < SQL_IN_BATCH)
        ):
            groups[-1].append((repo, path))
        else:
            groups.append([(repo, path)])
            repos, paths = set(), set()
        repos.add(repo)
        paths.add(path)
    return groups
