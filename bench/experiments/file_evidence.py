"""Issue 13, fourth round: new evidence for the file ranker, tried as extra features.

    python -m bench.experiments.file_evidence BENCH_DIR collect [--home DIR] [--work DIR]
    python -m bench.experiments.file_evidence BENCH_DIR experiments [--work DIR]
    python -m bench.experiments.file_evidence BENCH_DIR why [--work DIR]     # file-order misses
    python -m bench.experiments.file_evidence BENCH_DIR oracle [--work DIR]  # each fix's worth

``collect`` needs ``bench.experiments.lines_analysis collect`` first (same ``--work``): it runs
every question of the three sets to the ranker again and adds, per pool file, the columns of
:data:`EVIDENCE` to that pickle's questions (``evidence``). ``experiments`` refits the file
ranker with each column (and some groups) added, repositories held out in turn, the own set
scored by models fitted on the dev sets only, exactly as ``bench.experiments.lines_analysis
experiments`` does, and prints NDCG@10 chunk and file level per set. ``why`` (needs only
``bench.experiments.lines_analysis collect``) compares, for every relevant target whose file the
ranker puts 2nd-5th, that file's ranker features with the first file's (mean difference in
the ranker's standard deviations, and times its weight: the logit it costs). ``oracle``
scores the cross-validated order with the relevant files put first, with the answering
parts put first in every file, and both.

The columns (MODELS.md, "Where the lines are still missed", fourth round):

- ``doc_share`` / ``cand_doc_share`` / ``file_doc_share``: the share of comment lines in the
  file's chunk most similar to the question, in its best pool candidate, and in the whole
  file. The commonest file-order miss puts a file of API documentation first (a builder
  whose doc comments describe every option) above the file that does the work.
- ``code_gap``: the similarity of that best chunk with its comment lines removed, minus its
  similarity as a whole (both embedded the same way, here).
- ``prf_dense`` / ``prf_gap``: the file's best chunk similarity to the question moved toward
  the mean vector of the 5 most similar chunks (Rocchio pseudo-relevance feedback, 0.5),
  and that minus the pool's best.
- ``rm3_bm25``: the file's best BM25 share for the question's words plus 8 expansion words
  (the tokens most frequent in the 10 best fused candidates, weighted by rarity in the
  index; RM3-style pseudo-relevance feedback over the index's own vocabulary).
"""

from __future__ import annotations

import argparse
import pickle
from pathlib import Path

import numpy as np

from bench.common import DEFAULT_HOME, bench_settings, log
from bench.experiments.feedback_passes import expanded_words
from bench.experiments.lines_analysis import SETS, evaluate, load, refit_ranker
from bench.quality.quality import load_repos

EVIDENCE = (
    "doc_share",
    "cand_doc_share",
    "file_doc_share",
    "code_gap",
    "prf_dense",
    "prf_gap",
    "rm3_bm25",
    "impl_dense",
    "impl_gap",
    "impl_pool_gap",
)
CODE_CHUNK_MAX_DOC = 0.5
"""A chunk is mostly code when under half its lines are comments."""
PRF_CHUNKS = 5
PRF_WEIGHT = 0.5
RM3_FEEDBACK = 10


def comment_lines(content: str) -> tuple[int, int, str]:
    """``(comment lines, non-blank lines, the content without its comment lines)``."""
    from seek.retrieve.chunks import _COMMENT_LINE

    lines = [line for line in content.split("\n") if line.strip()]
    code = [line for line in lines if not _COMMENT_LINE.match(line)]
    return len(lines) - len(code), len(lines), "\n".join(code)


def doc_share(content: str) -> float:
    comments, total, _ = comment_lines(content)
    return comments / total if total else 0.0


def evidence(searcher, text: str, files, pool, retrieval) -> np.ndarray:
    """One row of :data:`EVIDENCE` per pool file."""
    from seek.text import keyword_query

    sims = retrieval.similarities
    q = retrieval.query_vector
    embedder = searcher._embedding.get()
    best_of: dict[str, int] = {}
    for chunk_id, _ in pool:
        best_of.setdefault(searcher.index.paths[chunk_id], chunk_id)
    # Rocchio: the question moved toward its 5 nearest chunks (here, not only the fused best).
    if sims is not None and q is not None:
        top = np.argsort(-sims)[:PRF_CHUNKS]
        centroid = np.zeros_like(q)
        for c in top.tolist():
            rows = slice(
                int(searcher.index.chunk_first_row[c]),
                int(searcher.index.chunk_first_row[c]) + int(searcher.index.chunk_rows[c]),
            )
            centroid += searcher.index.vectors[rows].mean(axis=0)
        moved = q + PRF_WEIGHT * centroid / PRF_CHUNKS
        moved = moved / max(float(np.linalg.norm(moved)), 1e-12)
        prf = searcher.index.chunk_similarities(moved.astype(np.float32))
    else:
        prf = None
    best = [chunk_id for chunk_id, _ in pool[:RM3_FEEDBACK]]
    expanded = expanded_words(
        keyword_query(text), searcher.index.contents, best, searcher.index.bm25
    )
    rm3 = dict(searcher.keywords.scored(expanded, 10 * len(pool)))
    best_rm3 = max(rm3.values(), default=0.0) or 1.0
    prf_best = []
    rows = []
    pairs = []
    for path in files:
        ids = searcher.index.chunks_of_path[path]
        best = int(ids[int(np.argmax(sims[ids]))]) if sims is not None else int(ids[0])
        content = searcher.index.contents[best]
        _, _, code = comment_lines(content)
        pairs.append((searcher.document_prefix + path + "\n" + content, code))
        comments = total = 0
        for i in ids.tolist():
            c, t, _ = comment_lines(searcher.index.contents[i])
            comments, total = comments + c, total + t
        prf_best.append(float(prf[ids].max()) if prf is not None else 0.0)
        code = [
            i for i in ids.tolist() if doc_share(searcher.index.contents[i]) < CODE_CHUNK_MAX_DOC
        ]
        impl = float(sims[code].max()) if code and sims is not None else 0.0
        rows.append(
            [
                doc_share(content),
                doc_share(searcher.index.contents[best_of[path]]),
                comments / total if total else 0.0,
                0.0,
                prf_best[-1],
                0.0,
                max((rm3.get(int(i), 0.0) for i in ids.tolist()), default=0.0) / best_rm3,
                impl,
                impl - (float(sims[ids].max()) if sims is not None else 0.0),
                0.0,
            ]
        )
    out = np.array(rows)
    if embedder is not None and q is not None:
        texts = [whole for whole, _ in pairs]
        texts += [
            searcher.document_prefix + p + "\n" + code
            for p, (_, code) in zip(files, pairs, strict=True)
        ]
        vectors = embedder.embed(texts).astype(np.float32)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        cos = vectors @ q
        out[:, 3] = cos[len(files) :] - cos[: len(files)]
    out[:, 5] = out[:, 4] - out[:, 4].max()
    out[:, 9] = out[:, 7] - out[:, 7].max()
    return out


def collect(bench_dir: Path, home: Path, work: Path) -> None:
    from bench.quality.scoring import K
    from seek.retrieve import Searcher
    from seek.retrieve.ranker import POOL, files_in_pool

    settings = bench_settings(home)
    data = load(work)
    for name, bench_set in SETS.items():
        by_key: dict[tuple[str, str], list] = {}
        for d in data[name]:  # a question asked twice in a repository is in twice
            by_key.setdefault((d["repo"], d["query"].query), []).append(d)
        repos, _ = load_repos(bench_dir, bench_set.default_names(), bench_set)
        for repo in repos:
            log(f"{name}/{repo.name}")
            s = Searcher.open(repo.folder, settings)
            for query in repo.queries:
                same = by_key.get((repo.name, query.query), [])
                if not same:
                    continue
                text = query.query.strip()
                pool, retrieval, _ = s.pipeline.candidates(text, POOL, k=K)
                files = list(files_in_pool(pool, s.index.paths))
                if files != list(same[0]["files"]):
                    raise SystemExit(f"files differ from the pickle: {name} {query.query!r}")
                for d in same:
                    d["evidence"] = evidence(s, text, files, pool, retrieval)
        (work / f"{name}.pkl").write_bytes(pickle.dumps(data[name]))


def experiments(data: dict) -> None:
    from bench.experiments.lines_analysis import chunk_probabilities

    chunk_probabilities(data)
    print("shipped ranker", evaluate(data), flush=True)
    for questions in data.values():
        for d in questions:
            d["aggregates"] = d["evidence"]
    groups = (
        [[]] + [[n] for n in range(len(EVIDENCE))] + [[0, 1, 2], [0, 1, 2, 3], [4, 5], [4, 5, 6]]
    )
    groups += [[7, 8, 9], [0, 6], [0, 6, 7, 8, 9]]
    for weight in (0.0, 1.0):
        for columns in groups:
            refit_ranker(data, columns, weight)
            names = "+".join(EVIDENCE[c] for c in columns) or "nothing"
            print(
                f"ranker refitted + {names}, spans weight {weight}",
                evaluate(data, "p2"),
                flush=True,
            )
    without_fused(data)


FUSED_RANK = ("best_inv_rank", "best_log_rank")
FUSED_SHARES = ("best_fused_share", "sum_fused_share")


def without_fused(data: dict) -> None:
    """The ranker refitted with its fused-rank features (then also the fused shares) held at
    zero: can it order files on its other evidence?"""
    from seek.retrieve.ranker import FEATURES

    kept = {id(d): d["rows"] for questions in data.values() for d in questions}
    for dropped in (FUSED_RANK, FUSED_RANK + FUSED_SHARES):
        columns = [FEATURES.index(name) for name in dropped]
        for questions in data.values():
            for d in questions:
                d["rows"] = kept[id(d)].copy()
                d["rows"][:, columns] = 0.0
        refit_ranker(data, None)
        print(f"ranker refitted without {'+'.join(dropped)}", evaluate(data, "p2"), flush=True)
    for questions in data.values():
        for d in questions:
            d["rows"] = kept[id(d)]


def why(data: dict) -> None:
    import json

    from bench.quality.scoring import path_matches
    from seek.retrieve.ranker import BUILTIN_RANKER, FEATURES

    spec = json.loads(BUILTIN_RANKER.read_text(encoding="utf-8"))
    weights = np.asarray(spec["layers"][0]["weights"]).ravel()
    scale = np.asarray(spec["scale"])
    for name in ("spans", "own"):
        diffs = []
        for d in data[name]:
            order = np.argsort(-d["p_file"], kind="stable").tolist()
            for target in d["query"].relevant:
                path = next((f for f in d["files"] if path_matches(f, target.path)), None)
                if path is None:
                    continue
                row = d["files"].index(path)
                if 2 <= order.index(row) + 1 <= 5:
                    diffs.append((d["rows"][row] - d["rows"][order[0]]) / scale)
        mean = np.mean(diffs, axis=0)
        print(f"{name}: {len(diffs)} targets whose file is ranked 2nd-5th")
        for i in np.argsort(mean * weights):
            print(f"  {FEATURES[i]:22s} {mean[i]:+.2f} sd  {mean[i] * weights[i]:+.2f} logit")


def oracle(data: dict) -> None:
    from bench.experiments.lines_analysis import chunk_probabilities

    chunk_probabilities(data)
    print("cross-validated order", evaluate(data), flush=True)
    for questions in data.values():
        for d in questions:
            d["p_right"] = np.where(d["file_label"], 1.0, d["p_file"] * 0.5)
    print("relevant files first", evaluate(data, "p_right"), flush=True)
    for questions in data.values():
        for d in questions:
            d["pc"] = np.where(d["labels"], 0.99, d["pc"] * 0.5)
    print("answering parts first in every file", evaluate(data), flush=True)
    print("both", evaluate(data, "p_right"), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.experiments.file_evidence", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("bench_dir", type=Path)
    parser.add_argument("command", choices=("collect", "experiments", "why", "oracle"))
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME)
    parser.add_argument("--work", type=Path, default=Path("/tmp/seek-lines"))
    args = parser.parse_args(argv)
    if args.command == "collect":
        collect(args.bench_dir, args.home, args.work)
    else:
        {"experiments": experiments, "why": why, "oracle": oracle}[args.command](load(args.work))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
