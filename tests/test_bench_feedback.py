"""bench.experiments.feedback_passes: the pseudo-relevance feedback of issue 13's fourth round
(measured and not kept; MODELS.md)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from bench.experiments.feedback_passes import expanded_words, moved_query
from bench.experiments.file_evidence import doc_share
from seek.retrieve.bm25 import Bm25, Postings

CONTENTS = [
    "def retry_delay(job): backoff = jitter(job.count)",
    "def schedule(job): backoff queue jitter",
    "def render(page): html",
    "def parse(text): html tokens",
    "def queue_name(job): queue",
]


def test_expansion_adds_the_words_typical_of_the_best_chunks():
    bm25 = Bm25(Postings.build(CONTENTS))
    words = expanded_words("retry", CONTENTS, [0, 1], bm25)
    added = words.split()[1:]
    assert words.split()[0] == "retry"
    # In both best chunks and nowhere else first; a word of the unchosen chunks never.
    assert added[:2] == sorted(["backoff", "jitter"])
    assert "html" not in added and "render" not in added
    assert "retri" not in added  # the question's own word is not added again


def test_rocchio_moves_the_question_toward_the_chunks_and_stays_unit():
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]], dtype=np.float32)
    searcher = SimpleNamespace(
        vectors=vectors, chunk_first_row=np.array([0, 1]), chunk_rows=np.array([1, 2])
    )
    q = np.array([1.0, 0.0], dtype=np.float32)
    moved = moved_query(searcher, q, [1])
    assert abs(float(np.linalg.norm(moved)) - 1.0) < 1e-6
    expected = np.array([1.0, 0.5]) / np.linalg.norm([1.0, 0.5])  # q + 0.5 x (0, 1)
    assert np.allclose(moved, expected, atol=1e-6)


def test_comment_share_counts_non_blank_lines():
    assert doc_share("/// docs\n/// more\n\nfn run() {\n}") == 0.5
    assert doc_share("") == 0.0
