"""The tests written as calls with a name and a block (issue 44 deliver 3, `seek tests`):
JavaScript and TypeScript's ``describe``/``it``/``test`` (jest, vitest, mocha), Ruby's RSpec
``describe``/``context``/``it`` (and ActiveSupport's ``test "..." do``) and Elixir's ExUnit
``describe``/``test``. The code graph holds no definition for them (a call's callback is no
named definition), so a test file of these languages is read again with tree-sitter here:
each test's name (its groups' names and its own, joined by a space, as jest's ``-t`` and
vitest's full names read them), its lines, and the hooks (``beforeEach``, ``before``,
``let``, ``setup``...) whose code runs for every test of their group.
"""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter

from seek.chunk.languages import grammar_for_path, parser_for

BLOCK_GRAMMARS = frozenset({"javascript", "typescript", "tsx", "ruby", "elixir"})

_GROUPS = frozenset({"describe", "context", "suite", "fdescribe", "xdescribe", "feature"})
_TESTS = frozenset({"it", "test", "specify", "example", "scenario", "fit", "xit", "bench"})
_HOOKS = frozenset({
    "beforeEach", "beforeAll", "afterEach", "afterAll", "before", "after", "around",
    "setup", "setup_all", "let", "let!", "subject", "given",
})  # fmt: skip
_STRINGS = frozenset({"string", "template_string", "quoted_content", "string_content"})


@dataclass(frozen=True, slots=True)
class Block:
    """A test (``kind`` "test"), a group or a hook: its full name (a hook's is its group's),
    its 1-based lines, and the groups around it (outermost first, as line spans)."""

    kind: str
    name: str
    line: int
    end_line: int
    groups: tuple[tuple[int, int], ...]


def read_blocks(path: str, source: bytes) -> list[Block]:
    """The groups, tests and hooks of a test file, in file order ([] for another grammar)."""
    grammar = grammar_for_path(path)
    parser = parser_for(grammar) if grammar in BLOCK_GRAMMARS else None
    if parser is None:
        return []
    found: list[Block] = []
    _walk(grammar or "", parser.parse(source).root_node, (), (), found)
    return found


def _walk(
    grammar: str,
    node: tree_sitter.Node,
    names: tuple[str, ...],
    groups: tuple[tuple[int, int], ...],
    found: list[Block],
) -> None:
    for child in node.named_children:
        called = _called(grammar, child)
        if called is None:
            _walk(grammar, child, names, groups, found)
            continue
        word, title, call, target = called
        span = (child.start_point[0] + 1, child.end_point[0] + 1)
        if word in _GROUPS:
            inner = (*names, title) if title else names
            found.append(Block("group", " ".join(inner), *span, groups))
            _walk_in(grammar, call, target, inner, (*groups, span), found)
        elif word in _TESTS and title:
            found.append(Block("test", " ".join((*names, title)), *span, groups))
        elif word in _HOOKS:
            found.append(Block("hook", " ".join(names), *span, groups))
        else:
            _walk_in(grammar, call, target, names, groups, found)


def _walk_in(grammar, call, target, names, groups, found) -> None:
    """The walk inside a call's arguments and block (not its callee, which is the call)."""
    for part in call.named_children:
        if part.id != target.id:
            _walk(grammar, part, names, groups, found)


def _called(
    grammar: str, node: tree_sitter.Node
) -> tuple[str, str, tree_sitter.Node, tree_sitter.Node] | None:
    """A call's word (``describe`` of ``describe.each(t)(...)`` or ``RSpec.describe``) and
    its first argument's text (a string's content, or a constant's name), or None."""
    if grammar == "elixir":
        if node.type != "call":
            return None
        callee = target = node.child_by_field_name("target")
        args = next((c for c in node.named_children if c.type == "arguments"), None)
    elif grammar == "ruby":
        if node.type != "call":
            return None
        target = node.child_by_field_name("method")
        callee = node.child_by_field_name("receiver") or target
        args = node.child_by_field_name("arguments")
    else:
        if node.type == "expression_statement" and node.named_child_count == 1:
            node = node.named_children[0]
        if node.type != "call_expression":
            return None
        callee = target = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        while target is not None and target.type in ("call_expression", "member_expression"):
            field = "function" if target.type == "call_expression" else "object"
            target = target.child_by_field_name(field)
    if target is None or callee is None or target.type != "identifier" or target.text is None:
        return None
    first = args.named_children[0] if args is not None and args.named_children else None
    return target.text.decode("utf-8", "replace"), _title(first), node, callee


def _title(node: tree_sitter.Node | None) -> str:
    if node is None or node.text is None:
        return ""
    if node.type in _STRINGS or node.type in ("string", "simple_symbol"):
        text = node.text.decode("utf-8", "replace")
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"`":
            text = text[1:-1]  # the quotes, not a backtick the title itself begins with
        return text.lstrip(":")
    if node.type in ("identifier", "constant", "alias", "scope_resolution", "member_expression"):
        return node.text.decode("utf-8", "replace")
    return ""
