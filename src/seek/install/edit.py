"""Text edits behind ``seek install`` / ``seek uninstall`` (issue 15): the MCP entry in a
JSON (with comments where allowed) or TOML file, and the instructions block between seek's
markers in a markdown file. Each function maps old text to new text and changes nothing
else; a file it cannot parse raises :class:`EditError` and is left alone by the caller.
"""

from __future__ import annotations

from typing import Any

import tomlkit
import tomlkit.exceptions

from seek.install import jsonc
from seek.redact import one_line

START_MARKER = "<!-- seek:start -->"
END_MARKER = "<!-- seek:end -->"


class EditError(ValueError):
    """The file cannot be parsed, or does not have the shape seek expects."""


def set_entry(text: str, fmt: str, path: tuple[str, ...], name: str, entry: dict) -> str:
    """``text`` with the server ``entry`` under ``path`` -> ``name`` (unchanged when equal)."""
    try:
        if fmt == "toml":
            return _toml_set(text, path, name, entry)
        return jsonc.set_member(text, path, name, entry, comments=fmt == "jsonc")
    except (jsonc.JsonSyntaxError, tomlkit.exceptions.TOMLKitError, RecursionError) as exc:
        raise EditError(_one_line(exc)) from exc


def remove_entry(text: str, fmt: str, path: tuple[str, ...], name: str) -> str:
    """``text`` without ``path`` -> ``name`` (and without containers left empty by that)."""
    try:
        if fmt == "toml":
            return _toml_remove(text, path, name)
        return jsonc.remove_member(text, path, name, comments=fmt == "jsonc")
    except (jsonc.JsonSyntaxError, tomlkit.exceptions.TOMLKitError, RecursionError) as exc:
        raise EditError(_one_line(exc)) from exc


def _one_line(exc: Exception) -> str:
    """The parser's complaint as one line (a hostile file must not fill the terminal)."""
    if isinstance(exc, RecursionError):
        return "nested too deeply to read"
    return one_line(str(exc), 200)


def _toml_set(text: str, path: tuple[str, ...], name: str, entry: dict) -> str:
    doc = tomlkit.parse(text)
    node: Any = doc
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    if isinstance(node, dict) and name in node:
        if node[name].unwrap() == entry:
            return text
        node[name] = entry  # seek's entry changed (a new install path): replace it in place
        return doc.as_string()
    # Appended as its own table, like a person would write it, so that removing the table
    # gives back the file byte for byte.
    block = (
        "["
        + ".".join((*path, name))
        + "]\n"
        + "".join(f"{key} = {tomlkit.item(value).as_string()}\n" for key, value in entry.items())
    )
    separator = "" if not text else "\n" if text.endswith("\n") else "\n\n"
    out = text + separator + block
    if _toml_entry(out, path, name) != entry:
        raise EditError(f"cannot add [{'.'.join((*path, name))}] to this file's layout")
    return out


def _toml_entry(text: str, path: tuple[str, ...], name: str) -> Any:
    node: Any = tomlkit.parse(text).unwrap()
    for key in (*path, name):
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _toml_remove(text: str, path: tuple[str, ...], name: str) -> str:
    if _toml_entry(text, path, name) is None:
        return text
    expected = tomlkit.parse(text).unwrap()
    node = expected
    for key in path:
        node = node[key]
    del node[name]
    for level in range(len(path), 0, -1):  # drop tables the removal leaves empty
        parent = expected
        for key in path[: level - 1]:
            parent = parent[key]
        if parent[path[level - 1]] == {}:
            del parent[path[level - 1]]
    header = "[" + ".".join((*path, name)) + "]"
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.strip() == header]
    if len(starts) == 1:  # the table as install wrote it: cut it out, text and all
        first = starts[0]
        last = next(
            (i for i in range(first + 1, len(lines)) if lines[i].lstrip().startswith("[")),
            len(lines),
        )
        before, after = "".join(lines[:first]), "".join(lines[last:])
        if not after and before.endswith("\n\n"):
            before = before[:-1]
        out = before + after
        if tomlkit.parse(out).unwrap() == expected:
            return out
    doc = tomlkit.parse(text)  # written some other way: remove it structurally
    chain: list[Any] = [doc]
    for key in path:
        chain.append(chain[-1][key])
    del chain[-1][name]
    for level in range(len(path), 0, -1):
        if len(chain[level]) == 0:
            del chain[level - 1][path[level - 1]]
    return doc.as_string()


def set_block(text: str, body: str) -> str:
    """``text`` with seek's instructions block holding ``body`` (replaced in place when the
    markers are there, else appended after a blank line)."""
    block = f"{START_MARKER}\n{body.strip()}\n{END_MARKER}\n"
    span = _block_span(text)
    if span is not None:
        start, end = span
        return text[:start] + block + text[end:]
    if not text:
        return block
    separator = "\n" if text.endswith("\n") else "\n\n"
    return text + separator + block


def remove_block(text: str) -> str:
    """``text`` without seek's block and the blank line :func:`set_block` put before it."""
    span = _block_span(text)
    if span is None:
        return text
    start, end = span
    before, after = text[:start], text[end:]
    if not after and before.endswith("\n\n"):
        before = before[:-1]
    return before + after


def _block_span(text: str) -> tuple[int, int] | None:
    start = text.find(START_MARKER)
    if start < 0:
        return None
    end = text.find(END_MARKER, start)
    if end < 0:
        raise EditError(f"{START_MARKER} without {END_MARKER}: fix or remove the marker")
    end += len(END_MARKER)
    if text.startswith("\n", end):
        end += 1
    return start, end
