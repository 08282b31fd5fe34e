"""Syntax break rows from a tree-sitter parse tree (reference §2.3)."""

from __future__ import annotations

import tree_sitter


def syntax_breaks(tree: tree_sitter.Tree, source: bytes, max_chars: int) -> list[int]:
    """Start rows of the largest nodes that fit in ``max_chars`` (leaves always count).

    Node sizes are in characters, like the packer's; for pure-ASCII sources that is the
    byte length, otherwise the node's bytes are decoded to count them.
    """
    ascii_only = source.isascii()
    breaks: set[int] = set()

    def size(node: tree_sitter.Node) -> int:
        if ascii_only:
            return node.end_byte - node.start_byte
        return len(source[node.start_byte : node.end_byte].decode("utf-8", "replace"))

    stack = list(reversed(tree.root_node.children))
    while stack:
        node = stack.pop()
        if node.child_count == 0 or size(node) <= max_chars:
            breaks.add(node.start_point[0])
        else:
            stack.extend(reversed(node.children))
    return sorted(breaks)
