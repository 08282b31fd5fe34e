"""Issue 13, fourth round: pseudo-relevance feedback as extra retrieval passes (not kept).

    python -m bench.experiments.feedback_passes KIND SHARE FEEDBACK -- BENCH.QUALITY ARGS...

runs ``bench.quality`` with one or two more ranked lists fused into every hybrid search:

* ``rm3``: BM25 again for the question's words plus the 8 index words most typical of the
  ``FEEDBACK`` best first-pass chunks (count among them x inverse document frequency);
* ``prf``: the vector search again with the question moved halfway (0.5) toward the mean
  vector of those chunks (Rocchio);
* ``rm3prf``: both.

Each extra list enters the reciprocal rank fusion at ``SHARE`` x its retriever's weight. The
first pass is the dense and BM25 lists fused half and half. MODELS.md ("Where the lines
are still missed", fourth round) has the results; none was kept, so the passes live here
and patch the searcher's fusion instead of touching seek.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Sequence
from contextvars import ContextVar

import numpy as np

TERMS = 8
ROCCHIO_WEIGHT = 0.5
_asked: ContextVar[tuple[object, str] | None] = ContextVar("asked", default=None)


def expanded_words(words: str, contents: Sequence[str], best: Sequence[int], bm25) -> str:
    """``words`` and the :data:`TERMS` index words most typical of the chunks ``best``."""
    from seek.retrieve.bm25 import tokens

    asked = set(tokens(words))
    counts: Counter[str] = Counter()
    for chunk_id in best:
        counts.update({t for t in tokens(contents[chunk_id]) if t not in asked})
    n_docs = max(bm25.num_docs, 1)
    starts = bm25.postings.starts

    def weight(term: str) -> float:
        i = bm25.term_ids.get(term)
        if i is None:
            return 0.0
        return counts[term] * math.log(1 + n_docs / (int(starts[i + 1] - starts[i]) + 0.5))

    return " ".join([words, *sorted(counts, key=lambda t: (-weight(t), t))[:TERMS]])


def moved_query(index, q: np.ndarray, best: Sequence[int]) -> np.ndarray:
    """The question's vector moved toward the mean of the chunks ``best`` (unit)."""
    centroid = np.zeros_like(q)
    for chunk_id in best:
        lo = int(index.chunk_first_row[chunk_id])
        centroid += index.vectors[lo : lo + int(index.chunk_rows[chunk_id])].mean(axis=0)
    moved = q + ROCCHIO_WEIGHT * centroid / max(len(best), 1)
    return (moved / max(float(np.linalg.norm(moved)), 1e-12)).astype(np.float32)


def install(kind: str, share: float, feedback: int) -> None:
    """Patch the searcher: its fusion of a hybrid search gets the extra lists."""
    from seek.retrieve import pipeline as module
    from seek.text import keyword_query

    plain_fuse = module.fuse
    plain_candidates = module.SearchPipeline.candidates

    def candidates(self, query, n_best, **kwargs):
        token = _asked.set((self, query))
        try:
            return plain_candidates(self, query, n_best, **kwargs)
        finally:
            _asked.reset(token)

    def fuse(lists, k):
        asked = _asked.get()
        (vector_ids, w), (keyword_ids, kw) = lists[0], lists[1]
        if asked is None or not vector_ids or not keyword_ids or w in (0.0, 1.0):
            return plain_fuse(lists, k)
        pipeline, query = asked
        index = pipeline.index
        first = plain_fuse([(vector_ids, 0.5), (keyword_ids, 0.5)], k)
        best = sorted(first, key=lambda i: -first[i])[:feedback]
        n = max(len(vector_ids), len(keyword_ids))
        extra = []
        if "rm3" in kind:
            words = expanded_words(keyword_query(query), index.contents, best, index.bm25)
            extra.append((pipeline.keywords.candidates(words, n), share * kw))
        if "prf" in kind:
            moved = moved_query(index, pipeline.query_vector(query), best)
            similarities = index.chunk_similarities(moved)
            extra.append((module.vector_candidates(similarities, n), share * w))
        return plain_fuse([*lists, *extra], k)

    module.SearchPipeline.candidates = candidates
    module.fuse = fuse


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    if len(args) < 4 or args[3] != "--":
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    install(args[0], float(args[1]), int(args[2]))
    from bench.quality import quality

    return quality.main(args[4:])


if __name__ == "__main__":
    raise SystemExit(main())
