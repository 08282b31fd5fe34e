"""Each hit's enclosing symbol (issue 28 deliver 2: "every search hit names its enclosing
symbol"; docs/commands.md, the ``hit`` row of the JSON table).

**The rule**: a hit names the innermost definition that holds more than half of its lines
(the smallest span among them; None when no definition does: file-level code, a file
without a grammar). Not "the definition holding the chunk's first code line": the chunker
cuts by size, so a chunk often starts with the last lines of the function before it (on
gin, 628 of 844 chunks have a definition at their first code line, most of them that
leftover tail). Not "the definition holding the whole span" either: a chunk that runs one
line past its function would name nothing (116 of gin's 844 chunks, 250 of requests' 472).
More than half names 459 and 374, and two definitions cannot both hold more than half
unless one holds the other, so the innermost is well defined: a chunk of three methods
names their class, a method's body names the method.

**The source**: the definitions stored with the index (the graph table,
:mod:`seek.store.graph_table`), never a re-parse. Reading that table needs LanceDB and
pyarrow, ~250 ms of CPU to import and ~100 MB of memory, more than a whole ``seek search``
may add; so the definitions of every file are kept beside the index in ``hit-symbols.json``,
which loads in a few milliseconds without them (gin's: 136 KB, 1-2 ms to load it and name
ten hits; ``bench/speed/symbol_cost.py``). It records the graph table's files and sizes when
it was derived (as the search cache records the chunk table's), and each file's content
hash: when the graph table changed, only the files whose hash changed are read again, their
definitions column alone (an index run's one-file update reads one row), and a new graph
table, a new seek or a new format read every file's. While a run is open nothing is saved
(rows and stamps may disagree). An index run brings it up to date after its last commit
(:func:`refresh_hit_symbols`, called by
:func:`seek.retrieve.search_cache.refresh_search_cache`), while LanceDB is loaded anyway; a
searcher that finds it stale (an index written by an older seek, a run that could not save
it) brings it up to date itself. A searcher loads it once, at its first search, and keeps it
(servers keep their searcher until the index changes). An index without a graph table (one
from an older seek, not yet backfilled) names no symbols, and nothing fails; a graph that
cannot be read costs the names of this searcher's hits, never the search.

A server's searcher answers from the last complete index while a run is writing (seek.md
§5): its definitions are those of the graph table when it first searched, which may be a
file's newer version until the searcher is replaced.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from seek._version import __version__
from seek.retrieve.types import Hit, SearchResult, Symbol
from seek.store.graph_table import GraphTable, graph_table_name
from seek.store.manifest import Manifest
from seek.store.private import private_opener

log = logging.getLogger(__name__)

SIDECAR = "hit-symbols.json"
FORMAT = 1


class HitSymbols:
    """The definitions of one index's files, loaded at the first hit to name."""

    def __init__(self, index_dir: Path, manifest: Manifest) -> None:
        self.index_dir = index_dir
        self.table_name = graph_table_name(manifest.table)
        self.hashes = {path: stamp.hash for path, stamp in manifest.files.items()}
        self.saving = not manifest.run_open
        self._guard = threading.Lock()
        self._files: dict[str, str] | None = None  # path -> its definitions, encoded
        self._rows: dict[str, _Rows] = {}

    # -- naming ------------------------------------------------------------------------------
    def name(self, result: SearchResult) -> SearchResult:
        """``result`` with each hit's (and context hit's) symbol, and this naming for other
        spans of its files (``SearchResult.symbols``: ``seek context``'s blocks)."""
        if not result.hits and not result.context_hits:
            return replace(result, symbols=self)
        return replace(
            result,
            hits=self.named(result.hits),
            context_hits=self.named(result.context_hits),
            symbols=self,
        )

    def named(self, hits: Sequence[Hit]) -> list[Hit]:
        if not hits:
            return list(hits)
        with self._guard:
            self._ensure_loaded()
            return [
                replace(hit, symbol=self._enclosing(hit.path, hit.start_line, hit.end_line))
                for hit in hits
            ]

    def span(self, path: str, start_line: int, end_line: int) -> Symbol | None:
        """The symbol of lines ``start_line``-``end_line`` (1-based, inclusive) of ``path``,
        by the hits' rule: a ``seek context`` block, widened and merged from hits."""
        with self._guard:
            self._ensure_loaded()
            return self._enclosing(path, start_line, end_line)

    def defined(self, name: str) -> list[tuple[str, Symbol]]:
        """Every definition named ``name``, as (path, symbol), in the files' order: the graph
        evidence of a symbol query (:func:`seek.retrieve.signals.definitions.
        graph_definition_boost`). Only the files whose encoded definitions hold ``name`` as a
        JSON string (how :func:`_encoded` writes it) are decoded."""
        needle = json.dumps(name, ensure_ascii=False)
        found = []
        with self._guard:
            self._ensure_loaded()
            for path, encoded in (self._files or {}).items():
                if needle in encoded:
                    rows = self._rows_of(path)
                    found += [(path, rows.symbol(i)) for i, n in enumerate(rows.names) if n == name]
        return found

    def _ensure_loaded(self) -> None:
        if self._files is None:
            try:
                self._files = self._load()
            except Exception as exc:  # noqa: BLE001 - lance reports damage as many types
                log.warning("cannot read the definitions of %s: %s", self.index_dir, exc)
                self._files = {}

    def _enclosing(self, path: str, start: int, end: int) -> Symbol | None:
        """The innermost definition holding more than half of lines ``start``-``end``."""
        rows = self._rows_of(path)
        if not rows.names:
            return None
        held = np.minimum(rows.ends, end) - np.maximum(rows.lines, start) + 1
        most = np.flatnonzero(2 * held > end - start + 1)
        if not len(most):
            return None
        # the smallest span; two such definitions nest, so it is the innermost
        return rows.symbol(int(most[np.argmin(rows.ends[most] - rows.lines[most])]))

    def _rows_of(self, path: str) -> _Rows:
        """``path``'s definitions, decoded at the first need (the caller holds the guard)."""
        rows = self._rows.get(path)
        if rows is None:
            rows = self._rows[path] = _Rows(self._files.get(path, "") if self._files else "")
        return rows

    # -- loading -----------------------------------------------------------------------------
    def _load(self) -> dict[str, str]:
        """Every file's definitions, encoded (see the module docstring)."""
        graph_dir = self.index_dir / "lancedb" / f"{self.table_name}.lance"
        if not graph_dir.is_dir():
            return {}
        # Taken before any row is read: a write meanwhile makes the saved copy stale.
        signature = _signature(graph_dir)
        saved = self._saved()
        # While a run is open the searcher reads the last complete index (issue 31), and the
        # saved copy, saved only with no run open, is that index's.
        if saved is not None and (saved.get("graph") == signature or not self.saving):
            return {path: entry[1] for path, entry in saved["files"].items()}
        kept: dict[str, list[Any]] = {}
        if saved is not None:
            kept = {p: e for p, e in saved["files"].items() if self.hashes.get(p) == e[0]}
        missing = [path for path in self.hashes if path not in kept]
        files = {path: [self.hashes[path], ""] for path in missing}
        stored = GraphTable(self.index_dir, self.table_name).definitions(missing)
        for path, definitions in stored.items():
            files[path][1] = _encoded(path, definitions)
        files.update(kept)
        if self.saving:
            self._save({"format": FORMAT, "seek": __version__, "table": self.table_name,
                        "graph": signature, "files": files})  # fmt: skip
        return {path: entry[1] for path, entry in files.items()}

    def _saved(self) -> dict[str, Any] | None:
        """The saved copy when it belongs to this graph table, format and seek."""
        try:
            data = json.loads((self.index_dir / SIDECAR).read_bytes())
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
            return None
        mine = (FORMAT, __version__, self.table_name)
        return data if (data.get("format"), data.get("seek"), data.get("table")) == mine else None

    def _save(self, data: dict[str, Any]) -> None:
        target = self.index_dir / SIDECAR
        temporary = target.with_name(f".{SIDECAR}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            with open(temporary, "w", encoding="utf-8", opener=private_opener) as fh:
                fh.write(json.dumps(data, separators=(",", ":")))  # 0600 (issue 43)
            os.replace(temporary, target)
        except OSError as exc:  # a read-only index, a full disk: name hits without it
            log.info("could not save the definitions of %s: %s", self.index_dir, exc)
            temporary.unlink(missing_ok=True)


class _Rows:
    """One file's definitions, decoded when a hit first lies in it: spans as arrays, so a
    file of thousands of definitions costs a hit microseconds."""

    def __init__(self, encoded: str) -> None:
        try:
            rows = json.loads(encoded) if encoded else []
            lines, ends, self.names, self.kinds, self.containers = (
                map(list, zip(*rows, strict=True)) if rows else ([], [], [], [], [])
            )
            self.lines = np.array(lines, dtype=np.int64)
            self.ends = np.array(ends, dtype=np.int64)
        except (ValueError, TypeError):  # a damaged saved copy: no names for this file
            self.lines = self.ends = np.array([], dtype=np.int64)
            self.names, self.kinds, self.containers = [], [], []

    def symbol(self, i: int) -> Symbol:
        return Symbol(self.names[i], self.kinds[i], self.containers[i],
                      int(self.lines[i]), int(self.ends[i]))  # fmt: skip


def refresh_hit_symbols(index_dir: Path, manifest: Manifest) -> None:
    """After an index run's last commit: bring the saved copy up to date while LanceDB is
    loaded anyway, so that the next ``seek search`` process need not load it (on tokio: 97 MB
    more peak memory, 0.1 s more CPU). A failure costs the next search that, never the run."""
    if not manifest.has_index or manifest.run_open:
        return
    try:
        HitSymbols(index_dir, manifest)._load()
    except Exception as exc:  # noqa: BLE001 - lance reports damage as many error types
        log.warning("could not save the definitions of %s: %s", index_dir, exc)


def graph_unchanged(index_dir: Path, manifest: Manifest) -> bool:
    """Whether the graph table's files are those the saved copy was derived from (it was
    read then): an index run need not read the table to know it is sound (as
    :func:`seek.retrieve.search_cache.table_unchanged` spares reading the chunk table).
    Damage that keeps every file's size is not seen here."""
    graph_dir = index_dir / "lancedb" / f"{graph_table_name(manifest.table)}.lance"
    saved = HitSymbols(index_dir, manifest)._saved()
    return saved is not None and graph_dir.is_dir() and saved.get("graph") == _signature(graph_dir)


def _signature(graph_dir: Path) -> str:
    """The graph table's files and sizes, digested: every LanceDB commit adds a file (the
    check :func:`seek.retrieve.search_cache.table_unchanged` makes of the chunk table)."""
    found = []
    for parent, _, names in os.walk(graph_dir):
        for name in names:
            path = os.path.join(parent, name)
            try:
                found.append((os.path.relpath(path, graph_dir), os.stat(path).st_size))
            except OSError:
                continue
    listing = json.dumps(sorted(found))
    return hashlib.sha1(listing.encode("utf-8", "surrogatepass")).hexdigest()


def _encoded(path: str, definitions: str) -> str:
    """A file's definitions as ``[line, end line, name, kind, container]`` lists, from its
    stored row's definitions column (:func:`seek.index.graph_rows.encode`: each
    :class:`seek.graph.Definition`'s fields but its path, in the order it declares them:
    name, kind, line, end line, column, container, ...); "" when it has none or they cannot
    be read. Not through ``graph_rows.definitions``: the index layer is above this one, and
    importing :mod:`seek.graph` loads tree-sitter, which a search does not otherwise load."""
    try:
        rows = [[d[2], d[3], d[0], d[1], d[5]] for d in json.loads(definitions)]
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        log.info("cannot read the definitions of %s: %s", path, exc)
        return ""
    return json.dumps(rows, ensure_ascii=False, separators=(",", ":")) if rows else ""
