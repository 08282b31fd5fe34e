"""Import statements, and the workspace files they name where the language makes that
decidable (issue 28, deliver 1): Python absolute and relative modules, JS/TS relative paths
and `require`, Go package folders (under the module path of go.mod), Rust `mod`,
`use crate::/self::/super::` and `use other_crate::` of a workspace crate (issue 45), Java
and C# type paths, C/C++ quoted includes, Ruby `require_relative`; JS/TS bare specifiers of
a package.json inside the workspace (seek.graph.packages, issue 44).  Anything else
(packages from outside the workspace, computed paths) stays unresolved: an empty `files`.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator

import tree_sitter

from seek.graph.model import FileFacts, Import
from seek.graph.packages import Package, resolve_package

_JS = {"javascript", "typescript", "tsx"}
_JS_SUFFIXES = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".d.ts")


def _text(node: tree_sitter.Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""


def _unquote(text: str) -> str:
    return text.strip().strip("\"'`<>")


Found = list[dict[str, list[tree_sitter.Node]]]
"""The captures of each match of a grammar's :func:`query_text` in a file, in the order found:
the extractor runs that query in its one walk of the tree (extract._one_pass)."""


def query_text(grammar: str) -> str:
    """The query whose matches the grammar's reader reads ("" for a reader that walks the
    top of the tree itself): at any depth, since imports inside functions bind names too."""
    return _QUERIES.get(grammar, "")


def read_imports(path: str, grammar: str, root: tree_sitter.Node, found: Found) -> list[Import]:
    """``found``: the matches of :func:`query_text` in the file."""
    reader = _READERS.get(grammar)
    return list(reader(path, root, found)) if reader else []


def _walk(root: tree_sitter.Node, kinds: set[str], depth: int = 64):
    """Nodes of the given kinds, not descending into them (imports sit near the top)."""
    stack = [(root, 0)]
    while stack:
        node, level = stack.pop()
        if node.type in kinds:
            yield node
            continue
        if level < depth:
            stack.extend((c, level + 1) for c in reversed(node.named_children))


def _outermost(found: Found):
    """The matched nodes in file order, none inside another: what `_walk` yields without its
    depth limit, found by a query (walking a Rust or C tree node by node in Python cost more
    than the rest of its extraction)."""
    end = -1
    nodes = [captures["node"][0] for captures in found]
    for node in sorted(nodes, key=lambda n: (n.start_byte, -n.end_byte)):
        if node.start_byte < end:
            continue  # inside a node already yielded, which `_walk` does not descend into
        end = node.end_byte
        yield node


def _python(path, root, found: Found):
    # by query, at any depth: imports inside functions and try blocks bind names too
    for node in _outermost(found):  # (an import never holds another)
        line = node.start_point.row + 1
        if node.type == "import_statement":
            for child in node.named_children:
                if child.type == "aliased_import":
                    target = _text(child.child_by_field_name("name"))
                    alias = _text(child.child_by_field_name("alias"))
                else:
                    target = _text(child)
                    alias = target.split(".")[0]
                yield Import(path, line, target, (), alias)
            continue
        module = node.child_by_field_name("module_name")
        names: list[str] = []
        for child in node.named_children:
            if child == module:
                continue
            if child.type == "wildcard_import":
                names.append("*")
            elif child.type == "aliased_import":  # `from . import typing as ft`: its own row
                original = _text(child.child_by_field_name("name"))
                alias = _text(child.child_by_field_name("alias"))
                yield Import(path, line, _text(module), (original,), alias)
            elif child.type == "dotted_name":
                names.append(_text(child))
        if names:
            yield Import(path, line, _text(module), tuple(names))


_JS_IMPORTS = """
(import_statement source: (string) @source) @stmt
(export_statement source: (string) @source) @stmt
((call_expression function: (identifier) @fn arguments: (arguments . (string) @source)) @stmt
 (#eq? @fn "require"))
"""


def _js(path, root, found: Found):
    """ES imports and re-exports, and `require("...")` calls, found by one query (a walk in
    Python cost a third of a large TypeScript tree's extraction)."""
    for captures in found:
        node, source = captures["stmt"][0], captures["source"][0]
        line = node.start_point.row + 1
        target = _unquote(_text(source))
        if node.type == "call_expression":
            names, alias = _declared(node.parent)
            yield Import(path, line, target, names, alias)
            continue
        names, alias = [], None
        for clause in node.named_children:
            if clause.type not in ("import_clause", "export_clause"):
                continue
            for item in [clause] if clause.type == "export_clause" else clause.named_children:
                if item.type == "identifier":
                    names.append(_text(item))
                elif item.type == "namespace_import":
                    alias = _text(item.named_children[-1]) if item.named_children else None
                elif item.type in ("named_imports", "export_clause"):
                    for spec in item.named_children:
                        names.append(_text(spec.child_by_field_name("name")))
        if node.type == "export_statement" and not names and alias is None:
            names = ["*"]  # `export * from "./x"`: everything x exports passes through
        yield Import(path, line, target, tuple(n for n in names if n), alias)


def _declared(node: tree_sitter.Node | None) -> tuple[tuple[str, ...], str | None]:
    """What `const X = require(...)` or `const {a, b} = require(...)` binds."""
    if node is None or node.type != "variable_declarator":
        return (), None
    name = node.child_by_field_name("name")
    if name is not None and name.type == "identifier":
        return (), _text(name)
    if name is not None and name.type == "object_pattern":
        names = []
        for item in name.named_children:
            key = item.child_by_field_name("key") or item
            names.append(_text(key).split(":")[0].strip())
        return tuple(names), None
    return (), None


def _go(path, root, found: Found):
    # by query: Go allows imports at the top of a file only, so at any depth is the same set,
    # without walking the first levels of every function in Python
    for spec in _outermost(found):
        alias = spec.child_by_field_name("name")
        target = _unquote(_text(spec.child_by_field_name("path")))
        parts = target.split("/")
        # a major-version suffix is not the package name: example.com/chi/v5 is `chi`
        default = parts[-2] if len(parts) > 1 and re.fullmatch(r"v\d+", parts[-1]) else parts[-1]
        yield Import(path, spec.start_point.row + 1, target, (), _text(alias) or default)


def _rust(path, root, found: Found):
    for node in _outermost(found):
        line = node.start_point.row + 1
        if node.type == "mod_item":
            if node.child_by_field_name("body") is None:
                yield Import(path, line, "mod " + _text(node.child_by_field_name("name")))
            continue
        text = re.sub(r"\s+", "", _text(node.child_by_field_name("argument")))
        for target, names in _rust_use_paths(text):
            yield Import(path, line, target, names)


def _rust_use_paths(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """`crate::a::{b::C, D}` -> [("crate::a::b", ("C",)), ("crate::a", ("D",))]."""
    if "{" not in text:
        head, _, last = text.rpartition("::")
        last = last.split(" as ")[0].split("as")[0] if " as " in last else last
        return [(head, (last,))] if head else []
    prefix, _, rest = text.partition("{")
    rest = rest.rsplit("}", 1)[0]
    out, depth, item = [], 0, ""
    for char in rest + ",":
        if char == "," and depth == 0:
            if item:
                for target, names in _rust_use_paths(prefix + item):
                    out.append((target, names))
            item = ""
            continue
        depth += {"{": 1, "}": -1}.get(char, 0)
        item += char
    return out


def _dotted(path: str, nodes) -> Iterator[Import]:
    for node in nodes:
        target = ""
        for child in node.named_children:
            if child.type in ("scoped_identifier", "qualified_name", "identifier", "name"):
                target = _text(child)
        if target:
            yield Import(path, node.start_point.row + 1, target, (target.split(".")[-1],))


def _java(path, root, found: Found):
    # by query: Java's imports are at the top of a file only (as Go's)
    return _dotted(path, _outermost(found))


def _csharp(path, root, found: Found):
    # the top of the tree: a using directive may sit in a namespace (a deeper one is not read)
    return _dotted(path, _walk(root, {"using_directive"}, depth=3))


def _c(path, root, found: Found):
    for node in _outermost(found):
        target = node.child_by_field_name("path")
        if target is not None and target.type == "string_literal":
            yield Import(path, node.start_point.row + 1, _unquote(_text(target)))


def _ruby(path, root, found: Found):
    for node in _walk(root, {"call"}, depth=3):
        if _text(node.child_by_field_name("method")) == "require_relative":
            args = node.child_by_field_name("arguments")
            if args is not None and args.named_children:
                target = "./" + _unquote(_text(args.named_children[0]))
                yield Import(path, node.start_point.row + 1, target)


_READERS = {
    "python": _python,
    "javascript": _js,
    "typescript": _js,
    "tsx": _js,
    "go": _go,
    "rust": _rust,
    "java": _java,
    "csharp": _csharp,
    "c": _c,
    "cpp": _c,
    "ruby": _ruby,
}
_QUERIES = {
    "python": "[(import_statement) (import_from_statement)] @node",
    "javascript": _JS_IMPORTS,
    "typescript": _JS_IMPORTS,
    "tsx": _JS_IMPORTS,
    "go": "(import_spec) @node",
    "rust": "[(mod_item) (use_declaration)] @node",
    "java": "(import_declaration) @node",
    "c": "(preproc_include) @node",
    "cpp": "(preproc_include) @node",
}


class Resolver:
    """Maps import targets to workspace files; built once per graph from its file list."""

    def __init__(
        self,
        paths: list[str],
        go_modules: dict[str, str] | None = None,
        packages: Iterable[Package] = (),
    ) -> None:
        self.paths = set(paths)
        self.folders: dict[str, list[str]] = {}
        for path in paths:
            self.folders.setdefault(posixpath.dirname(path), []).append(path)
        # dotted module path ("pkg.sub.mod") -> file, for every folder depth: a suffix
        # match finds `pkg.mod` whether the source root is the workspace, src/ or deeper.
        self.modules: dict[str, list[str]] = {}
        for path in paths:
            if path.endswith((".py", ".pyi")):
                stem = path.rsplit(".", 1)[0]
                if stem.endswith("/__init__") or stem == "__init__":
                    stem = stem[: -len("__init__")].rstrip("/")
                parts = stem.split("/")
                for i in range(len(parts)):
                    self.modules.setdefault(".".join(parts[i:]), []).append(path)
        self.go_modules = go_modules or {}  # folder of a go.mod -> its module path
        # a workspace's crates by name (issue 45: a cargo workspace's crates `use` each
        # other): the folder of `<crate>/src/lib.rs`, named as `use` writes it; Cargo.toml is
        # not indexed, and a workspace member's folder is named after its crate by custom
        self.crates: dict[str, str] = {}
        for path in paths:
            if path.endswith("/src/lib.rs"):
                crate = posixpath.dirname(posixpath.dirname(path))
                self.crates.setdefault(posixpath.basename(crate).replace("-", "_"), crate)
        self.packages: dict[str, list[Package]] = {}  # package name -> workspace packages
        for package in packages:
            if package not in self.packages.setdefault(package[1], []):
                self.packages[package[1]].append(package)

    def resolve_file(self, facts: FileFacts) -> None:
        """Each of the file's imports with the workspace files it resolves to (they are
        extracted and stored as written)."""
        facts.imports = [
            Import(i.path, i.line, i.target, i.names, i.alias, self.resolve(facts.grammar, i))
            for i in facts.imports
        ]

    def resolve(self, grammar: str, imp: Import) -> tuple[str, ...]:
        method = getattr(
            self,
            "_"
            + {"tsx": "javascript", "typescript": "javascript", "cpp": "c", "csharp": "java"}.get(
                grammar, grammar
            ),
            None,
        )
        return tuple(method(imp)) if method else ()

    def _python(self, imp: Import) -> list[str]:
        target = imp.target
        if target.startswith("."):
            dots = len(target) - len(target.lstrip("."))
            folder = posixpath.dirname(imp.path)
            for _ in range(dots - 1):
                folder = posixpath.dirname(folder)
            rest = target[dots:].replace(".", "/")
            base = posixpath.join(folder, rest) if rest else folder
            found = self._python_file(base)
            subs = [self._python_file(posixpath.join(base, n)) for n in imp.names if n != "*"]
            return [f for f in [found, *subs] if f]
        found = self._module(target)
        subs = [self._module(f"{target}.{n}") for n in imp.names if n != "*"]
        return [f for f in [found, *subs] if f]

    def _python_file(self, base: str) -> str | None:
        base = base.strip("/")
        for candidate in (base + ".py", base + ".pyi", base + "/__init__.py"):
            if candidate.lstrip("./") in self.paths:
                return candidate.lstrip("./")
        return None

    def _module(self, dotted: str) -> str | None:
        found = self.modules.get(dotted)
        return min(found, key=len) if found else None

    def _javascript(self, imp: Import) -> list[str]:
        if not imp.target.startswith("."):
            found = resolve_package(self.packages, self.paths, imp.path, imp.target)
            return [found] if found else []
        base = posixpath.normpath(posixpath.join(posixpath.dirname(imp.path), imp.target))
        stem = base.rsplit(".", 1)[0] if base.endswith((".js", ".mjs", ".cjs", ".jsx")) else base
        for candidate in (
            [base] + [stem + s for s in _JS_SUFFIXES] + [base + "/index" + s for s in _JS_SUFFIXES]
        ):
            if candidate in self.paths:
                return [candidate]
        return []

    def _go(self, imp: Import) -> list[str]:
        # the longest module path that prefixes the import; of equal ones, the module the
        # importing file belongs to (its nearest go.mod), as the go command resolves it
        def order(item: tuple[str, str]) -> tuple[int, int]:
            folder, module = item
            own = not folder or imp.path.startswith(folder + "/")
            return -len(module), -(len(folder) + 1 if own else 0)

        for folder, module in sorted(self.go_modules.items(), key=order):
            if imp.target == module or imp.target.startswith(module + "/"):
                rest = imp.target[len(module) :].strip("/")
                package = posixpath.join(folder, rest).strip("/") if folder else rest
                return [p for p in self.folders.get(package, []) if p.endswith(".go")]
        return []

    def _rust(self, imp: Import) -> list[str]:
        folder = posixpath.dirname(imp.path)
        stem = posixpath.basename(imp.path).rsplit(".", 1)[0]
        own = folder if stem in ("mod", "lib", "main") else posixpath.join(folder, stem)
        if imp.target.startswith("mod "):
            name = imp.target[4:]
            return self._first(f"{own}/{name}.rs", f"{own}/{name}/mod.rs")
        parts = imp.target.split("::")
        if parts[0] == "crate":
            base, parts = self._crate_root(folder), parts[1:]
        elif parts[0] == "self":
            base, parts = own, parts[1:]
        elif parts[0] == "super":
            base = posixpath.dirname(own)
            parts = parts[1:]
            while parts and parts[0] == "super":
                base, parts = posixpath.dirname(base), parts[1:]
        elif parts[0] in self.crates:  # another crate of the workspace
            base, parts = self.crates[parts[0]] + "/src", parts[1:]
        else:
            return []
        # `use crate::a::b::C`: C may be an item of a/b.rs or a module a/b/C.rs
        for cut in range(len(parts) + 1, 0, -1):
            rel = "/".join(parts[:cut])
            found = self._first(f"{base}/{rel}.rs", f"{base}/{rel}/mod.rs") if rel else []
            if found:
                return found
        return self._first(f"{base}/lib.rs", f"{base}/main.rs", f"{base}/mod.rs")

    def _crate_root(self, folder: str) -> str:
        probe = folder
        while True:
            if (
                f"{probe}/lib.rs".lstrip("/") in self.paths
                or f"{probe}/main.rs".lstrip("/") in self.paths
            ):
                return probe
            if not probe:
                return folder
            probe = posixpath.dirname(probe)

    def _first(self, *candidates: str) -> list[str]:
        for candidate in candidates:
            candidate = posixpath.normpath(candidate).lstrip("./") if candidate else candidate
            if candidate in self.paths:
                return [candidate]
        return []

    def _java(self, imp: Import) -> list[str]:
        tail = imp.target.replace(".", "/")
        return [p for p in self.paths if p.rsplit(".", 1)[0].endswith(tail)][:1]

    def _c(self, imp: Import) -> list[str]:
        local = posixpath.normpath(posixpath.join(posixpath.dirname(imp.path), imp.target))
        if local in self.paths:
            return [local]
        return sorted(p for p in self.paths if p.endswith("/" + imp.target) or p == imp.target)[:1]

    def _ruby(self, imp: Import) -> list[str]:
        base = posixpath.normpath(posixpath.join(posixpath.dirname(imp.path), imp.target))
        return self._first(base, base + ".rb")
