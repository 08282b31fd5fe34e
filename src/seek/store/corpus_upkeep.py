"""The corpus table's maintenance: the indexes that keep its searches fast (issue 17,
"Corpus"; apart from its rows, :mod:`seek.store.corpus_table`, since issue 46).

``finish_indexes`` runs at the end of every corpus run: full-text on ``keywords``, scalar
indexes on ``repo`` and ``path`` (the prefilters and the candidate fetch), and, once the
table holds ``ANN_MIN_ROWS`` rows, an IVF-PQ vector index (cosine); later runs add their
rows to the existing indexes (``optimize``) and retrain the vector index when the table has
doubled. Every function takes the opened LanceDB table (None: there is none yet), so this
module knows nothing of how the rows are written or searched.
"""

from __future__ import annotations

from typing import Any

from seek.store.table import KEYWORD_INDEX

ANN_MIN_ROWS = 100_000
"""Below this many rows LanceDB's exact (flat) search is fast enough (measured in
docs/research/bench-rounds.md, "Scale") and an IVF-PQ index would only cost recall."""
ROWS_PER_PARTITION = 8_192


def index_names(table: Any | None) -> dict[str, str]:
    """Indexed column -> index type."""
    if table is None:
        return {}
    return {idx.columns[0]: str(idx.index_type) for idx in table.list_indices()}


def finish_indexes(table: Any, ann_min_rows: int = ANN_MIN_ROWS, compact: bool = True) -> None:
    """Indexes cover every row; compact what the run wrote (see the module docstring).
    ``compact=False``: a table written in large fragments with no index yet (a bulk copy)
    skips the compaction pass."""
    from lancedb.index import FTS, Bitmap, BTree

    indexes = index_names(table)
    if "repo" not in indexes:
        table.create_index("repo", config=Bitmap())
    if "path" not in indexes:
        table.create_index("path", config=BTree())
    if "keywords" not in indexes:
        table.create_index("keywords", config=FTS(**KEYWORD_INDEX))
    if compact:
        table.optimize()  # compaction, and new rows into the existing indexes
    rows = table.count_rows()
    if rows >= ann_min_rows and vector_index_stale(table, rows):
        build_vector_index(table, rows)


def vector_index_stale(table: Any, rows: int) -> bool:
    """No vector index yet, or one trained on fewer than half of ``rows``."""
    for idx in table.list_indices():
        if idx.columns == ["vector"]:
            stats = table.index_stats(idx.name)
            trained = stats.num_indexed_rows if stats is not None else 0
            return rows > 2 * max(trained, 1)
    return True


def build_vector_index(table: Any, rows: int) -> None:
    from lancedb.index import IvfPq

    dims = table.schema.field("vector").type.list_size
    # ~8,000 rows a partition: training (k-means on 256 rows a partition) stays minutes,
    # not tens of minutes, on 2 cores at 2M rows, and a question's 24 probes still read
    # only a few MB of PQ codes.
    partitions = max(16, rows // ROWS_PER_PARTITION)
    config = IvfPq(distance_type="cosine", num_partitions=partitions,
                   num_sub_vectors=sub_vectors(dims))  # fmt: skip
    table.create_index("vector", config=config, replace=True)


def sub_vectors(dims: int) -> int:
    """PQ sub-vectors: 8 dimensions each where that divides evenly (LanceDB's advice is
    dims/8 to dims/16 for recall)."""
    for width in (8, 4, 2, 1):
        if dims % width == 0:
            return dims // width
    return dims
