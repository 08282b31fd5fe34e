"""Where the right lines are still missed, and the file-ranking experiments of issue 13's
third round (MODELS.md, "Where the lines are still missed").

    python -m bench.experiments.lines_analysis BENCH_DIR collect [--home DIR] [--work DIR]
    python -m bench.experiments.lines_analysis BENCH_DIR errors        # where each answer is
    python -m bench.experiments.lines_analysis BENCH_DIR experiments   # file re-scoring tries
    python -m bench.experiments.lines_analysis BENCH_DIR lead-in       # search with/without

``collect`` runs every question of the semble dev set, spans dev and the own set up to the
chunk stage (as ``bench.train.train_chunks`` does) and pickles what the other commands read into
``--work`` (default ``/tmp/seek-lines``): the ranker's files, features and probabilities,
the chunks weighed with their features and labels, and per-file aggregates for the ranker
experiments. ``errors`` places each relevant target of the two span sets (the shipped
chunker, the first hit covering it). ``experiments`` refits with leave-one-repository-out
cross-validation (chunk probabilities as ``bench.train.train_chunks``; the own set is scored by
models fitted on the dev sets only) and prints NDCG@10 chunk and file level per set.
``lead-in`` runs the real search with and without the lead-in rule on the three sets.
"""

from __future__ import annotations

import argparse
import pickle
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import DEFAULT_HOME, SEMBLE_SET, SPANS, SPANS_OWN, BenchSet, bench_settings, log
from bench.quality.quality import load_repos
from bench.quality.scoring import Hit, K, covers, path_matches, score_query

SETS = {"semble": SEMBLE_SET, "spans": BenchSet(SPANS), "own": BenchSet(SPANS_OWN)}
AGGREGATES = ("top2_dense", "top3_dense", "near_best", "bm25_sum", "bm25_chunks", "def_cov")
"""Per-file aggregates tried as ranker features (all chunks of the file)."""
CHUNK_COLUMNS = (0, 4, 6, 8, 9, 10, 11)
"""Chunk features whose file maximum the re-scoring tries (dense ... bm25_share)."""


def aggregates(searcher, text: str, files, pool, retrieval) -> np.ndarray:
    """One row of :data:`AGGREGATES` per pool file."""
    from seek.retrieve import chunks as stage
    from seek.retrieve.signals.names import query_keywords

    sims = retrieval.similarities
    keywords = query_keywords(text)
    best_pool = max(float(sims[i]) for i, _ in pool) if sims is not None else 0.0
    best_bm25 = max(retrieval.keyword_scores.values(), default=0.0) or 1.0
    rows = []
    for path in files:
        ids = searcher.index.chunks_of_path[path]
        ranked = np.sort(sims[ids])[::-1] if sims is not None else np.zeros(len(ids))
        in_bm25 = [
            retrieval.keyword_scores[int(i)] for i in ids if int(i) in retrieval.keyword_scores
        ]
        defined: set[str] = set()
        for i in ids.tolist():
            defined |= stage.chunk_parts(searcher.index.contents[i])[0]
        rows.append(
            [
                float(ranked[:2].mean()),
                float(ranked[:3].mean()),
                float(np.log1p((ranked >= best_pool - 0.05).sum())),
                sum(in_bm25) / best_bm25,
                float(np.log1p(len(in_bm25))),
                sum(1 for w in keywords if w in defined) / len(keywords) if keywords else 0.0,
            ]
        )
    return np.array(rows)


def collect(bench_dir: Path, home: Path, work: Path) -> None:
    from seek import index_workspace
    from seek.retrieve import Searcher
    from seek.retrieve import chunks as stage
    from seek.retrieve.ranker import POOL, features
    from seek.retrieve.versions import demote_older

    settings = bench_settings(home)
    work.mkdir(parents=True, exist_ok=True)
    for name, bench_set in SETS.items():
        out = []
        repos, _ = load_repos(bench_dir, bench_set.default_names(), bench_set)
        for repo in repos:
            log(f"{name}/{repo.name}")
            index_workspace(repo.folder, settings)
            s = Searcher.open(repo.folder, settings)
            ranker, _ = s.pipeline.ranker()
            for query in repo.queries:
                text = query.query.strip()
                pool, retrieval, _ = s.pipeline.candidates(text, POOL, k=K)
                if not pool or ranker is None:
                    continue
                files, rows = features(text, pool, retrieval, s.index.corpus)
                p_file = ranker.probabilities(rows)
                p_file = demote_older(text, files, p_file, s.index.corpus.older())
                chosen = stage.candidates(
                    pool, files, p_file, s.index.corpus, retrieval.similarities
                )
                hits = [
                    Hit(s.index.paths[i], s.index.starts[i] + 1, s.index.ends[i] + 1)
                    for i, _ in chosen
                ]
                spans = [t for t in query.targets if t.has_span]
                out.append(
                    {
                        "set": name,
                        "repo": repo.name,
                        "query": query,
                        "files": files,
                        "rows": rows,
                        "p_file": p_file,
                        "chosen": chosen,
                        "x": stage.features(text, chosen, pool, retrieval, s.index.corpus),
                        "hits": hits,
                        "labels": np.array([any(covers(h, t) for t in spans) for h in hits]),
                        "teach": np.array(
                            [any(covers(h, t, use_spans=False) for t in spans) for h in hits],
                            dtype=bool,
                        ),
                        "file_label": np.array(
                            [any(path_matches(f, t.path) for t in query.targets) for f in files]
                        ),
                        "aggregates": aggregates(s, text, files, pool, retrieval),
                    }
                )
        (work / f"{name}.pkl").write_bytes(pickle.dumps(out))


def load(work: Path) -> dict[str, list[dict[str, Any]]]:
    return {name: pickle.loads((work / f"{name}.pkl").read_bytes()) for name in SETS}


def fit(x: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None):
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(x)
    model = LogisticRegression(C=1.0, max_iter=5000).fit(scaler.transform(x), y, weights)
    return lambda rows: model.predict_proba(scaler.transform(rows))[:, 1]


def folds(data: dict, sets: tuple[str, ...]):
    """``(training questions, questions to score)``: each repository of ``sets`` held out in
    turn, then the own set scored by a model fitted on all of ``sets``."""
    pooled = [d for s in sets for d in data[s]]
    for held in sorted({(d["set"], d["repo"]) for d in pooled}):
        yield (
            [d for d in pooled if (d["set"], d["repo"]) != held],
            [d for d in pooled if (d["set"], d["repo"]) == held],
        )
    yield pooled, data["own"]


def chunk_probabilities(data: dict, training=None) -> None:
    """Out-of-fold chunk probabilities (``pc``) from each question's ``x``: folds as
    ``bench.train.train_chunks``, or the (training questions, questions to score) pairs
    ``training`` yields."""
    for train, scored in folds(data, ("semble", "spans")) if training is None else training:
        x = np.vstack([d["x"][d["teach"]] for d in train])
        y = np.concatenate([d["labels"][d["teach"]] for d in train])
        predict = fit(x, y)
        for d in scored:
            d["pc"] = predict(d["x"])


def evaluate(data: dict, key: str = "p_file") -> dict[str, tuple[float, float]]:
    """NDCG@10 chunk and file level per set (mean of per-repo means) with the shipped
    ``(w, u)`` of the chunk stage and the file probabilities in ``d[key]``."""
    from seek.retrieve.chunks import BUILTIN_CHUNKER, load_chunker, ordered

    chunker = load_chunker(str(BUILTIN_CHUNKER))
    out = {}
    for name, questions in data.items():
        per_repo: dict[str, list[tuple[float, float]]] = {}
        for d in questions:
            order = ordered(d["chosen"], d["pc"], d[key], chunker.rest_weight, chunker.power)
            hit_of = {c: h for (c, _), h in zip(d["chosen"], d["hits"], strict=True)}
            score = score_query([hit_of[i] for i, _ in order][:K], d["query"])
            per_repo.setdefault(d["repo"], []).append((score["ndcg10"], score["ndcg10_file"]))
        means = [np.mean(v, axis=0) for v in per_repo.values()]
        out[name] = tuple(round(float(v), 4) for v in np.mean(means, axis=0))
    return out


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def rescore_files(data: dict, with_chunks: bool, with_columns: bool, top: int = 5) -> None:
    """``p2``: the top files re-scored from the ranker's logit and the chunk stage's evidence
    (best and second chunk logit, the file's best value of :data:`CHUNK_COLUMNS`)."""

    def rows(d):
        order = np.argsort(-d["p_file"], kind="stable")[:top]
        out = []
        for r in order:
            mine = [i for i, (_, row) in enumerate(d["chosen"]) if row == r]
            logits = np.sort(_logit(d["pc"][mine]))[::-1]
            row = [float(_logit(d["p_file"][r : r + 1])[0])]
            if with_chunks:
                row += [logits[0], logits[1] if len(logits) > 1 else logits[0]]
            if with_columns:
                row += list(d["x"][mine][:, CHUNK_COLUMNS].max(axis=0))
            out.append(row)
        return order, np.array(out)

    for train, scored in folds(data, ("semble", "spans")):
        x, y = [], []
        for d in train:
            order, r = rows(d)
            x.append(r)
            y.append(d["file_label"][order])
        predict = fit(np.vstack(x), np.concatenate(y))
        for d in scored:
            order, r = rows(d)
            d["p2"] = d["p_file"].copy()
            d["p2"][order] = predict(r)


def refit_ranker(data: dict, columns: list[int] | None, spans_weight: float = 0.0) -> None:
    """``p2``: the file ranker refitted (C = 1) on the semble dev set, plus spans dev at
    ``spans_weight``, with extra :data:`AGGREGATES` columns; repositories held out in turn."""

    def rows(d):
        return d["rows"] if columns is None else np.hstack([d["rows"], d["aggregates"][:, columns]])

    sets = ("semble", "spans") if spans_weight else ("semble",)
    for train, scored in folds(data, sets):
        weights = np.concatenate(
            [np.full(len(d["files"]), spans_weight if d["set"] == "spans" else 1.0) for d in train]
        )
        x = np.vstack([rows(d) for d in train])
        predict = fit(x, np.concatenate([d["file_label"] for d in train]), weights)
        for d in scored:
            d["p2"] = predict(rows(d))
    if not spans_weight:  # spans dev was not in the folds: scored by the model on all semble
        for d in data["spans"]:
            d["p2"] = predict(rows(d))


def experiments(data: dict) -> None:
    chunk_probabilities(data)
    print("shipped ranker, cross-validated chunk stage", evaluate(data))
    for chunks_too, columns in ((True, False), (False, True), (True, True)):
        rescore_files(data, chunks_too, columns)
        print(
            f"files re-scored: chunk logits {chunks_too}, chunk maxima {columns}",
            evaluate(data, "p2"),
        )
    for weight in (0.0, 1.0, 3.0):
        refit_ranker(data, None, weight)
        print(f"ranker refitted, spans dev weight {weight}", evaluate(data, "p2"))
    for n, name in enumerate(AGGREGATES):
        refit_ranker(data, [n])
        print(f"ranker refitted + {name}", evaluate(data, "p2"))
    refit_ranker(data, list(range(len(AGGREGATES))))
    print("ranker refitted + all aggregates", evaluate(data, "p2"))


def errors(data: dict) -> None:
    """Each relevant target of the span sets: its rank, its file's rank, and whether the
    chunk stage put the answering part first in its file."""
    from seek.retrieve.chunks import BUILTIN_CHUNKER, load_chunker, ordered

    chunker = load_chunker(str(BUILTIN_CHUNKER))
    for name in ("spans", "own"):
        places: dict[str, int] = {}
        for d in data[name]:
            p = chunker.probabilities(d["x"])
            order = ordered(d["chosen"], p, d["p_file"], chunker.rest_weight, chunker.power)
            hit_of = {c: h for (c, _), h in zip(d["chosen"], d["hits"], strict=True)}
            hits = [hit_of[i] for i, _ in order]
            file_rank = {
                d["files"][r]: n + 1 for n, r in enumerate(np.argsort(-d["p_file"], kind="stable"))
            }
            for target in d["query"].relevant:
                rank = next((n + 1 for n, h in enumerate(hits) if covers(h, target)), None)
                path = next((f for f in d["files"] if path_matches(f, target.path)), None)
                if rank == 1:
                    place = "rank 1"
                elif path is None:
                    place = "file not in the pool"
                else:
                    row = d["files"].index(path)
                    mine = [
                        (pp, hit_of[c])
                        for (c, r), pp in zip(d["chosen"], p, strict=True)
                        if r == row
                    ]
                    first = max(mine, key=lambda m: m[0])[1]
                    if covers(first, target):
                        part = "the right part first"
                    elif target.has_span and 0 < target.start_line - first.end_line <= 3:
                        part = "the part just above first"
                    else:
                        part = "another part first"
                    fr = file_rank[path]
                    band = "file 1" if fr == 1 else "file 2-5" if fr <= 5 else "file > 5"
                    where = "in the top 10" if rank and rank <= K else "below 10"
                    place = f"{band}, {part}, {where}"
                places[place] = places.get(place, 0) + 1
        print(f"{name}: {sum(places.values())} relevant targets")
        for place in sorted(places):
            print(f"  {places[place]:4d}  {place}")


def lead_in_ab(bench_dir: Path, home: Path) -> None:
    from seek.retrieve import Searcher

    settings = bench_settings(home)
    for name, bench_set in SETS.items():
        repos, _ = load_repos(bench_dir, bench_set.default_names(), bench_set)
        means: dict[str, list[float]] = {"on": [], "off": []}
        for repo in repos:
            searcher = Searcher.open(repo.folder, settings)
            scores: dict[str, list[float]] = {"on": [], "off": []}
            for query in repo.queries:
                for key, off in (("on", frozenset()), ("off", frozenset({"lead_in"}))):
                    result = searcher.search(query.query, k=K, disabled=off)
                    hits = [Hit(h.path, h.start_line, h.end_line) for h in result.hits]
                    scores[key].append(score_query(hits, query)["ndcg10"])
            for key, values in scores.items():
                means[key].append(float(np.mean(values)))
        print(name, {key: round(float(np.mean(v)), 4) for key, v in means.items()}, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.experiments.lines_analysis", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("bench_dir", type=Path)
    parser.add_argument("command", choices=("collect", "errors", "experiments", "lead-in"))
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME)
    parser.add_argument("--work", type=Path, default=Path("/tmp/seek-lines"))
    args = parser.parse_args(argv)
    if args.command == "collect":
        collect(args.bench_dir, args.home, args.work)
    elif args.command == "lead-in":
        lead_in_ab(args.bench_dir, args.home)
    elif args.command == "errors":
        errors(load(args.work))
    else:
        experiments(load(args.work))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
