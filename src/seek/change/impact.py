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
"""

from __future__ import annotations

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
    for level in range(1, depth + 1):
        following: list[Definition] = []
        for target in frontier:
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
