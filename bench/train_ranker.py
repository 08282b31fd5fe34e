"""Train seek's learned ranker on the dev set, with leave-repositories-out cross-validation.

    .venv/bin/python -m bench.train_ranker BENCH_DIR [--folds 30] [--home DIR] [--explore]
        [--out src/seek/models/ranker.json]

1. **Candidates.** Every dev repository is indexed (the quality harness's bench home, so its
   indexes are reused) and every annotated question's fused top ``POOL`` (30) is taken with
   the hand-tuned signals on, as the search would; each candidate gets the ranker's features
   (:data:`seek.retrieve.ranker.FEATURES`) and the label "covers a judged target" (the
   benchmark's own span rule). Cached in ``--data``.
2. **Cross-validation.** Repositories are split into ``--folds`` groups; each group is
   ranked by a model fitted on the others. Reported: NDCG@10 (chunk level, mean of per-repo
   means, exactly as ``bench.quality``) of the fused order and of each model, and a
   reliability table of the out-of-fold probabilities.
3. **The shipped model** is fitted on every repository with the configuration chosen in
   code below (:data:`HIDDEN`, :data:`L2`), then written as JSON for
   :class:`seek.retrieve.ranker.Ranker` (numpy only at run time).

Only the dev set's annotations are used (30 repositories, 599 questions), as issue 6
allows for "a handful of ranking weights ... with leave-repositories-out cross-validation".
Fixed seeds: the result is the same on every run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from bench.data import REPO_ROOT, read_repo_list
from bench.quality import DEFAULT_HOME, load_repos
from bench.scoring import Hit, covers, score_query

DEFAULT_OUT = REPO_ROOT / "src" / "seek" / "models" / "ranker.json"
SEED = 0
HIDDEN: tuple[int, ...] = ()
"""Hidden layer sizes of the shipped model (``()`` = logistic regression)."""
L2 = 0.1
"""Inverse regularisation strength (sklearn's ``C``) of the shipped model."""


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- 1. candidates and features ---------------------------------------------------------------
def collect(bench_dir: Path, home: Path) -> dict[str, Any]:
    from seek import index_workspace, load_settings
    from seek.retrieve import Searcher
    from seek.retrieve.ranker import POOL, features

    settings = load_settings(
        overrides={"home": str(home), "ranker_model": "off"},
        user_config=home / "no-user-config.toml",
    )
    repos, _ = load_repos(bench_dir, read_repo_list())
    rows, labels, query_ids, repo_ids = [], [], [], []
    queries: list[dict[str, Any]] = []
    for repo_number, repo in enumerate(repos):
        _log(f"{repo.name}: indexing and ranking {len(repo.queries)} questions")
        index_workspace(repo.folder, settings)
        searcher = Searcher.open(repo.folder, settings)
        for query in repo.queries:
            pool, retrieval, _ = searcher.candidates(query.query.strip(), POOL)
            files, matrix = features(query.query.strip(), pool, retrieval, searcher.corpus)
            for path, row in zip(files, matrix, strict=True):
                rows.append(row)
                labels.append(
                    any(covers(Hit(path, 0, 0), t, use_spans=False) for t in query.targets)
                )
                query_ids.append(len(queries))
                repo_ids.append(repo_number)
            hits = [
                Hit(searcher.paths[i], searcher.starts[i] + 1, searcher.ends[i] + 1)
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
def fit(x: np.ndarray, y: np.ndarray, hidden: tuple[int, ...], c: float):  # noqa: ANN201
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(x)
    z = scaler.transform(x)
    if hidden:
        model = MLPClassifier(
            hidden_layer_sizes=hidden,
            alpha=1.0 / c,
            max_iter=400,
            early_stopping=False,
            random_state=SEED,
        ).fit(z, y)
    else:
        model = LogisticRegression(C=c, max_iter=2000).fit(z, y)
    return scaler, model


def predict(scaler, model, x: np.ndarray) -> np.ndarray:  # noqa: ANN001
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


def cross_validated(
    data: dict[str, Any], folds: int, hidden: tuple[int, ...], c: float
) -> np.ndarray:
    """Out-of-fold probabilities: each repository group scored by a model fitted on the rest."""
    repo_ids = data["repo_ids"]
    n_repos = len(data["repo_names"])
    groups = np.random.default_rng(SEED).permutation(n_repos) % folds
    out = np.zeros(len(repo_ids))
    for fold in range(folds):
        held = np.isin(repo_ids, np.flatnonzero(groups == fold))
        scaler, model = fit(data["rows"][~held], data["labels"][~held], hidden, c)
        out[held] = predict(scaler, model, data["rows"][held])
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


def export(scaler, model, hidden: tuple[int, ...]) -> dict[str, Any]:  # noqa: ANN001
    from seek.retrieve.ranker import FEATURES

    if hidden:
        layers = [
            {"weights": w.tolist(), "bias": b.tolist()}
            for w, b in zip(model.coefs_, model.intercepts_, strict=True)
        ]
    else:
        layers = [{"weights": model.coef_.T.tolist(), "bias": model.intercept_.tolist()}]
    return {
        "kind": "seek-ranker",
        "features": list(FEATURES),
        "mean": scaler.mean_.tolist(),
        "scale": scaler.scale_.tolist(),
        "layers": layers,
    }


# -- command line -----------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench_dir", type=Path)
    parser.add_argument("--folds", type=int, default=30)
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--explore", action="store_true", help="cross-validate several models")
    args = parser.parse_args(argv)

    data = collect(args.bench_dir, args.home)
    labels = data["rows"], data["labels"]
    _log(
        f"{len(data['queries'])} questions, {len(labels[1])} candidates, "
        f"{int(labels[1].sum())} relevant"
    )
    n = len(data["rows"])
    report: dict[str, Any] = {"fused_order_ndcg10": ndcg_of(data, None)}
    configs = [(HIDDEN, L2)]
    if args.explore:
        configs = [((), 0.1), ((), 1.0), ((16,), 1.0), ((32,), 0.1), ((32, 16), 0.1)]
    for hidden, c in configs:
        oof = cross_validated(data, args.folds, hidden, c)
        key = f"hidden={list(hidden)} C={c}"
        report[key] = ndcg_of(data, oof)
        _log(
            f"{key}: CV NDCG@10 {report[key]:.4f} (fused order {report['fused_order_ndcg10']:.4f})"
        )
        if (hidden, c) == (HIDDEN, L2):
            report["reliability"] = reliability(oof, data["labels"])
    scaler, model = fit(data["rows"], data["labels"], HIDDEN, L2)
    spec = export(scaler, model, HIDDEN)
    spec["training"] = {"questions": len(data["queries"]), "candidates": n, "cv": report}
    args.out.write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
