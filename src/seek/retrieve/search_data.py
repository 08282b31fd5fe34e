"""The rows of one index arranged for search: paths, lines, texts, unit vectors, BM25
postings and the ranker's word sets, with chunk ids as positions (issue 14).

A searcher gets them from the search cache (:mod:`seek.retrieve.search_cache`, which writes
and reads them as files) or, when there is none, from the table's rows
(:meth:`SearchData.from_rows`); a corpus question builds them from its pool of files
(:mod:`seek.corpus.search`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from seek.retrieve.bm25 import Postings
from seek.retrieve.wordsets import WordSets


@dataclass
class SearchData:
    """One index's rows, arranged for search (chunk ids are positions)."""

    paths: list[str]
    chunk_numbers: np.ndarray  # int32, the chunk's number within its file
    starts: list[int]
    ends: list[int]
    contents: list[str]
    vectors: np.ndarray  # float32 unit rows, sorted by chunk
    chunk_first_row: np.ndarray  # int64
    postings: Postings
    word_sets: WordSets | None
    """None: each chunk's words are derived from its text when the ranker asks (a corpus
    question's pool, where only the top files' chunks are ever asked)."""

    @property
    def chunk_rows(self) -> np.ndarray:
        return np.diff(np.append(self.chunk_first_row, len(self.vectors)))

    @classmethod
    def from_rows(
        cls, data: dict[str, Any], pool: bool = False, *, consume: bool = False
    ) -> SearchData:
        """From :meth:`ChunkTable.load_all`'s columns (rows in any order). ``pool``: one
        corpus question's candidate files (:mod:`seek.corpus.search`), whose keyword scores
        come from LanceDB: no BM25 postings, and word sets left to the ranker (building
        both for every pool chunk was half of a 1M-chunk corpus question's CPU time).
        ``consume``: the caller hands ``data`` over (an index run's cache build), so its
        vectors are normalized in place rather than copied (the same values: one division
        per element either way), one matrix less at the peak of a cold index."""
        first_rows = [i for i, part in enumerate(data["part"]) if part == 0]
        paths = [data["path"][i] for i in first_rows]
        chunk_of_key = {(data["path"][i], data["chunk"][i]): n for n, i in enumerate(first_rows)}
        row_chunk = np.array(
            [chunk_of_key[key] for key in zip(data["path"], data["chunk"], strict=True)],
            dtype=np.int64,
        )
        vectors = data["vectors"]
        # Rows already in chunk order (a cold run writes them so) are not copied to reorder
        # them: one copy of the vectors less at the peak of an index run.
        if len(row_chunk) and bool((row_chunk[1:] < row_chunk[:-1]).any()):
            order = np.argsort(row_chunk, kind="stable")
            vectors, row_chunk = vectors[order], row_chunk[order]
        if len(vectors):
            norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            owned = consume or vectors is not data["vectors"]  # a reordered copy is ours too
            flags = vectors.flags  # an Arrow column read from the table is read-only
            if owned and vectors.dtype == np.float32 and flags.c_contiguous and flags.writeable:
                vectors = np.divide(vectors, norms, out=vectors)
            else:
                vectors = np.ascontiguousarray(vectors / norms, dtype=np.float32)
        contents = [data["content"][i] for i in first_rows]
        numbers = np.array([data["chunk"][i] for i in first_rows], dtype=np.int32)
        starts = [data["start_line"][i] for i in first_rows]
        ends = [data["end_line"][i] for i in first_rows]
        keywords = [] if pool else [data["keywords"][i] for i in first_rows]
        if consume:  # every other row's columns can go before the postings are built
            data.clear()
        postings = Postings.build(keywords)
        del keywords
        return cls(
            paths=paths,
            chunk_numbers=numbers,
            starts=starts,
            ends=ends,
            contents=contents,
            vectors=vectors,
            chunk_first_row=np.searchsorted(row_chunk, np.arange(len(paths))),
            postings=postings,
            word_sets=None if pool else WordSets.build(contents),
        )
