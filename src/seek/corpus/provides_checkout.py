"""The checkout a repository's provides are read from, and what every reader of
:mod:`seek.corpus.provides` shares: the record, the bounds, the folders that hold someone
else's code or a test's (issue 45, deliver 1; the rules are in that module's docstring)."""

from __future__ import annotations

import errno
import logging
import os
import posixpath
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from seek.scan.beneath import DIR_FLAGS, ESCAPES, ROOT_FLAGS, read_beneath

log = logging.getLogger(__name__)

ECOSYSTEMS = (
    "python", "go", "npm", "cargo", "java", "maven", "csharp", "nuget", "ruby", "rubygems",
    "elixir", "hex", "php", "composer",
)  # fmt: skip
MAX_MANIFEST_BYTES = 1 << 20
SOURCE_PREFIX = 8 << 10  # a package/namespace declaration sits at the top of a source file
MAX_SOURCE_BYTES = 512 << 10  # a larger source file is not opened for its prefix at all
MAX_OPENED = 4000
MAX_PROBES = 20000
MAX_PROVIDED = 2000
MAX_NAME = 214  # npm's limit; longer than any real import name elsewhere
MAX_LISTED = 4096  # names read from one folder listing
# manifests under these folders belong to someone else's code or to a test's data
FOREIGN = frozenset(
    {"node_modules", "bower_components", "vendor", "third_party", "third-party", "testdata",
     "fixtures", "__fixtures__", ".git", "site-packages"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Provided:
    """One name a repository provides (issue 45, deliver 1)."""

    ecosystem: str  # one of ECOSYSTEMS
    name: str  # as seek.corpus.import_names.import_keys produces lookup keys for it
    root: str  # repo-relative posix path ('' = the top) of the folder or file it denotes
    source: str  # repo-relative path of the file that declared it


def valid_name(name: object) -> bool:
    """A name a lookup may use: 1..214 characters, no whitespace, no control characters."""
    return (
        isinstance(name, str)
        and 0 < len(name) <= MAX_NAME
        and not any(c.isspace() or ord(c) < 32 or 127 <= ord(c) < 160 for c in name)
    )


# a folder of tests, examples or benchmarks: what it declares is not provided to others
TEST_PARTS = frozenset(
    {"test", "tests", "__tests__", "spec", "examples", "example", "samples", "sample",
     "benchmarks", "benchmark"}
)  # fmt: skip
TEST_SOURCE_SETS = frozenset({"test", "androidTest", "it", "integrationTest", "jmh"})
# the last dotted part of a .NET project folder (Newtonsoft.Json.Tests, Foo.TestConsole);
# Foo.Testing is a library of test helpers that other projects do use
_DOTNET_TEST = re.compile(r"\.(?!testing$)(\w*tests?|test\w*|benchmarks?)", re.I)


def foreign(path: str) -> bool:
    """True for a path under a vendored, installed or test-data folder."""
    return any(part in FOREIGN for part in path.split("/")[:-1])


def test_named(path: str) -> bool:
    """True for a path under a folder of tests, examples or benchmarks: ``tests/``,
    ``src/test/java``, a Kotlin multiplatform test source set (``jvmTest``),
    ``Newtonsoft.Json.Tests/``."""
    parts = path.split("/")[:-1]
    return any(
        part in TEST_PARTS
        or (part.endswith("Test") and part[:1].islower())
        or (_DOTNET_TEST.fullmatch(part[part.rfind(".") :]) is not None and "." in part)
        or (part in TEST_SOURCE_SETS and i > 0 and parts[i - 1] == "src")
        for i, part in enumerate(parts)
    )


def for_tests(path: str) -> bool:
    """True for a path :func:`test_named` or :func:`foreign`: not what the repository
    provides to others."""
    return foreign(path) or test_named(path)


def lib_folder(path: str) -> str | None:
    """The outermost ``lib`` folder a file sits under (a gem's load path, an Elixir
    project's sources), or None."""
    parts = path.split("/")[:-1]
    return "/".join(parts[: parts.index("lib") + 1]) if "lib" in parts else None


class Checkout:
    """The indexed files of one checkout and bounded, link-refusing reads of its files."""

    def __init__(self, root: Path, paths: Iterable[str]) -> None:
        self.root = root
        self.paths = sorted(
            {p for p in paths if p and not p.startswith("/") and ".." not in p.split("/")}
        )
        self.files = set(self.paths)
        self.folders: dict[str, list[str]] = {}  # folder -> indexed files directly in it
        for path in self.paths:
            self.folders.setdefault(posixpath.dirname(path), []).append(path)
        self.all_folders = {""}  # every folder with an indexed file somewhere beneath it
        for folder in self.folders:
            while folder and folder not in self.all_folders:
                self.all_folders.add(folder)
                folder = posixpath.dirname(folder)
        self.opened = 0
        self.probes = 0
        self._warned: set[str] = set()
        self._listed: dict[str, list[str]] = {}

    def named(self, *basenames: str) -> list[str]:
        """Indexed files with one of these basenames, outside foreign folders."""
        return [p for p in self.paths if posixpath.basename(p) in basenames and not foreign(p)]

    def read(self, rel: str, limit: int = MAX_MANIFEST_BYTES) -> bytes | None:
        """The bytes of ``rel``, or None when it is missing, a link, over ``limit`` or past
        the budget of opened files."""
        if self.opened >= MAX_OPENED:
            self._once("opened", "provides: over %d files opened, the rest not read", MAX_OPENED)
            return None
        self.opened += 1
        try:
            return read_beneath(self.root, rel, limit)
        except OSError as exc:
            if exc.errno in ESCAPES or exc.errno == errno.EFBIG:
                log.debug("provides: %s not read: %s", rel, exc)
            return None

    def prefix(self, rel: str) -> str | None:
        """The first 8 KB of a source file as text (read whole up to 512 KiB: read_beneath
        refuses a file over its limit rather than reading a part of it)."""
        data = self.read(rel, SOURCE_PREFIX)
        if data is None and self.opened < MAX_OPENED:
            data = self.read(rel, MAX_SOURCE_BYTES)
        return data[:SOURCE_PREFIX].decode("utf-8", "replace") if data is not None else None

    def probe(self, rel: str, limit: int = MAX_MANIFEST_BYTES) -> bytes | None:
        """A file seek does not index (go.mod): read if it is there, counted as a probe."""
        if not self._probe_allowed():
            return None
        try:
            return read_beneath(self.root, rel, limit)
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                log.debug("provides: %s not read: %s", rel, exc)
            return None

    def listing(self, folder: str) -> list[str]:
        """The names of the regular files in ``folder`` (to find a *.gemspec or *.csproj
        that seek does not index), opened beneath the root as read_beneath opens folders."""
        if folder in self._listed:
            return self._listed[folder]
        names: list[str] = []
        if self._probe_allowed():
            try:
                fd = os.open(self.root, ROOT_FLAGS)
                try:
                    for part in folder.split("/") if folder else []:
                        next_fd = os.open(part, DIR_FLAGS, dir_fd=fd)
                        os.close(fd)
                        fd = next_fd
                    with os.scandir(fd) as entries:
                        for entry in entries:
                            if len(names) >= MAX_LISTED:
                                break
                            if entry.is_file(follow_symlinks=False):
                                names.append(entry.name)
                finally:
                    os.close(fd)
            except OSError as exc:
                log.debug("provides: %r not listed: %s", folder, exc)
        self._listed[folder] = sorted(names)
        return self._listed[folder]

    def _probe_allowed(self) -> bool:
        if self.probes >= MAX_PROBES:
            self._once("probes", "provides: over %d folders probed, the rest not", MAX_PROBES)
            return False
        self.probes += 1
        return True

    def _once(self, key: str, message: str, *args: object) -> None:
        if key not in self._warned:
            self._warned.add(key)
            log.warning(message, *args)


Found = Iterator[tuple[str, str, str, str]]
"""(ecosystem, name, root, source) as an ecosystem's reader finds them, not yet checked."""
