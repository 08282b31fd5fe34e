"""File extension -> tree-sitter grammar, loaded lazily from the per-language PyPI packages.

Each grammar package ships its compiled parser, so nothing is downloaded at run time. A
grammar that is missing or fails to load is logged once and its files use the prose
splitter instead; it never stops indexing.
"""

from __future__ import annotations

import importlib
import logging
import threading
from functools import cache

import tree_sitter

log = logging.getLogger(__name__)

# grammar name -> (module, function returning the language pointer)
GRAMMARS: dict[str, tuple[str, str]] = {
    "bash": ("tree_sitter_bash", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "csharp": ("tree_sitter_c_sharp", "language"),
    "css": ("tree_sitter_css", "language"),
    "elixir": ("tree_sitter_elixir", "language"),
    "go": ("tree_sitter_go", "language"),
    "haskell": ("tree_sitter_haskell", "language"),
    "java": ("tree_sitter_java", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "kotlin": ("tree_sitter_kotlin", "language"),
    "lua": ("tree_sitter_lua", "language"),
    "php": ("tree_sitter_php", "language_php"),
    "python": ("tree_sitter_python", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "scala": ("tree_sitter_scala", "language"),
    "swift": ("tree_sitter_swift", "language"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "zig": ("tree_sitter_zig", "language"),
}

EXTENSION_GRAMMAR: dict[str, str] = {
    "sh": "bash",
    "bash": "bash",
    "c": "c",
    "h": "c",
    "cc": "cpp",
    "cpp": "cpp",
    "cxx": "cpp",
    "hh": "cpp",
    "hpp": "cpp",
    "hxx": "cpp",
    "cu": "cpp",
    "cuh": "cpp",
    "cs": "csharp",
    "css": "css",
    "ex": "elixir",
    "exs": "elixir",
    "go": "go",
    "hs": "haskell",
    "java": "java",
    "js": "javascript",
    "jsx": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "kt": "kotlin",
    "kts": "kotlin",
    "lua": "lua",
    "php": "php",
    "py": "python",
    "pyi": "python",
    "pyw": "python",
    "rb": "ruby",
    "rs": "rust",
    "scala": "scala",
    "sc": "scala",
    "swift": "swift",
    "tsx": "tsx",
    "ts": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    "zig": "zig",
}

_local = threading.local()


def grammar_for_path(rel_path: str) -> str | None:
    """The grammar name for a file, judged by its last extension (lower-cased)."""
    name = rel_path.rsplit("/", 1)[-1]
    if "." not in name.lstrip("."):
        return None
    return EXTENSION_GRAMMAR.get(name.rsplit(".", 1)[1].lower())


@cache
def load_language(grammar: str) -> tree_sitter.Language | None:
    """The grammar's Language, or None (logged once) when it cannot be loaded."""
    module_name, function = GRAMMARS[grammar]
    try:
        module = importlib.import_module(module_name)
        return tree_sitter.Language(getattr(module, function)())
    except Exception as exc:  # any loader failure degrades to prose chunking
        log.warning(
            "tree-sitter grammar %r could not be loaded (%s: %s); its files use the prose splitter",
            grammar,
            type(exc).__name__,
            exc,
        )
        return None


def parser_for(grammar: str) -> tree_sitter.Parser | None:
    """A parser for ``grammar``, one per thread (parsers are not thread-safe)."""
    parsers: dict[str, tree_sitter.Parser | None] = _local.__dict__.setdefault("parsers", {})
    if grammar not in parsers:
        language = load_language(grammar)
        parsers[grammar] = tree_sitter.Parser(language) if language is not None else None
    return parsers[grammar]
