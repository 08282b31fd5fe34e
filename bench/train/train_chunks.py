"""Train seek's chunk stage (``src/seek/models/chunker.json``) with leave-one-repository-out
cross-validation over the dev sets.

    python -m bench.train.train_chunks BENCH_DIR [--home DIR] [--out FILE] [--no-write]

1. **Candidates.** Every repository of the semble dev set (30) and the spans dev set (4) is
   indexed (in ``--home``, the quality harness's bench home by default) and every question
   goes through the search up to the file ranker (the shipped ``ranker.json``); then
   :func:`seek.retrieve.chunks.candidates` picks the chunks to weigh and
   :func:`seek.retrieve.chunks.features` describes them.
2. **Labels.** Only files that hold a judged *line span* teach the model (a whole-file target
   is covered by any of its chunks): a chunk is positive when it overlaps a span of its file.
3. **Cross-validation.** Each repository is scored by a model fitted on the other 33, and the
   questions are re-ordered as the search would (:func:`seek.retrieve.chunks.ordered`);
   reported: NDCG@10 at chunk level per set (mean of per-repo means, as ``bench.quality``),
   for the order without the stage and for each ``(rest_weight, uncertainty_power)`` tried.
   Shipped: the pair with the best cross-validated spans score among those that keep the
   semble set within ``SEMBLE_TOLERANCE`` of the order without the stage (its answers are
   whole files, so every further part of a file listed costs it; the file ranker's gain
   must stay). ``seek context``'s weight (``CONTEXT_REST_WEIGHT``) is chosen on the real
   pipeline by ``bench.quality`` (widening, merging and budget included; MODELS.md).
4. **The shipped model**: fitted on all 34 repositories, written as JSON for
   :class:`seek.retrieve.chunks.ChunkRanker` (numpy only at run time).

The own hand-written set (``bench/spans-own``) is never read here: it validates.
Deterministic: the same data gives the same file.
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
    SEMBLE_SET,
    SPANS,
    BenchSet,
    add_bench_dir,
    bench_settings,
    log,
    resolve_bench_dir,
)
from bench.quality.quality import load_repos
from bench.quality.scoring import Hit, K, covers, score_query

DEFAULT_OUT = REPO_ROOT / "src" / "seek" / "models" / "chunker.json"
C = 1.0
REST_WEIGHTS = (0.0, 0.05, 0.1, 0.2, 0.4)
POWERS = (0.0, 0.5, 1.0, 2.0)
SEMBLE_TOLERANCE = 0.005
CONTEXT_REST_WEIGHT = 0.25
"""``seek context``'s weight of further parts of a file (MODELS.md: recall against noise)."""


def collect(checkouts: Path, home: Path, sets: list[BenchSet]) -> list[dict[str, Any]]:
    """Per question: the chunks weighed, their features and labels, the file probabilities."""
    from seek import index_workspace
    from seek.retrieve import Searcher
    from seek.retrieve import chunks as stage
    from seek.retrieve.ranker import POOL, features, ranked_pool
    from seek.retrieve.versions import demote_older

    settings = bench_settings(home)
    out = []
    for bench_set in sets:
        repos, _ = load_repos(checkouts, bench_set.default_names(), bench_set)
        for repo in repos:
            log(f"{bench_set.name}/{repo.name}: {len(repo.queries)} questions")
            index_workspace(repo.folder, settings)
            searcher = Searcher.open(repo.folder, settings)
            ranker, _ = searcher.pipeline.ranker()
            corpus = searcher.index.corpus

            def hit(i: int, s: Any = searcher) -> Hit:
                return Hit(s.paths[i], s.starts[i] + 1, s.ends[i] + 1)

            for query in repo.queries:
                text = query.query.strip()
                pool, retrieval, _ = searcher.pipeline.candidates(text, POOL, k=K)
                if not pool or ranker is None:
                    continue
                files, rows = features(text, pool, retrieval, corpus)
                p_file = demote_older(text, files, ranker.probabilities(rows), corpus.older())
                chosen = stage.candidates(pool, files, p_file, corpus, retrieval.similarities)
                x = stage.features(text, chosen, pool, retrieval, corpus)
                hits = [hit(i) for i, _ in chosen]
                spans = [t for t in query.targets if t.has_span]
                labels = np.array([any(covers(h, t) for t in spans) for h in hits], dtype=int)
                teach = np.array(
                    [any(covers(h, t, use_spans=False) for t in spans) for h in hits], dtype=bool
                )
                baseline = [
                    hit(i) for i, _ in ranked_pool(pool, files, p_file, searcher.index.paths)
                ]
                out.append(
                    {
                        "set": bench_set.name,
                        "repo": repo.name,
                        "query": query,
                        "chosen": chosen,
                        "x": x,
                        "labels": labels,
                        "teach": teach,
                        "p_file": p_file,
                        "hits": hits,
                        "baseline": baseline,
                    }
                )
    return out


def fit(x: np.ndarray, y: np.ndarray, c: float = C):  # (scaler, model)
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(x)
    model = LogisticRegression(C=c, max_iter=5000).fit(scaler.transform(x), y)
    return scaler, model


def out_of_fold(data: list[dict[str, Any]], c: float = C) -> list[np.ndarray]:
    """Each repository's chunk probabilities from a model fitted on the other repositories."""
    repos = sorted({(d["set"], d["repo"]) for d in data})
    probabilities: list[np.ndarray] = [np.zeros(0)] * len(data)
    for held in repos:
        train = [d for d in data if (d["set"], d["repo"]) != held]
        x = np.vstack([d["x"][d["teach"]] for d in train])
        y = np.concatenate([d["labels"][d["teach"]] for d in train])
        scaler, model = fit(x, y, c)
        for n, d in enumerate(data):
            if (d["set"], d["repo"]) == held:
                probabilities[n] = model.predict_proba(scaler.transform(d["x"]))[:, 1]
    return probabilities


def evaluate(
    data: list[dict[str, Any]],
    probabilities: list[np.ndarray] | None,
    rest_weight: float,
    power: float = 0.0,
) -> dict[str, float]:
    """NDCG@10 chunk level per set (mean of per-repo means); ``None``: the order without the
    chunk stage."""
    from seek.retrieve.chunks import ordered

    per_repo: dict[tuple[str, str], list[float]] = {}
    for n, d in enumerate(data):
        if probabilities is None:
            hits = d["baseline"]
        else:
            order = ordered(d["chosen"], probabilities[n], d["p_file"], rest_weight, power)
            hit_of = {chunk_id: h for (chunk_id, _), h in zip(d["chosen"], d["hits"], strict=True)}
            hits = [hit_of[i] for i, _ in order]
        score = score_query(hits[:K], d["query"])["ndcg10"]
        per_repo.setdefault((d["set"], d["repo"]), []).append(score)
    out: dict[str, float] = {}
    for name in sorted({s for s, _ in per_repo}):
        out[name] = float(np.mean([np.mean(v) for (s, _), v in per_repo.items() if s == name]))
    return out


def export(scaler, model, rest_weight: float, power: float) -> dict[str, Any]:
    from seek.retrieve.chunks import CHUNK_FEATURES

    return {
        "features": list(CHUNK_FEATURES),
        "mean": scaler.mean_.tolist(),
        "scale": scaler.scale_.tolist(),
        "layers": [{"weights": model.coef_.T.tolist(), "bias": model.intercept_.tolist()}],
        "rest_weight": rest_weight,
        "uncertainty_power": power,
        "context_rest_weight": CONTEXT_REST_WEIGHT,
        "context_uncertainty_power": 0.0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.train.train_chunks", description=__doc__.split("\n\n")[0]
    )
    add_bench_dir(parser)
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--no-write", action="store_true", help="cross-validate only")
    args = parser.parse_args(argv)
    args.bench_dir = resolve_bench_dir(parser, args.bench_dir)
    data = collect(args.bench_dir, args.home, [SEMBLE_SET, BenchSet(SPANS)])
    teach = sum(int(d["teach"].sum()) for d in data)
    positives = sum(int(d["labels"][d["teach"]].sum()) for d in data)
    log(f"{len(data)} questions; {teach} chunks of span files, {positives} positive")
    base = evaluate(data, None, 0.0)
    report: dict[str, Any] = {"without_chunk_stage": base}
    probabilities = out_of_fold(data)
    best, best_spans = (0.0, 0.0), -1.0
    for weight in REST_WEIGHTS:
        for power in POWERS if weight else (0.0,):
            scores = evaluate(data, probabilities, weight, power)
            report[f"rest_weight={weight},power={power}"] = scores
            log(f"rest_weight {weight}, power {power}: {scores}")
            keeps = scores["semble"] >= base["semble"] - SEMBLE_TOLERANCE
            if keeps and scores["spans"] > best_spans + 1e-9:
                best, best_spans = (weight, power), scores["spans"]
    report["chosen"] = {"rest_weight": best[0], "uncertainty_power": best[1]}
    print(json.dumps(report, indent=1))
    if args.no_write:
        return 0
    x = np.vstack([d["x"][d["teach"]] for d in data])
    y = np.concatenate([d["labels"][d["teach"]] for d in data])
    spec = export(*fit(x, y), *best)
    spec["training"] = {
        "command": "python -m bench.train.train_chunks BENCH_DIR",
        "questions": len(data),
        "chunks": int(len(y)),
        "positive": int(y.sum()),
        "cv": report,
    }
    args.out.write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
