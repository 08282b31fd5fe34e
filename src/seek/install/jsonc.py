"""Minimal, reversible edits of JSON files (with comments and trailing commas where the agent
allows them) for ``seek install`` (issue 15).

The file is parsed into spans (where each member's key starts and its value ends), and an
edit splices text in or out at those offsets: every byte outside the edited member stays as
it was (comments, key order, indentation, number spelling), and removing a member seek
inserted gives back the original bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 200
"""Nesting refused beyond this (an agent's config is a few levels deep; the parser recurses
once per level, so a hostile 5,000-deep file would otherwise end in a RecursionError)."""


class JsonSyntaxError(ValueError):
    """The text is not JSON (or not JSON with comments, where those are allowed)."""


@dataclass
class Member:
    key: str
    key_start: int
    value: Node


@dataclass
class Node:
    start: int
    end: int
    """Offset just past the value."""
    value: Any
    members: list[Member] = field(default_factory=list)
    """Object members in order (objects only)."""

    def member(self, key: str) -> Member | None:
        found = [m for m in self.members if m.key == key]
        return found[-1] if found else None  # JSON parsers keep the last duplicate


class _Parser:
    def __init__(self, text: str, comments: bool) -> None:
        self.text, self.comments, self.pos, self.depth = text, comments, 0, 0

    def fail(self, message: str) -> JsonSyntaxError:
        line = self.text.count("\n", 0, self.pos) + 1
        column = self.pos - (self.text.rfind("\n", 0, self.pos) + 1) + 1
        return JsonSyntaxError(f"line {line} column {column}: {message}")

    def skip(self) -> None:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t\r\n\ufeff":
                self.pos += 1
            elif text.startswith("//", self.pos) or text.startswith("/*", self.pos):
                if not self.comments:
                    raise self.fail("comments are not allowed in this file")
                if text[self.pos + 1] == "/":
                    end = text.find("\n", self.pos)
                    self.pos = len(text) if end < 0 else end
                else:
                    end = text.find("*/", self.pos + 2)
                    if end < 0:
                        raise self.fail("unterminated comment")
                    self.pos = end + 2
            else:
                return

    def value(self) -> Node:
        self.skip()
        if self.pos >= len(self.text):
            raise self.fail("unexpected end of file")
        char = self.text[self.pos]
        if char in "{[":
            if self.depth >= MAX_DEPTH:
                raise self.fail(f"nested deeper than {MAX_DEPTH} levels")
            self.depth += 1
            node = self.object() if char == "{" else self.array()
            self.depth -= 1
            return node
        start = self.pos
        if char == '"':
            return Node(start, self.string_end(), self.string(start))
        decoder = json.JSONDecoder()
        try:
            value, end = decoder.raw_decode(self.text, self.pos)
        except ValueError:
            raise self.fail("expected a value") from None
        self.pos = end
        return Node(start, end, value)

    def string(self, start: int) -> str:
        """The string literal from ``start`` to ``self.pos``, decoded."""
        try:
            return json.loads(self.text[start : self.pos])
        except ValueError as exc:  # an invalid escape such as \\q
            self.pos = start
            raise self.fail(f"bad string ({exc.args[0].split(':')[0]})") from None

    def string_end(self) -> int:
        end = self.pos + 1
        while end < len(self.text):
            char = self.text[end]
            if char == "\\":
                end += 2
            elif char == '"':
                self.pos = end + 1
                return self.pos
            elif char == "\n":
                break
            else:
                end += 1
        raise self.fail("unterminated string")

    def object(self) -> Node:
        start = self.pos
        self.pos += 1
        node = Node(start, start, {})
        while True:
            self.skip()
            if self.text.startswith("}", self.pos):
                break
            if not self.text.startswith('"', self.pos):
                raise self.fail("expected a quoted key or '}'")
            key_start = self.pos
            self.string_end()
            key = self.string(key_start)
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise self.fail("expected ':'")
            self.pos += 1
            child = self.value()
            node.members.append(Member(key, key_start, child))
            node.value[key] = child.value
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
                self.skip()
                if self.text.startswith("}", self.pos) and not self.comments:
                    raise self.fail("trailing comma")
                continue
            if not self.text.startswith("}", self.pos):
                raise self.fail("expected ',' or '}'")
        self.pos += 1
        node.end = self.pos
        return node

    def array(self) -> Node:
        start = self.pos
        self.pos += 1
        items = []
        while True:
            self.skip()
            if self.text.startswith("]", self.pos):
                break
            items.append(self.value().value)
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
                self.skip()
                if self.text.startswith("]", self.pos) and not self.comments:
                    raise self.fail("trailing comma")
                continue
            if not self.text.startswith("]", self.pos):
                raise self.fail("expected ',' or ']'")
        self.pos += 1
        return Node(start, self.pos, items)


def parse(text: str, *, comments: bool = False) -> Node:
    """The document's root value with spans; raises :class:`JsonSyntaxError`."""
    parser = _Parser(text, comments)
    root = parser.value()
    parser.skip()
    if parser.pos != len(text):
        raise parser.fail("unexpected text after the end of the document")
    return root


def _line_indent(text: str, offset: int) -> str:
    line_start = text.rfind("\n", 0, offset) + 1
    line = text[line_start:offset]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _indent_unit(text: str, root: Node) -> str:
    """The file's indentation step (that of the root's first member), else two spaces."""
    if root.members:
        unit = _line_indent(text, root.members[0].key_start)
        if unit and text.rfind("\n", 0, root.members[0].key_start) > root.start - 1:
            return unit
    return "  "


def _render(key: str, value: Any, indent: str, unit: str) -> str:
    body = json.dumps(value, indent=unit, ensure_ascii=False)
    return json.dumps(key) + ": " + body.replace("\n", "\n" + indent)


def set_member(text: str, path: tuple[str, ...], key: str, value: Any, *, comments: bool) -> str:
    """``text`` with ``path`` -> ``key`` set to ``value`` (objects on the path are created;
    an equal value already there leaves the text unchanged)."""
    root = parse(text, comments=comments) if text.strip() else None
    if root is None:
        text, root = "{}\n", parse("{}\n")
    if not isinstance(root.value, dict):
        raise JsonSyntaxError("the file's top level is not an object")
    unit = _indent_unit(text, root)
    node, depth = root, 0
    for name in path:
        child = node.member(name)
        if child is None:
            break
        if not isinstance(child.value.value, dict):
            raise JsonSyntaxError(f"{'.'.join(path[: depth + 1])} is not an object")
        node, depth = child.value, depth + 1
    nested: Any = value
    for name in reversed((*path[depth:], key)[1:]):
        nested = {name: nested}
    new_key = (*path[depth:], key)[0]
    existing = node.member(new_key)
    if existing is not None:  # only reached when new_key == key (the path exists)
        if existing.value.value == value:
            return text
        indent = _line_indent(text, existing.key_start)
        rendered = _render(key, value, indent, unit)
        return text[: existing.key_start] + rendered + text[existing.value.end :]
    return _insert(text, node, new_key, nested, unit)


def _insert(text: str, node: Node, key: str, value: Any, unit: str) -> str:
    if node.members:
        last = node.members[-1]
        indent = _line_indent(text, last.key_start)
        if text.rfind("\n", 0, last.key_start) < node.start:  # all on the brace's line
            return (
                text[: last.value.end]
                + ", "
                + _render(key, value, "", unit)
                + text[last.value.end :]
            )
        member = _render(key, value, indent, unit)
        return text[: last.value.end] + ",\n" + indent + member + text[last.value.end :]
    outer = _line_indent(text, node.start)
    member = _render(key, value, outer + unit, unit)
    inside = text[node.start + 1 : node.end - 1]
    after = inside if inside.strip() else "\n" + outer  # keep comments inside "{ }"
    return text[: node.start + 1] + "\n" + outer + unit + member + after + text[node.end - 1 :]


def remove_member(text: str, path: tuple[str, ...], key: str, *, comments: bool) -> str:
    """``text`` without ``path`` -> ``key``; objects on the path left empty by the removal
    go too (they were created by :func:`set_member`). Unchanged when the key is absent."""
    root = parse(text, comments=comments)
    chain: list[Node] = [root]
    for name in path:
        child = chain[-1].member(name)
        if child is None or not isinstance(child.value.value, dict):
            return text
        chain.append(child.value)
    if chain[-1].member(key) is None:
        return text
    keys = (*path, key)
    for level in range(len(chain) - 1, -1, -1):
        node = chain[level]
        name = keys[level]
        if len(node.members) > 1 or level == 0:
            return _cut(text, node, name)
        # the object holds only this member: drop the whole object one level up
    return text  # unreachable: level 0 always returns


def _cut(text: str, node: Node, key: str) -> str:
    index = max(i for i, m in enumerate(node.members) if m.key == key)
    member = node.members[index]
    if len(node.members) == 1:
        rest = text[member.value.end : node.end - 1]
        return text[: node.start + 1] + (rest if rest.strip() else "") + text[node.end - 1 :]
    if index == len(node.members) - 1:
        return text[: node.members[index - 1].value.end] + text[member.value.end :]
    return text[: member.key_start] + text[node.members[index + 1].key_start :]
