"""What a repository provides: the names another repository's imports can ask it for, read
from its checkout at index time (issue 45, deliver 1).

Each :class:`Provided` is one name in one package ecosystem with the folder (or file) it
denotes: a Python top-level import package, a Go module path, an npm package, a Rust crate,
a Java/Kotlin/Scala package and Maven coordinates, a C# namespace and NuGet package id, a Ruby
require root and gem name, an Elixir module prefix and hex app, a PHP namespace prefix and
composer name. seek.corpus.import_names turns an import into the keys these names answer.

Python provides import names only, never the distribution name (``[project].name``,
``setup.py name=``): ``pip install beautifulsoup4`` is imported as ``bs4``, and an import
statement only ever says the latter, so a distribution name would bind nothing and could only
collide.

Every file read is untrusted workspace content: read through
:func:`seek.scan.beneath.read_beneath` (a link out of the checkout is refused), manifests up to
1 MiB, source files for their first 8 KB; a malformed manifest is skipped (logged at debug).
Nothing is executed (setup.py is parsed by ``ast``). Totals are bounded: at most
:data:`MAX_OPENED` files opened and :data:`MAX_PROBES` folders probed for manifests that seek
does not index (go.mod, *.gemspec, *.csproj); past either the rest is not read, and past
:data:`MAX_PROVIDED` names the rest (in sorted order) is dropped; each is logged once.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from pathlib import Path

from seek.corpus import provides_manifests, provides_python, provides_sources
from seek.corpus.provides_checkout import (
    ECOSYSTEMS,
    MAX_PROVIDED,
    Checkout,
    Provided,
    for_tests,
    foreign,
    lib_folder,
    log,
    valid_name,
)

__all__ = ["ECOSYSTEMS", "Provided", "for_tests", "foreign", "lib_folder", "read_provides"]


def read_provides(root: Path, paths: Iterable[str]) -> list[Provided]:
    """What the checkout at ``root`` provides. ``paths``: the repository's indexed files
    (repo-relative posix, as the indexer scanned them: already filtered by ignore rules).
    Sorted, deduplicated (one entry per ecosystem, name and root: the first declaration
    found is its source), bounded to :data:`MAX_PROVIDED` (the rest dropped, logged once)."""
    checkout = Checkout(root, paths)
    readers = (
        provides_python.python,
        provides_manifests.go,
        provides_manifests.npm,
        provides_manifests.cargo,
        provides_manifests.maven,
        provides_manifests.nuget,
        provides_manifests.rubygems,
        provides_manifests.hex_apps,
        provides_manifests.composer,
        provides_sources.java,
        provides_sources.csharp,
        provides_sources.ruby,
        provides_sources.elixir,
    )
    found: dict[tuple[str, str, str], str] = {}
    for reader in readers:
        for ecosystem, name, where, source in reader(checkout):
            where = posixpath.normpath(where) if where else ""
            where = "" if where == "." else where
            if (
                ecosystem in ECOSYSTEMS
                and valid_name(name)
                and not where.startswith(("/", "../"))
                and where != ".."
            ):
                found.setdefault((ecosystem, name, where), source)
            else:
                log.debug("provides: %r of %s refused", name, source)
    out = [Provided(e, n, r, s) for (e, n, r), s in sorted(found.items())]
    if len(out) > MAX_PROVIDED:
        log.warning("provides: %d names in %s, the first %d kept", len(out), root, MAX_PROVIDED)
        out = out[:MAX_PROVIDED]
    return out
