"""The names a repository's package manifests declare (issue 45, deliver 1): Go module paths
(each go.mod of a multi-module repository), npm package names (every named package.json, the
packages of workspaces included), Rust crate names as ``use`` says them, Maven coordinates
from pom.xml and simple Gradle files, NuGet package ids, gem names, hex apps, composer names
with their PSR-4/PSR-0 namespace prefixes. XML and Ruby/Elixir/Gradle manifests are read by
regular expressions (never parsed as XML: no entity expansion; never evaluated).
go.mod, *.gemspec and *.csproj are not indexed by seek: they are probed in the folders that
hold the indexed files of their language.
"""

from __future__ import annotations

import json
import logging
import posixpath
import re
import tomllib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from seek.corpus.provides_checkout import for_tests, foreign, lib_folder
from seek.graph.packages import read_package

if TYPE_CHECKING:
    from seek.corpus.provides_checkout import Checkout, Found

log = logging.getLogger(__name__)

_GO_MODULE = re.compile(r'^[ \t]*module[ \t]+"?([^\s"]+)"?', re.M)
# every pattern here runs in time linear in the manifest: an unclosed comment ends the text
# (a lazy match without `\Z` would rescan to the end from every `<!--`), and a tag's text
# stops at the next `<`
_XML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_XML_TAG = re.compile(r"<(/?)([A-Za-z_][\w.:-]*)[^<>]*?(/?)>")
_POM_FIELDS = ("project/groupId", "project/artifactId", "project/parent/groupId")
_MAX_XML_DEPTH = 64
_GRADLE_ROOT = re.compile(r"""rootProject\.name\s*=\s*["']([^"'$]+)["']""")
_GRADLE_GROUP = re.compile(r"""^[ \t]*group[ \t]*=?[ \t]*["']([^"'$\n]+)["']""", re.M)
_PROPERTIES_GROUP = re.compile(r"^[ \t]*group[ \t]*[=:][ \t]*([^\s$]+)[ \t]*$", re.M)
# `spec.name = "rack"`, or the name given to the constructor (sinatra.gemspec)
_GEM_NAME = re.compile(
    r"""\.name\s*=\s*["']([^"'#]+)["']|Gem::Specification\.new\s*\(?\s*["']([^"'#]+)["']"""
)
_HEX_APP = re.compile(r"\bapp:\s*:([a-z_][A-Za-z0-9_]*)")
_JS_SUFFIXES = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")


def _text(checkout: Checkout, path: str, probe: bool = False) -> str | None:
    data = checkout.probe(path) if probe else checkout.read(path)
    return data.decode("utf-8", "replace") if data is not None else None


def _tag(text: str, name: str) -> str | None:
    match = re.search(rf"<{name}>([^<]*)</{name}>", text)
    value = match.group(1).strip() if match else None
    return value if value and "$" not in value else None


def _pom(text: str) -> dict[str, str]:
    """The project's own groupId and artifactId and its parent's groupId, by their place in
    the tree (a dependency's groupId is deeper), read by one scan of the tags."""
    found: dict[str, str] = {}
    stack: list[tuple[str, int]] = []
    for match in _XML_TAG.finditer(_XML_COMMENT.sub("", text)):
        closing, name, empty = match.groups()
        if empty:
            continue
        if not closing:
            if len(stack) >= _MAX_XML_DEPTH:
                return found
            stack.append((name, match.end()))
            continue
        if not stack or stack[-1][0] != name:
            return found  # not well formed: what was read so far
        _, start = stack.pop()
        where = "/".join([*(n for n, _ in stack), name])
        value = match.string[start : match.start()].strip()
        if where in _POM_FIELDS and value and "$" not in value and "<" not in value:
            found.setdefault(where, value)
    return found


def _ancestors(folders: Iterable[str]) -> set[str]:
    out = {""}
    for folder in folders:
        while folder and folder not in out:
            out.add(folder)
            folder = posixpath.dirname(folder)
    return out


def _probed(checkout: Checkout, basename: str, suffixes: tuple[str, ...]) -> list[str]:
    """The folders where ``basename`` may be: those of indexed files with ``suffixes`` and
    above them, and those where the index holds it (a manifest can be left out of the index
    by an ignore rule while the package is real: zod's packages/zod/.gitignore says
    ``**/package.json``)."""
    folders = _ancestors(
        posixpath.dirname(p) for p in checkout.paths if p.endswith(suffixes) and not foreign(p)
    )
    folders |= {posixpath.dirname(p) for p in checkout.named(basename)}
    return sorted(f for f in folders if not for_tests(posixpath.join(f, basename)))


def _manifest(checkout: Checkout, folder: str, basename: str) -> tuple[str, bytes | None]:
    path = posixpath.join(folder, basename) if folder else basename
    return path, checkout.read(path) if path in checkout.files else checkout.probe(path)


def go(checkout: Checkout) -> Found:
    """Each go.mod's module path, root its folder. The go command ignores testdata and
    vendor folders and those named with a leading ``_`` or ``.`` (chi's ``_examples``), and
    so does this."""
    for folder in _probed(checkout, "go.mod", (".go",)):
        if any(part.startswith(("_", ".")) for part in folder.split("/") if part):
            continue
        path, data = _manifest(checkout, folder, "go.mod")
        text = data.decode("utf-8", "replace") if data is not None else ""
        if (match := _GO_MODULE.search(text)) is not None:
            yield "go", match.group(1), folder, path


def npm(checkout: Checkout) -> Found:
    """Every named package.json outside node_modules, vendored folders, tests and examples:
    so every package of a workspace (a workspace package under examples/ is not a library
    that another repository imports)."""
    for folder in _probed(checkout, "package.json", _JS_SUFFIXES):
        if "node_modules" in folder.split("/"):
            continue
        path, data = _manifest(checkout, folder, "package.json")
        package = read_package(folder, data) if data is not None else None
        if package is not None:
            yield "npm", package[1], folder, path
        elif data is not None:
            log.debug("provides: %s names no package", path)


def cargo(checkout: Checkout) -> Found:
    """Each crate's name as ``use`` says it (``[lib] name``, else the package name with
    ``-`` as ``_``), root its library root file (``[lib] path``, ``src/lib.rs``, else
    ``src/main.rs``); a Cargo.toml whose root file is not indexed provides nothing.
    Workspace members are found by their own Cargo.toml."""
    for path in checkout.named("Cargo.toml"):
        if for_tests(path):
            continue
        folder = posixpath.dirname(path)
        doc = _toml(checkout, path)
        package, lib = _table(doc, "package"), _table(doc, "lib")
        if not isinstance(package.get("name"), str):
            continue
        name = lib.get("name") if isinstance(lib.get("name"), str) else package["name"]
        written = [lib["path"]] if isinstance(lib.get("path"), str) else []
        for candidate in [*written, "src/lib.rs", "src/main.rs"]:
            root = posixpath.normpath(posixpath.join(folder, candidate))
            if root in checkout.files:
                yield "cargo", name.replace("-", "_"), root, path
                break


def maven(checkout: Checkout) -> Found:
    """``groupId:artifactId`` of each pom.xml (the parent's groupId when it has none of its
    own) and of Gradle builds whose group and name are written as plain strings."""
    for path in checkout.named("pom.xml"):
        if for_tests(path) or (text := _text(checkout, path)) is None:
            continue
        fields = _pom(text)
        group = fields.get("project/groupId") or fields.get("project/parent/groupId")
        artifact = fields.get("project/artifactId")
        if group and artifact:
            yield "maven", f"{group}:{artifact}", posixpath.dirname(path), path
    groups: dict[str, str] = {}  # folder -> the group written there (build file, properties)
    builds: dict[str, str] = {}
    for path in checkout.named("build.gradle", "build.gradle.kts", "gradle.properties"):
        text = _text(checkout, path) or ""
        folder = posixpath.dirname(path)
        pattern = _PROPERTIES_GROUP if path.endswith(".properties") else _GRADLE_GROUP
        if (match := pattern.search(text)) is not None:
            groups.setdefault(folder, match.group(1))
        if not path.endswith(".properties") and not for_tests(path):
            builds[folder] = path
    names = {}
    for path in checkout.named("settings.gradle", "settings.gradle.kts"):
        match = _GRADLE_ROOT.search(_text(checkout, path) or "")
        if match is not None:
            names[posixpath.dirname(path)] = match.group(1)
            builds.setdefault(posixpath.dirname(path), path)
    for folder, path in sorted(builds.items()):
        group = next((groups[f] for f in _up(folder) if f in groups), None)
        name = names.get(folder) or posixpath.basename(folder)
        if group and name:
            yield "maven", f"{group}:{name}", folder, path


def _up(folder: str) -> list[str]:
    out = [folder]
    while folder:
        folder = posixpath.dirname(folder)
        out.append(folder)
    return out


def nuget(checkout: Checkout) -> Found:
    """Each project file's ``<PackageId>``, else its file name's stem, root its folder:
    project files are listed in the folders of C#/F#/VB sources and above them."""
    folders = _ancestors(
        posixpath.dirname(p)
        for p in checkout.paths
        if p.endswith((".cs", ".fs", ".vb")) and not for_tests(p)
    )
    for folder in sorted(folders):
        for name in checkout.listing(folder):
            if name.endswith((".csproj", ".fsproj", ".vbproj")):
                path = posixpath.join(folder, name) if folder else name
                text = _text(checkout, path, probe=True)
                if text is not None and not for_tests(path):
                    package = _tag(_XML_COMMENT.sub("", text), "PackageId")
                    yield "nuget", package or name.rsplit(".", 1)[0], folder, path


def rubygems(checkout: Checkout) -> Found:
    """Each *.gemspec's ``spec.name``, root its folder: listed at the top and beside each
    ``lib`` folder that holds Ruby files."""
    folders = {""} | {
        posixpath.dirname(lib)
        for lib in (lib_folder(p) for p in checkout.paths if p.endswith(".rb") and not for_tests(p))
        if lib is not None
    }
    for folder in sorted(folders):
        for name in checkout.listing(folder):
            if name.endswith(".gemspec"):
                path = posixpath.join(folder, name) if folder else name
                match = _GEM_NAME.search(_text(checkout, path, probe=True) or "")
                if match is not None:
                    yield "rubygems", match.group(1) or match.group(2), folder, path


def hex_apps(checkout: Checkout) -> Found:
    """Each mix.exs's ``app:``, root its folder (an umbrella's root declares none)."""
    for path in checkout.named("mix.exs"):
        if not for_tests(path) and (match := _HEX_APP.search(_text(checkout, path) or "")):
            yield "hex", match.group(1), posixpath.dirname(path), path


def composer(checkout: Checkout) -> Found:
    """Each composer.json's name, and the namespace prefixes of its ``autoload`` (PSR-4:
    root the mapped folder; PSR-0: the folder of the prefix beneath it)."""
    for path in checkout.named("composer.json"):
        folder = posixpath.dirname(path)
        data = checkout.read(path)
        try:
            doc = json.loads(data) if data is not None else None
        except (ValueError, UnicodeDecodeError, RecursionError):
            log.debug("provides: %s is not JSON", path)
            continue
        if not isinstance(doc, dict) or for_tests(path):
            continue
        if isinstance(doc.get("name"), str) and "/" in doc["name"]:
            yield "composer", doc["name"], folder, path
        autoload = _table(doc, "autoload")
        for standard in ("psr-4", "psr-0"):
            for prefix, dirs in _table(autoload, standard).items():
                name = prefix.strip("\\")
                for rel in _strings(dirs):
                    root = posixpath.join(folder, rel)
                    if standard == "psr-0":
                        root = posixpath.join(root, name.replace("\\", "/"))
                    if name:
                        yield "php", name, posixpath.normpath(root) if root else "", path


def _toml(checkout: Checkout, path: str) -> dict[str, Any]:
    data = checkout.read(path)
    try:
        return tomllib.loads(data.decode("utf-8")) if data is not None else {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as exc:
        log.debug("provides: %s skipped: %s", path, exc)
        return {}


def _table(doc: object, key: str) -> dict[str, Any]:
    value = doc.get(key) if isinstance(doc, dict) else None
    return value if isinstance(value, dict) else {}


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []
