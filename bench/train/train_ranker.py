"""Train seek's learned ranker on the dev set, with leave-repositories-out cross-validation.

    python -m bench.train.train_ranker BENCH_DIR [--folds 30] [--home DIR] [--explore]
        [--out src/seek/models/ranker.json]

1. **Candidates.** Every dev repository is indexed (in ``--home``; the quality harness's
   bench home by default, so its indexes are reused) and every annotated question's fused
   top ``POOL`` (30) is taken with the hand-tuned signals on, as the search does. Each file
   among them becomes one row of :data:`seek.retrieve.ranker.FEATURES`, labelled "the file
   is a judged target" (almost every target is a whole file: 697 of 723).
2. **Cross-validation.** Repositories are split into ``--folds`` groups (30 = leave one
   repository out); each group is ranked by a model fitted on the others. Reported: NDCG@10
   (chunk level, mean of per-repo means, exactly as ``bench.quality``) of the fused order
   and of the ranker, and a reliability table of the out-of-fold probabilities.
3. **The shipped model**: fitted on every repository, written as JSON for
   :class:`seek.retrieve.ranker.Ranker` (numpy only at run time).

Only the dev set's annotations are used (30 repositories, 599 questions), as issue 6
allows for "a handful of ranking weights ... with leave-repositories-out cross-validation".
Fixed seeds: the result is the same on every run.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import (
    DEFAULT_HOME,
    REPO_ROOT,
    add_bench_dir,
    bench_settings,
    log,
    read_repo_list,
    resolve_bench_dir,
)
from bench.quality.quality import load_repos
from bench.quality.scoring import Hit, K, covers, score_query

DEFAULT_OUT = REPO_ROOT / "src" / "seek" / "models" / "ranker.json"
SEED = 0
C = 1.0
"""Inverse regularisation strength of the logistic regression, picked by this same
cross-validation among 0.01 / 0.1 / 1 / 10 (``--explore``), which all land within 0.004."""


# -- 1. candidates and features ---------------------------------------------------------------
def collect(checkouts: Path, home: Path) -> dict[str, Any]:
    from seek import index_workspace
    from seek.retrieve import Searcher
    from seek.retrieve.ranker import POOL, features

    settings = bench_settings(home, ranker_model="off")
    repos, _ = load_repos(checkouts, read_repo_list())
    rows, labels, query_ids, repo_ids = [], [], [], []
    queries: list[dict[str, Any]] = []
    for repo_number, repo in enumerate(repos):
        log(f"{repo.name}: indexing and ranking {len(repo.queries)} questions")
        index_workspace(repo.folder, settings)
        searcher = Searcher.open(repo.folder, settings)
        for query in repo.queries:
            pool, retrieval, _ = searcher.pipeline.candidates(query.query.strip(), POOL, k=K)
            files, matrix = features(query.query.strip(), pool, retrieval, searcher.index.corpus)
            for path, row in zip(files, matrix, strict=True):
                rows.append(row)
                labels.append(
                    any(covers(Hit(path, 0, 0), t, use_spans=False) for t in query.targets)
                )
                query_ids.append(len(queries))
                repo_ids.append(repo_number)
            hits = [
                Hit(
                    searcher.index.paths[i],
                    searcher.index.starts[i] + 1,
                    searcher.index.ends[i] + 1,
                )
                for i, _ in pool
            ]
            queries.append(
                {"repo": repo.name, "query": query, "pool": pool, "files": files, "hits": hits}
            )
    return {
        "rows": np.asarray(rows, dtype=np.float64),
        "labels": np.asarray(labels, dtype=np.int64),
        "query_ids": np.asarray(query_ids, dtype=np.int64),
        "repo_ids": np.asarray(repo_ids, dtype=np.int64),
        "queries": queries,
        "repo_names": [r.name for r in repos],
    }


# -- 2. models and scoring --------------------------------------------------------------------
def fit(x: np.ndarray, y: np.ndarray, c: float):  # (scaler, model)
    """Standardised logistic regression (an MLP and gradient-boosted trees were tried on the
    same features and cross-validated worse: see MODELS.md)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(x)
    return scaler, LogisticRegression(C=c, max_iter=2000).fit(scaler.transform(x), y)


def predict(scaler, model, x: np.ndarray) -> np.ndarray:
    return model.predict_proba(scaler.transform(x))[:, 1]


def ndcg_of(data: dict[str, Any], file_scores: np.ndarray | None) -> float:
    """NDCG@10 (chunk level, mean of per-repo means, as ``bench.quality``) of the questions'
    pools re-ordered by ``file_scores`` (one per file row), or in fused order when None."""
    from seek.retrieve.ranker import ranked_pool

    per_repo: dict[str, list[float]] = {}
    for qid, entry in enumerate(data["queries"]):
        hit_of = {
            chunk_id: hit for (chunk_id, _), hit in zip(entry["pool"], entry["hits"], strict=True)
        }
        order = [chunk_id for chunk_id, _ in entry["pool"]]
        if file_scores is not None and order:
            paths = {chunk_id: hit.path for chunk_id, hit in hit_of.items()}
            scores = file_scores[data["query_ids"] == qid]
            order = [i for i, _ in ranked_pool(entry["pool"], entry["files"], scores, paths)]
        hits = [hit_of[i] for i in order]
        per_repo.setdefault(entry["repo"], []).append(score_query(hits, entry["query"])["ndcg10"])
    return float(np.mean([np.mean(v) for v in per_repo.values()]))


def fold_of_repo(n_repos: int, folds: int) -> np.ndarray:
    return np.random.default_rng(SEED).permutation(n_repos) % folds


def out_of_fold(
    x: np.ndarray, data: dict[str, Any], folds: int, c: float, train: np.ndarray | None = None
) -> np.ndarray:
    """Each repository group scored by a model fitted on the others (rows in ``train`` only)."""
    repo_ids = data["repo_ids"]
    groups = fold_of_repo(len(data["repo_names"]), folds)
    train = np.ones(len(x), dtype=bool) if train is None else train
    out = np.zeros(len(x))
    for fold in range(folds):
        held = np.isin(repo_ids, np.flatnonzero(groups == fold))
        scaler, model = fit(x[~held & train], data["labels"][~held & train], c)
        out[held] = predict(scaler, model, x[held])
    return out


def reliability(probabilities: np.ndarray, labels: np.ndarray) -> list[dict[str, float]]:
    edges = [0.0, 0.01, 0.03, 0.08, 0.15, 0.3, 0.5, 0.7, 1.0001]
    table = []
    for low, high in zip(edges, edges[1:], strict=False):
        mask = (probabilities >= low) & (probabilities < high)
        if mask.any():
            table.append(
                {
                    "bin": f"{low:.2f}-{min(high, 1.0):.2f}",
                    "candidates": int(mask.sum()),
                    "mean_probability": float(probabilities[mask].mean()),
                    "relevant_share": float(labels[mask].mean()),
                }
            )
    return table


def export(scaler, model, features: tuple[str, ...]) -> dict[str, Any]:
    return {
        "features": list(features),
        "mean": scaler.mean_.tolist(),
        "scale": scaler.scale_.tolist(),
        "layers": [{"weights": model.coef_.T.tolist(), "bias": model.intercept_.tolist()}],
    }


# -- command line -----------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.train.train_ranker", description=__doc__.split("\n\n")[0]
    )
    add_bench_dir(parser)
    parser.add_argument("--folds", type=int, default=30)
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--explore", action="store_true", help="also try other C values")
    args = parser.parse_args(argv)
    args.bench_dir = resolve_bench_dir(parser, args.bench_dir)
    from seek.retrieve.ranker import FEATURES

    data = collect(args.bench_dir, args.home)
    x, y = data["rows"], data["labels"]
    log(f"{len(data['queries'])} questions, {len(y)} files, {int(y.sum())} relevant")
    report: dict[str, Any] = {"folds": args.folds, "fused_order_ndcg10": ndcg_of(data, None)}
    for c in sorted({C, *((0.01, 0.1, 1.0, 10.0) if args.explore else ())}):
        probabilities = out_of_fold(x, data, args.folds, c)
        report[f"C={c}"] = ndcg_of(data, probabilities)
        log(f"C={c}: NDCG@10 {report[f'C={c}']:.4f}")
        if c == C:
            report["reliability"] = reliability(probabilities, y)
    spec = export(*fit(x, y, C), FEATURES)
    spec["training"] = {
        "command": "python -m bench.train.train_ranker BENCH_DIR",
        "questions": len(data["queries"]),
        "files": len(y),
        "relevant": int(y.sum()),
        "cv": report,
    }
    args.out.write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
