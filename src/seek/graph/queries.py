"""Which nodes are definitions, per grammar: the grammar package's own `queries/tags.scm`
(the tree-sitter tagging convention GitHub and aider use) plus what it leaves out.

A tags query marks a definition as `@definition.KIND` around a `@name`, and a call as
`@reference.call`.  Many grammar wheels ship one; where none ships (bash, css, haskell,
kotlin, zig) or it omits common definitions (Go variables and fields, TypeScript types,
Python class attributes), the supplements below add patterns in the same convention.  A
supplement that does not compile against an installed grammar version is logged and left
out, so a grammar upgrade degrades the graph instead of breaking indexing.
"""

from __future__ import annotations

import importlib
import logging
from functools import cache
from pathlib import Path

import tree_sitter

from seek.chunk.languages import GRAMMARS, load_language

log = logging.getLogger(__name__)

# Grammars whose tags.scm builds on another's (TypeScript's only adds TS-only nodes).
_BASE_TAGS = {"typescript": "javascript", "tsx": "javascript"}

_TS_EXTRA = """
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
(public_field_definition name: (property_identifier) @name) @definition.field
(program (lexical_declaration (variable_declarator name: (identifier) @name)) @definition.constant)
(program (export_statement (lexical_declaration
  (variable_declarator name: (identifier) @name)) @definition.constant))
(interface_declaration body: (interface_body
  (property_signature name: (property_identifier) @name) @definition.field))
"""

SUPPLEMENTS: dict[str, str] = {
    "python": """
(class_definition body: (block (expression_statement
  (assignment left: (identifier) @name) @definition.field)))
""",
    "go": """
(source_file (var_declaration (var_spec name: (identifier) @name) @definition.variable))
(source_file (var_declaration (var_spec_list
  (var_spec name: (identifier) @name) @definition.variable)))
(source_file (const_declaration (const_spec name: (identifier) @name) @definition.constant))
(field_declaration name: (field_identifier) @name) @definition.field
(method_elem name: (field_identifier) @name) @definition.method
""",
    "javascript": """
(program (lexical_declaration (variable_declarator name: (identifier) @name)) @definition.constant)
(program (variable_declaration (variable_declarator name: (identifier) @name)) @definition.constant)
(program (export_statement (lexical_declaration
  (variable_declarator name: (identifier) @name)) @definition.constant))
(field_definition property: (property_identifier) @name) @definition.field
""",
    "typescript": _TS_EXTRA,
    "tsx": _TS_EXTRA,
    "rust": """
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant
(field_declaration name: (field_identifier) @name) @definition.field
(enum_variant name: (identifier) @name) @definition.field
""",
    "bash": "(function_definition name: (word) @name) @definition.function",
    "kotlin": """
(class_declaration (identifier) @name) @definition.class
(object_declaration (identifier) @name) @definition.class
(function_declaration (identifier) @name) @definition.function
""",
    "zig": """
(function_declaration (identifier) @name) @definition.function
(source_file (variable_declaration (identifier) @name) @definition.constant)
(container_field (identifier) @name) @definition.field
""",
    "haskell": """
(declarations (function name: (variable) @name) @definition.function)
(declarations (bind name: (variable) @name) @definition.function)
(data_type name: (name) @name) @definition.type
(newtype name: (name) @name) @definition.type
(type_synonym name: (name) @name) @definition.type
(class name: (name) @name) @definition.class
""",
    "csharp": """
(field_declaration
  (variable_declaration (variable_declarator (identifier) @name))) @definition.field
(property_declaration name: (identifier) @name) @definition.field
""",
}


# Names a function binds for itself (parameters, local assignments, loop variables): a bare
# use of one inside that function is a local, not a use of a definition elsewhere.
LOCAL_BINDERS: dict[str, str] = {
    "python": """
(parameters (identifier) @local)
(default_parameter name: (identifier) @local)
(typed_parameter (identifier) @local)
(typed_default_parameter name: (identifier) @local)
(list_splat_pattern (identifier) @local)
(dictionary_splat_pattern (identifier) @local)
(lambda_parameters (identifier) @local)
(assignment left: (identifier) @local)
(augmented_assignment left: (identifier) @local)
(pattern_list (identifier) @local)
(tuple_pattern (identifier) @local)
(for_statement left: (identifier) @local)
(for_in_clause left: (identifier) @local)
(as_pattern_target (identifier) @local)
(as_pattern alias: (as_pattern_target) @local)
(named_expression name: (identifier) @local)
(global_statement (identifier) @global)
(nonlocal_statement (identifier) @global)
""",
    "go": """
(parameter_declaration name: (identifier) @local)
(variadic_parameter_declaration name: (identifier) @local)
(short_var_declaration left: (expression_list (identifier) @local))
(var_spec name: (identifier) @local)
(const_spec name: (identifier) @local)
(range_clause left: (expression_list (identifier) @local))
(type_switch_statement alias: (expression_list (identifier) @local))
(receive_statement left: (expression_list (identifier) @local))
""",
    "javascript": """
(formal_parameters (identifier) @local)
(arrow_function parameter: (identifier) @local)
(variable_declarator name: (identifier) @local)
(assignment_pattern left: (identifier) @local)
(shorthand_property_identifier_pattern) @local
(array_pattern (identifier) @local)
(catch_clause parameter: (identifier) @local)
(for_in_statement left: (identifier) @local)
(pair_pattern value: (identifier) @local)
(rest_pattern (identifier) @local)
""",
    "typescript": """
(required_parameter pattern: (identifier) @local)
(optional_parameter pattern: (identifier) @local)
(arrow_function parameter: (identifier) @local)
(variable_declarator name: (identifier) @local)
(assignment_pattern left: (identifier) @local)
(shorthand_property_identifier_pattern) @local
(array_pattern (identifier) @local)
(catch_clause parameter: (identifier) @local)
(for_in_statement left: (identifier) @local)
(pair_pattern value: (identifier) @local)
(rest_pattern (identifier) @local)
""",
    "rust": """
(parameter pattern: (identifier) @local)
(let_declaration pattern: (identifier) @local)
(closure_parameters (identifier) @local)
(tuple_pattern (identifier) @local)
(for_expression pattern: (identifier) @local)
""",
}
LOCAL_BINDERS["tsx"] = LOCAL_BINDERS["typescript"]


@cache
def locals_query(grammar: str) -> tree_sitter.Query | None:
    """The binder query of a grammar, from the patterns that compile against it."""
    text = locals_text(grammar)
    return tree_sitter.Query(load_language(grammar), text) if text else None


@cache
def locals_text(grammar: str) -> str | None:
    """The binder patterns of a grammar that compile against it, as one query text."""
    language = load_language(grammar)
    if language is None or grammar not in LOCAL_BINDERS:
        return None
    patterns = _split_patterns(LOCAL_BINDERS[grammar])
    if _joined(language, patterns) is not None:
        return "\n".join(patterns)
    parts = [p for p in patterns if _compiles(language, p)]
    return "\n".join(parts) if parts else None


def raw_texts(grammar: str) -> tuple[str, str]:
    """(tags, binders) of a grammar as written, none of it checked against the grammar: a
    caller that joins them into one query (graph/extract.py) compiles that once, and falls
    back to :func:`tags_text` and :func:`locals_text` when it fails."""
    parts = [text for _, text in _tags_files(grammar)]
    parts += _split_patterns(SUPPLEMENTS.get(grammar, ""))
    return "\n".join(parts), LOCAL_BINDERS.get(grammar, "")


def _joined(language: tree_sitter.Language, parts: list[str]) -> tree_sitter.Query | None:
    """All the parts as one query when they compile together, the usual case: one compile
    instead of one per part and another of those that pass (TypeScript's tags: 0.07 s
    instead of 0.21 s).  None: some part fails; the caller checks them one by one."""
    if not parts:
        return None
    try:
        return tree_sitter.Query(language, "\n".join(parts))
    except Exception:  # a query error names the bad node; the caller finds which part
        return None


def _tags_file(grammar: str) -> Path | None:
    """The grammar package's tags.scm, if it ships one (some wheels put queries beside the
    module in a folder spelt with a hyphen, e.g. tree_sitter_c-sharp)."""
    module = importlib.import_module(GRAMMARS[grammar][0])
    here = Path(module.__file__).parent
    for folder in (
        here,
        here.parent / here.name.replace("_", "-").replace("tree-sitter-", "tree_sitter_"),
    ):
        path = folder / "queries" / "tags.scm"
        if path.is_file():
            return path
    return None


@cache
def _tags_files(grammar: str) -> tuple[tuple[str, str], ...]:
    """(grammar whose tags.scm, its text) of the grammar's base and its own tags files."""
    files = []
    for source in (_BASE_TAGS.get(grammar), grammar):
        if source is None:
            continue
        try:
            path = _tags_file(source)
        except ImportError:
            path = None
        if path is not None:
            files.append((source, path.read_text(encoding="utf-8")))
    return tuple(files)


def _compiles(language: tree_sitter.Language, text: str) -> bool:
    try:
        tree_sitter.Query(language, text)
        return True
    except Exception:  # a query error names the bad node; the caller logs the grammar
        return False


@cache
def tags_query(grammar: str) -> tree_sitter.Query | None:
    """The definition + call query for a grammar, or None when it has no usable patterns."""
    text = tags_text(grammar)
    if not text:
        return None
    return used_only(tree_sitter.Query(load_language(grammar), text), text)


@cache
def tags_text(grammar: str) -> str | None:
    """The tags patterns of a grammar that compile against it, as one query text."""
    language = load_language(grammar)
    if language is None:
        return None
    files = _tags_files(grammar)
    patterns = _split_patterns(SUPPLEMENTS.get(grammar, ""))
    if _joined(language, [text for _, text in files] + patterns) is not None:
        return "\n".join([text for _, text in files] + patterns)
    parts: list[str] = []
    for source, text in files:
        if _compiles(language, text):
            parts.append(text)
        else:
            log.warning("tags.scm of %s does not compile for %s; left out", source, grammar)
    for pattern in patterns:
        if _compiles(language, pattern):
            parts.append(pattern)
        else:
            log.warning("graph pattern for %s does not compile; left out: %s", grammar, pattern)
    return "\n".join(parts) if parts else None


# What the graph reads from a tags match (graph/extract.py): a definition, or a call's name.
_USED_CAPTURES = (b"@definition.", b"@reference.call")


def used_only(query: tree_sitter.Query, text: str) -> tree_sitter.Query:
    """The query with the tags patterns the graph never reads disabled (`@reference.type`,
    `@reference.class`, `@reference.implementation`...: Go's type uses are a third of gin's
    tags matches); ``text`` is the query's tags part, which comes first.  A match of such a
    pattern is skipped by the reader anyway; disabled, it is neither searched for nor built.
    Pattern numbers stay as they were."""
    source = text.encode("utf-8")
    for index in range(query.pattern_count):
        begin = query.start_byte_for_pattern(index)
        if begin >= len(source):
            break  # past the tags part: binder or name patterns
        pattern = source[begin : query.end_byte_for_pattern(index)]
        if not any(capture in pattern for capture in _USED_CAPTURES):
            query.disable_pattern(index)
    return query


def _split_patterns(text: str) -> list[str]:
    """Top-level s-expressions of a query text, so that each supplement is checked alone."""
    patterns, depth, start = [], 0, None
    for i, char in enumerate(text):
        if char == "(":
            if depth == 0:
                start = i
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0 and start is not None:
                end = text.find("\n", i)
                patterns.append(text[start : len(text) if end < 0 else end].strip())
                start = None
    return patterns
