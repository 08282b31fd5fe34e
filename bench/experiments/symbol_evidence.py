"""The name of the definition a chunk sits in, as evidence for the chunk stage (issue 28,
deliver 4; docs/research/models-rounds.md, "Graph evidence").

    python -m bench.experiments.symbol_evidence BENCH_DIR [--work DIR] [--groups enc_cov ...]
    python -m bench.experiments.symbol_evidence BENCH_DIR --per-question enc_cov

The chunk stage reads the names a chunk *defines* (``definition_coverage``: a regular
expression over its lines), so a chunk that starts inside a long method or an ``impl``
block gets no credit for the name of what it is part of. The code graph's definitions
(``seek.graph.extract``, spans included) say what encloses every chunk. Columns, per weighed
chunk of ``bench.experiments.lines_analysis collect``'s pickles (the same ``--work``):

- ``enc_cov``: the share of the question's keywords among the words of the names of every
  definition that begins above the chunk's first line and ends at or below it (its
  containers: ``Parser`` and ``add_env`` for a chunk inside ``impl Parser { fn add_env``);
- ``enc_cov_gap``: that minus the best of its file's weighed chunks;
- ``inner_cov`` / ``inner_cov_gap``: the innermost container alone;
- ``enc_any``: whether any keyword is among the containers' words;
- ``fn_cov`` / ``fn_cov_gap``: the share among the last parts of the names of the containers
  that are functions or methods (``add_env``, not ``Parser``): a type or ``impl`` holds many
  parts, a function the one it does.

The chunk stage is refitted with the columns added, in the two set-ups of
``bench.experiments.graph_evidence chunk-experiments`` (dev-fitted: repositories of semble dev
and spans dev held out in turn, the own set scored by the model fitted on both; all three
sets cross-validated together), the shipped file ranker's order; NDCG@10 chunk (file) level
per set. ``--per-question`` prints the questions of the line sets whose NDCG@10 moves with
the columns named (dev-fitted).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from bench.experiments.graph_evidence import all_folds
from bench.experiments.lines_analysis import SETS, chunk_probabilities, evaluate, folds, load
from bench.quality.quality import load_repos

COLUMNS = (
    "enc_cov",
    "enc_cov_gap",
    "inner_cov",
    "inner_cov_gap",
    "enc_any",
    "fn_cov",
    "fn_cov_gap",
)
FUNCTIONS = ("function", "method")
GROUPS = ([], [0], [0, 1], [2], [2, 3], [4], [0, 1, 2, 3], [5], [5, 6])


def name_words(qualified: str) -> set[str]:
    """Stemmed words of a qualified name's parts, each part whole and split."""
    from seek.retrieve.signals.names import english_stem
    from seek.text import split_identifier

    out = set()
    for part in qualified.split("."):
        out.add(english_stem(part.lower()))
        out.update(english_stem(word) for word in split_identifier(part))
    return out


def add_columns(data: dict, bench_dir: Path) -> None:
    """``d["symbols"]``: one row of :data:`COLUMNS` per weighed chunk of every question."""
    from seek.graph.extract import extract
    from seek.retrieve.signals.names import query_keywords

    folders = {}
    for name, bench_set in SETS.items():
        repos, _ = load_repos(bench_dir, bench_set.default_names(), bench_set)
        folders.update({(name, repo.name): repo.folder for repo in repos})
    spans: dict[tuple[str, str, str], list[tuple[int, int, str, str]]] = {}

    def definitions(set_name: str, repo: str, path: str) -> list[tuple[int, int, str, str]]:
        key = (set_name, repo, path)
        if key not in spans:
            try:
                facts = extract(path, (folders[(set_name, repo)] / path).read_bytes())
            except OSError:
                facts = None
            found = facts.definitions if facts is not None else []
            spans[key] = [(d.line, d.end_line, d.qualified, d.kind) for d in found]
        return spans[key]

    for set_name, questions in data.items():
        for d in questions:
            keywords = query_keywords(d["query"].query)
            share = 1 / (len(keywords) or 1)
            x = np.zeros((len(d["hits"]), len(COLUMNS)))
            for row, hit in enumerate(d["hits"]):
                around = [
                    (q, kind) for a, b, q, kind in definitions(set_name, d["repo"], hit.path)
                    if a < hit.start_line <= b
                ]  # fmt: skip
                containers = [q for q, _ in around]
                words = set().union(*map(name_words, containers)) if containers else set()
                functions = [q.rpartition(".")[2] for q, kind in around if kind in FUNCTIONS]
                function_words = set().union(*map(name_words, functions)) if functions else set()
                inner = max(containers, key=lambda q: q.count("."), default=None)
                inner_words = name_words(inner) if inner else set()
                x[row, 0] = len(keywords & words) * share
                x[row, 2] = len(keywords & inner_words) * share
                x[row, 4] = float(bool(keywords & words))
                x[row, 5] = len(keywords & function_words) * share
            paths = [hit.path for hit in d["hits"]]
            for column, gap in ((0, 1), (2, 3), (5, 6)):
                best: dict[str, float] = {}
                for path, value in zip(paths, x[:, column], strict=True):
                    best[path] = max(best.get(path, 0.0), value)
                x[:, gap] = x[:, column] - np.array([best[p] for p in paths])
            d["symbols"] = x


def refit(data: dict, columns: list[int], make_folds) -> None:
    """``pc``: the chunk stage refitted with ``columns`` added, out of fold."""
    for questions in data.values():
        for d in questions:
            d["x"] = np.hstack([d["x0"], d["symbols"][:, columns]])
    chunk_probabilities(data, make_folds())


def per_question(data: dict) -> dict[tuple[str, str, str], float]:
    """NDCG@10 chunk level of every line-set question with the current ``pc``."""
    from bench.quality.scoring import K, score_query
    from seek.retrieve.chunks import BUILTIN_CHUNKER, load_chunker, ordered

    chunker = load_chunker(str(BUILTIN_CHUNKER))
    out = {}
    for name in ("spans", "own"):
        for d in data[name]:
            order = ordered(d["chosen"], d["pc"], d["p_file"], chunker.rest_weight, chunker.power)
            hit_of = {c: h for (c, _), h in zip(d["chosen"], d["hits"], strict=True)}
            score = score_query([hit_of[i] for i, _ in order][:K], d["query"])
            out[(name, d["repo"], d["query"].query)] = score["ndcg10"]
    return out


def column_experiment(
    argv: list[str] | None, prog: str, doc: str, columns: tuple[str, ...], groups, add
) -> int:
    """The command line of a chunk-column experiment (this module's, and
    ``bench.experiments.soft_evidence``'s): ``add(data, bench_dir)`` sets ``d["symbols"]``,
    one row of ``columns`` per weighed chunk; the groups are refitted and scored."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0])
    parser.add_argument("bench_dir", type=Path)
    parser.add_argument("--work", type=Path, default=Path("/tmp/seek-lines"))
    parser.add_argument("--groups", nargs="*", help=f"column groups, e.g. {columns[0]}")
    parser.add_argument("--per-question", metavar="GROUP")
    args = parser.parse_args(argv)
    data = load(args.work)
    add(data, args.bench_dir)
    for questions in data.values():
        for d in questions:
            d["x0"] = d["x"]
    dev = lambda: folds(data, ("semble", "spans"))  # noqa: E731
    if args.per_question:
        scores = []
        for chosen in ([], [columns.index(c) for c in args.per_question.split("+")]):
            refit(data, chosen, dev)
            scores.append(per_question(data))
        for key, before in scores[0].items():
            if abs(scores[1][key] - before) > 1e-3:
                print(f"{key[0]:5} {key[1]:18} {before:.3f} -> {scores[1][key]:.3f}  {key[2]}")
        return 0
    if args.groups:
        groups = ([], *([columns.index(c) for c in g.split("+")] for g in args.groups))
    for label, make_folds in (("dev-fitted", dev), ("all three CV", lambda: all_folds(data))):
        for chosen in groups:
            refit(data, chosen, make_folds)
            names = "+".join(columns[c] for c in chosen) or "nothing"
            print(f"chunk stage {label} + {names}", evaluate(data), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    return column_experiment(
        argv, "python -m bench.experiments.symbol_evidence", __doc__, COLUMNS, GROUPS, add_columns
    )


if __name__ == "__main__":
    raise SystemExit(main())
