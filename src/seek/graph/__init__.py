"""seek's code graph: definitions, references and imports from tree-sitter, and the lookups
over them (issue 28; seek.md §2 `seek def/refs/callers/callees/outline/map`).

A pure library: `build_graph(files)` takes (workspace-relative path, bytes) pairs and
returns a `CodeGraph`; nothing here reads the disk, the index or the network.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping

from seek.graph.extract import extract
from seek.graph.imports import Resolver
from seek.graph.lookup import CodeGraph, UseGroup
from seek.graph.model import Definition, FileFacts, Import, Reference
from seek.graph.packages import Package, read_package

__all__ = [
    "CodeGraph",
    "Definition",
    "FileFacts",
    "Import",
    "Reference",
    "UseGroup",
    "build_graph",
    "extract",
    "link_graph",
]

_GO_MODULE = re.compile(rb"^\s*module\s+(\S+)", re.MULTILINE)


def build_graph(files: Iterable[tuple[str, bytes]] | Mapping[str, bytes]) -> CodeGraph:
    """The graph of a workspace's files.  Files without a grammar are skipped, except
    go.mod, whose module path lets Go imports resolve to package folders, and package.json,
    whose name and exports let JS/TS imports of the package by name resolve (issue 44)."""
    items = files.items() if isinstance(files, Mapping) else files
    facts: dict[str, FileFacts] = {}
    go_modules: dict[str, str] = {}
    packages: list[Package] = []
    for path, data in items:
        if posixpath.basename(path) == "package.json":
            package = read_package(posixpath.dirname(path), data)
            if package is not None:
                packages.append(package)
            continue
        if posixpath.basename(path) == "go.mod":
            match = _GO_MODULE.search(data)
            if match:
                go_modules[posixpath.dirname(path)] = match.group(1).decode("utf-8", "replace")
            continue
        found = extract(path, data)
        if found is not None:
            facts[path] = found
    return link_graph(facts, go_modules, packages)


def link_graph(
    facts: dict[str, FileFacts],
    go_modules: Mapping[str, str],
    packages: Iterable[Package] = (),
) -> CodeGraph:
    """The graph of files already extracted: each import resolved over every file (Go's
    through the module paths of go.mod, keyed by folder; JS/TS package names through the
    workspace's package.json files). Also what an index's stored rows are assembled with."""
    resolver = Resolver(list(facts), dict(go_modules), packages)
    for found in facts.values():
        resolver.resolve_file(found)
    return CodeGraph(facts)
