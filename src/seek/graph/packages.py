"""JS/TS imports of a workspace package by its own name (issue 44): `import * as z from
"zod/v4"` in a test of the package `zod`, or a monorepo package importing its sibling. Node
resolves such a bare specifier through node_modules to the package's folder, then through
the `exports` of its package.json (else `main`); seek resolves it to the package.json of that
name inside the workspace, and maps each target to the *source* file the graph has: an
`exports` target usually names a build output (`./dist/index.js`, `./index.d.cts`) whose
source is the `.ts` under `src/` at the same relative path.

A package is the compact tuple :func:`read_package` makes of a package.json, stored with the
graph rows of the files beneath it (seek.index.graph_rows), as a Go file's row carries its
go.mod module path: (folder, name, exports, mains), where exports is a list of (subpath,
targets) with the conditions of each entry flattened in their written order (a condition
seek cannot evaluate, such as `"@zod/source"`, is as good as `"import"`: the first target
that maps to a workspace file wins) and build extensions dropped (`./dist/a.js` ->
`./dist/a`, the source suffixes are tried on resolution).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterable

MAX_MANIFEST_BYTES = 1 << 20  # a package.json is workspace content: read it bounded
_MAX_ENTRIES = 256
_MAX_TARGETS = 8
_MAX_DEPTH = 8
# where a build writes its output; a target under them names a source under src/
BUILD_FOLDERS = {"dist", "lib", "build", "out", "esm", "cjs", "es", "umd", "types"}
_BUILD_SUFFIXES = (".d.ts", ".d.cts", ".d.mts", ".js", ".cjs", ".mjs", ".jsx")
_SOURCES = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
_DECLARATIONS = (".d.ts", ".d.mts", ".d.cts")

Package = tuple[str, str, list[tuple[str, list[str]]], list[str]]
"""(folder of the package.json, package name, exports as (subpath, targets), mains)."""


def read_package(folder: str, data: bytes) -> Package | None:
    """The package a package.json in ``folder`` declares, or None without a name (a stub
    such as ``{"type": "module"}``) or when it is not a JSON object."""
    if len(data) > MAX_MANIFEST_BYTES:
        return None
    try:
        manifest = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(manifest, dict):
        return None
    name = manifest.get("name")
    if not isinstance(name, str) or not name or len(name) > 214:  # npm's limit
        return None
    mains = _compact(
        manifest[key]
        for key in ("source", "module", "main", "types", "typings")
        if isinstance(manifest.get(key), str)
    )
    return folder, name, _exports(manifest.get("exports")), mains


def _exports(value: object) -> list[tuple[str, list[str]]]:
    """`exports` as (subpath, targets): a string or array is the "." entry; an object whose
    keys start with "." maps subpaths, any other object is the conditions of "."."""
    if isinstance(value, dict):
        if value and all(isinstance(k, str) and k.startswith(".") for k in value):
            items = list(value.items())[:_MAX_ENTRIES]
            return [(k, _compact(_targets(v))) for k, v in items]
        return [(".", _compact(_targets(value)))]
    if isinstance(value, (str, list)):
        return [(".", _compact(_targets(value)))]
    return []


def _targets(value: object, depth: int = 0) -> list[str]:
    if isinstance(value, str):
        return [value]
    if depth >= _MAX_DEPTH:
        return []
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [t for item in items for t in _targets(item, depth + 1)]


def _compact(targets: Iterable[str]) -> list[str]:
    """Targets without build extensions, each once, in order (bounded)."""
    out: list[str] = []
    for target in targets:
        for suffix in _BUILD_SUFFIXES:
            if target.endswith(suffix):
                target = target[: -len(suffix)]
                break
        if target not in out:
            out.append(target)
        if len(out) >= _MAX_TARGETS:
            break
    return out


def split_specifier(specifier: str) -> tuple[str, str]:
    """("@scope/name" or "name", subpath "." or "./rest") of a bare specifier."""
    if specifier.startswith("@"):
        parts = specifier.split("/", 2)
        name, rest = "/".join(parts[:2]), parts[2] if len(parts) > 2 else ""
    else:
        name, _, rest = specifier.partition("/")
    return name, "./" + rest if rest else "."


def resolve_package(
    packages: dict[str, list[Package]], paths: set[str], importer: str, specifier: str
) -> str | None:
    """The workspace file a bare ``specifier`` names through a workspace package.json, or
    None. Of packages of one name, the one holding the importer (Node's self-reference),
    else the one nearest the workspace root."""
    name, subpath = split_specifier(specifier)
    found = packages.get(name)
    if not found:
        return None
    own = [p for p in found if not p[0] or importer.startswith(p[0] + "/")]
    package = max(own, key=lambda p: len(p[0])) if own else min(found, key=lambda p: p[0])
    for target in _entry(package, subpath):
        file = source_file(paths, package[0], target)
        if file is not None:
            return file
    return None


def _entry(package: Package, subpath: str) -> list[str]:
    """The targets of ``subpath``: its `exports` entry (exact, else the `*` pattern of the
    longest prefix), or without `exports`, `main` & co. for "." and the path itself. A
    subpath the `exports` do not name is read as the path itself too, as a monorepo's
    TypeScript `paths` mapping reads it (trpc's tests import
    `@trpc/client/internals/dataLoader`, which Node would refuse): only a file that is there
    answers (:func:`source_file`)."""
    _, _, exports, mains = package
    if not exports:
        return [*mains, "./index"] if subpath == "." else [subpath]
    for key, targets in exports:
        if key == subpath:
            return targets
    best: tuple[str, str, list[str]] | None = None
    for key, targets in exports:
        head, star, tail = key.partition("*")
        if star and _matches(key, subpath) and (best is None or len(head) > len(best[0])):
            best = (head, subpath[len(head) : len(subpath) - len(tail)], targets)
    if best is None:
        return [subpath] if subpath != "." else []
    return [t.replace("*", best[1]) for t in best[2]]


def _matches(key: str, subpath: str) -> bool:
    """Whether an `exports` key names ``subpath``: the same, or a `*` pattern matching it."""
    head, star, tail = key.partition("*")
    if not star:
        return key == subpath
    return (
        subpath.startswith(head)
        and subpath.endswith(tail)
        and len(subpath) >= len(head) + len(tail)
    )


def source_file(paths: set[str], folder: str, target: str) -> str | None:
    """The workspace file of a package target: the target itself, a source beside it (the
    target's extension is gone, see :func:`_compact`), or the same relative path under
    `src/` in place of the build folders it starts with (or under `src/` when it starts
    with none). A declaration file only when no source is found."""
    rel = posixpath.normpath(target)
    if rel == ".." or rel.startswith(("../", "/")):
        return None  # outside the package: Node rejects such a target
    parts = rel.split("/")
    build = 0
    while build < len(parts) - 1 and parts[build] in BUILD_FOLDERS:
        build += 1
    variants = [rel]
    if build:
        variants += ["src/" + "/".join(parts[build:]), "/".join(parts[build:])]
    elif parts[0] != "src":
        variants.append("src/" + rel)
    bases = [posixpath.normpath(posixpath.join(folder, v)) for v in variants]
    candidates = []
    for base in bases:
        candidates += [base, *(base + s for s in _SOURCES)]
        candidates += [base + "/index" + s for s in _SOURCES]
    for candidate in candidates:
        if candidate in paths and not candidate.endswith(_DECLARATIONS):
            return candidate
    for base in bases:
        for candidate in (base, *(base + s for s in _DECLARATIONS), base + "/index.d.ts"):
            if candidate in paths:
                return candidate
    return None
