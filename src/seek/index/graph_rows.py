"""A file's code-graph facts as the row the index stores, and the workspace graph assembled
from those rows (issue 28 deliver 1: "the graph, built with the index").

:func:`file_facts` runs in the pure per-file stage (:func:`seek.index.stages.prepare_file`):
it extracts a source file's definitions, references, imports and declared types
(:func:`seek.graph.extract`) and encodes every field of them as compact JSON, lists rather
than objects (a reference is a few numbers and names; field names on each would double the
table), so that the graph assembled from the rows equals a clean ``build_graph``. Imports
are stored as written: which files they resolve to depends on every other file, so
:func:`assemble` resolves them over the whole workspace each time a graph is loaded, as
:func:`seek.graph.build_graph` does. A Go file's row carries its module path from the
nearest ``go.mod``, since Go imports resolve through it and seek does not index ``go.mod``
files; a JS/TS file's row carries the package of the nearest package.json naming one above
it (:func:`seek.graph.packages.read_package`), through which imports of that package by
name resolve (issue 44).
"""

from __future__ import annotations

import json
import logging
import posixpath
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import fields
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from seek.chunk import MAX_PARSE_LINE_CHARS
from seek.graph import CodeGraph, Definition, FileFacts, Import, Reference, link_graph
from seek.graph.extract import ReferenceRow, extract_rows
from seek.graph.imports import Resolver
from seek.graph.model import LazyFacts
from seek.graph.packages import MAX_MANIFEST_BYTES, Package, read_package
from seek.scan.beneath import read_beneath

if TYPE_CHECKING:
    import tree_sitter

log = logging.getLogger(__name__)

_GO_MODULE = re.compile(rb"^\s*module\s+(\S+)", re.MULTILINE)
_JS = ("javascript", "typescript", "tsx")


Encoded = tuple[str, str]
"""A file's row: (its definitions, the rest of its facts), each compact JSON. Definitions are
a column of their own, so that reading a file's definitions (:func:`definitions`, the
enclosing definition of a search hit) decodes neither its references nor its types."""


def file_facts(
    rel: str, data: bytes, root: Path | None = None, tree: tree_sitter.Tree | None = None
) -> Encoded | None:
    """The encoded facts of one file, or None when it has none to store (no grammar, a
    minified file the chunker does not parse either, a parser failure). A Go file carries
    its module's path, read from the nearest ``go.mod`` above it under ``root`` (seek does
    not index ``go.mod`` files, and Go imports resolve through them). ``tree``: ``data``
    as the chunker parsed it (:func:`seek.chunk.chunk_file_parsed`, which made the checks
    above), so that it is not parsed again."""
    if tree is None:
        # the chunker's check, in characters: tree-sitter's time grows with the square of
        # such a line (seek.chunk), and a file the chunker does not parse has no facts
        text = data.decode("utf-8", errors="replace")
        if max(map(len, text.split("\n")), default=0) > MAX_PARSE_LINE_CHARS:
            return None
    try:
        found = extract_rows(rel, data, tree=tree)
    except Exception as exc:  # noqa: BLE001 - a parser failure must not stop indexing
        log.warning("cannot read definitions of %s: %s", rel, exc)
        return None
    if found is None:
        return None
    facts, references = found
    module = go_module(root, rel) if root is not None and facts.grammar == "go" else None
    package = nearest_package(root, rel) if root is not None and facts.grammar in _JS else None
    return encode(facts, module, references, package)


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


def nearest_package(root: Path, rel: str) -> Package | None:
    """The package of the nearest package.json with a name above ``rel`` inside ``root``,
    read bounded and beneath ``root`` (workspace content; a malformed one is skipped)."""
    folder = posixpath.dirname(rel)
    while True:
        name = posixpath.join(folder, "package.json") if folder else "package.json"
        try:
            data = read_beneath(root, name, MAX_MANIFEST_BYTES)
        except OSError:
            data = None
        package = read_package(folder, data) if data is not None else None
        if package is not None:
            return package
        if not folder:
            return None
        folder = posixpath.dirname(folder)


# Every field of the graph's records but the path (the row's key) is stored, in the order the
# record declares them, so a field the library adds is stored without a change here (and a
# record from a row is built positionally, as the library builds them). Imports are stored
# without ``files``: which files they resolve to depends on every other file (see assemble).
# A new field of FileFacts itself needs a key below (tests/test_graph_index.py fails until
# the stored graph carries it); a change of what is stored bumps GRAPH_FORMAT (store/).
_DEFINITION = tuple(f.name for f in fields(Definition) if f.name != "path")
_REFERENCE = tuple(name for name in Reference._fields if name != "path")
_IMPORT = tuple(f.name for f in fields(Import) if f.name not in ("path", "files"))
_definition_values = attrgetter(*_DEFINITION)
_reference_values = attrgetter(*_REFERENCE)
_import_values = attrgetter(*_IMPORT)


def encode(
    facts: FileFacts,
    go_module: tuple[str, str] | None = None,
    references: list[ReferenceRow] | None = None,
    package: Package | None = None,
) -> Encoded:
    """``references``: the file's references as :func:`seek.graph.extract.extract_rows` gives
    them (already the stored layout), instead of ``facts.references``. ``package``: a JS/TS
    file's (:func:`nearest_package`), stored last like a Go file's module (:func:`_row_last`)."""
    definitions = [_definition_values(d) for d in facts.definitions]
    data = {
        "g": facts.grammar,
        "r": (
            references
            if references is not None
            else [_reference_values(r) for r in facts.references]
        ),
        "i": [_import_values(i) for i in facts.imports],
        "t": facts.types,
        "b": facts.bases,
    }
    if go_module is not None:
        data["m"] = go_module
    if package is not None:
        data["p"] = package
    return _dumps(definitions), _dumps(data)


def _dumps(value: object) -> str:
    """Compact JSON, by orjson: the same text as ``json.dumps(value, ensure_ascii=False,
    separators=(",", ":"))`` (checked on 33 repositories' rows) in a seventh of the time (tokio's
    rows: 0.10 -> 0.014 s, on the index run's critical path). A lone surrogate (a file name
    that is not UTF-8, kept by surrogateescape) is json's to write, as before."""
    try:
        return orjson.dumps(value).decode("utf-8")
    except orjson.JSONEncodeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _loads(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # what only json writes (see _dumps) or reads
        return json.loads(text)


def definitions(path: str, text: str) -> list[Definition]:
    """The definitions of a file's row (its first column), in source order."""
    return [Definition(path, *d) for d in _loads(text)]


def decode(
    path: str, row: Encoded, defined: list[Definition] | None = None
) -> tuple[FileFacts, tuple[str, str] | None]:
    """A file's facts (with ``defined``, its definitions already decoded), and for a Go file
    its module's (folder, path)."""
    data = _loads(row[1])
    module = tuple(data["m"]) if "m" in data else None
    facts = FileFacts(
        path=path,
        grammar=data["g"],
        definitions=definitions(path, row[0]) if defined is None else defined,
        references=[Reference._make((path, *r)) for r in data["r"]],
        imports=[
            Import(path, *(tuple(v) if isinstance(v, list) else v for v in i)) for i in data["i"]
        ],
        types=data["t"],
        bases={name: tuple(bases) for name, bases in data["b"].items()},
    )
    return facts, module  # type: ignore[return-value]


def assemble(rows: Iterable[tuple[str, str, str]]) -> CodeGraph:
    """The workspace graph from stored (path, definitions, facts) rows: imports resolved over
    every file (what :func:`seek.graph.build_graph` does after extracting)."""
    facts: dict[str, FileFacts] = {}
    go_modules: dict[str, str] = {}
    packages: list[Package] = []
    for path, *row in rows:
        found, module = decode(path, tuple(row))  # type: ignore[arg-type]
        facts[path] = found
        if module is not None:
            go_modules[module[0]] = module[1]
        package = _row_package(row[1])
        if package is not None:
            packages.append(package)
    return link_graph(facts, go_modules, packages)


def read_graph(
    rows: Iterable[tuple[str, str, str]],
    damaged: Callable[[Exception], Exception] | None = None,
) -> CodeGraph:
    """The graph of :func:`assemble`, its files decoded as its lookups ask for them
    (:class:`StoredFacts`): one `seek def` or `seek refs` decodes every file's definitions
    and the facts of the files that mention the name, not the whole workspace's uses.
    ``damaged``: the error to raise for a row that cannot be decoded (a lookup decodes after
    the graph is read, where :func:`assemble` would have failed while reading it)."""
    return CodeGraph(StoredFacts(rows, damaged))


def rows_resolver(paths: Iterable[str], datas: Iterable[str]) -> Resolver:
    """The resolver of a workspace's imports over ``paths``, with the Go modules and npm
    packages its rows' facts (``datas``) carry."""
    go_modules: dict[str, str] = {}
    packages: list[Package] = []
    for data in datas:
        module = _row_module(data)
        if module is not None:
            go_modules[module[0]] = module[1]
        package = _row_package(data)
        if package is not None:
            packages.append(package)
    return Resolver(list(paths), go_modules, packages)


class StoredFacts(LazyFacts):
    """Stored (path, definitions, facts) rows as a :class:`seek.graph.model.LazyFacts`.

    A file's facts are decoded the first time they are asked for, with its imports resolved
    over every stored path as :func:`assemble` resolves them, so each file decodes to what
    :func:`assemble` builds. :meth:`mentioning` reads the stored text: a name is written in
    it as its JSON string (every string of a row is, by :func:`_dumps`), so a row whose facts
    do not hold that string hold no use or import of the name."""

    def __init__(
        self,
        rows: Iterable[tuple[str, str, str]],
        damaged: Callable[[Exception], Exception] | None = None,
        resolver: Resolver | None = None,
    ) -> None:
        """``resolver``: what resolves each file's imports, instead of one over these rows
        (several repositories' rows read as one graph: seek.corpus.joint)."""
        self._damaged = damaged
        self._rows: dict[str, Encoded] = {}
        self.definitions: dict[str, list[Definition]] = {}
        for path, defined, data in rows:
            self._rows[path] = (defined, data)
            self.definitions[path] = definitions(path, defined)
        self._resolver = resolver or rows_resolver(
            self._rows, (data for _, data in self._rows.values())
        )
        self._decoded: dict[str, FileFacts] = {}
        self._scans = 0
        self._strings: dict[str, list[str]] | None = None  # see mentioning

    def __getitem__(self, path: str) -> FileFacts:
        found = self._decoded.get(path)
        if found is None:
            row = self._rows[path]
            try:
                found, _ = decode(path, row, self.definitions[path])
            except Exception as exc:  # noqa: BLE001 - a row's text decodes or it is damage
                if self._damaged is None:
                    raise
                raise self._damaged(exc) from exc
            self._resolver.resolve_file(found)  # as link_graph resolves them
            self._decoded[path] = found
        return found

    def __contains__(self, path: object) -> bool:
        return path in self._rows

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def mentioning(self, names: Iterable[str]) -> Iterator[FileFacts]:
        """The rows whose text holds one of the names' JSON strings: each row's text
        searched, until a walk over many names has searched them ``INDEX_AFTER`` times;
        from then on, an index of every string of every row, made once (the same rows: a
        row whose text holds the JSON string of a name holds it as one of its strings)."""
        spelt = [_json_string(name) for name in names]
        if self._strings is None and None not in spelt:
            self._scans += 1
            if self._scans > INDEX_AFTER:
                self._strings = _strings_of(self._rows)
        if self._strings is None or None in spelt:
            for path, (_, data) in self._rows.items():
                if any(text is None or text in data for text in spelt):
                    yield self[path]
            return
        holding = {path for text in spelt for path in self._strings.get(text, ())}  # type: ignore[arg-type]
        for path in self._rows if len(holding) > 1 else holding:  # in the rows' order
            if path in holding:
                yield self[path]


INDEX_AFTER = 48
"""How many searches of every row's text :meth:`StoredFacts.mentioning` makes before it
indexes the rows' strings. One search of a 2,000-file workspace's rows (vitest's: 8 MB)
costs about 5 ms, the index about 0.3 s once; a one-shot `seek def` searches for a name or
two, while `seek impact` at depth 3 or `seek tests --changed` ask about hundreds of names
(vitest: 165 and about 1,000 searches)."""

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
"""A JSON string (a quote, then characters or escapes up to the closing quote)."""


def _strings_of(rows: dict[str, Encoded]) -> dict[str, list[str]]:
    """Each JSON string (as written, quotes included) of the rows' facts -> the paths of the
    rows holding it, in the rows' order."""
    found: dict[str, list[str]] = defaultdict(list)
    for path, (_, data) in rows.items():
        for text in set(_STRING.findall(data)):
            found[text].append(path)
    return found


def _json_string(name: str) -> str | None:
    """``name`` as :func:`_dumps` writes it inside a row (None when orjson cannot: a lone
    surrogate, which json wrote; then every row may hold it)."""
    try:
        return orjson.dumps(name).decode("utf-8")
    except orjson.JSONEncodeError:
        return None


def _row_module(data: str) -> tuple[str, str] | None:
    """A Go row's module (folder, path) without decoding its facts: the module is the
    row's last key (:func:`encode` adds it last), so its value is the text between the last
    ``,"m":`` and the closing brace. Inside a JSON string a quote is escaped, so that
    marker is a key; a nested key of that name (a declared type or base called ``m``) is
    followed by two closing braces and does not parse, and the whole row is decoded."""
    if not data.startswith('{"g":"go",'):
        return None  # only Go rows carry a module
    value = _last_key(data, "m", fallback=False)
    if value is _ABSENT:
        return None
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value):
        return value[0], value[1]
    module = _loads(data).get("m")
    return (module[0], module[1]) if module else None


def _row_package(data: str) -> Package | None:
    """A JS/TS row's package without decoding its facts, read as :func:`_row_module` reads
    a Go row's module (the package is the row's last key, ``"p"``)."""
    if not data.startswith(('{"g":"typescript",', '{"g":"tsx",', '{"g":"javascript",')):
        return None
    value = _last_key(data, "p", fallback=True)
    return None if value is _ABSENT else _package(value)


_ABSENT = object()


def _last_key(data: str, key: str, fallback: bool) -> object:
    """The list value of the row's last key ``key`` (see :func:`_row_module`), parsed from
    the text after its last ``,"key":``; :data:`_ABSENT` without one. When that text does
    not parse (a nested key of that name), the whole row's value (``fallback``) or None."""
    at = data.rfind(f',"{key}":[')
    if at < 0:
        return _ABSENT
    try:
        return orjson.loads(data[at + len(key) + 4 : -1])
    except orjson.JSONDecodeError:
        return _loads(data).get(key) if fallback else None


def _package(value: object) -> Package | None:
    if not (isinstance(value, list) and len(value) == 4):
        return None
    folder, name, exports, mains = value
    if not (isinstance(folder, str) and isinstance(name, str)):
        return None
    if not (isinstance(exports, list) and isinstance(mains, list)):
        return None
    entries = [(e[0], e[1]) for e in exports if isinstance(e, list) and len(e) == 2]
    return folder, name, entries, mains
