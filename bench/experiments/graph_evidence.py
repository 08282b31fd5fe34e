"""Issue 28, deliver 4: the code graph as evidence for the file ranker and the chunk stage
(MODELS.md, "Where the lines are still missed"; docs/research/models-rounds.md, "Graph
evidence").

    python -m bench.experiments.graph_evidence BENCH_DIR collect [--home DIR] [--work DIR]
    python -m bench.experiments.graph_evidence BENCH_DIR reach [--work DIR]
    python -m bench.experiments.graph_evidence BENCH_DIR why [--work DIR]
    python -m bench.experiments.graph_evidence BENCH_DIR experiments [--work DIR] [--groups G..]
    python -m bench.experiments.graph_evidence BENCH_DIR chunk-experiments [--work DIR]

``collect`` needs ``bench.experiments.lines_analysis collect`` first (same ``--work``, same
``--home``): it builds each repository's code graph once (:func:`seek.graph.build_graph` over
the index's files), keeps its cross-file use -> definition links in ``--work``
(``graph-<set>-<repo>.pkl``), runs every question of the three sets to the ranker again and
adds to that pickle's questions the columns of :data:`EVIDENCE` per pool file (``graph``)
and where each relevant target's file lies from the pool (``reach``). ``reach`` prints how
often a target's file is outside the ranker's pool but one definition-use link from its best
candidates: what adding such files to the pool could win at most. ``experiments`` refits the
file ranker with each column (and some groups) added, as ``bench.experiments.file_evidence
experiments`` does (repositories held out in turn, the own set scored by models fitted on the
dev sets), then again with all three sets cross-validated together (every repository of
every set held out in turn, the chunk stage too), and prints NDCG@10 chunk and file level.
``why`` says how the ranker's first file is linked to a target's file it ranks 2nd-5th (and
the runner-up to a target's file it ranks first). ``chunk-experiments`` refits the chunk
stage with the columns of :data:`CHUNK_EVIDENCE` added, in both set-ups.

The columns (definition over use; the pool's best ``TOP`` fused candidates, each weighted by
its share of their fused score):

- ``def_in``: the share of the candidates' cross-file uses (identifiers in their line span,
  bound to definitions by the graph; a use that can mean n definitions counts 1/n) that land
  on a definition in the file; ``def_in_any``: the weight of candidates with at least one use
  landing there; ``def_in_top3``: ``def_in`` over the best 3 candidates only;
  ``def_in_gap``: ``def_in`` minus the pool's best.
- ``use_out`` / ``use_out_any``: the reverse: the file's uses of definitions that start
  inside a candidate (the file *uses* what the candidates define).
- ``ppr_fwd`` / ``ppr_both``: personalised PageRank over the file-level reference graph
  (user -> defining file; both directions), teleporting to the pool's files in proportion to
  their summed fused share, each pool file's mass over the pool's largest;
  ``ppr_flow``: the mass that came along edges (the teleport's part removed), over the pool's
  largest; ``ppr_inv_rank``: 1 / the file's rank in the pool by ``ppr_fwd``.
- ``first_uses`` / ``first_defines``: ``log1p`` of the uses in the shipped ranker's first
  file bound to definitions in the file (the first file is a hub above this module), and of
  the file's uses bound to definitions in the first file (the first file is a table of
  definitions this code acts on); 0 for the first file itself.
"""

from __future__ import annotations

import argparse
import pickle
from collections import defaultdict
from pathlib import Path

import numpy as np

from bench.common import DEFAULT_HOME, bench_settings, log
from bench.experiments.lines_analysis import (
    SETS,
    chunk_probabilities,
    evaluate,
    fit,
    folds,
    load,
    refit_ranker,
)
from bench.quality.quality import load_repos

EVIDENCE = (
    "def_in",
    "def_in_any",
    "def_in_top3",
    "def_in_gap",
    "use_out",
    "use_out_any",
    "ppr_fwd",
    "ppr_both",
    "ppr_flow",
    "ppr_inv_rank",
    "first_uses",
    "first_defines",
)
TOP = 10
"""The best fused candidates whose links count (a third of the ranker's pool)."""
DAMPING = 0.85


# -- the graph, once per repository ----------------------------------------------------------


def links(folder: Path, paths: list[str]) -> dict:
    """The repository's cross-file links: ``uses[path]`` = [(line, ((def path, def line, def
    end line, weight), ...))] for each use in ``path`` bound to definitions in other files
    (weight 1/n for a use that can mean n definitions), ``used_by`` the same keyed by the
    defining file, the file-level edge weights; ``local[path]`` = [(line, ((def line, def
    end line, weight), ...))] for the uses bound in their own file, and ``inbound[path]`` =
    {(def line, def end line): the weight of every use bound to it}."""
    from seek.graph import build_graph

    files = []
    for path in paths:
        try:
            files.append((path, (folder / path).read_bytes()))
        except OSError:
            continue
    graph = build_graph(files)
    uses: dict[str, list] = defaultdict(list)
    used_by: dict[str, list] = defaultdict(list)
    edges: dict[tuple[str, str], float] = defaultdict(float)
    local: dict[str, list] = defaultdict(list)
    inbound: dict[str, dict] = defaultdict(lambda: defaultdict(float))
    for facts in graph.files.values():
        for ref in facts.references:
            found = graph.candidates(ref)
            if not found:
                continue
            weight = 1.0 / len(found)
            for d in found:
                inbound[d.path][(d.line, d.end_line)] += weight
            near = tuple((d.line, d.end_line, weight) for d in found if d.path == ref.path)
            if near:
                local[ref.path].append((ref.line, near))
            far = tuple((d.path, d.line, d.end_line, weight) for d in found if d.path != ref.path)
            if not far:
                continue
            uses[ref.path].append((ref.line, far))
            for d_path, d_line, d_end, w in far:
                used_by[d_path].append((ref.path, ref.line, d_line, d_end, w))
                edges[(ref.path, d_path)] += w
    return {
        "files": sorted(graph.files),
        "uses": dict(uses),
        "used_by": dict(used_by),
        "edges": dict(edges),
        "local": dict(local),
        "inbound": {p: dict(v) for p, v in inbound.items()},
    }


def cached_links(work: Path, set_name: str, repo: str, folder: Path, paths: list[str]) -> dict:
    cache = work / f"graph-{set_name}-{repo}.pkl"
    if cache.exists():
        found = pickle.loads(cache.read_bytes())
        if "local" in found:  # else a cache from before the chunk columns
            return found
    found = links(folder, paths)
    cache.write_bytes(pickle.dumps(found))
    return found


class FileGraph:
    """PageRank over one repository's file-level reference graph."""

    def __init__(self, found: dict, extra: list[str]) -> None:
        names = list(dict.fromkeys(found["files"] + extra))
        self.index = {p: i for i, p in enumerate(names)}
        pairs = list(found["edges"].items())
        self.sources = np.array([self.index[a] for (a, _), _ in pairs], dtype=np.int64)
        self.targets = np.array([self.index[b] for (_, b), _ in pairs], dtype=np.int64)
        self.weights = np.array([w for _, w in pairs], dtype=np.float64)

    def grow(self, paths) -> None:
        for p in paths:
            self.index.setdefault(p, len(self.index))

    def rank(self, seeds: dict[str, float], both: bool) -> np.ndarray:
        from seek.graph.rank import pagerank

        size = len(self.index)
        personal = np.zeros(size)
        for path, weight in seeds.items():
            personal[self.index[path]] += weight
        sources, targets, weights = self.sources, self.targets, self.weights
        if both:
            sources = np.concatenate([self.sources, self.targets])
            targets = np.concatenate([self.targets, self.sources])
            weights = np.concatenate([self.weights, self.weights])
        return pagerank(size, sources, targets, weights, personal)


# -- per question ----------------------------------------------------------------------------


def candidate_links(found: dict, path: str, start: int, end: int):
    """``(files the candidate's uses land in, files using what the candidate defines)``,
    each a {path: weight}; ``start``/``end`` 1-based inclusive."""
    out: dict[str, float] = defaultdict(float)
    for line, far in found["uses"].get(path, ()):
        if start <= line <= end:
            for d_path, _, _, w in far:
                out[d_path] += w
    into: dict[str, float] = defaultdict(float)
    for user, _, d_line, _, w in found["used_by"].get(path, ()):
        if start <= d_line <= end:
            into[user] += w
    return out, into


def evidence(
    index, found: dict, graph: FileGraph, files: list[str], pool, first: str
) -> np.ndarray:
    """One row of :data:`EVIDENCE` per pool file (``first``: the shipped ranker's first)."""
    top = pool[:TOP]
    total = sum(score for _, score in top) or 1.0
    rows = np.zeros((len(files), len(EVIDENCE)))
    at = {f: n for n, f in enumerate(files)}
    for place, (chunk_id, score) in enumerate(top):
        share = score / total
        out, into = candidate_links(
            found,
            index.paths[chunk_id],
            int(index.starts[chunk_id]) + 1,
            int(index.ends[chunk_id]) + 1,
        )
        out_total = sum(out.values())
        into_total = sum(into.values())
        for path, w in out.items():
            if path in at:
                rows[at[path], 0] += share * w / out_total
                rows[at[path], 1] += share
                if place < 3:
                    rows[at[path], 2] += w / out_total / 3
        for path, w in into.items():
            if path in at:
                rows[at[path], 4] += share * w / into_total
                rows[at[path], 5] += share
    rows[:, 3] = rows[:, 0] - rows[:, 0].max()
    seeds: dict[str, float] = defaultdict(float)
    for chunk_id, score in pool:
        seeds[index.paths[chunk_id]] += score
    graph.grow(seeds)
    rows_of = [graph.index[f] for f in files]
    teleport = np.zeros(len(graph.index))
    for path, weight in seeds.items():
        teleport[graph.index[path]] = weight
    teleport /= teleport.sum() or 1.0
    fwd = graph.rank(seeds, both=False)
    both = graph.rank(seeds, both=True)
    flow = fwd - (1 - DAMPING) * teleport
    for column, values in ((6, fwd), (7, both), (8, flow)):
        mine = values[rows_of]
        rows[:, column] = mine / (mine.max() or 1.0)
    order = np.argsort(-fwd[rows_of], kind="stable")
    rows[order, 9] = 1.0 / (np.arange(len(files)) + 1)
    for row, path in enumerate(files):
        if path != first:
            rows[row, 10] = np.log1p(found["edges"].get((first, path), 0.0))
            rows[row, 11] = np.log1p(found["edges"].get((path, first), 0.0))
    return rows


CHUNK_EVIDENCE = ("ck_def_in", "ck_def_in_any", "ck_inbound", "ck_inbound_share", "ck_uses_top")
"""Chunk-stage columns: definitions in the chunk that the best candidates use (their share
of those candidates' bound uses, fused-share weighted; the weight of candidates using one),
``log1p`` of every use in the workspace bound to the chunk's definitions and that over the
file's, and the share of the chunk's own bound uses that land in the best candidates."""


def bound_uses(found: dict, path: str, start: int, end: int) -> list[tuple[str, int, float]]:
    """``(def path, def line, weight)`` of the uses in those lines, same file included."""
    out = [
        (d_path, d_line, w)
        for line, far in found["uses"].get(path, ())
        if start <= line <= end
        for d_path, d_line, _, w in far
    ]
    out += [
        (path, d_line, w)
        for line, near in found["local"].get(path, ())
        if start <= line <= end
        for d_line, _, w in near
    ]
    return out


def chunk_evidence(index, found: dict, chosen, pool) -> np.ndarray:
    """One row of :data:`CHUNK_EVIDENCE` per ``(chunk_id, file_row)`` the chunk stage weighs."""

    def span(chunk_id: int) -> tuple[str, int, int]:
        return index.paths[chunk_id], int(index.starts[chunk_id]) + 1, int(index.ends[chunk_id]) + 1

    top = pool[:TOP]
    total = sum(score for _, score in top) or 1.0
    top_uses = []
    for chunk_id, score in top:
        uses = bound_uses(found, *span(chunk_id))
        top_uses.append((chunk_id, score / total, uses, sum(w for _, _, w in uses) or 1.0))
    top_spans = [(chunk_id, *span(chunk_id)) for chunk_id, _ in top]
    rows = np.zeros((len(chosen), len(CHUNK_EVIDENCE)))
    file_inbound: dict[str, float] = {}
    for n, (chunk_id, _) in enumerate(chosen):
        path, start, end = span(chunk_id)
        for other, share, uses, weight in top_uses:
            if other == chunk_id:
                continue
            hit = sum(w for p, line, w in uses if p == path and start <= line <= end)
            rows[n, 0] += share * hit / weight
            rows[n, 1] += share if hit else 0.0
        inbound = found["inbound"].get(path, {})
        mine = sum(w for (line, _), w in inbound.items() if start <= line <= end)
        if path not in file_inbound:
            file_inbound[path] = sum(inbound.values())
        rows[n, 2] = np.log1p(mine)
        rows[n, 3] = mine / file_inbound[path] if file_inbound[path] else 0.0
        own = bound_uses(found, path, start, end)
        if own:
            into = sum(
                w
                for p, line, w in own
                for other, o_path, o_start, o_end in top_spans
                if other != chunk_id and p == o_path and o_start <= line <= o_end
            )
            rows[n, 4] = into / sum(w for _, _, w in own)
    return rows


def reach(index, found: dict, files: list[str], pool, query) -> list[str]:
    """Where each relevant target's file is: in the pool, or outside it and one link from the
    best ``TOP`` candidates (defines what they use, uses what they define), or neither."""
    from bench.quality.scoring import path_matches

    defines: set[str] = set()
    users: set[str] = set()
    for chunk_id, _ in pool[:TOP]:
        out, into = candidate_links(
            found,
            index.paths[chunk_id],
            int(index.starts[chunk_id]) + 1,
            int(index.ends[chunk_id]) + 1,
        )
        defines |= set(out)
        users |= set(into)
    places = []
    for target in query.relevant:
        if any(path_matches(f, target.path) for f in files):
            places.append("in the pool")
            continue
        d = any(path_matches(f, target.path) for f in defines)
        u = any(path_matches(f, target.path) for f in users)
        places.append(
            "outside, defines what the candidates use and uses what they define"
            if d and u
            else "outside, defines what the candidates use"
            if d
            else "outside, uses what the candidates define"
            if u
            else "outside, no link"
        )
    added = (defines | users) - set(files)
    places.append(f"#added {len(added)} {len(defines - set(files))} {len(users - set(files))}")
    return places


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
            found = cached_links(work, name, repo.name, repo.folder, list(s.index.chunks_of_path))
            graph = FileGraph(found, list(s.index.chunks_of_path))
            for query in repo.queries:
                same = by_key.get((repo.name, query.query), [])
                if not same:
                    continue
                text = query.query.strip()
                pool, _, _ = s.pipeline.candidates(text, POOL, k=K)
                files = list(files_in_pool(pool, s.index.paths))
                if files != list(same[0]["files"]):
                    raise SystemExit(f"files differ from the pickle: {name} {query.query!r}")
                first = files[int(np.argmax(same[0]["p_file"]))]
                rows = evidence(s.index, found, graph, files, pool, first)
                where = reach(s.index, found, files, pool, query)
                chunk_rows = chunk_evidence(s.index, found, same[0]["chosen"], pool)
                for d in same:
                    d["graph"] = rows
                    d["graph_chunks"] = chunk_rows
                    d["reach"] = where
        (work / f"{name}.pkl").write_bytes(pickle.dumps(data[name]))


# -- reports ---------------------------------------------------------------------------------


def report_reach(data: dict) -> None:
    for name, questions in data.items():
        places: dict[str, int] = defaultdict(int)
        added = []
        for d in questions:
            for place in d.get("reach", ()):
                if place.startswith("#added"):
                    added.append([int(v) for v in place.split()[1:]])
                else:
                    places[place] += 1
        print(f"{name}: {sum(places.values())} relevant targets, {len(questions)} questions")
        for place in sorted(places):
            print(f"  {places[place]:4d}  {place}")
        if added:
            a = np.array(added)
            print(
                "  files one link from the best candidates and outside the pool, per question:"
                f" median {np.median(a[:, 0]):.0f} (defining {np.median(a[:, 1]):.0f},"
                f" using {np.median(a[:, 2]):.0f}), mean {a[:, 0].mean():.1f}"
            )


def link(edges: dict, a: str, b: str) -> str:
    """How file ``a`` and file ``b`` are linked: ``a`` uses what ``b`` defines, the reverse,
    both, or neither (cross-file uses bound by the graph)."""
    ab, ba = edges.get((a, b), 0.0) > 0, edges.get((b, a), 0.0) > 0
    return "both ways" if ab and ba else "uses it" if ab else "defines for it" if ba else "none"


def why(data: dict, work: Path) -> None:
    """For every relevant target whose file the ranker puts 2nd-5th: how the ranker's first
    file is linked to it (does the first file use what the target's file defines, or the
    reverse?), and the same for the runner-up when the target's file is first: the
    contrast a definition-over-use column could learn from.  Then each column of
    :data:`EVIDENCE`: the target's file minus the other file, in the column's standard
    deviation over all pool files of the set."""
    from bench.quality.scoring import path_matches

    for name, questions in data.items():
        spread = np.vstack([d["graph"] for d in questions]).std(axis=0) + 1e-12
        for case in ("target 2nd-5th, vs the first", "target first, vs the second"):
            links_seen: dict[str, int] = defaultdict(int)
            diffs = []
            for d in questions:
                edges = pickle.loads((work / f"graph-{name}-{d['repo']}.pkl").read_bytes())
                edges = edges["edges"]
                order = np.argsort(-d["p_file"], kind="stable").tolist()
                for target in d["query"].relevant:
                    path = next((f for f in d["files"] if path_matches(f, target.path)), None)
                    if path is None:
                        continue
                    row = d["files"].index(path)
                    place = order.index(row) + 1
                    if case.startswith("target first") and place == 1 and len(order) > 1:
                        other = order[1]
                    elif case.startswith("target 2nd") and 2 <= place <= 5:
                        other = order[0]
                    else:
                        continue
                    links_seen[link(edges, d["files"][other], path)] += 1
                    diffs.append((d["graph"][row] - d["graph"][other]) / spread)
            print(f"{name}: {case}: {len(diffs)} targets; the other file ... the target's file:")
            for kind in sorted(links_seen):
                print(f"  {links_seen[kind]:4d}  {kind}")
            if diffs:
                mean = np.mean(diffs, axis=0)
                print(
                    "  target minus other, sd: "
                    + ", ".join(f"{c} {v:+.2f}" for c, v in zip(EVIDENCE, mean, strict=True))
                )


ALL = ("semble", "spans", "own")


def all_folds(data: dict):
    """Every repository of every set held out in turn, trained on all the others."""
    pooled = [d for s in ALL for d in data[s]]
    for held in sorted({(d["set"], d["repo"]) for d in pooled}):
        yield (
            [d for d in pooled if (d["set"], d["repo"]) != held],
            [d for d in pooled if (d["set"], d["repo"]) == held],
        )


def chunk_probabilities_all(data: dict) -> None:
    """Out-of-fold chunk probabilities with all three sets cross-validated together."""
    chunk_probabilities(data, all_folds(data))


def refit_all(data: dict, columns: list[int]) -> None:
    """``p2``: the file ranker refitted on the other repositories of all three sets."""

    def rows(d):
        return np.hstack([d["rows"], d["aggregates"][:, columns]]) if columns else d["rows"]

    for train, scored in all_folds(data):
        x = np.vstack([rows(d) for d in train])
        predict = fit(x, np.concatenate([d["file_label"] for d in train]))
        for d in scored:
            d["p2"] = predict(rows(d))


GROUPS = (
    [],
    *([n] for n in range(len(EVIDENCE))),
    [0, 1],
    [0, 4],
    [0, 1, 4, 5],
    [6, 8],
    [0, 4, 6],
    [0, 4, 8],
    [10, 11],
    [0, 4, 10, 11],
    list(range(len(EVIDENCE))),
)


def experiments(data: dict, groups=GROUPS) -> None:
    for questions in data.values():
        for d in questions:
            d["aggregates"] = d["graph"]
    chunk_probabilities(data)
    print("shipped ranker, chunk stage cross-validated on the dev sets", evaluate(data))
    for weight in (0.0, 1.0):
        for columns in groups:
            refit_ranker(data, columns, weight)
            names = "+".join(EVIDENCE[c] for c in columns) or "nothing"
            print(f"dev-fitted + {names}, spans weight {weight}", evaluate(data, "p2"), flush=True)
    chunk_probabilities_all(data)
    print("shipped ranker, chunk stage cross-validated on all three", evaluate(data))
    for columns in groups:
        refit_all(data, columns)
        names = "+".join(EVIDENCE[c] for c in columns) or "nothing"
        print(f"all three CV + {names}", evaluate(data, "p2"), flush=True)


CHUNK_GROUPS = ([], [0], [1], [2], [3], [4], [0, 1], [2, 3], [0, 2, 3], [0, 1, 2, 3, 4])


def chunk_experiments(data: dict, groups=CHUNK_GROUPS) -> None:
    """The chunk stage refitted with :data:`CHUNK_EVIDENCE` columns added (the shipped
    ranker's file order): folds as ``bench.train.train_chunks`` (dev sets, the own set scored
    by the model fitted on them), then all three sets cross-validated together."""
    kept = {id(d): d["x"] for questions in data.values() for d in questions}
    for label, make_folds in (
        ("dev-fitted", lambda: folds(data, ("semble", "spans"))),
        ("all three CV", lambda: all_folds(data)),
    ):
        for columns in groups:
            for questions in data.values():
                for d in questions:
                    d["x"] = np.hstack([kept[id(d)], d["graph_chunks"][:, columns]])
            chunk_probabilities(data, make_folds())
            names = "+".join(CHUNK_EVIDENCE[c] for c in columns) or "nothing"
            print(f"chunk stage {label} + {names}", evaluate(data), flush=True)
    for questions in data.values():
        for d in questions:
            d["x"] = kept[id(d)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.experiments.graph_evidence", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("bench_dir", type=Path)
    parser.add_argument(
        "command", choices=("collect", "reach", "why", "experiments", "chunk-experiments")
    )
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME)
    parser.add_argument("--work", type=Path, default=Path("/tmp/seek-lines"))
    parser.add_argument(
        "--groups",
        nargs="*",
        help="column groups to try instead of the default list, e.g. def_in def_in+use_out",
    )
    args = parser.parse_args(argv)
    names = EVIDENCE if args.command == "experiments" else CHUNK_EVIDENCE
    groups = None
    if args.groups:
        groups = [[]] + [[names.index(n) for n in g.split("+")] for g in args.groups]
    if args.command == "collect":
        collect(args.bench_dir, args.home, args.work)
    elif args.command == "reach":
        report_reach(load(args.work))
    elif args.command == "chunk-experiments":
        chunk_experiments(load(args.work), groups or CHUNK_GROUPS)
    elif args.command == "why":
        why(load(args.work), args.work)
    else:
        experiments(load(args.work), groups or GROUPS)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
