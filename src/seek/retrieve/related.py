"""Related code: the chunks most like the one at ``PATH:LINE`` (``seek related``, the MCP
``related`` tool; issue 15).

The chunk at that line is the query: its own embedding (the mean of its windows) finds
chunks that mean the same, and its identifiers (as a BM25 query) find chunks that use the
same names; the two lists are fused like a search. Chunks of the same file are left out
(the question is "where else", and the file itself is already open), and so are files of
another content kind unless asked (code finds code, not the README that describes it).
"""

from __future__ import annotations

import time
from collections import Counter

import numpy as np

from seek.errors import SeekError
from seek.retrieve.fusion import fuse
from seek.retrieve.pipeline import CANDIDATES_PER_RESULT
from seek.retrieve.retrievers import vector_candidates
from seek.retrieve.scope import Scope, content_kind
from seek.retrieve.searcher import Searcher
from seek.retrieve.types import SearchResult
from seek.text import STOP_WORDS, keyword_text

MAX_KEYWORDS = 40
"""The chunk's most frequent words that make its BM25 query (a whole chunk as a query would
be slow and dominated by common words)."""


def chunk_at(searcher: Searcher, path: str, line: int) -> int:
    """The chunk of ``path`` holding 1-based ``line`` (the smallest one when several do; the
    nearest one when the line falls between chunks)."""
    if line < 1:
        raise SeekError(f"line numbers start at 1, not {line}")
    index = searcher.index
    ids = index.chunks_of_path.get(path)
    if ids is None:
        raise SeekError(f"{path} is not in the index (indexed paths are workspace-relative)")
    row = line - 1
    starts, ends = index.starts, index.ends
    holding = [int(i) for i in ids if starts[i] <= row <= ends[i]]
    if holding:
        return min(holding, key=lambda i: ends[i] - starts[i])
    return min(
        (int(i) for i in ids),
        key=lambda i: min(abs(starts[i] - row), abs(ends[i] - row)),
    )


def chunk_keywords(content: str) -> str:
    """The chunk's most frequent identifier words (whole and split), stop words dropped."""
    counts = Counter(
        word for word in keyword_text(content).split() if word not in STOP_WORDS and len(word) > 2
    )
    return " ".join(word for word, _ in counts.most_common(MAX_KEYWORDS))


def related(
    searcher: Searcher, path: str, line: int, k: int = 10, content: str | None = None
) -> SearchResult:
    """The ``k`` chunks of other files most like the chunk at ``path:line``, best first
    (scores are fused reciprocal-rank scores), among files of the ``content`` kind (see
    :mod:`.scope`; default: the kind of ``path``, so code finds code)."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    index = searcher.index
    source = chunk_at(searcher, path, line)
    n = max(searcher.settings.retrieve_k, CANDIDATES_PER_RESULT * k)
    scope = Scope(content=content or content_kind(path))
    own = {int(i) for i in index.chunks_of_path[path]}
    own |= {i for i, p in enumerate(index.paths) if not scope.keeps(p)}
    first, count = index.chunk_first_row[source], index.chunk_rows[source]
    vector_ids: list[int] = []
    if len(index.vectors):
        q = index.vectors[first : first + count].mean(axis=0)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        similarities = index.chunk_similarities(q)
        vector_ids = vector_candidates(similarities, n + len(own))
    timings["vector_ms"] = (time.perf_counter() - started) * 1000
    words = chunk_keywords(index.contents[source])
    keyword_ids = searcher.pipeline.keywords.candidates(words, n + len(own))
    timings["keyword_ms"] = (time.perf_counter() - started) * 1000
    scores = fuse(
        [([i for i in vector_ids if i not in own], 0.5),
         ([i for i in keyword_ids if i not in own], 0.5)],
        searcher.settings.rrf_k,
    )  # fmt: skip
    best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]
    hits = [index.hit(i, score) for i, score in best]
    query = f"{path}:{index.starts[source] + 1}-{index.ends[source] + 1}"
    return searcher.symbols.name(SearchResult(query, words, hits, (), timings))
