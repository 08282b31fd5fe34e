"""Binding a use to the definitions it can mean (issue 28): the rules under
:mod:`seek.graph.lookup`'s queries.

A use is bound to the definitions it can mean by the language's visibility rules where they
are cheap to decide, else by name: a bare name binds to a definition in its own file, then
to one its imports bring in (following re-exports a few files deep), then, in Go, to one in
its package folder; in languages with explicit imports (Python, JS/TS, Rust, Go) it binds
no further, since an unimported bare name is a local, a parameter or a builtin.  A member
use (`x.name`) binds to a module-level definition of the module `x` names (in Go, only
there), else, where x's declared type is known (graph.types: Go and Python; graph.types_js:
TypeScript and JavaScript), to that type's members and those of the types it embeds or
extends (graph.resolve), or to nothing when the type is a builtin or comes from outside the
workspace; else to the nearest members of that name (in JS/TS, of a member that subtypes
redeclare, the first declaration only; and a member a known TS type does not show is
looked for by name too, since it may come from what the graph cannot read).  A
definition inside a function is visible only there (members too, except in JS/TS, where
objects built in a function escape it).  Python: `from m import a as b` binds b to m's a,
an import line's names are the imported ones, a class body sees the class's names, and a
property setter or @overload stub is its first definition.  Other languages bind by name
alone, own file first.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping

import numpy as np

from seek.graph.model import Definition, FileFacts, Import, LazyFacts, Reference
from seek.graph.resolve import (
    REEXPORT_DEPTH,
    TYPE_KINDS,
    DeclaredTypes,
    exported,
    reexport_depth,
)

_STRICT = {"python", "javascript", "typescript", "tsx", "rust", "go"}
# Languages where members of an object built inside a function commonly escape it (object
# literals, closures returning `{ get() {...} }`): a member use there may mean a method
# defined inside another function, so the lexical scope rule applies to bare names only.
_ESCAPING = {"javascript", "typescript", "tsx"}


class Bindings(DeclaredTypes):
    """A workspace's definitions and uses, indexed, and the rules that bind a use to the
    definitions it can mean (see the module docstring). :class:`seek.graph.lookup.CodeGraph`
    answers the queries over them."""

    def __init__(self, files: Mapping[str, FileFacts]) -> None:
        self.files = files
        self.by_name: dict[str, list[Definition]] = defaultdict(list)
        self.by_key: dict[tuple[str, str], Definition] = {}
        self.refs_by_name: Mapping[str, list[Reference]]
        if isinstance(files, LazyFacts):  # the uses of a name are found when asked for
            per_file = list(files.definitions.values())
            self.refs_by_name = _UsesByName(files)
        else:
            per_file = [facts.definitions for facts in files.values()]
            self.refs_by_name = _uses_by_name(files.values())
        for definitions in per_file:
            for definition in definitions:
                self.by_name[definition.name].append(definition)
                self.by_key.setdefault((definition.path, definition.qualified), definition)
        # a definition nested in a function (a local function, class or struct type) is
        # visible only inside that function: its qualified name -> the function's
        self.scope: dict[Definition, str] = {}
        for definitions in per_file:
            for definition in definitions:
                container = definition.container
                while container:
                    owner = self.by_key.get((definition.path, container))
                    if owner is not None and owner.kind in ("function", "method"):
                        self.scope[definition] = container
                        break
                    container = container.rpartition(".")[0]
        self._aliases: dict[str, dict[str, tuple[str, ...]]] = {}
        self._unresolved: dict[str, set[str]] = {}
        self._owner_cache: dict[tuple[str, str | None, str], list[Definition] | None] = {}
        self._ancestor_cache: dict[Definition, tuple[Definition, ...]] = {}
        self._inbound: dict[Definition, int] | None = None
        self._rank: np.ndarray | None = None
        self._alias_index: dict[str, set[str]] | None = None  # see CodeGraph.spellings

    def mentioning(self, names: Iterable[str]) -> Iterable[FileFacts]:
        """The files whose facts may hold one of ``names``: every file, or where the facts
        are decoded as asked for (:class:`LazyFacts`), those whose stored text holds one."""
        if isinstance(self.files, LazyFacts):
            return self.files.mentioning(names)
        return self.files.values()

    # -- binding --------------------------------------------------------------------------

    def candidates(self, ref: Reference) -> list[Definition]:
        """The definitions a use can mean, by the rules in the module docstring."""
        grammar = self.files[ref.path].grammar if ref.path in self.files else ""
        if grammar == "python" and not ref.member:
            for imp in self.files[ref.path].imports:
                # on an import line the name is the imported one, whatever the file defines;
                # elsewhere `b` of `from m import a as b` is m's a
                if imp.line == ref.line and ref.name in imp.names:
                    return self._imported_as(imp, ref.name, REEXPORT_DEPTH)
                if imp.alias == ref.name and imp.names and imp.names[0] != ref.name:
                    return self._imported_as(imp, imp.names[0], REEXPORT_DEPTH)
        named = self.by_name.get(ref.name)
        if not named:
            return []
        strict = grammar in _STRICT
        if not (ref.member and grammar in _ESCAPING):
            named = [d for d in named if self._visible(d, ref)]
        if ref.member:
            module_files = None
            if ref.qualifier:
                module_files = self.aliases(ref.path).get(ref.qualifier)
            elif grammar == "python" and ref.owner:
                module_files = self.module_chain(ref.path, ref.owner)
            if module_files:
                hit = [d for d in named if d.path in module_files and exported(d)]
                for module in module_files if not hit else ():
                    hit = self._imported(module, ref.name, reexport_depth(grammar))  # an index
                    if hit:
                        break
                if hit or grammar == "go":  # a Go package's member is in the package
                    return hit
            elif ref.qualifier and ref.qualifier in self.unresolved_names(ref.path):
                return []  # a member of a module from outside the workspace
            if ref.owner is not None:
                typed = self.owner_types(ref)
                if typed is not None:
                    found = self._members(typed, ref.name)
                    # a member a TypeScript type does not show comes from what the graph
                    # cannot read (a generic's instance, a mapped type): found by name
                    if found or not typed or grammar not in _ESCAPING:
                        return found or []
            members = [d for d in named if d.container is not None]
            if ref.name.startswith("__") and ref.qualifier not in ("self", "cls"):
                return []  # `super().__init__`, `x.__eq__`: the protocol, not one class's method
            if ref.qualifier:
                # `Type.member`, `Type::new`, `Type{field: v}`: the members of that type
                typed = [d for d in members if d.container == ref.qualifier]
                if typed:
                    return typed
            if ref.qualifier in ("self", "this", "cls", "Self") and ref.enclosing:
                owner = ref.enclosing.rpartition(".")[0]
                own = [d for d in members if d.container == owner] if owner else []
                own = own or [d for d in members if d.path == ref.path]
                if own:
                    return own
            pool = members if members or strict else named
            if len(pool) > 1 and grammar in _ESCAPING:
                pool = self.roots(pool)  # a member redeclared by subtypes: its first one
            if len(pool) > 1:  # the nearest only: same file, package, imports
                near = self._nearness(ref.path)
                best = min(near(d) for d in pool)
                pool = [d for d in pool if near(d) == best]
            return pool
        owner = self.by_key.get((ref.path, ref.enclosing)) if ref.enclosing else None
        while owner is not None and owner.kind in ("field", "constant", "variable"):
            # `tag = to_json` in a class body: the field's value is in the class's scope
            owner = self.by_key.get((ref.path, owner.container)) if owner.container else None
        if owner is not None and owner.kind in TYPE_KINDS and grammar == "python":
            # a class body sees its own names: `@prop.setter`, `alias = method`
            own = [d for d in named if d.container == owner.qualified and d.path == ref.path]
            if own:
                return own[:1]
        if strict:  # a bare name there is never a method or field (those need `x.`)
            named = [d for d in named if d.kind not in ("method", "field")]
        own = [d for d in named if d.path == ref.path]
        if own:
            return own
        imported = self._imported(ref.path, ref.name, reexport_depth(grammar))
        if imported:
            return imported
        if grammar == "go":
            folder = posixpath.dirname(ref.path)
            return [d for d in named if posixpath.dirname(d.path) == folder]
        return [] if strict else named

    def module_chain(self, path: str, owner: str) -> tuple[str, ...] | None:
        """The module files a dotted owner names in a Python file: `pkg.exceptions` of
        `pkg.exceptions.SSLError` after `import pkg` (``owner``: graph.types' written
        ``$pkg.exceptions``), each step a submodule of the package before it or a module it
        imports under that name (`from . import exceptions`); None when a step is not one
        (issue 45)."""
        first, *rest = re.split(r"[.>]", owner.removeprefix("$"))
        if not owner.startswith("$") or not rest:
            return None
        files = self._packages(path, first)
        for step in rest:
            if not files or not step.isidentifier():
                return None
            found: list[str] = []
            for module in files:
                if posixpath.basename(module) == "__init__.py":
                    folder = posixpath.dirname(module)
                    for candidate in (f"{folder}/{step}.py", f"{folder}/{step}/__init__.py"):
                        if candidate.lstrip("/") in self.files:
                            found.append(candidate.lstrip("/"))
                found += self.aliases(module).get(step, ())
            files = tuple(dict.fromkeys(found))
        return files or None

    def _packages(self, path: str, name: str) -> tuple[str, ...]:
        """The files ``name`` means in a Python file as a module: what it aliases, and for
        `import pkg.util` (which binds ``pkg``), the ``__init__.py`` of ``pkg`` itself."""
        found = list(self.aliases(path).get(name, ()))
        facts = self.files.get(path)
        for imp in facts.imports if facts is not None else ():
            if imp.alias != name or imp.names or not imp.files or "." not in imp.target:
                continue
            folder = posixpath.dirname(imp.files[0])
            if posixpath.basename(imp.files[0]) != "__init__.py":
                folder = posixpath.join(folder, "_")  # a module: its folder is a level down
            for _ in imp.target.split(".")[1:]:
                folder = posixpath.dirname(folder)
            package = posixpath.join(folder, "__init__.py")
            if package in self.files:
                found.append(package)
        return tuple(dict.fromkeys(found))

    def _outside(self, path: str, name: str, depth: int) -> bool:
        """Whether ``name`` in ``path`` is imported from outside the workspace, directly or
        through workspace modules that import it (`from .compat import cookielib`)."""
        if name in self.unresolved_names(path):
            return True
        facts = self.files.get(path)
        if facts is None or depth == 0 or any(d.name == name for d in facts.definitions):
            return False
        return any(
            self._outside(target, name, depth - 1)
            for imp in facts.imports
            if name in _local_names(facts.grammar, imp)
            for target in imp.files
        )

    def _visible(self, definition: Definition, ref: Reference) -> bool:
        scope = self.scope.get(definition)
        if scope is None:
            return True
        enclosing = ref.enclosing or ""
        return ref.path == definition.path and (
            enclosing == scope or enclosing.startswith(scope + ".")
        )

    def _imported(self, path: str, name: str, depth: int) -> list[Definition]:
        facts = self.files.get(path)
        if facts is None or depth == 0:
            return []
        for imp in facts.imports:
            if facts.grammar == "python" and imp.alias and imp.names:
                if name != imp.alias:  # `from m import a as b`: b is m's a
                    continue
                hit = self._imported_as(imp, imp.names[0], depth)
                if hit:
                    return hit
                continue
            if name not in imp.names and "*" not in imp.names:
                continue
            if facts.grammar == "python" and any(_module_name(f) == name for f in imp.files[1:]):
                return []  # `from pkg import mod`: the module itself, not a name inside it
            for target in imp.files:
                hit = [d for d in self.by_name.get(name, ()) if d.path == target and exported(d)]
                if hit:
                    return hit
                hit = self._imported(target, name, depth - 1)
                if hit:
                    return hit
        return []

    def _imported_as(self, imp: Import, name: str, depth: int) -> list[Definition]:
        if any(_module_name(f) == name for f in imp.files[1:]):
            return []  # `from pkg import mod`: the module itself
        for target in imp.files:
            hit = [d for d in self.by_name.get(name, ()) if d.path == target and exported(d)]
            if hit or (hit := self._imported(target, name, depth - 1)):
                return hit
        return []

    def unresolved_names(self, path: str) -> set[str]:
        """The local names bound by a file's imports from outside the workspace."""
        found = self._unresolved.get(path)
        if found is None:
            facts = self.files.get(path)
            found = (
                {n for i in facts.imports if not i.files for n in _local_names(facts.grammar, i)}
                if facts
                else set()
            )
            self._unresolved[path] = found
        return found

    def aliases(self, path: str) -> dict[str, tuple[str, ...]]:
        """Local names of imported modules in a file -> their files."""
        if path not in self._aliases:
            self._aliases[path] = {}  # an import cycle ends here
            found: dict[str, tuple[str, ...]] = {}
            for imp in self.files[path].imports if path in self.files else ():
                if imp.alias and imp.files and not imp.names:
                    found[imp.alias] = imp.files
                elif imp.alias and imp.files:  # `from pkg import mod as m`, if mod is a module
                    modules = tuple(f for f in imp.files if _module_name(f) == imp.names[0])
                    if modules:
                        found[imp.alias] = modules
                    continue
                for name in imp.names:
                    modules = tuple(f for f in imp.files if _module_name(f) == name)
                    if modules:
                        found[name] = modules
                    elif self.files[path].grammar in _ESCAPING:
                        # `import { z } from "./index"` where index does `import * as z`
                        # and `export { z }`: z is that namespace here too
                        for target in imp.files:
                            modules = self.aliases(target).get(name, ())
                            if modules:
                                found[name] = modules
                                break
            self._aliases[path] = found
        return self._aliases[path]

    # -- lookups --------------------------------------------------------------------------


def _local_names(grammar: str, imp: Import) -> tuple[str, ...]:
    """The names an import binds in its file: `from m import a as b` binds b, not a."""
    if grammar == "python" and imp.alias and imp.names:
        return (imp.alias,)
    return tuple(n for n in (imp.alias, *imp.names) if n)


def _module_name(path: str) -> str:
    stem = posixpath.basename(path).rsplit(".", 1)[0]
    return (
        posixpath.basename(posixpath.dirname(path))
        if stem in ("__init__", "index", "mod")
        else stem
    )


def _uses_by_name(files: Iterable[FileFacts]) -> dict[str, list[Reference]]:
    """Every use, by the name used, in file order."""
    found: dict[str, list[Reference]] = defaultdict(list)
    for facts in files:
        for ref in facts.references:
            found[ref.name].append(ref)
    return found


class _UsesByName(Mapping[str, list[Reference]]):
    """:func:`_uses_by_name` over facts decoded as asked for: a name's uses come from the
    files that mention it (the same uses in the same order), and iterating the names
    decodes every file once."""

    def __init__(self, files: LazyFacts) -> None:
        self._files = files
        self._named: dict[str, list[Reference]] = {}
        self._whole: dict[str, list[Reference]] | None = None

    def __getitem__(self, name: str) -> list[Reference]:
        if self._whole is not None:
            return self._whole[name]
        found = self._named.get(name)
        if found is None:
            found = [
                ref
                for facts in self._files.mentioning((name,))
                for ref in facts.references
                if ref.name == name
            ]
            self._named[name] = found
        if not found:  # as the whole mapping: a name nobody uses is not a key
            raise KeyError(name)
        return found

    def _all(self) -> dict[str, list[Reference]]:
        if self._whole is None:
            self._whole = _uses_by_name(self._files.values())
        return self._whole

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())
