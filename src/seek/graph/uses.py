"""Which identifier leaves of a file are uses, and of what (issue 28, deliver 1): the
reference pass of :mod:`seek.graph.extract`.  A leaf is a member use when it is the member
name of an `owner.member` node (its owner's plain name is the use's qualifier and, where the
grammar has declared types, its owner's type expression, graph.types), a Go composite
literal's key, or else a bare name, which is dropped when its function binds that name
itself (a parameter, a local).
"""

from __future__ import annotations

from functools import cache
from operator import itemgetter

import tree_sitter

from seek.chunk.languages import load_language

ReferenceRow = tuple[str, int, int, "str | None", bool, bool, "str | None", "str | None"]
"""A reference's fields after its path, in :class:`seek.graph.model.Reference`'s order."""

_NOT_USES = frozenset(("self", "this", "_"))
# The field that holds a member's own name, and the one that holds what it is a member of.
_MEMBER_FIELDS = ("attribute", "property", "field", "name", "method")
_OWNER_FIELDS = (
    "object",
    "package",
    "operand",
    "value",
    "path",
    "scope",
    "expression",
    "receiver",
    "table",
    "argument",
    "module",
)
# Node kinds that hold `owner.member` (checked first: the field probes cost a third of the
# reference pass when run on every identifier's parent).
_MEMBER_NODES = {
    "attribute",
    "member_expression",
    "selector_expression",
    "field_expression",
    "scoped_identifier",
    "scoped_type_identifier",
    "field_access",
    "method_invocation",
    "member_access_expression",
    "call",
    "member_call_expression",
    "scoped_call_expression",
    "nullsafe_member_call_expression",
    "nullsafe_member_access_expression",
    "dot_index_expression",
    "method_index_expression",
    "qualified_type",
    "navigation_expression",
    "scoped_property_access_expression",
    "nested_type_identifier",
}
# Member nodes that are themselves calls (Java `a.b()`, PHP `$a->b()`, Ruby `a.b`, Lua `a:b()`).
_MEMBER_CALLS = {
    "method_invocation",
    "member_call_expression",
    "scoped_call_expression",
    "call",
    "method_index_expression",
}


def _visible(visible: dict, bound: dict[str, set[str]], enclosing: str | None) -> set[str]:
    """The names bound for a bare use inside ``enclosing``: by it or by a function it is
    nested in (a closure's free name); built once per definition and memoised in
    ``visible`` rather than walked up for every use."""
    names = visible.get(enclosing)
    if names is None:
        names = set()
        scope = enclosing
        while scope:
            names.update(bound.get(scope, ()))
            scope = scope.rpartition(".")[0]
        visible[enclosing] = names
    return names


def references(
    grammar, leaves, name_starts, call_starts, spans, receivers, bound, typing=None
) -> list[ReferenceRow]:
    # One start_byte read per node (each Node attribute read builds a Python object), sorted
    # stably as before; the enclosing definition comes from a sweep over the sorted spans
    # instead of a bisect per node.
    keyed = [(n.start_byte, n) for n in leaves]
    keyed.sort(key=itemgetter(0))
    go = grammar == "go"
    function_field = field_id(grammar, "function")
    member_fields, owner_fields = _field_ids(grammar)
    refs: list[ReferenceRow] = []
    append = refs.append
    open_spans: list[tuple[int, str]] = []  # (end_byte, qualified) of spans begun so far
    next_span, span_count = 0, len(spans)
    # receivers are methods' spans, which never nest: the one around a use is found by a
    # sweep, as the enclosing definition is
    next_receiver, receiver_count = 0, len(receivers)
    # enclosing definition -> the names bound for uses inside it (_visible)
    visible: dict[str | None, frozenset[str] | set[str]] = {None: frozenset()}
    for start, node in keyed:
        if start in name_starts or node.child_count:
            continue
        name = node.text.decode("utf-8", "replace")
        if not name or name in _NOT_USES:
            continue
        while next_span < span_count and spans[next_span][0] <= start:
            open_spans.append((spans[next_span][1], spans[next_span][2]))
            next_span += 1
        while open_spans and open_spans[-1][0] <= start:
            open_spans.pop()
        enclosing = open_spans[-1][1] if open_spans else None
        member, qualifier, owner = False, None, None
        parent = node.parent
        parent_type = parent.type if parent is not None else None
        if parent_type in _MEMBER_NODES:
            member, owner_node = _member_owner(parent, node, member_fields, owner_fields)
        if member:
            qualifier = _owner_name(owner_node)
            if typing is not None:
                owner = typing.owner(owner_node, enclosing)
            if receiver_count:
                while next_receiver < receiver_count and receivers[next_receiver][1] <= start:
                    next_receiver += 1
                if next_receiver < receiver_count:
                    span_start, _, receiver = receivers[next_receiver]
                    if qualifier == receiver and span_start <= start:
                        qualifier = "self"  # documented on Reference.qualifier
        elif go and parent_type == "literal_element" and _is_literal_key(grammar, node):
            # `T{field: v}`: a field of T, whatever local shares its name
            member, qualifier = True, _literal_type(node)
            composite = node.parent.parent.parent.parent
            if typing is not None and composite is not None:
                if composite.type == "composite_literal":
                    owner = typing.type_of(composite.child_by_field_name("type"))
        elif bound and name in _visible(visible, bound, enclosing):
            continue  # a name its function binds (a parameter, a local): it means no definition
        elif parent_type == "export_specifier" and parent.child_by_field_name("alias") == node:
            # `export { a as b }`: b is the name a is exported under, a use of a
            original = parent.child_by_field_name("name")
            name = original.text.decode("utf-8", "replace") if original is not None else name
        call = start in call_starts or (member and parent_type in _MEMBER_CALLS)
        if not call and function_field is not None:
            # is the use (or its `owner.member` node) the callee of a call?  node.parent is
            # a walk down from the root, so the parent already read is reused
            target, outer = (parent, parent.parent) if member else (node, parent)
            call = outer is not None and outer.child_by_field_id(function_field) == target
        point = node.start_point
        append(
            (
                name,
                point.row + 1,
                point.column,
                enclosing,
                call,
                member,
                qualifier,
                owner,
            )
        )
    return refs


@cache
def field_id(grammar: str, field: str) -> int | None:
    """The field's id, None when no node of the grammar has it (no lookup of it can succeed)."""
    language = load_language(grammar)
    return language.field_id_for_name(field) if language is not None else None


def _has_field(grammar: str, field: str) -> bool:
    return field_id(grammar, field) is not None


@cache
def _fields(grammar: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The member and owner fields the grammar has, in their order: a lookup of a field the
    grammar lacks always finds nothing, so it is not made."""
    return (
        tuple(f for f in _MEMBER_FIELDS if _has_field(grammar, f)),
        tuple(f for f in _OWNER_FIELDS if _has_field(grammar, f)),
    )


@cache
def _field_ids(grammar: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """:func:`_fields` as field ids (a lookup by id skips the name's lookup each time)."""
    member_fields, owner_fields = _fields(grammar)
    return (
        tuple(field_id(grammar, f) for f in member_fields),
        tuple(field_id(grammar, f) for f in owner_fields),
    )


def _member_owner(
    parent: tree_sitter.Node,
    node: tree_sitter.Node,
    member_fields: tuple[int, ...],
    owner_fields: tuple[int, ...],
):
    """(is ``node`` the member name of ``parent``, the owner's node) for a member-node parent:
    the member is the node under a member field (``member_fields``, the grammar's ids:
    :func:`_field_ids`), and it counts only when an owner exists."""
    owner = None
    for field in owner_fields:
        owner = parent.child_by_field_id(field)
        if owner is not None:
            break
    if owner is None:
        return False, None
    for field in member_fields:
        if parent.child_by_field_id(field) == node:
            return True, owner
    return False, None


def _is_literal_key(grammar: str, node: tree_sitter.Node) -> bool:
    if grammar != "go" or node.parent is None or node.parent.type != "literal_element":
        return False
    keyed = node.parent.parent
    if keyed is None or keyed.type != "keyed_element" or keyed.named_children[0] != node.parent:
        return False
    # a map literal's keys are values (`map[string]T{mGET: ...}`), not fields; an elided
    # inner literal is a map's when the nearest written type is a map's
    literal = keyed.parent
    while literal is not None and literal.type in ("literal_value", "literal_element"):
        literal = literal.parent
        if literal is not None and literal.type == "keyed_element":
            literal = literal.parent  # the outer literal_value of `{k: {inner}}`
    composite = literal if literal is not None and literal.type == "composite_literal" else None
    written = composite.child_by_field_name("type") if composite is not None else None
    return written is None or written.type != "map_type" or keyed.parent.parent != composite


def _literal_type(node: tree_sitter.Node) -> str | None:
    literal = node.parent.parent.parent  # literal_element < keyed_element < literal_value
    composite = literal.parent if literal is not None else None
    if composite is None or composite.type != "composite_literal":
        return None
    return first_of(composite.child_by_field_name("type"), "type_identifier")


def _owner_name(owner: tree_sitter.Node) -> str | None:
    """The owner's name when it is a plain name (`os` in `os.path`), else None."""
    if owner.child_count == 0 and owner.is_named:
        return owner.text.decode("utf-8", "replace")
    return None


def first_of(node: tree_sitter.Node | None, kind: str) -> str | None:
    if node is None:
        return None
    if node.type == kind:
        return node.text.decode("utf-8", "replace")
    for child in node.named_children:
        found = first_of(child, kind)
        if found:
            return found
    return None
