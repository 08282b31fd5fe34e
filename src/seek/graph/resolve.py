"""Declared types at binding time (issue 47; issue 44 for TypeScript): the type expressions
graph.types read from each file (``FileFacts.types``, a use's ``owner``) resolved to the
workspace's type definitions, and a type's members found through the types it extends or
embeds.  A mixin of :class:`seek.graph.binding.Bindings`, whose name binding it calls back
for the names an expression starts from.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from seek.graph.model import Definition, FileFacts, Reference
from seek.graph.types import EXTERNAL, PARAM, TYPE_MARK

REEXPORT_DEPTH = 3
JS_REEXPORT_DEPTH = 6
"""A JS/TS package's index re-exports through its folders' index files (`export * from
"./links"`): trpc's cross-package uses need 6 (issue 45: recall 0.41 -> 0.58)."""


def reexport_depth(grammar: str) -> int:
    """How many re-exporting files a bare name's import is followed through."""
    return JS_REEXPORT_DEPTH if grammar in ("javascript", "typescript", "tsx") else REEXPORT_DEPTH


TYPE_KINDS = {"class", "interface", "type", "struct", "enum", "trait", "object"}
# What a name used as an owner may mean whose members are its definitions: a type, or a
# TypeScript namespace (`StandardSchemaV1.Props`)
_OWNERS = TYPE_KINDS | {"module"}
# Languages whose types are declared statically: what a type from outside the workspace
# holds or returns is from outside too, and a name bound nowhere is a builtin.
STATIC = frozenset(("go", "typescript", "tsx", "javascript"))


class DeclaredTypes:
    """Type expressions resolved over a workspace (see the module docstring)."""

    files: Mapping[str, FileFacts]
    by_name: dict[str, list[Definition]]
    _owner_cache: dict[tuple[str, str | None, str], list[Definition] | None]
    _ancestor_cache: dict[Definition, tuple[Definition, ...]]

    # the name binding this resolution starts from (graph.binding.Bindings)
    def candidates(self, ref: Reference) -> list[Definition]:
        raise NotImplementedError

    def aliases(self, path: str) -> dict[str, tuple[str, ...]]:
        raise NotImplementedError

    def _imported(self, path: str, name: str, depth: int) -> list[Definition]:
        raise NotImplementedError

    def _outside(self, path: str, name: str, depth: int) -> bool:
        raise NotImplementedError

    # -- declared types (graph.types) -------------------------------------------------------

    def owner_types(self, ref: Reference) -> list[Definition] | None:
        """The workspace types a member use's owner has: None when unknown, [] when its type
        is known and is not the workspace's (a builtin, a literal, an outside package)."""
        key = (ref.path, ref.enclosing, ref.owner or "")
        if key not in self._owner_cache:
            self._owner_cache[key] = None  # a cycle through this key reads as unknown
            self._owner_cache[key] = self._resolve(ref.path, ref.enclosing, ref.owner or "")
        return self._owner_cache[key]

    def _resolve(
        self, path: str, enclosing: str | None, expr: str, depth: int = 0
    ) -> list[Definition] | None:
        if depth > 6 or not expr:
            return None
        head, *steps = expr.split(">")
        if steps and head.startswith("$") and head[1:] in self.aliases(path):
            # `z.number()` where z is a namespace imported by name: a member of the module
            head, steps = f"{head[1:]}.{steps[0]}", steps[1:]
            head = head if head.endswith("()") else "$" + head
        types = self._head(path, enclosing, head, depth)
        for step in steps:
            if types is None:
                return None
            if not types:  # outside stays outside where types are static (types._step)
                return [] if self._grammar(path) in STATIC else None
            call = step.endswith("()")
            name = step[:-2] if call else step
            found: list[Definition] = []
            for owner in types:
                members = self._members([owner], name)
                if members is None:
                    return None
                exprs = [(m.path, m.container, self._type(m)) for m in members]
                if not members and name.startswith("__") and name.endswith("__"):
                    continue  # `self.__dict__`: the object model's, not the workspace's
                if not members:  # `self.x = ...` in a method: an attribute, not a definition
                    facts = self.files.get(owner.path)
                    exprs = [(owner.path, None, facts.types.get(f"{owner.qualified}.{name}"))]
                for where, scope, written in exprs:
                    if not written:
                        return None
                    if call or "," in written:
                        written = written.split(",")[0]
                    resolved = self._resolve(where, scope, written, depth + 1)
                    if resolved is None:
                        return None
                    found.extend(resolved)
            types = found
        return types

    def _grammar(self, path: str) -> str:
        facts = self.files.get(path)
        return facts.grammar if facts is not None else ""

    def _type(self, definition: Definition) -> str | None:
        facts = self.files.get(definition.path)
        return facts.types.get(definition.qualified) if facts else None

    def _head(
        self, path: str, enclosing: str | None, head: str, depth: int
    ) -> list[Definition] | None:
        if head == EXTERNAL:
            return []
        if "|" in head:  # a TypeScript union: the members of each of its types
            out: list[Definition] = []
            for part in head.split("|"):
                resolved = self._head(path, enclosing, part, depth)
                if resolved is None:
                    return None
                out.extend(resolved)
            return out
        if PARAM in head and not head.startswith(PARAM):  # `T@i`: parameter i of type T
            base, _, index = head.rpartition(PARAM)
            owners = self._head(path, enclosing, base, depth)
            if not owners:
                return owners
            out = []
            for owner in owners:
                written = self.files[owner.path].types.get(f"{owner.qualified}{PARAM}{index}")
                resolved = self._resolve(owner.path, owner.container, written or "", depth + 1)
                if resolved is None:
                    return None
                out.extend(resolved)
            return out
        if head == "^":  # Python super(): the bases of the enclosing method's class
            cls = (enclosing or "").rpartition(".")[0]
            facts = self.files.get(path)
            bases = facts.bases.get(cls) if facts and cls else None
            if bases is None:
                return None
            out = []
            for base in bases:
                resolved = self._resolve(path, None, base, depth + 1)
                if resolved is None:
                    return None
                out.extend(resolved)
            return out
        if "()" in head:  # what calling a function (or a type: a constructor) gives
            callee, _, index = head.partition("()")
            nth = int(index[1:]) if index.startswith("#") else 0
            bound = self._bind(path, enclosing, callee)
            if bound is None:
                return None
            out = []
            for d in bound:
                if d.kind in TYPE_KINDS:
                    out.append(d)
                    continue
                written = self._type(d) if d.kind in ("function", "method") else None
                parts = written.split(",") if written else []
                if nth >= len(parts) or not parts[nth]:
                    return None
                resolved = self._resolve(d.path, d.container, parts[nth], depth + 1)
                if resolved is None:
                    return None
                out.extend(resolved)
            return out
        value = head.startswith("$")
        if value or head.startswith(TYPE_MARK):
            head = head[1:]
        bound = self._bind(path, enclosing, head)
        if bound is None:
            return None
        if not value and any(d.kind in TYPE_KINDS for d in bound):
            # a name written as a type means its type declaration (TypeScript merges an
            # interface and a constant of one name: `const ZodString: $constructor<ZodString>`)
            bound = [d for d in bound if d.kind in TYPE_KINDS]
        out = []
        for d in bound:
            if d.kind in _OWNERS:
                out.append(d)  # `Type.member`, or a type named where a type is written
            elif value and d.kind in ("constant", "variable", "field"):
                written = self._type(d)
                resolved = (
                    self._resolve(d.path, d.container, written, depth + 1) if written else None
                )
                if resolved is None:
                    return None
                out.extend(resolved)
            else:
                return None  # a function value, or a name that is not a type
        return out

    def _bind(self, path: str, enclosing: str | None, name: str) -> list[Definition] | None:
        """What a name written in ``path`` means, for typing: None when unknown, [] when it
        comes from outside the workspace."""
        if "." in name:
            module, _, rest = name.partition(".")
            files = self.aliases(path).get(module)
            if files:
                hit = [d for d in self.by_name.get(rest, ()) if d.path in files and exported(d)]
                for target in files if not hit else ():
                    hit = self._imported(target, rest, REEXPORT_DEPTH)
                    if hit:
                        break
                return hit or None
            return [] if self._outside(path, module, REEXPORT_DEPTH) else None
        if self._outside(path, name, REEXPORT_DEPTH):
            return []
        if name in self.aliases(path):
            return None  # a module, not a value of a type
        found = self.candidates(Reference(path, name, 0, 0, enclosing))
        if not found and self._grammar(path) in STATIC:
            # Go: not local, not in the package, not a workspace import: outside; an ES
            # module's name bound nowhere in it is a global (`JSON`, `Promise`, `Array`)
            return []
        return found or None

    def roots(self, members: list[Definition]) -> list[Definition]:
        """Of same-named members, those that no other one's type is a base of: where the
        owner's type is unknown, a member that subtypes redeclare (TypeScript's `_zod` of
        every schema interface) means its first declaration, as an editor's go-to-definition
        on the base type would land (issue 44)."""
        owners = {(d.path, d.container) for d in members}
        return [
            d
            for d in members
            if not any((b.path, b.qualified) in owners for b in self._ancestors(d))
        ]

    def _ancestors(self, member: Definition) -> tuple[Definition, ...]:
        """The types a member's own type extends, transitively (resolvable ones only)."""
        owner = self.by_key.get((member.path, member.container or ""))
        if owner is None or owner.kind not in TYPE_KINDS:
            return ()
        cached = self._ancestor_cache.get(owner)
        if cached is not None:
            return cached
        self._ancestor_cache[owner] = ()  # a cycle of bases ends here
        found: dict[Definition, None] = {}
        facts = self.files.get(owner.path)
        for base in facts.bases.get(owner.qualified, ()) if facts else ():
            for resolved in self._resolve(owner.path, None, base) or ():
                if resolved != owner:
                    found[resolved] = None
                    probe = Definition(resolved.path, "", "field", 0, 0, 0, resolved.qualified)
                    found.update(dict.fromkeys(self._ancestors(probe)))
        self._ancestor_cache[owner] = tuple(found)
        return self._ancestor_cache[owner]

    def _members(
        self, types: list[Definition], name: str, depth: int = 0
    ) -> list[Definition] | None:
        """Members named ``name`` of these types or the types they embed or extend; None
        when a base could not be resolved and nothing was found."""
        found: list[Definition] = []
        unknown = False
        for owner in types:
            go = self.files[owner.path].grammar == "go" if owner.path in self.files else False
            folder = posixpath.dirname(owner.path)
            own = [
                d
                for d in self.by_name.get(name, ())
                if d.container == owner.qualified
                and (d.path == owner.path or (go and posixpath.dirname(d.path) == folder))
            ]
            if own:
                found.extend(own)
                continue
            facts = self.files.get(owner.path)
            for base in facts.bases.get(owner.qualified, ()) if facts and depth < 6 else ():
                resolved = self._resolve(owner.path, None, base, depth + 1)
                inherited = self._members(resolved, name, depth + 1) if resolved else resolved
                if inherited is None:
                    unknown = True
                else:
                    found.extend(inherited)
        return found if found or not unknown else None


def exported(definition: Definition) -> bool:
    """A module-level name another file can import: a top-level definition, or a CommonJS
    `exports.name = ...` / `module.exports.name = ...` member."""
    return definition.container is None or definition.container in ("exports", "module.exports")
