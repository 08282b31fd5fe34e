"""The pure per-file stage of indexing (design "Pure per-file stages").

:func:`prepare_file` reads one file, hashes it, sniffs it for binary content, chunks it and
cuts each chunk into embedding windows. It takes plain values (the workspace root, the
scanned file, its previous stamp, a :class:`FileSpec`) and returns a :class:`Prepared`; it
touches no shared state (no manifest, no report, no table), and every value in and out is
picklable, so the same function can run on a worker process or a remote worker. The run
(:class:`seek.index.indexer.Indexer`) merges what it returns, embeds and stores.

:func:`read_source` and :func:`prepare_source` are its two halves: a run with a graph worker
reads files ahead and has the worker parse them, once for the chunker's breaks and the
graph's facts (:mod:`seek.index.graph_worker`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from seek.chunk import PARSE, chunk_file_parsed, embedding_windows, grammar_for_path
from seek.index.graph_rows import file_facts
from seek.scan.beneath import read_beneath
from seek.scan.walk import BINARY, NO_CHUNKS, ScannedFile
from seek.store.manifest import ChunkingSpec, Stamp
from seek.text import keyword_column


@dataclass(frozen=True, slots=True)
class FileSpec:
    """How every file of a run is prepared."""

    chunking: ChunkingSpec
    binary_sniff_bytes: int
    doc_prefix: str
    """The embedding model's document prefix (``search_document: ``), put before each text."""
    graph: bool = False
    """Extract each source file's code-graph facts too (the workspace index and the corpus
    store them)."""
    graph_elsewhere: bool = False
    """...but leave that to the caller: a file with facts to extract carries its bytes in
    ``Prepared.graph_source`` instead (:mod:`seek.index.graph_worker`)."""


@dataclass(slots=True)
class Prepared:
    """One file, ready to embed (or to stamp directly)."""

    rel: str
    stamp: Stamp | None = None
    """None when the file could not be read (``unreadable`` says why)."""
    unchanged: bool = False
    """Same content as the previous stamp: only its size and mtime are new."""
    had_rows: bool = False
    """The previous version had rows, which the new ones replace."""
    unreadable: str = ""
    rows: list[tuple[int, int, int, int, str, str]] = field(default_factory=list)
    """(chunk, start_line, end_line, part, content, keywords) per window."""
    texts: list[str] = field(default_factory=list)
    """What is embedded for each row: ``<document prefix><path>\\n<window>``."""
    graph: tuple[str, str] | None = None
    """The file's code-graph row, encoded (:data:`seek.index.graph_rows.Encoded`); None: no
    facts."""
    graph_source: bytes | None = None
    """With ``FileSpec.graph_elsewhere``: the bytes whose facts the caller extracts (the file
    was parsed, so it has a grammar and no minified line); None: no facts."""


def is_binary(data: bytes, sniff_bytes: int) -> bool:
    return b"\x00" in data[:sniff_bytes]


def prepare_file(root: Path, scanned: ScannedFile, old: Stamp | None, spec: FileSpec) -> Prepared:
    """Read, sniff, hash and chunk one file, and cut its chunks into embedding windows."""
    read = read_source(root, scanned, old)
    if isinstance(read, Prepared):
        return read
    return prepare_source(root, scanned, old, spec, read)


class Source(NamedTuple):
    """A file's bytes as read, and their hash."""

    data: bytes
    digest: str


def read_source(root: Path, scanned: ScannedFile, old: Stamp | None) -> Prepared | Source:
    """The first half of :func:`prepare_file`: the file's bytes, or what it prepares without
    them (the file is unreadable, or its content is the old stamp's)."""
    rel = scanned.rel
    try:
        # no link followed on the whole path, so a folder swapped for one during `seek
        # watch` is refused too, not only the file itself (issue 43 finding 9c)
        data = read_beneath(root, rel)
    except OSError as exc:
        return Prepared(rel, unreadable=str(exc.strerror or exc))
    digest = hashlib.sha1(data).hexdigest()
    if old is not None and old.hash == digest:
        return Prepared(rel, Stamp(digest, len(data), scanned.mtime_ns, old.chunks, old.skip),
                        unchanged=True)  # fmt: skip
    return Source(data, digest)


def wants_syntax(rel: str, data: bytes, spec: FileSpec) -> bool:
    """Whether :func:`prepare_source` would look for the file's syntax breaks (a grammar, not
    binary): what a graph worker is sent to parse (:mod:`seek.index.graph_worker`)."""
    return grammar_for_path(rel) is not None and not is_binary(data, spec.binary_sniff_bytes)


def prepare_source(
    root: Path,
    scanned: ScannedFile,
    old: Stamp | None,
    spec: FileSpec,
    source: Source,
    breaks: list[int] | None | object = PARSE,
) -> Prepared:
    """The second half of :func:`prepare_file`, from the file's bytes; ``breaks``: its syntax
    breaks found by a graph worker (None: prose), which then extracts its facts too."""
    rel = scanned.rel
    data, digest = source
    size, mtime = len(data), scanned.mtime_ns
    chunking = spec.chunking
    chunks, tree = [], None
    skip = BINARY if is_binary(data, spec.binary_sniff_bytes) else ""
    if not skip:
        chunks, tree = chunk_file_parsed(rel, data, max_chars=chunking.max,
                                         min_chars=chunking.min,
                                         overlap_chars=chunking.overlap,
                                         breaks=breaks)  # fmt: skip
        if not chunks:
            skip = NO_CHUNKS
    prepared = Prepared(rel, Stamp(digest, size, mtime, len(chunks), skip),
                        had_rows=old is not None and old.chunks > 0)  # fmt: skip
    # parsed for its breaks, here (the chunker's tree: no second parse) or by the worker
    # that sent them; a file with prose breaks has no facts either (no grammar, a minified
    # line, a parser failure)
    parsed = tree is not None or (breaks is not PARSE and breaks is not None)
    if chunks and spec.graph and parsed:
        if spec.graph_elsewhere:
            prepared.graph_source = data
        else:
            prepared.graph = file_facts(rel, data, root, tree)
    for number, chunk in enumerate(chunks):
        windows = embedding_windows(chunk.content, chunking.window, chunking.window_overlap)
        # Only part 0 is searched by keyword, so the other windows of a chunk leave the
        # column empty: half the BM25 index to build, the same results.
        keywords = keyword_column(rel, chunk.content)
        for part, window in enumerate(windows or [chunk.content]):
            prepared.rows.append((number, chunk.start_line, chunk.end_line, part, chunk.content,
                                  keywords if part == 0 else ""))  # fmt: skip
            prepared.texts.append(f"{spec.doc_prefix}{rel}\n{window}")
    return prepared
