"""Cut a file into chunks: tree-sitter syntax breaks where a grammar exists, prose breaks
otherwise, then greedy packing (reference §2)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from seek.chunk.languages import grammar_for_path, parser_for
from seek.chunk.packing import Chunk, chunks_from_breaks, prose_breaks
from seek.chunk.syntax import syntax_breaks
from seek.chunk.windows import embedding_windows

if TYPE_CHECKING:
    import tree_sitter

log = logging.getLogger(__name__)

__all__ = ["Chunk", "chunk_file", "chunk_file_parsed", "embedding_windows", "grammar_for_path"]

MAX_PARSE_LINE_CHARS = 4_000
"""Files with a longer line use the prose splitter: tree-sitter's time grows with the square
of a line's length for some grammars (50 KB of ``\r`` in an Elixir file: 11 s), and a line
that long is generated or minified code whose syntax gives no useful breaks anyway."""


def chunk_file(
    rel_path: str,
    source: bytes,
    *,
    max_chars: int,
    min_chars: int,
    overlap_chars: int,
) -> list[Chunk]:
    """Chunks of one file's bytes (decoded as UTF-8, invalid bytes replaced)."""
    return chunk_file_parsed(
        rel_path, source, max_chars=max_chars, min_chars=min_chars, overlap_chars=overlap_chars
    )[0]


PARSE = object()
"""``chunk_file_parsed(breaks=PARSE)`` (the default): find the file's breaks by parsing it."""


def source_lines(source: bytes) -> list[str]:
    """The file's lines, decoded as UTF-8 (invalid bytes replaced)."""
    lines = source.decode("utf-8", errors="replace").split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # a final newline ends the last line; it does not start another one
    return lines


def syntax_of(
    rel_path: str, source: bytes, lines: list[str], max_chars: int
) -> tuple[list[int] | None, tree_sitter.Tree | None]:
    """The file's syntax breaks and the tree they came from; ``(None, None)`` where prose
    breaks serve (no grammar, a minified line, a parser failure). ``lines``: its
    :func:`source_lines`."""
    grammar = grammar_for_path(rel_path)
    if grammar is not None and max(map(len, lines), default=0) > MAX_PARSE_LINE_CHARS:
        grammar = None  # minified or hostile: some grammars take quadratic time on such lines
    parser = parser_for(grammar) if grammar is not None else None
    if parser is None:
        return None, None
    try:
        tree = parser.parse(source)
        return syntax_breaks(tree, source, max_chars), tree
    except Exception as exc:  # a parser failure must not stop indexing
        log.warning("cannot parse %s as %s (%s); using prose breaks", rel_path, grammar, exc)
        return None, None


def chunk_file_parsed(
    rel_path: str,
    source: bytes,
    *,
    max_chars: int,
    min_chars: int,
    overlap_chars: int,
    breaks: list[int] | None | object = PARSE,
) -> tuple[list[Chunk], tree_sitter.Tree | None]:
    """:func:`chunk_file`, and the syntax tree its breaks came from (None: prose breaks): the
    index hands it to the code graph's extractor, which would otherwise parse the file again
    (issue 28's index cost). ``breaks``: the file's :func:`syntax_of` breaks found elsewhere
    (a graph worker parses the file for both, :mod:`seek.index.graph_worker`; None: prose
    breaks) instead of a parse here, and no tree is returned."""
    lines = source_lines(source)
    tree = None
    if breaks is PARSE:
        breaks, tree = syntax_of(rel_path, source, lines, max_chars)
    if breaks is None:
        breaks = prose_breaks(lines)
    chunks = chunks_from_breaks(
        lines,
        breaks,  # type: ignore[arg-type]
        max_chars=max_chars,
        min_chars=min_chars,
        overlap_chars=overlap_chars,
    )
    return chunks, tree
