"""`seek changed`'s comparison of definitions (issue 44 deliver 4): on constructed changes in
every grammar the code graph reads - a body edited, a signature changed, a definition
renamed, moved to another file, removed and added, and a change of whitespace alone - each
definition is reported as what happened to it, with real tree-sitter."""

from __future__ import annotations

import pytest

from seek.change.definitions import FileSide, compare

# grammar -> (extension, file head, container template or None, function template)
# A template takes {name}, {params} (a list already joined) and {body} (an expression).
LANGUAGES = {
    "python": ("py", "", None, "def {name}({params}):\n    return {body}\n"),
    "javascript": ("js", "", None, "function {name}({params}) {{\n  return {body};\n}}\n"),
    "typescript": ("ts", "", None,
                   "function {name}({params}): number {{\n  return {body};\n}}\n"),
    "tsx": ("tsx", "", None, "function {name}({params}): number {{\n  return {body};\n}}\n"),
    "go": ("go", "package p\n\n", None, "func {name}({params}) int {{\n\treturn {body}\n}}\n"),
    "rust": ("rs", "", None, "fn {name}({params}) -> i32 {{\n    {body}\n}}\n"),
    "c": ("c", "", None, "int {name}({params}) {{\n  return {body};\n}}\n"),
    "cpp": ("cpp", "", None, "int {name}({params}) {{\n  return {body};\n}}\n"),
    "java": ("java", "", "class {box} {{\n{members}}}\n",
             "  int {name}({params}) {{\n    return {body};\n  }}\n"),
    "csharp": ("cs", "", "class {box} {{\n{members}}}\n",
               "  int {name}({params}) {{\n    return {body};\n  }}\n"),
    "kotlin": ("kt", "", None, "fun {name}({params}): Int {{\n  return {body}\n}}\n"),
    "swift": ("swift", "", None, "func {name}({params}) -> Int {{\n  return {body}\n}}\n"),
    "scala": ("scala", "", "object {box} {{\n{members}}}\n",
              "  def {name}({params}): Int = {{\n    {body}\n  }}\n"),
    "php": ("php", "<?php\n", None, "function {name}({params}) {{\n  return {body};\n}}\n"),
    "ruby": ("rb", "", None, "def {name}({params})\n  {body}\nend\n"),
    "lua": ("lua", "", None, "function {name}({params})\n  return {body}\nend\n"),
    "elixir": ("ex", "", "defmodule {box} do\n{members}end\n",
               "  def {name}({params}) do\n    {body}\n  end\n"),
    "zig": ("zig", "", None, "fn {name}({params}) i32 {{\n    return {body};\n}}\n"),
}  # fmt: skip
TYPED = {"go": "{} int", "rust": "{}: i32", "c": "int {}", "cpp": "int {}", "java": "int {}",
         "csharp": "int {}", "kotlin": "{}: Int", "swift": "{}: Int", "scala": "{}: Int",
         "php": "${}", "zig": "{}: i32", "typescript": "{}: number",
         "tsx": "{}: number"}  # fmt: skip


def source(grammar: str, box: str, functions: list[tuple[str, list[str], str]]) -> bytes:
    """A file of ``functions`` (name, parameters, body) in ``grammar``, in a container
    named ``box`` where the language wants one."""
    _, head, container, template = LANGUAGES[grammar]
    param = TYPED.get(grammar, "{}")
    var = "$" if grammar == "php" else ""
    members = "\n".join(
        template.format(name=name, params=", ".join(param.format(p) for p in params),
                        body=body.replace("@", var))
        for name, params, body in functions
    )  # fmt: skip
    text = container.format(box=box, members=members) if container else members
    return (head + text).encode()


BEFORE = [("edited", ["a"], "@a + 1"), ("widened", ["a"], "@a * 2"),
          ("old_name", ["a"], "@a - 3"), ("dropped", ["a"], "@a + 4"),
          ("travels", ["a"], "@a * 5")]  # fmt: skip
AFTER = [("edited", ["a"], "@a + 100"), ("widened", ["a", "b"], "@a * 2"),
         ("new_name", ["a"], "@a - 3"), ("arrived", ["a"], "@a + 6")]  # fmt: skip


@pytest.mark.parametrize("grammar", sorted(LANGUAGES))
def test_every_kind_of_change_is_named_in_every_grammar(grammar):
    ext = LANGUAGES[grammar][0]
    a, b = f"src/a.{ext}", f"src/b.{ext}"
    other = [("stays", ["a"], "@a + 7")]
    pairs = [
        (FileSide(a, source(grammar, "A", BEFORE)), FileSide(a, source(grammar, "A", AFTER))),
        (FileSide(b, source(grammar, "B", other)),
         FileSide(b, source(grammar, "B", [*other, ("travels", ["a"], "@a * 5")]))),
    ]  # fmt: skip
    found = {(c.change, c.current.name): c for c in compare(pairs)}
    assert set(found) == {("modified", "edited"), ("modified", "widened"),
                          ("renamed", "new_name"), ("removed", "dropped"),
                          ("moved", "travels"), ("added", "arrived")}  # fmt: skip
    assert not found[("modified", "edited")].signature_changed
    assert found[("modified", "widened")].signature_changed
    assert not found[("renamed", "new_name")].signature_changed
    assert found[("renamed", "new_name")].old.name == "old_name"
    moved = found[("moved", "travels")]
    assert (moved.old.path, moved.new.path) == (a, b)
    assert found[("removed", "dropped")].current.path == a


@pytest.mark.parametrize("grammar", sorted(LANGUAGES))
def test_whitespace_alone_changes_nothing(grammar):
    ext = LANGUAGES[grammar][0]
    before = source(grammar, "A", BEFORE)
    after = before.replace(b", ", b",   ").replace(b" + ", b"  +  ").replace(b"\n}", b"\n\n}")
    after = after.replace(b"\n", b"  \n")  # trailing spaces on every line
    assert after != before
    side = f"src/a.{ext}"
    assert compare([(FileSide(side, before), FileSide(side, after))]) == []


def test_a_method_edit_is_the_method_not_its_class():
    before = b"class Box:\n    size = 1\n\n    def grow(self):\n        return 1\n"
    after = b"class Box:\n    size = 1\n\n    def grow(self):\n        return 2\n"
    changes = compare([(FileSide("box.py", before), FileSide("box.py", after))])
    assert [(c.change, c.current.qualified) for c in changes] == [("modified", "Box.grow")]
    field = after.replace(b"size = 1", b"size = 2")
    changes = compare([(FileSide("box.py", after), FileSide("box.py", field))])
    assert [(c.change, c.current.qualified, c.signature_changed) for c in changes] == [
        ("modified", "Box.size", False)
    ]


def test_a_signature_across_lines_and_a_file_renamed_by_git():
    before = b"def run(a,\n        b):\n    return a\n\n\ndef keep():\n    return 0\n"
    after = b"def run(a,\n        b,\n        c):\n    return a\n\n\ndef keep():\n    return 0\n"
    changes = compare([(FileSide("old/run.py", before), FileSide("new/run.py", after))])
    rows = [c.to_json() for c in changes]
    assert [(c.change, c.current.name, c.signature_changed) for c in changes] == [
        ("modified", "run", True), ("moved", "keep", False)]  # fmt: skip
    assert rows[0]["old"] == {"path": "old/run.py", "line": 1, "name": "run", "container": None}
    added = compare([(None, FileSide("n.py", after))])
    assert {(c.change, c.current.name) for c in added} == {("added", "run"), ("added", "keep")}
    gone = compare([(FileSide("n.py", after), None)])
    assert {(c.change, c.current.name) for c in gone} == {("removed", "run"), ("removed", "keep")}


def test_python_indentation_is_meaning_and_spacing_is_not():
    before = b"def f(x):\n    if x:\n        x = 1\n        return x\n    return 0\n"
    dedented = b"def f(x):\n    if x:\n        x = 1\n    return x\n    return 0\n"
    tabs = before.replace(b"        ", b"\t\t").replace(b"    ", b"\t")
    spaced = before.replace(b"f(x)", b"f( x )").replace(b"x = 1", b"x=1")
    wrapped = before.replace(b"def f(x):", b"def f(\n    x,\n):")

    def changes(after):
        pair = (FileSide("f.py", before), FileSide("f.py", after))
        return [(c.change, c.current.name) for c in compare([pair])]

    assert changes(dedented) == [("modified", "f")]
    assert changes(tabs) == changes(spaced) == []
    assert changes(wrapped) == [("modified", "f")]  # the trailing comma is a token
    assert changes(wrapped.replace(b"x,\n", b"x\n")) == []
