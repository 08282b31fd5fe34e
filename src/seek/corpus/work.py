"""One task of a corpus run: a batch of one repository's files, scanned -> chunked ->
embedded, with each source file's code-graph row (issue 17, "Fan-out on Ray"; issue 28
deliver 1).

:func:`prepare_batch` takes and returns plain, picklable values, touches no table and no
manifest, and gives the same answer each time it runs on the same files: Ray may run it
again when a worker dies, and the driver writes each batch's rows once, when its result
arrives. The embedder is made once per worker process and kept.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from seek.embed import Embedder, make_embedder
from seek.errors import EmbeddingError
from seek.index.stages import FileSpec, prepare_file
from seek.scan.walk import ScannedFile
from seek.settings import Settings
from seek.store.corpus_table import arrow_rows
from seek.store.manifest import Stamp

log = logging.getLogger(__name__)

_EMBEDDERS: dict[str, Embedder] = {}


@dataclass(slots=True)
class BatchResult:
    """What a task returns: stamps of its files and their rows."""

    repo: str
    stamps: dict[str, Stamp] = field(default_factory=dict)
    refreshed: dict[str, Stamp] = field(default_factory=dict)
    """Touched but unchanged files: only their size and mtime are new."""
    had_rows: list[str] = field(default_factory=list)
    """Files whose previous version had rows (replaced, not added)."""
    unreadable: list[str] = field(default_factory=list)
    rows: Any = None
    """A pyarrow table in the corpus schema, or None when no file has rows."""
    graph: list[tuple[str, str, str]] = field(default_factory=list)
    """The code-graph rows (path, definitions, facts) of its source files
    (:mod:`seek.store.corpus_graph`), extracted from the tree the chunker parsed."""

    @property
    def row_count(self) -> int:
        return 0 if self.rows is None else int(self.rows.num_rows)

    @property
    def chunk_count(self) -> int:
        return sum(s.chunks for s in self.stamps.values())


def embedder_for(settings: Settings, model_id: str) -> Embedder:
    embedder = _EMBEDDERS.get(model_id)
    if embedder is None:
        embedder = _EMBEDDERS[model_id] = make_embedder(settings)
    return embedder


def prepare_batch(
    repo: str,
    root: str,
    files: list[tuple[ScannedFile, Stamp | None]],
    spec: FileSpec,
    settings: Settings,
    model_id: str,
) -> BatchResult:
    """Chunk and embed ``files`` of ``repo`` (checked out at ``root``); with ``spec.graph``,
    extract their code graph too."""
    from pathlib import Path

    result = BatchResult(repo)
    columns: dict[str, list] = {name: [] for name in
                                ("path", "hash", "chunk", "start_line", "end_line", "part",
                                 "content", "keywords")}  # fmt: skip
    texts: list[str] = []
    for scanned, old in files:
        prepared = prepare_file(Path(root), scanned, old, spec)
        if prepared.stamp is None:
            result.unreadable.append(prepared.rel)
            continue
        if prepared.unchanged:
            result.refreshed[prepared.rel] = prepared.stamp
            continue
        result.stamps[prepared.rel] = prepared.stamp
        if prepared.had_rows:
            result.had_rows.append(prepared.rel)
        for number, start, end, part, content, keywords in prepared.rows:
            columns["path"].append(prepared.rel)
            columns["hash"].append(prepared.stamp.hash)
            columns["chunk"].append(number)
            columns["start_line"].append(start)
            columns["end_line"].append(end)
            columns["part"].append(part)
            columns["content"].append(content)
            columns["keywords"].append(keywords)
        texts.extend(prepared.texts)
        if prepared.graph is not None:
            result.graph.append((prepared.rel, *prepared.graph))
    if texts:
        vectors = embedder_for(settings, model_id).embed(texts)
        if vectors.shape[0] != len(texts):
            raise EmbeddingError(
                f"the embedder returned {vectors.shape[0]} vectors for {len(texts)} texts"
            )
        result.rows = arrow_rows(repo, columns, vectors)
    return result
