"""Soft word matches as evidence for the chunk stage (issue 28, deliver 4; the research
notes, docs/research/models-rounds.md, "Soft word matches").

    python -m bench.experiments.soft_evidence BENCH_DIR [--work DIR] [--groups soft_cov ...]
    python -m bench.experiments.soft_evidence BENCH_DIR --per-question soft_cov

The chunk stage counts a question's words in a chunk only when they are there as written
(after light stemming): "wait" does not meet ``delay``, "alive" not ``heartbeat``. The
static embedder's token table places such words near each other (``wait``: ``delays``,
``pause``), so each word of the question can be matched softly: its embedding against the
embedding of each word of the chunk (identifiers whole and split, stemmed, as
``seek.retrieve.ranker.chunk_words``). Columns, per weighed chunk of
``bench.experiments.lines_analysis collect``'s pickles (the same ``--work``):

- ``soft_cov``: the mean over the question's keywords of the best cosine to a word of the
  chunk (1 for a word that is there);
- ``soft_cov_gap``: that minus the best of its file's weighed chunks;
- ``soft_new``: the same mean over the keywords *not* in the chunk, a cosine below
  ``FLOOR`` counted as 0 (what the soft match adds to the exact one);
- ``soft_new_gap``.

The chunk stage is refitted with the columns added, in the set-ups of
``bench.experiments.symbol_evidence`` (dev-fitted; all three sets cross-validated together);
NDCG@10 chunk (file) level per set.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench.experiments.lines_analysis import SETS
from bench.experiments.symbol_evidence import column_experiment
from bench.quality.quality import load_repos

COLUMNS = ("soft_cov", "soft_cov_gap", "soft_new", "soft_new_gap")
GROUPS = ([], [0], [0, 1], [2], [2, 3], [0, 1, 2, 3])
FLOOR = 0.5


class WordVectors:
    """Unit vectors of words from the shipped static embedder, computed once per word."""

    def __init__(self) -> None:
        from seek.embed.local import BUILTIN_MODEL_NAME, BUILTIN_MODELS_DIR, LocalEmbedder

        self._embedder = LocalEmbedder(BUILTIN_MODELS_DIR / BUILTIN_MODEL_NAME)
        self._index: dict[str, int] = {}
        self._rows: list[np.ndarray] = []

    def ids(self, words: list[str]) -> np.ndarray:
        new = [w for w in dict.fromkeys(words) if w not in self._index]
        if new:
            vectors = np.asarray(self._embedder.embed(new), dtype=np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-9
            for word, vector in zip(new, vectors, strict=True):
                self._index[word] = len(self._rows)
                self._rows.append(vector)
        return np.array([self._index[w] for w in words], dtype=np.int64)

    def matrix(self, ids: np.ndarray) -> np.ndarray:
        return np.stack([self._rows[i] for i in ids]) if len(ids) else np.zeros((0, 1))


def add_columns(data: dict, bench_dir: Path) -> None:
    """``d["symbols"]``: one row of :data:`COLUMNS` per weighed chunk of every question."""
    from seek.retrieve.ranker import chunk_words
    from seek.retrieve.signals.names import query_keywords

    folders = {}
    for name, bench_set in SETS.items():
        repos, _ = load_repos(bench_dir, bench_set.default_names(), bench_set)
        folders.update({(name, repo.name): repo.folder for repo in repos})
    lines: dict[tuple[str, str, str], list[str]] = {}
    vectors = WordVectors()

    def text(set_name: str, repo: str, hit) -> str:
        key = (set_name, repo, hit.path)
        if key not in lines:
            try:
                lines[key] = (
                    (folders[(set_name, repo)] / hit.path)
                    .read_text(encoding="utf-8", errors="replace")
                    .split("\n")
                )
            except OSError:
                lines[key] = []
        return "\n".join(lines[key][hit.start_line - 1 : hit.end_line])

    for set_name, questions in data.items():
        for d in questions:
            keywords = sorted(query_keywords(d["query"].query))
            x = np.zeros((len(d["hits"]), len(COLUMNS)))
            if keywords:
                q = vectors.matrix(vectors.ids(keywords))
                for row, hit in enumerate(d["hits"]):
                    found = chunk_words(text(set_name, d["repo"], hit))
                    if not found:
                        continue
                    sims = q @ vectors.matrix(vectors.ids(sorted(found))).T
                    present = np.array([k in found for k in keywords])
                    best = np.where(present, 1.0, sims.max(axis=1))
                    x[row, 0] = best.mean()
                    new = np.where(present, 0.0, np.where(best >= FLOOR, best, 0.0))
                    x[row, 2] = new.sum() / len(keywords)
            paths = [hit.path for hit in d["hits"]]
            for column, gap in ((0, 1), (2, 3)):
                top: dict[str, float] = {}
                for path, value in zip(paths, x[:, column], strict=True):
                    top[path] = max(top.get(path, 0.0), value)
                x[:, gap] = x[:, column] - np.array([top[p] for p in paths])
            d["symbols"] = x


def main(argv: list[str] | None = None) -> int:
    return column_experiment(
        argv, "python -m bench.experiments.soft_evidence", __doc__, COLUMNS, GROUPS, add_columns
    )


if __name__ == "__main__":
    raise SystemExit(main())
