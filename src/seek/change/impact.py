"""What a change to a definition reaches (issue 44 deliver 2, `seek impact`): the definitions
that use it, directly (depth 1) and through their own users up to a depth, each with the
use that reaches it; the code at file level that uses it (an import line is not such a
use: its file is listed among the importers); the files that import its file and name it;
tests apart.

A breadth-first walk over the code graph's bound uses (:meth:`CodeGraph.uses`: calls,
references, type uses, imports of the name), so a definition is listed once, at the
shortest depth that reaches it, with the first use found at that depth. Rows are ranked by
depth, then by how much the rest of the code uses them (the graph's inbound counts of the
names listed), then by path and line. Which files are tests is the graph's own rule
(:data:`seek.graph.lookup.TEST_PATH`: ``tests/``, ``test_*``, ``*_test.*``, ``*.spec.*``...).

A method of an interface and the methods that implement it are one contract: a change to
one's signature is a change to the others', and a use bound to one (a call through the
interface, or through the concrete type) is a use of the contract. So the walk also steps
from an interface's method to the same-named methods of the types that implement the
interface, and from a method to the same-named methods of the interfaces its type
implements, at the same depth as a use, the use shown being the other method's own name.
A type implements an interface when its header names the interface (``class C implements
I``, ``class C : I``) or, in Go, whose rule it is, when it has a method of each of the
interface's names (read from the definitions' names alone). Without this step, impact on
history missed a Go interface's callers through the concrete type (chi's ``Router.Handle``:
users of ``Mux.Handle``), and the other way round (``bench/change/impact_history.py``).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from seek.graph import CodeGraph, Definition, Reference
from seek.graph.lookup import TEST_PATH


@dataclass(frozen=True)
class Reached:
    """A definition (or, ``definition`` None, the file-level code of ``path``) that the
    subject's change reaches, at ``depth``, through ``use`` of ``through``."""

    path: str
    definition: Definition | None
    depth: int
    use: Reference
    through: Definition

    @property
    def test(self) -> bool:
        return bool(TEST_PATH.search(self.path))


def impact(graph: CodeGraph, subject: Definition, depth: int) -> list[Reached]:
    """Everything that uses ``subject`` up to ``depth`` steps away, ranked (see above)."""
    seen: set[object] = {subject}
    found: list[Reached] = []
    frontier = [subject]
    contracts = _Contracts(graph)
    for level in range(1, depth + 1):
        following: list[Definition] = []
        for target in frontier:
            for other in contracts.of(target):
                if other not in seen:
                    seen.add(other)
                    use = Reference(
                        other.path, other.name, other.line, other.column, other.qualified
                    )
                    found.append(Reached(other.path, other, level, use, target))
                    following.append(other)
            for use in sorted(graph.uses(target), key=lambda r: (r.path, r.line, r.column)):
                user = graph.by_key.get((use.path, use.enclosing)) if use.enclosing else None
                if user is None and _imports_at(graph, use):
                    continue  # the import itself: its file is among the importers
                key: object = user if user is not None else ("file", use.path)
                if key in seen:
                    continue
                seen.add(key)
                found.append(Reached(use.path, user, level, use, target))
                if user is not None:
                    following.append(user)
        frontier = following
    listed = [r.definition for r in found if r.definition is not None]
    inbound = graph.inbound_of({d.name for d in listed}) if listed else {}
    return sorted(found, key=lambda r: (
        r.depth, -(inbound.get(r.definition, 0) if r.definition else 0), r.path,
        r.definition.line if r.definition else 0,
    ))  # fmt: skip


_INTERFACE_KINDS = frozenset({"interface", "trait", "protocol"})
_INTERFACE_HEADER = re.compile(r"\binterface\b")  # Go's `type Router interface {`


class _Contracts:
    """The methods one contract with a method (see the module docstring), per graph walk."""

    def __init__(self, graph: CodeGraph) -> None:
        self.graph = graph
        self._implementers: dict[Definition, set[tuple[str, str]]] = {}

    def of(self, method: Definition) -> list[Definition]:
        if method.kind != "method" or not method.container:
            return []
        graph, found = self.graph, []
        owner = graph.by_key.get((method.path, method.container))
        if owner is not None and _interface(owner):  # down: the implementations
            types = self.implementers(owner)
            found += [d for d in graph.by_name.get(method.name, ())
                      if d.kind == "method" and _type_of(d) in types]  # fmt: skip
        mine = _type_of(method)
        for other in graph.by_name.get(method.name, ()):  # up: the interfaces implemented
            if other is method or other.kind != "method" or not other.container:
                continue
            interface = graph.by_key.get((other.path, other.container))
            if interface is not None and _interface(interface):
                if mine in self.implementers(interface):
                    found.append(other)
        return [d for d in found if d is not method and d != method]

    def implementers(self, interface: Definition) -> set[tuple[str, str]]:
        """(folder, type name) of each type that implements ``interface``."""
        if interface not in self._implementers:
            graph = self.graph
            names = {d.name for d in graph.outline(interface.path)
                     if d.kind == "method" and d.container == interface.qualified}  # fmt: skip
            types: set[tuple[str, str]] | None = None
            go = graph.files[interface.path].grammar == "go"
            for name in sorted(names) if go else ():  # Go's rule: a method of each name
                having = {_type_of(d) for d in graph.by_name.get(name, ())
                          if d.kind == "method" and d.container}  # fmt: skip
                types = having if types is None else types & having
            types = types or set()
            word = re.compile(rf"(?<![\w$]){re.escape(interface.name)}(?![\w$])")
            for facts in graph.mentioning([interface.name]):  # a header naming it
                for d in facts.definitions:
                    if (
                        d.kind in ("class", "struct", "enum", "object", "record")
                        and d.name != interface.name
                        and word.search(d.signature)
                    ):
                        types.add(_type_of_container(d.path, d.qualified))
            types.discard(_type_of_container(interface.path, interface.qualified))
            self._implementers[interface] = types
        return self._implementers[interface]


def _interface(definition: Definition) -> bool:
    return definition.kind in _INTERFACE_KINDS or (
        definition.kind == "type" and bool(_INTERFACE_HEADER.search(definition.signature))
    )


def _type_of(method: Definition) -> tuple[str, str]:
    return _type_of_container(method.path, method.container or "")


def _type_of_container(path: str, container: str) -> tuple[str, str]:
    """A type by its folder (a Go package's methods may be in any of its files) and name."""
    return (posixpath.dirname(path), container)


def _imports_at(graph: CodeGraph, use: Reference) -> bool:
    facts = graph.files.get(use.path)
    return facts is not None and any(i.line == use.line for i in facts.imports)


def importers(graph: CodeGraph, subject: Definition) -> list[str]:
    """The files whose imports resolve to the subject's file and that name the subject (a
    file that imports the module without naming it is not reached by its change)."""
    found = []
    for facts in graph.mentioning([subject.name]):
        if facts.path != subject.path and any(subject.path in i.files for i in facts.imports):
            found.append(facts.path)
    return sorted(found)
