"""The code graph as the facade reads it from the index (issue 28; split from
:mod:`seek.workspace.code_graph` for issue 46, which keeps the lookups and their rows): a
whole graph for a server's cache, a lazily read one for a one-shot answer, a file's stored
definitions alone for `outline` and search hits, and the one message for a graph that
cannot be read (the facade repairs the index and asks once more).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from seek.errors import DamagedIndexError, failure_line
from seek.workspace.code_graph import GraphResult, Lookup, definition_row

if TYPE_CHECKING:
    from seek.graph import CodeGraph, Definition
    from seek.settings import Settings

NOT_BUILT = (
    "The code graph is not stored with this index yet (an index from an older seek, or "
    "one being updated now): run `seek index`."
)


# -- loading -----------------------------------------------------------------------------


def load_graph(index_dir: Path, lazy: bool = False) -> tuple[CodeGraph | None, str]:
    """The graph stored with the index in ``index_dir`` (None when it has none yet) and the
    manifest digest it was read under. ``lazy``: its files decoded as the lookups ask for
    them (:func:`seek.index.graph_rows.read_graph`), for a one-shot answer; a graph kept for
    many answers by threads of a server is assembled whole."""
    from seek.index.graph_rows import assemble, read_graph
    from seek.store import load_manifest
    from seek.store.graph_table import GraphTable, graph_table_name
    from seek.store.manifest import MANIFEST_NAME, contents_stamp

    stamp = contents_stamp(index_dir / MANIFEST_NAME)
    manifest = load_manifest(index_dir)
    table = GraphTable(index_dir, graph_table_name(manifest.table))
    if manifest.has_index and not table.exists():
        return None, stamp
    try:
        rows = table.load_all()
        if lazy:
            return read_graph(rows, lambda exc: graph_damaged(index_dir, exc)), stamp
        return assemble(rows), stamp
    except Exception as exc:  # noqa: BLE001 - lance reports damage as many error types
        raise graph_damaged(index_dir, exc) from exc


def graph_damaged(index_dir: Path, exc: BaseException) -> DamagedIndexError:
    """The stored graph cannot be read: the facade repairs the index (an index run that
    reads the graph table and makes a damaged one again from the files) and asks once more;
    this line is what a caller sees when that did not help."""
    return DamagedIndexError(
        f"the code graph stored in {index_dir} cannot be read ({failure_line(exc)}): run "
        "`seek index` to repair it"
    )


def file_definitions(index_dir: Path, paths: list[str]) -> dict[str, list[Definition]]:
    """The definitions of each of ``paths`` stored with the index in ``index_dir``, in source
    order, read from the graph table's definitions column alone (no graph is assembled): what
    a search hit needs to name its enclosing definition. A path without a row (no grammar,
    not indexed, no graph stored yet) is left out."""
    from seek.index.graph_rows import definitions
    from seek.store import load_manifest
    from seek.store.graph_table import GraphTable, graph_table_name

    manifest = load_manifest(index_dir)
    if not manifest.has_index:
        return {}
    table = GraphTable(index_dir, graph_table_name(manifest.table))
    try:
        return {path: definitions(path, text) for path, text in table.definitions(paths).items()}
    except Exception as exc:  # noqa: BLE001 - lance reports damage as many error types
        raise graph_damaged(index_dir, exc) from exc


class GraphCache:
    """A server's graphs, one per workspace, replaced when the index's contents change."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._graphs: dict[Path, tuple[str, CodeGraph | None]] = {}

    def get(self, index_dir: Path) -> CodeGraph | None:
        from seek.store.manifest import MANIFEST_NAME, contents_stamp

        stamp = contents_stamp(index_dir / MANIFEST_NAME)
        with self._guard:
            cached = self._graphs.get(index_dir)
            if cached is not None and cached[0] == stamp and cached[1] is not None:
                return cached[1]
            graph, loaded_under = load_graph(index_dir)
            self._graphs[index_dir] = (loaded_under, graph)
            return graph


def graph_for(
    root: Path, settings: Settings, cache: GraphCache | None, notes: list[str]
) -> CodeGraph | None:
    from seek.store import index_dir_for

    index_dir = index_dir_for(root, settings)
    graph = cache.get(index_dir) if cache is not None else load_graph(index_dir, lazy=True)[0]
    if graph is None:
        notes.append(NOT_BUILT)
    return graph


def file_outline(
    root: Path, index_dir: Path, path: str, limit: int, notes: list[str]
) -> GraphResult:
    """:func:`outline` from the file's stored definitions alone (:func:`file_definitions`),
    with the same rows and notes, without assembling the workspace's graph: a one-shot
    `seek outline` reads one row instead of decoding every file's references (gin: 0.4 s,
    zod: 1.5 s of a call)."""
    from seek.store import load_manifest
    from seek.store.graph_table import graph_exists

    manifest = load_manifest(index_dir)
    lookup = Lookup(root, None, notes)
    if manifest.has_index and not graph_exists(index_dir, manifest.table):
        notes.append(NOT_BUILT)
        return lookup.result("outline", path, [], limit)
    found = file_definitions(index_dir, [path]).get(path)
    if found is None:
        notes.append(f"{path} is not a source file of the index.")
    ordered = sorted(found or (), key=lambda d: (d.line, d.column))  # CodeGraph.outline's order
    return lookup.result("outline", path, [definition_row(d) for d in ordered], limit)
