"""The names a repository's source files declare, where no manifest says them (issue 45,
deliver 1): Java/Kotlin/Scala packages (``package a.b.c``), C# namespaces, Ruby require roots
(the top of each gem's ``lib/``), Elixir top module prefixes (``defmodule Plug.Conn`` in
``lib/``). Only the first 8 KB of a few files per folder are read: one for a JVM package
(a folder is one package), two for C# (namespaces need not follow folders), one for Elixir;
tests, examples and vendored folders are skipped (seek.corpus.provides.for_tests).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from seek.corpus.provides_checkout import for_tests, lib_folder

if TYPE_CHECKING:
    from seek.corpus.provides_checkout import Checkout, Found

_BLOCK_COMMENT = re.compile(r"/\*.*?(\*/|\Z)", re.S)
_LINE_COMMENT = re.compile(r"//[^\n]*")
_JVM_PACKAGE = re.compile(r"package\s+([A-Za-z_`][\w.`]*)\s*;?\s*$")
_CS_NAMESPACE = re.compile(r"^[ \t]*namespace\s+@?([A-Za-z_][\w.]*)\s*[;{]?", re.M)
# at the start of a line only: a nested defmodule's name is relative to its parent's, and
# an indented one is as often an example in a @moduledoc
_DEFMODULE = re.compile(r"^defmodule\s+([A-Z]\w*)[\w.]*\s*(?:,\s*)?do\b", re.M)
JVM_SUFFIXES = (".java", ".kt", ".scala")
# `defmodule Mix.Tasks.Phx.New` is how a library adds a mix task, not a namespace it owns
_BORROWED_MODULES = frozenset({"Mix"})


def _by_folder(checkout: Checkout, suffixes: tuple[str, ...]) -> Iterator[tuple[str, list[str]]]:
    for folder, files in sorted(checkout.folders.items()):
        sources = [f for f in files if f.endswith(suffixes)]
        if sources and not for_tests(sources[0]):
            yield folder, sources


def _code(text: str) -> str:
    """The text without C-style comments (a license header may say "package")."""
    return _LINE_COMMENT.sub("", _BLOCK_COMMENT.sub("", text))


def jvm_package(text: str, scala: bool = False) -> str | None:
    """The package a Java/Kotlin/Scala file declares: its first ``package`` clause after
    comments and annotations (``@file:JvmName``); in Scala, consecutive clauses chain
    (``package cats`` then ``package data`` is ``cats.data``)."""
    names: list[str] = []
    for line in _code(text).splitlines():
        line = line.strip()
        if not line or line.startswith(("@", "#!")):
            continue
        match = _JVM_PACKAGE.match(line)
        if match is None or match.group(1) == "object":
            break
        names.append(match.group(1).replace("`", ""))
        if not scala:
            break
    return ".".join(names) or None


def java(checkout: Checkout) -> Found:
    """Each folder's package, read from one file (package-info.java first)."""
    for folder, files in _by_folder(checkout, JVM_SUFFIXES):
        files.sort(key=lambda f: (not f.endswith("/package-info.java"), f))
        for path in files[:2]:  # the second only when the first cannot be read
            text = checkout.prefix(path)
            if text is None:
                continue
            package = jvm_package(text, scala=path.endswith(".scala"))
            if package is not None:
                yield "java", package, folder, path
            break


def csharp(checkout: Checkout) -> Found:
    """The namespaces declared in up to two C# files of each folder (block or file-scoped)."""
    for folder, files in _by_folder(checkout, (".cs",)):
        for path in files[:2]:
            text = checkout.prefix(path)
            for namespace in dict.fromkeys(_CS_NAMESPACE.findall(_code(text or ""))):
                yield "csharp", namespace, folder, path


def ruby(checkout: Checkout) -> Found:
    """Each require root of a ``lib/`` folder: ``lib/rack.rb`` and ``lib/rack/`` are
    ``rack``, root the ``lib`` folder (the load path a gem adds); read from the file list."""
    for path in checkout.paths:
        lib = lib_folder(path)
        if lib is None or not path.endswith(".rb") or for_tests(path):
            continue
        rest = path[len(lib) + 1 :]
        name = rest.removesuffix(".rb") if "/" not in rest else rest.split("/")[0]
        if not name.startswith("."):
            source = posixpath.join(lib, name + ".rb")
            yield "ruby", name, lib, source if source in checkout.files else path


def elixir(checkout: Checkout) -> Found:
    """The top module prefixes defined in a ``lib/`` folder's .ex files (one file per
    folder), root that ``lib`` folder."""
    for _, files in _by_folder(checkout, (".ex",)):
        lib = lib_folder(files[0])
        text = checkout.prefix(files[0]) if lib is not None else None
        for prefix in dict.fromkeys(_DEFMODULE.findall(text or "")):
            if prefix not in _BORROWED_MODULES:
                yield "elixir", prefix, lib, files[0]
