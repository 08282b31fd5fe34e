"""Which definitions a change added, modified, removed, renamed or moved (issue 44 deliver 4,
`seek changed`): the graph's definitions of both sides of each changed file, compared by
their own text.

- A definition is identified by its file, kind and qualified name (``Class.method``); two of
  the same identity in one file (overloads, redefinitions) pair up in order.
- Its *own* text is its lines less those of the definitions nested in it, compared as its
  tokens (words, numbers and each other character; whitespace between them left out): a
  method's edit modifies the method, not its class as well, and a change of whitespace
  alone (spacing, re-wrapping, blank lines; inside string literals too) modifies nothing.
  In Python and Haskell, whose indentation is meaning, each statement's indentation is
  kept as its rank among the definition's indentations, so dedenting a line out of a block
  is a modification while re-indenting the whole definition (tabs for spaces, moving it
  into a class) is not.
- Its *signature* is its header: the text up to where its body opens (``{`` at bracket
  depth 0 in the brace languages, ``:`` in Python, ``=`` or ``{`` in Scala, the end of the
  first line elsewhere), compared as tokens. Fields, constants and variables have
  none: any change to them is a modification.
- A removed and an added definition of the same kind whose own text is the same once each
  one's name is masked are one definition **renamed** (names differ) or **moved** (the same
  name in another file or container); a file git reports as renamed keeps the identity of
  its definitions, which are then moved.

Nothing here reads git or the disk: :mod:`seek.change.git` gives the two sides.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from seek.graph import CodeGraph, Definition, extract

VALUE_KINDS = frozenset({"field", "constant", "variable"})
"""Kinds without a signature of their own: a change to one is a modification."""

_BRACE = frozenset(
    "c cpp csharp go java javascript typescript tsx kotlin rust swift php zig".split()
)
_INDENTED = frozenset({"python", "haskell"})
_TOKEN = re.compile(rb"\w+|[^\w\s]")


@dataclass(frozen=True)
class FileSide:
    """One side of a changed file: its workspace-relative path and bytes."""

    path: str
    data: bytes


@dataclass(frozen=True)
class Change:
    """One definition a change touched; ``old`` is the definition before (None when added),
    ``new`` after (None when removed)."""

    change: str  # added | modified | removed | renamed | moved
    old: Definition | None
    new: Definition | None
    signature_changed: bool = False

    @property
    def current(self) -> Definition:
        """The definition as it is after the change, or as it was when removed."""
        return self.new or self.old  # type: ignore[return-value]

    def to_json(self) -> dict[str, object]:
        """What a row adds to the definition's own fields: ``change``, ``signature_changed``
        and, when it was elsewhere or named otherwise before, ``old``."""
        row: dict[str, object] = {"change": self.change,
                                  "signature_changed": self.signature_changed}  # fmt: skip
        old, now = self.old, self.current
        if old is not None and self.new is not None and _where(old) != _where(now):
            row["old"] = {"path": old.path, "line": old.line, "name": old.name,
                          "container": old.container}  # fmt: skip
        return row


@dataclass(frozen=True)
class _Version:
    """A definition with what it is compared by."""

    definition: Definition
    own: bytes  # its own text, whitespace collapsed
    header: bytes  # its signature, whitespace collapsed ("" for value kinds)

    def masked(self) -> bytes:
        """Its own text with its name masked, to find it again under another name."""
        return self._mask(self.own)

    def masked_header(self) -> bytes:
        return self._mask(self.header)

    def _mask(self, text: bytes) -> bytes:
        name = re.escape(self.definition.name.encode())
        return re.sub(rb"(?<![\w$])" + name + rb"(?![\w$])", b"\0", text)


def callers_of(graph: CodeGraph, change: Change) -> int:
    """How many definitions the change reaches through calls, in ``graph`` (the workspace as
    it is now): the callers of the definition after the change; for one removed, the
    definitions still holding a call of its name that binds to nothing (they break)."""
    if change.new is None:
        assert change.old is not None
        return len({
            (r.path, r.enclosing) for r in graph.refs_by_name.get(change.old.name, ())
            if r.call and r.enclosing and not graph.candidates(r)
        })  # fmt: skip
    now = change.new
    found = next((d for d in graph.outline(now.path)
                  if (d.line, d.name, d.kind) == (now.line, now.name, now.kind)), None)  # fmt: skip
    return len(graph.callers(found)) if found is not None else 0


def compare(pairs: Iterable[tuple[FileSide | None, FileSide | None]]) -> list[Change]:
    """The definitions that changed between each ``(before, after)`` pair (None: the file
    was added or removed; two paths: git saw a rename), in the order of the files after the
    change, then of lines."""
    changes: list[Change] = []
    removed: list[_Version] = []
    added: list[_Version] = []
    for before, after in pairs:
        old = _versions(before)
        new = _versions(after)
        by_identity: dict[tuple[str, str], list[_Version]] = defaultdict(list)
        for version in old:
            by_identity[_identity(version.definition)].append(version)
        moved_file = before is not None and after is not None and before.path != after.path
        for version in new:
            olds = by_identity.get(_identity(version.definition))
            if not olds:
                added.append(version)
                continue
            was = olds.pop(0)
            if was.own != version.own:
                changes.append(Change("modified", was.definition, version.definition,
                                      was.header != version.header))  # fmt: skip
            elif moved_file:
                changes.append(Change("moved", was.definition, version.definition))
        removed.extend(v for olds in by_identity.values() for v in olds)
    changes.extend(_pair_renames(removed, added))
    return sorted(changes, key=lambda c: (c.current.path, c.current.line, c.change))


def _pair_renames(removed: list[_Version], added: list[_Version]) -> list[Change]:
    """Removed and added definitions of one kind and one masked text paired as renamed or
    moved; the rest as removed and added."""
    waiting: dict[tuple[str, bytes], list[_Version]] = defaultdict(list)
    for version in removed:
        waiting[(version.definition.kind, version.masked())].append(version)
    changes = []
    for version in added:
        olds = waiting.get((version.definition.kind, version.masked()))
        if not olds or not version.own:
            changes.append(Change("added", None, version.definition))
            continue
        was = olds.pop(0)
        renamed = was.definition.name != version.definition.name
        signature = was.masked_header() != version.masked_header()
        changes.append(Change("renamed" if renamed else "moved", was.definition,
                              version.definition, signature))  # fmt: skip
    changes.extend(Change("removed", v.definition, None) for olds in waiting.values() for v in olds)
    return changes


def _where(definition: Definition) -> tuple[str, str]:
    return (definition.path, definition.qualified)


def _identity(definition: Definition) -> tuple[str, str]:
    return (definition.kind, definition.qualified)


def definitions_of(path: str, data: bytes) -> list[Definition]:
    """The graph's definitions of one version of a file (none without a grammar)."""
    facts = extract(path, data)
    return facts.definitions if facts is not None else []


def _versions(side: FileSide | None) -> list[_Version]:
    if side is None:
        return []
    facts = extract(side.path, side.data)
    if facts is None:
        return []
    lines = side.data.split(b"\n")
    definitions = facts.definitions
    out = []
    for definition in definitions:
        nested = _nested_lines(definition, definitions)
        own = b"\n".join(
            lines[i - 1]
            for i in range(definition.line, min(definition.end_line, len(lines)) + 1)
            if i not in nested
        )
        header = b""
        if definition.kind not in VALUE_KINDS:
            whole = b"\n".join(lines[definition.line - 1 : definition.end_line])
            header = _normal(_header(whole, facts.grammar), "")
        out.append(_Version(definition, _normal(own, facts.grammar), header))
    return out


def _nested_lines(outer: Definition, definitions: list[Definition]) -> set[int]:
    """The lines of the definitions inside ``outer`` (by container, within its lines)."""
    prefix = outer.qualified
    lines: set[int] = set()
    for inner in definitions:
        container = inner.container or ""
        inside = container == prefix or container.startswith(prefix + ".")
        if inner is not outer and inside and outer.line <= inner.line <= outer.end_line:
            lines.update(range(max(inner.line, outer.line + 1), inner.end_line + 1))
    return lines


def _header(text: bytes, grammar: str) -> bytes:
    """The text of a definition up to where its body opens."""
    depth = 0
    for i, byte in enumerate(text):
        char = chr(byte)
        if char in "([":
            depth += 1
        elif char in ")]":
            depth = max(0, depth - 1)
        elif depth:
            continue
        elif char == "{" and (grammar in _BRACE or grammar == "scala"):
            return text[:i]
        elif char == ";" and grammar in _BRACE:  # a declaration without a body
            return text[:i]
        elif char == ":" and grammar == "python" and text[i + 1 : i + 2] in (b"", b"\n", b" "):
            return text[:i]
        elif char == "=" and grammar == "scala" and text[i + 1 : i + 2] != b">":
            return text[:i]
        elif char == "\n" and grammar not in _BRACE and grammar not in ("python", "scala"):
            return text[:i]
    return text


def _normal(text: bytes, grammar: str) -> bytes:
    """``text`` as the tokens compared (see the module docstring)."""
    if grammar not in _INDENTED:
        return b" ".join(_TOKEN.findall(text))
    lines = [line for line in text.split(b"\n") if line.strip()]
    ranks = {w: r for r, w in enumerate(sorted({len(ln) - len(ln.lstrip()) for ln in lines}))}
    out: list[bytes] = []
    depth = 0
    for line in lines:
        tokens = _TOKEN.findall(line)
        if depth == 0:  # a statement's first line: its indentation is meaning
            out.append(b"\n%d" % ranks[len(line) - len(line.lstrip())])
        out.extend(tokens)
        opened = sum(t in (b"(", b"[", b"{") for t in tokens)
        depth = max(0, depth + opened - sum(t in (b")", b"]", b"}") for t in tokens))
    return b" ".join(out)
