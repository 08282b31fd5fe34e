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


def chunk_file_parsed(
    rel_path: str,
    source: bytes,
    *,
    max_chars: int,
    min_chars: int,
    overlap_chars: int,
) -> tuple[list[Chunk], tree_sitter.Tree | None]:
    """:func:`chunk_file`, and the syntax tree its breaks came from (None: prose breaks): the
    index hands it to the code graph's extractor, which would otherwise parse the file again
    (issue 28's index cost)."""
    text = source.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # a final newline ends the last line; it does not start another one
    breaks: list[int] | None = None
    tree = None
    grammar = grammar_for_path(rel_path)
    if grammar is not None and max(map(len, lines), default=0) > MAX_PARSE_LINE_CHARS:
        grammar = None  # minified or hostile: some grammars take quadratic time on such lines
    if grammar is not None:
        parser = parser_for(grammar)
        if parser is not None:
            try:
                tree = parser.parse(source)
                breaks = syntax_breaks(tree, source, max_chars)
            except Exception as exc:  # a parser failure must not stop indexing
                tree = None
                log.warning(
                    "cannot parse %s as %s (%s); using prose breaks", rel_path, grammar, exc
                )
    if breaks is None:
        breaks = prose_breaks(lines)
    chunks = chunks_from_breaks(
        lines, breaks, max_chars=max_chars, min_chars=min_chars, overlap_chars=overlap_chars
    )
    return chunks, tree
