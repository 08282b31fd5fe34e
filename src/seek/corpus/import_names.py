"""What an import asks of another repository (issue 45, deliver 1): the ecosystem and the
lookup keys under which a :class:`seek.corpus.provides.Provided` of another repository
would answer it, read from ``Import.target`` exactly as seek.graph.imports stores it.

The keys are the names a provider declares, longest first, so the most specific provider
is tried first: a Go import path and its prefixes down to ``host/owner`` (a module path is a
prefix of the import path), a Java/Kotlin import and its package prefixes, a C# or PHP
namespace and its prefixes; the top-level name of a Python import, an npm package, a Rust
crate, a Ruby require root. An import that never leaves its repository (relative paths,
``crate::``/``self::``/``super::``, ``mod x``, ``require_relative``) is None, and so is one of
a standard library that no repository of a corpus provides (Go's ``fmt``, Rust's ``std``,
Java's ``java.*``, C#'s ``System``, Node's builtins).
"""

from __future__ import annotations

import re

_ECOSYSTEMS = {
    "python": "python",
    "javascript": "npm",
    "typescript": "npm",
    "tsx": "npm",
    "go": "go",
    "rust": "cargo",
    "java": "java",
    "kotlin": "java",
    "scala": "java",
    "csharp": "csharp",
    "ruby": "ruby",
    "elixir": "elixir",
    "php": "php",
}
_RUST_LOCAL = frozenset({"crate", "self", "super", "std", "core", "alloc", "proc_macro", "test"})
_JVM_STANDARD = ("java.", "javax.", "kotlin.")
# Node's builtin modules, importable without the `node:` prefix
_NODE_BUILTINS = frozenset(
    "assert async_hooks buffer child_process cluster console constants crypto dgram "
    "diagnostics_channel dns domain events fs http http2 https inspector module net os path "
    "perf_hooks process punycode querystring readline repl stream string_decoder sys timers "
    "tls trace_events tty url util v8 vm wasi worker_threads zlib".split()
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")  # node:, https:, data:, file:, bun:
_WORD = re.compile(r"^[\w$-][\w$.-]*$")


def ecosystem_of(grammar: str) -> str | None:
    """The package ecosystem of a seek grammar's imports, or None (C, C++, ...)."""
    return _ECOSYSTEMS.get(grammar)


def import_keys(grammar: str, target: str) -> tuple[str, tuple[str, ...]] | None:
    """(ecosystem, lookup keys, longest first) under which a Provided of another repository
    would answer this import; None for an import that never leaves its repository."""
    ecosystem = ecosystem_of(grammar)
    reader = _READERS.get(ecosystem or "")
    if reader is None or not target:
        return None
    keys = reader(target)
    return (ecosystem, keys) if keys else None  # type: ignore[return-value]


def _prefixes(parts: list[str], sep: str, least: int = 1) -> tuple[str, ...]:
    """``a.b.c`` -> (``a.b.c``, ``a.b``, ``a``): each prefix of at least ``least`` parts."""
    if not parts or any(not p for p in parts):
        return ()
    return tuple(sep.join(parts[:n]) for n in range(len(parts), least - 1, -1))


def _python(target: str) -> tuple[str, ...]:
    if target.startswith("."):
        return ()  # relative: inside the importing package
    top = target.split(".")[0]
    return (top,) if top.isidentifier() else ()


def _npm(target: str) -> tuple[str, ...]:
    if target.startswith((".", "/", "#", "~")) or _SCHEME.match(target):
        return ()  # a path, a package's own `imports` alias, a URL or `node:` builtin
    parts = target.split("/")
    name = "/".join(parts[:2]) if target.startswith("@") else parts[0]
    if target.startswith("@") and (len(parts) < 2 or not parts[1]):
        return ()
    if name in _NODE_BUILTINS or not all(_WORD.match(p) for p in name.lstrip("@").split("/")):
        return ()
    return (name,)


def _go(target: str) -> tuple[str, ...]:
    parts = target.split("/")
    if "." not in parts[0] or target.startswith((".", "/")) or not _WORD.match(parts[0]):
        return ()  # the standard library (`fmt`, `net/http`), or a relative path
    return _prefixes(parts, "/", least=2) if not any(c.isspace() for c in target) else ()


def _cargo(target: str) -> tuple[str, ...]:
    if target.startswith("mod "):
        return ()  # `mod x;`: a file of the same crate
    top = target.removeprefix("::").split("::")[0]
    return () if top in _RUST_LOCAL or not top.isidentifier() else (top,)


def _java(target: str) -> tuple[str, ...]:
    """A class import names its class and its package; a wildcard (``a.b.*``, stored as
    ``a.b``) its package; a static import its member, class and package: all prefixes."""
    target = target.removesuffix(".*")
    if target.startswith(_JVM_STANDARD) or target in ("java", "javax", "kotlin"):
        return ()
    parts = [p.strip("`") for p in target.split(".")]
    return _prefixes(parts, ".") if all(p.isidentifier() for p in parts) else ()


def _csharp(target: str) -> tuple[str, ...]:
    target = target.removeprefix("global::")
    if target == "System" or target.startswith("System."):
        return ()
    parts = [p.removeprefix("@") for p in target.split(".")]
    return _prefixes(parts, ".") if all(p.isidentifier() for p in parts) else ()


def _ruby(target: str) -> tuple[str, ...]:
    if target.startswith((".", "/", "~")):
        return ()  # require_relative (stored as "./x") or an absolute path
    top = target.split("/")[0].removesuffix(".rb")
    return (top,) if _WORD.match(top) else ()


def _elixir(target: str) -> tuple[str, ...]:
    parts = target.split(".")
    return _prefixes(parts, ".") if all(re.fullmatch(r"[A-Z]\w*", p) for p in parts) else ()


def _php(target: str) -> tuple[str, ...]:
    parts = target.strip("\\").split("\\")
    return _prefixes(parts, "\\") if all(re.fullmatch(r"\w+", p) for p in parts) else ()


_READERS = {
    "python": _python,
    "npm": _npm,
    "go": _go,
    "cargo": _cargo,
    "java": _java,
    "csharp": _csharp,
    "ruby": _ruby,
    "elixir": _elixir,
    "php": _php,
}
