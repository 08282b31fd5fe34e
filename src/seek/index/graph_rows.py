"""A file's code-graph facts as the row the index stores, and the workspace graph assembled
from those rows (issue 28 deliver 1: "the graph, built with the index").

:func:`file_facts` runs in the pure per-file stage (:func:`seek.index.stages.prepare_file`):
it extracts a source file's definitions, references and imports (:func:`seek.graph.extract`)
and encodes them as compact JSON, lists rather than objects (a reference is a few numbers
and names; field names on each would double the table). Imports are stored as written:
which files they resolve to depends on every other file, so :func:`assemble` resolves them
over the whole workspace each time a graph is loaded, as :func:`seek.graph.build_graph` does.
A Go file's row carries its module path from the nearest ``go.mod``, since Go imports
resolve through it and seek does not index ``go.mod`` files.
"""

from __future__ import annotations

import json
import logging
import posixpath
import re
from collections.abc import Iterable
from pathlib import Path

from seek.chunk import MAX_PARSE_LINE_CHARS
from seek.graph import CodeGraph, Definition, FileFacts, Import, Reference, extract
from seek.graph.imports import Resolver
from seek.scan.beneath import read_beneath

log = logging.getLogger(__name__)

_GO_MODULE = re.compile(rb"^\s*module\s+(\S+)", re.MULTILINE)
_CALL, _MEMBER, _LOCAL = 1, 2, 4


def file_facts(rel: str, data: bytes, root: Path | None = None) -> str | None:
    """The encoded facts of one file, or None when it has none to store (no grammar, a
    minified file the chunker does not parse either, a parser failure). A Go file carries
    its module's path, read from the nearest ``go.mod`` above it under ``root`` (seek does
    not index ``go.mod`` files, and Go imports resolve through them)."""
    if any(len(line) > MAX_PARSE_LINE_CHARS for line in data.split(b"\n")):
        return None  # tree-sitter's time grows with the square of such a line (chunk/)
    try:
        facts = extract(rel, data)
    except Exception as exc:  # noqa: BLE001 - a parser failure must not stop indexing
        log.warning("cannot read definitions of %s: %s", rel, exc)
        return None
    if facts is None:
        return None
    module = go_module(root, rel) if root is not None and facts.grammar == "go" else None
    return encode(facts, module)


def go_module(root: Path, rel: str) -> tuple[str, str] | None:
    """(folder, module path) of the nearest ``go.mod`` above ``rel`` inside ``root``."""
    folder = posixpath.dirname(rel)
    while True:
        try:
            data = read_beneath(root, posixpath.join(folder, "go.mod") if folder else "go.mod")
        except OSError:
            data = None
        match = _GO_MODULE.search(data) if data is not None else None
        if match is not None:
            return folder, match.group(1).decode("utf-8", "replace")
        if not folder:
            return None
        folder = posixpath.dirname(folder)


def encode(facts: FileFacts, go_module: tuple[str, str] | None = None) -> str:
    data = {
        "g": facts.grammar,
        "d": [
            [d.name, d.kind, d.line, d.end_line, d.column, d.container, d.signature, d.doc]
            for d in facts.definitions
        ],
        "r": [
            [
                r.name,
                r.line,
                r.column,
                r.enclosing,
                r.qualifier,
                (_CALL if r.call else 0)
                | (_MEMBER if r.member else 0)
                | (_LOCAL if r.local else 0),
            ]
            for r in facts.references
        ],  # fmt: skip
        "i": [[i.line, i.target, list(i.names), i.alias] for i in facts.imports],
    }
    if go_module is not None:
        data["m"] = list(go_module)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def decode(path: str, text: str) -> tuple[FileFacts, tuple[str, str] | None]:
    """A file's facts, and for a Go file its module's (folder, path)."""
    data = json.loads(text)
    module = tuple(data["m"]) if "m" in data else None
    facts = FileFacts(
        path=path,
        grammar=data["g"],
        definitions=[Definition(path, *d) for d in data["d"]],
        references=[
            Reference(
                path,
                name,
                line,
                column,
                enclosing,
                bool(flags & _CALL),
                bool(flags & _MEMBER),
                qualifier,
                bool(flags & _LOCAL),
            )
            for name, line, column, enclosing, qualifier, flags in data["r"]
        ],  # fmt: skip
        imports=[
            Import(path, line, target, tuple(names), alias)
            for line, target, names, alias in data["i"]
        ],
    )
    return facts, module  # type: ignore[return-value]


def assemble(rows: Iterable[tuple[str, str]]) -> CodeGraph:
    """The workspace graph from stored (path, encoded facts) rows: imports resolved over
    every file (what :func:`seek.graph.build_graph` does after extracting)."""
    facts: dict[str, FileFacts] = {}
    go_modules: dict[str, str] = {}
    for path, text in rows:
        found, module = decode(path, text)
        facts[path] = found
        if module is not None:
            go_modules[module[0]] = module[1]
    resolver = Resolver(list(facts), go_modules)
    for found in facts.values():
        found.imports = [
            Import(i.path, i.line, i.target, i.names, i.alias, resolver.resolve(found.grammar, i))
            for i in found.imports
        ]
    return CodeGraph(facts)
