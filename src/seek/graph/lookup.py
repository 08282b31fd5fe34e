"""Lookups on a workspace's code graph: `def`, `refs`, `callers`, `callees`, `outline`,
`map` (seek.md §2, issue 28 deliver 1), over the uses bound to their definitions by
:mod:`seek.graph.binding`."""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from seek.graph.binding import Bindings
from seek.graph.model import Definition, LazyFacts, Reference
from seek.graph.rank import pagerank, render_map

_KIND_WEIGHT = {
    "class": 3,
    "interface": 3,
    "type": 3,
    "struct": 3,
    "trait": 3,
    "enum": 3,
    "module": 2,
    "function": 3,
    "macro": 2,
    "method": 2,
    "constant": 1,
    "variable": 1,
    "field": 0,
}
TEST_PATH = re.compile(
    r"(^|/)(tests?|spec|__tests__|testdata)(/|$)|(^|/)test_|_test\.|\.test\.|\.spec\."
)
"""Paths of test code: ranked after sources in ``defs``, left out of the map, listed apart
by ``seek impact``."""


@dataclass(frozen=True, slots=True)
class UseGroup:
    """The uses of a definition inside one enclosing definition (None: at file level)."""

    path: str
    enclosing: str | None
    uses: tuple[Reference, ...]


class CodeGraph(Bindings):
    """An in-memory graph of one workspace's files (see build_graph)."""

    def defs(self, name: str, from_path: str | None = None) -> list[Definition]:
        """Definition sites of ``name`` (or ``Container.name``), best first: those a use in
        ``from_path`` would bind to, then definitions over declarations of lesser kinds,
        outside tests, most used, shortest path."""
        container, _, last = name.rpartition(".")
        found = [
            d
            for d in self.by_name.get(last, ())
            if not container or (d.container or "").endswith(container)
        ]
        bound: set[Definition] = set()
        if from_path is not None:
            bound = set(self.candidates(Reference(from_path, last, 0, 0, None)))
        inbound = self.inbound_of((last,))
        near = self._nearness(from_path) if from_path is not None else (lambda d: 0)
        return sorted(
            found,
            key=lambda d: (
                d not in bound,
                near(d),
                -_KIND_WEIGHT.get(d.kind, 1),
                bool(TEST_PATH.search(d.path)),
                -inbound.get(d, 0),
                len(d.path),
                d.path,
                d.line,
            ),
        )

    def definition_at(self, path: str, line: int, column: int | None = None) -> Definition | None:
        """The definition a use on that line (at that column, else the first use) means, or
        the definition named on that line."""
        facts = self.files.get(path)
        if facts is None:
            return None
        for definition in facts.definitions:
            if definition.line == line and (column is None or definition.column == column):
                if facts.grammar == "python":  # an @overload stub or a property setter
                    # redefines the first definition of that name: the same symbol
                    return self.by_key.get((path, definition.qualified), definition)
                return definition
        uses = [
            r for r in facts.references if r.line == line and (column is None or r.column == column)
        ]
        for ref in uses:
            found = self.candidates(ref)
            if found:
                inbound = self.inbound_of({d.name for d in found})
                near = self._nearness(path)
                return min(
                    found,
                    key=lambda d: (
                        near(d),
                        -_KIND_WEIGHT.get(d.kind, 1),
                        -inbound.get(d, 0),
                        len(d.path),
                        d.line,
                    ),
                )
        return None

    def _nearness(self, path: str):
        """0 for the same file, 1 its folder (a Go package), 2 a file it imports, else 3."""
        folder = posixpath.dirname(path)
        facts = self.files.get(path)
        imported = {f for i in facts.imports for f in i.files} if facts else set()

        def near(d: Definition) -> int:
            if d.path == path:
                return 0
            if posixpath.dirname(d.path) == folder:
                return 1
            return 2 if d.path in imported else 3

        return near

    def enclosing(self, path: str, line: int) -> Definition | None:
        """The innermost definition whose span holds ``line``."""
        facts = self.files.get(path)
        inside = [d for d in facts.definitions if d.line <= line <= d.end_line] if facts else []
        return min(inside, key=lambda d: d.end_line - d.line) if inside else None

    def uses(self, definition: Definition) -> list[Reference]:
        """The uses that bind to ``definition``, under its name or an alias an import gives
        it (`from m import a as b`: the uses of b; issue 45: requests spells urllib3's
        ProxyError `_ProxyError`). The alias on an import line that names the definition
        too is that line's one use."""
        found = [
            ref
            for name in sorted(self.spellings((definition.name,)))
            for ref in self.refs_by_name.get(name, ())
            if definition in self.candidates(ref)
        ]
        named = {(r.path, r.line) for r in found if r.name == definition.name}
        return [r for r in found if r.name == definition.name or (r.path, r.line) not in named]

    def refs(self, target: str | Definition) -> list[UseGroup]:
        """Uses of a name (every definition of it) or of one definition, grouped by file and
        enclosing definition."""
        if isinstance(target, Definition):
            found = self.uses(target)
        else:  # each use bound once, not once per definition of a common name
            wanted = set(self.defs(target))
            names = {d.name for d in wanted}
            found = [
                r
                for name in names
                for r in self.refs_by_name.get(name, ())
                if not wanted.isdisjoint(self.candidates(r))
            ]
        groups: dict[tuple[str, str | None], list[Reference]] = {}
        for ref in sorted(set(found), key=lambda r: (r.path, r.line, r.column)):
            groups.setdefault((ref.path, ref.enclosing), []).append(ref)
        return [
            UseGroup(path, enclosing, tuple(uses)) for (path, enclosing), uses in groups.items()
        ]

    def refs_at(self, path: str, line: int) -> list[UseGroup]:
        definition = self.definition_at(path, line) or self.enclosing(path, line)
        return self.refs(definition) if definition else []

    def callers(self, definition: Definition) -> list[Definition]:
        """Definitions holding a call that binds to ``definition``."""
        out: dict[Definition, None] = {}
        for ref in self.uses(definition):
            caller = self.by_key.get((ref.path, ref.enclosing)) if ref.enclosing else None
            if ref.call and caller is not None and caller != definition:
                out[caller] = None
        return list(out)

    def callees(self, definition: Definition) -> list[Definition]:
        """What calls inside ``definition``'s span bind to (best candidate each)."""
        facts = self.files[definition.path]
        out: dict[Definition, None] = {}
        for ref in facts.references:
            if ref.call and definition.line <= ref.line <= definition.end_line:
                found = self.candidates(ref)
                if found:
                    out[self.defs(ref.name, ref.path)[0] if len(found) > 1 else found[0]] = None
        out.pop(definition, None)
        return list(out)

    def outline(self, path: str) -> list[Definition]:
        facts = self.files.get(path)
        return sorted(facts.definitions, key=lambda d: (d.line, d.column)) if facts else []

    # -- centrality -----------------------------------------------------------------------

    def inbound(self) -> dict[Definition, int]:
        """How many uses bind to each definition (uses that could mean n definitions count
        1/n toward each, rounded down after summing)."""
        if self._inbound is None:
            uses = (ref for refs in self.refs_by_name.values() for ref in refs)
            self._inbound = self._bound_counts(uses)
        return self._inbound

    def inbound_of(self, names: Iterable[str]) -> dict[Definition, int]:
        """:meth:`inbound` for the definitions with these names only, the same counts: a use
        can mean a definition of another name only through an import's alias (`from m import
        a as b`, and re-exports of it), so only the uses of the names and of their aliases
        are bound, not every use of the workspace (a one-shot `seek def` on gin: 1.3 s of
        binding before). Once the whole count is made, it is read from it."""
        wanted = set(names)
        if self._inbound is not None:
            return {d: n for d, n in self._inbound.items() if d.name in wanted}
        uses = (ref for name in self.spellings(wanted) for ref in self.refs_by_name.get(name, ()))
        return self._bound_counts(uses, wanted)

    def spellings(self, names: Iterable[str]) -> set[str]:
        """``names`` and the aliases imports give them (`from m import a as b`), and the
        aliases of those: the names a use of one of them may be spelt by."""
        spelt = set(names)
        while True:
            if isinstance(self.files, LazyFacts):  # the files that name them, decoded
                imports = (i for facts in self.mentioning(spelt) for i in facts.imports)
                more = {i.alias for i in imports if i.names and i.names[0] in spelt and i.alias}
            else:  # every file's aliases, indexed once: `uses` asks for each definition
                more = {a for name in spelt for a in self._aliases_of().get(name, ())}
            more -= spelt
            if not more:
                return spelt
            spelt |= more

    def _aliases_of(self) -> dict[str, set[str]]:
        """Imported name -> the aliases imports give it, over every file."""
        if self._alias_index is None:
            self._alias_index = defaultdict(set)
            for facts in self.files.values():
                for imp in facts.imports:
                    if imp.alias and imp.names:
                        self._alias_index[imp.names[0]].add(imp.alias)
        return self._alias_index

    def _bound_counts(
        self, uses: Iterable[Reference], wanted: set[str] | None = None
    ) -> dict[Definition, int]:
        """How many of ``uses`` bind to each definition (named in ``wanted`` when given): a
        use that could mean n definitions counts 1/n toward each, rounded after summing."""
        counts: dict[Definition, float] = defaultdict(float)
        for ref in uses:
            found = self.candidates(ref)
            for d in found:
                if wanted is None or d.name in wanted:
                    counts[d] += 1 / len(found)
        return {d: int(c + 0.5) for d, c in counts.items()}

    def ranked(
        self, question: str = "", seeds: tuple[str, ...] = ()
    ) -> list[tuple[float, Definition]]:
        """Definitions by PageRank over uses (user -> used), personalised toward definitions
        whose names share words with ``question`` and toward the ``seeds`` paths."""
        nodes = [d for facts in self.files.values() for d in facts.definitions]
        index = {d: i for i, d in enumerate(nodes)}
        file_node = {path: len(nodes) + i for i, path in enumerate(self.files)}
        sources, targets, weights = [], [], []
        for facts in self.files.values():
            for ref in facts.references:
                found = self.candidates(ref)
                if not found:
                    continue
                user = self.by_key.get((ref.path, ref.enclosing)) if ref.enclosing else None
                source = index[user] if user is not None else file_node[ref.path]
                for d in found:
                    if d is not user:
                        sources.append(source)
                        targets.append(index[d])
                        weights.append(1.0 / len(found))
        size = len(nodes) + len(file_node)
        personal = None
        words = _words(question)
        if words or seeds:
            personal = np.zeros(size)
            for d, i in index.items():
                if words & _words(d.name) or d.path in seeds:
                    personal[i] = 1.0
            for path in seeds:
                if path in file_node:
                    personal[file_node[path]] = 1.0
        scores = pagerank(
            size,
            np.asarray(sources, dtype=np.int64),
            np.asarray(targets, dtype=np.int64),
            np.asarray(weights, dtype=np.float64),
            personal,
        )
        return sorted(
            ((float(scores[i]), d) for d, i in index.items()),
            key=lambda p: (-p[0], p[1].path, p[1].line),
        )

    def map(self, question: str = "", budget: int = 1024, seeds: tuple[str, ...] = ()) -> str:
        """The most central definitions as signatures within ``budget`` tokens."""
        # fields and tests are central by use but say little about the API: they are left
        # out, so the budget goes to functions, types and their methods
        ranked = [
            (score, d)
            for score, d in self.ranked(question, seeds)
            if d.kind != "field" and not TEST_PATH.search(d.path)
        ]
        return render_map(ranked, budget)


def _words(text: str) -> set[str]:
    """Lower-cased words of identifiers and prose: `getUserName` and `get_user_name` alike."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return {w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if len(w) > 2}
