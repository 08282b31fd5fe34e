"""The Python import names a repository ships (issue 45, deliver 1): the top-level packages
and modules its pyproject.toml, setup.cfg or setup.py declare, else those its layout shows
(``src/<pkg>/``, ``<pkg>/__init__.py``). Only import names: see seek.corpus.provides on why a
distribution name is not one. setup.py is parsed with ``ast``, never executed; a
``find_packages()`` call or ``packages = find:`` is answered from the indexed files.
"""

from __future__ import annotations

import ast
import configparser
import fnmatch
import logging
import posixpath
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seek.corpus.provides_checkout import Checkout, Found

log = logging.getLogger(__name__)

MANIFESTS = ("pyproject.toml", "setup.cfg", "setup.py")
# folders that hold a project's tests, docs or tooling, never a library's import name
NOT_IMPORT_NAMES = frozenset(
    {"tests", "test", "testing", "docs", "doc", "examples", "example", "benchmarks", "bench",
     "scripts", "tools", "ci", "build", "dist", "src", "site-packages", "node_modules"}
)  # fmt: skip


@dataclass
class Spec:
    """What one project's manifests declare, relative to the project folder."""

    packages: list[str] = field(default_factory=list)  # dotted names as written
    modules: list[str] = field(default_factory=list)
    package_dir: dict[str, str] = field(default_factory=dict)
    finds: list[tuple[str, bool, list[str]]] = field(default_factory=list)  # where, ns, include
    roots: list[str] = field(default_factory=list)  # package folders named outright (hatch)

    def declares(self) -> bool:
        return bool(self.packages or self.modules or self.finds or self.roots)


def python(checkout: Checkout) -> Found:
    projects: dict[str, list[str]] = {"": []}
    for path in checkout.named(*MANIFESTS):
        folder = posixpath.dirname(path)
        if not any(part in NOT_IMPORT_NAMES for part in folder.split("/")):
            projects.setdefault(folder, []).append(path)
    for folder, manifests in sorted(projects.items()):
        spec = Spec()
        for manifest in manifests:
            data = checkout.read(manifest)
            if data is None:
                continue
            try:
                READERS[posixpath.basename(manifest)](data, spec)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError,
                    configparser.Error, tomllib.TOMLDecodeError) as exc:  # fmt: skip
                log.debug("provides: %s skipped: %s", manifest, exc)
        source = manifests[0] if manifests else ""
        if spec.declares():
            for name, root in _declared(checkout, folder, spec):
                yield "python", name, root, source
        else:
            yield from _layout(checkout, folder)


def _importable(name: str, layout: bool) -> bool:
    if layout and name.startswith(("_", ".")):
        return False
    return name.isidentifier() and name not in NOT_IMPORT_NAMES


def _declared(checkout: Checkout, folder: str, spec: Spec) -> Iterator[tuple[str, str]]:
    base = spec.package_dir.get("", "")
    for dotted in spec.packages:
        top = dotted.split(".")[0]
        root = posixpath.join(folder, spec.package_dir.get(top) or posixpath.join(base, top))
        if _importable(top, False) and _exists(checkout, root):
            yield top, posixpath.normpath(root)
    for dotted in spec.modules:
        top = dotted.split(".")[0]
        root = posixpath.normpath(posixpath.join(folder, base, top))
        if _importable(top, False):
            if root + ".py" in checkout.files:
                yield top, root + ".py"
            elif _exists(checkout, root):
                yield top, root
    for root in spec.roots:
        root = posixpath.normpath(posixpath.join(folder, root))
        top = posixpath.basename(root).removesuffix(".py")
        if _importable(top, False) and (root in checkout.files or _exists(checkout, root)):
            yield top, root
    for where, namespace, include in spec.finds:
        where = posixpath.normpath(posixpath.join(folder, base if where == "." else where))
        where = "" if where == "." else where
        for name, root, _ in _packages_under(checkout, where, namespace):
            if not include or any(fnmatch.fnmatchcase(name, p.split(".")[0]) for p in include):
                yield name, root


def _exists(checkout: Checkout, root: str) -> bool:
    root = posixpath.normpath(root)
    return root in checkout.all_folders and any(
        p.startswith(root + "/") and p.endswith((".py", ".pyi")) for p in checkout.paths
    )


def _packages_under(
    checkout: Checkout, where: str, namespace: bool
) -> Iterator[tuple[str, str, str]]:
    """(name, folder, source) of each package folder directly under ``where``: one with an
    ``__init__.py``, or (``namespace``) any holding Python files beneath it."""
    for sub in sorted(f for f in checkout.all_folders if f and posixpath.dirname(f) == where):
        name = posixpath.basename(sub)
        if not _importable(name, True):
            continue
        init = posixpath.join(sub, "__init__.py")
        # an empty __init__.py is not indexed (seek skips empty files): probed for
        if init in checkout.files or checkout.probe(init) is not None:
            yield name, sub, init
        elif namespace:
            first = next(
                (p for p in checkout.paths if p.startswith(sub + "/") and p.endswith(".py")), None
            )
            if first is not None:
                yield name, sub, first


def _layout(checkout: Checkout, folder: str) -> Found:
    """The conventional layouts, as setuptools discovers them: ``src/<pkg>/`` (namespace
    packages too: src/ holds only what ships) and ``src/<mod>.py``; only without them,
    ``<pkg>/__init__.py`` beside the project file (urllib3's dummyserver/ is its tests')."""
    src = posixpath.join(folder, "src") if folder else "src"
    found = list(_packages_under(checkout, src, True))
    for path in checkout.folders.get(src, []):
        name = posixpath.basename(path).removesuffix(".py")
        if path.endswith(".py") and _importable(name, True):
            found.append((name, path, path))
    for name, root, source in found or _packages_under(checkout, folder, False):
        yield "python", name, root, source


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    return []


def _pyproject(data: bytes, spec: Spec) -> None:
    doc = tomllib.loads(data.decode("utf-8"))
    tool = _table(doc, "tool")
    setuptools = _table(tool, "setuptools")
    packages = setuptools.get("packages")
    if isinstance(packages, dict):
        find = _table(packages, "find")
        for where in _strings(find.get("where", ["."])):
            spec.finds.append((where, find.get("namespaces", True) is True,
                               _strings(find.get("include"))))  # fmt: skip
    else:
        spec.packages += _strings(packages)
    spec.modules += _strings(setuptools.get("py-modules"))
    package_dir = setuptools.get("package-dir")
    if isinstance(package_dir, dict):
        spec.package_dir.update({k: v for k, v in package_dir.items() if isinstance(v, str)})
    hatch = _table(_table(tool, "hatch"), "build")
    for table in (hatch, _table(_table(hatch, "targets"), "wheel")):
        spec.roots += _strings(table.get("packages"))
    for entry in _list(_table(tool, "poetry").get("packages")):
        if isinstance(entry, dict) and isinstance(entry.get("include"), str):
            include = entry["include"].strip("/")
            where = entry.get("from") if isinstance(entry.get("from"), str) else "."
            if any(c in include for c in "*?["):
                spec.finds.append((where, True, [include]))
            else:
                spec.roots.append(posixpath.join(where, include))
    flit = _table(_table(tool, "flit"), "module")
    if isinstance(flit.get("name"), str):
        top = flit["name"].split(".")[0]
        spec.roots += [top, f"src/{top}", f"{top}.py", f"src/{top}.py"]
    maturin = _table(tool, "maturin")
    if isinstance(maturin.get("module-name"), str):
        top = maturin["module-name"].split(".")[0]
        source = maturin.get("python-source")
        spec.roots.append(posixpath.join(source if isinstance(source, str) else "", top))


def _table(doc: dict[str, Any], key: str) -> dict[str, Any]:
    value = doc.get(key)
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _setup_cfg(data: bytes, spec: Spec) -> None:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.read_string(data.decode("utf-8"))
    if not parser.has_section("options"):
        return
    options = parser["options"]
    for line in options.get("package_dir", "").splitlines():
        key, sep, value = line.partition("=")
        if sep:
            spec.package_dir[key.strip()] = value.strip()
    packages = options.get("packages", "").strip()
    if packages in ("find:", "find_namespace:"):
        find = (
            parser["options.packages.find"] if parser.has_section("options.packages.find") else {}
        )
        include = [i.strip() for i in find.get("include", "").replace(",", "\n").splitlines()]
        spec.finds.append((find.get("where", ".").strip() or ".",
                           packages == "find_namespace:", [i for i in include if i]))  # fmt: skip
    else:
        spec.packages += [p.strip() for p in packages.replace(",", "\n").splitlines() if p.strip()]
    modules = options.get("py_modules", "").replace(",", "\n")
    spec.modules += [m.strip() for m in modules.splitlines() if m.strip()]


def _setup_py(data: bytes, spec: Spec) -> None:
    """The literal arguments of a ``setup(...)`` call; a list assigned to a name at the top
    of the file is followed once (``packages=PACKAGES``)."""
    tree = ast.parse(data)
    names = {
        target.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or _called(node) != "setup":
            continue
        for keyword in node.keywords:
            value = keyword.value
            if isinstance(value, ast.Name):
                value = names.get(value.id, value)
            if keyword.arg == "packages":
                if isinstance(value, ast.Call) and _called(value) in (
                    "find_packages", "find_namespace_packages",
                ):  # fmt: skip
                    spec.finds.append(_find_call(value))
                else:
                    spec.packages += _literal_strings(value)
            elif keyword.arg == "py_modules":
                spec.modules += _literal_strings(value)
            elif keyword.arg == "package_dir" and isinstance(value, ast.Dict):
                for key, item in zip(value.keys, value.values, strict=True):
                    if _constant(key) is not None and _constant(item) is not None:
                        spec.package_dir[_constant(key)] = _constant(item)


def _called(node: ast.Call) -> str:
    func = node.func
    return (
        func.id
        if isinstance(func, ast.Name)
        else func.attr
        if isinstance(func, ast.Attribute)
        else ""
    )


def _find_call(node: ast.Call) -> tuple[str, bool, list[str]]:
    where = _constant(node.args[0]) if node.args else None
    include: list[str] = []
    for keyword in node.keywords:
        if keyword.arg == "where":
            where = _constant(keyword.value)
        elif keyword.arg == "include":
            include = _literal_strings(keyword.value)
    return where or ".", _called(node) == "find_namespace_packages", include


def _constant(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _literal_strings(node: ast.expr) -> list[str]:
    if isinstance(node, (ast.List, ast.Tuple)):
        return [s for s in map(_constant, node.elts) if s is not None]
    return []


READERS = {"pyproject.toml": _pyproject, "setup.cfg": _setup_cfg, "setup.py": _setup_py}
