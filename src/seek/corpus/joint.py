"""Several repositories of a corpus read as one code graph, their imports of each other
resolved (issue 45, deliver 2).

Each repository's files keep their paths behind the repository's name (``repo/path``; a
repository's name has no ``/``, :func:`seek.corpus.location.check_repo_name`), and each
file's imports are resolved first inside its own repository, exactly as a graph of that
repository alone resolves them (:class:`seek.graph.imports.Resolver` over all its stored
paths, its Go modules and npm packages). An import left unresolved there asks the corpus:
under the names a provider would answer it by (:func:`seek.corpus.import_names.import_keys`,
longest first), the repositories that provide one; one other repository providing it binds
the import to that repository's files, found under what the name denotes there (a Python
package's folder, a crate's root file, a gem's load path...), or by that repository's own
resolver where it already knows the name (Go module paths, npm package names, Java and C#
type paths). Uses then bind through such an import by the same rules as inside one
repository (aliases, re-exports, members through declared types: :mod:`seek.graph.binding`),
since the graph cannot tell the two apart.

One rule is stricter across repositories than inside one (:class:`JointGraph`): a use binds
to another repository's definition only through what the file imports - the imported name,
a member of an imported module, a member of a declared type - never by name alone, the last
resort inside one repository for a member whose owner is unknown (`x.get()` of an unknown
`x` would otherwise mean every importing repository's `get` of the library).

Where two repositories provide the name, the import binds to neither, and the file and name
are kept in :attr:`JointResolver.ambiguous` for the answer to say so.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from seek.corpus.import_names import import_keys
from seek.corpus.links import Link
from seek.graph import CodeGraph
from seek.graph.binding import _STRICT
from seek.graph.imports import Resolver
from seek.graph.model import Definition, FileFacts, Import, Reference
from seek.graph.resolve import reexport_depth
from seek.index.graph_rows import StoredFacts, rows_resolver

SEP = "/"


def joined(repo: str, path: str) -> str:
    return f"{repo}{SEP}{path}"


def split(path: str) -> tuple[str, str]:
    repo, _, rest = path.partition(SEP)
    return repo, rest


@dataclass(slots=True)
class RepoPart:
    """What of one repository goes into the graph: ``rows`` (path, definitions, facts) of
    the files read, and ``paths``, every file its graph has (its imports resolve over all
    of them, read or not)."""

    rows: Sequence[tuple[str, str, str]]
    paths: Iterable[str]
    resolver: Resolver = field(init=False)

    def __post_init__(self) -> None:
        self.resolver = rows_resolver(sorted(set(self.paths)), (r[2] for r in self.rows))


class JointResolver(Resolver):
    """Resolves a joint graph's imports (see the module docstring). ``providers``: (ecosystem,
    name) -> the repositories' claims to provide it."""

    def __init__(
        self, parts: Mapping[str, RepoPart], providers: Mapping[tuple[str, str], list[Link]]
    ) -> None:
        super().__init__([])
        self.parts = parts
        self.providers = providers
        self.ambiguous: dict[tuple[str, str], list[str]] = {}
        """(repo, import target) -> the repositories that all provide its name."""

    def resolve_file(self, facts: FileFacts) -> None:
        repo, _ = split(facts.path)
        facts.imports = [
            Import(i.path, i.line, i.target, i.names, i.alias, self._files(repo, facts.grammar, i))
            for i in facts.imports
        ]

    def _files(self, repo: str, grammar: str, imp: Import) -> tuple[str, ...]:
        own = self.parts.get(repo)
        if own is None:
            return ()
        _, rel = split(imp.path)
        local = Import(rel, imp.line, imp.target, imp.names, imp.alias)
        found = own.resolver.resolve(grammar, local)
        if found:
            return tuple(joined(repo, f) for f in found)
        keys = import_keys(grammar, imp.target)
        if keys is None:
            return ()
        ecosystem, names = keys
        for name in names:
            claims = [c for c in self.providers.get((ecosystem, name), ()) if c.repo != repo]
            if not claims:
                continue
            if len({c.repo for c in claims}) > 1:
                self.ambiguous[(repo, imp.target)] = sorted({c.repo for c in claims})
                return ()
            claim = claims[0]
            part = self.parts.get(claim.repo)
            if part is None:
                return ()  # a repository this question did not read
            return tuple(joined(claim.repo, f) for f in provided_files(part, claim, grammar, local))
        return ()


def provided_files(part: RepoPart, claim: Link, grammar: str, imp: Import) -> list[str]:
    """The files of the providing repository that ``imp`` (written in another) names."""
    resolver = part.resolver
    if claim.ecosystem == "python":
        base = claim.root[: -len(".py")] if claim.root.endswith(".py") else claim.root
        rest = imp.target.split(".")[1:]
        module = _python_file(resolver, posixpath.join(base, *rest))
        subs = [
            _python_file(resolver, posixpath.join(base, *rest, name))
            for name in imp.names
            if name != "*"
        ]
        return [f for f in [module, *subs] if f]
    if claim.ecosystem == "cargo":  # `use serde::de::X` is `use crate::de::X` in serde
        rest = imp.target.split("::", 1)[1] if "::" in imp.target else ""
        target = f"crate::{rest}" if rest else "crate"
        return resolver.resolve(grammar, Import(claim.root, imp.line, target, imp.names))
    if claim.ecosystem == "ruby":  # `require "rack/utils"` from the gem's load path
        base = posixpath.join(claim.root, imp.target)
        return [p for p in (base + ".rb", base) if p in resolver.paths][:1]
    # Go module paths, npm package names, Java and C# type paths: the provider's own
    # resolver reads them as it reads its own imports
    return list(resolver.resolve(grammar, imp))


def _python_file(resolver: Resolver, base: str) -> str | None:
    for candidate in (base + ".py", base + ".pyi", base + "/__init__.py"):
        if candidate in resolver.paths:
            return candidate
    return None


class JointGraph(CodeGraph):
    """A graph over several repositories: binding as inside one, but across repositories
    only through imports (see the module docstring)."""

    def candidates(self, ref: Reference) -> list[Definition]:
        found = super().candidates(ref)
        repo = split(ref.path)[0]
        if all(split(d.path)[0] == repo for d in found) or self._through_imports(ref, found):
            return found
        return [d for d in found if split(d.path)[0] == repo]

    def _through_imports(self, ref: Reference, found: list[Definition]) -> bool:
        grammar = self.files[ref.path].grammar if ref.path in self.files else ""
        if not ref.member:
            # a bare name binds through the file's imports only, in these languages
            return grammar in _STRICT or bool(
                self._imported(ref.path, ref.name, reexport_depth(grammar))
            )
        if ref.qualifier and self.aliases(ref.path).get(ref.qualifier):
            return True  # a member of an imported module
        if grammar == "python" and ref.owner and self.module_chain(ref.path, ref.owner):
            return True  # of a submodule of one (`urllib3.exceptions.SSLError`)
        if ref.owner is not None:
            typed = self.owner_types(ref)
            members = self._members(typed, ref.name) if typed else None
            return bool(members) and set(found) <= set(members)
        return False


SHARED_SCOPE = (".go",)
"""Languages whose package is a folder whose files share one scope: a file uses what the
others declare without importing it. (Java's and Kotlin's packages too, but the graph types
no chained member there, `command.flags().lookup()`, so their package mates would add
nothing a joint graph binds.)"""


def package_mates(importing: Iterable[str], every: Iterable[str]) -> set[str]:
    """The files of ``every`` (one repository's paths) in the package of a file of
    ``importing``, in the languages of :data:`SHARED_SCOPE`. A file that imports nothing of
    another repository still reaches it through what its package's files declare: cobra's
    tests call ``cmd.Flags().Lookup(...)``, pflag's method, on the ``*pflag.FlagSet`` that
    cobra's command.go returns, without importing pflag."""
    folders = {(posixpath.dirname(p), posixpath.splitext(p)[1]) for p in importing
               if p.endswith(SHARED_SCOPE)}  # fmt: skip
    if not folders:
        return set()
    return {p for p in every if (posixpath.dirname(p), posixpath.splitext(p)[1]) in folders}


def joint_graph(
    parts: Mapping[str, RepoPart], providers: Mapping[tuple[str, str], list[Link]]
) -> tuple[CodeGraph, JointResolver]:
    """One graph over ``parts`` (repository -> what of it is read)."""
    resolver = JointResolver(parts, providers)
    rows = [
        (joined(repo, path), definitions, data)
        for repo, part in parts.items()
        for path, definitions, data in part.rows
    ]
    return JointGraph(StoredFacts(rows, resolver=resolver)), resolver
