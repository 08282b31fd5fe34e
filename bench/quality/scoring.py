"""Relevance judging, NDCG and aggregation for the retrieval-quality benchmark.

Implements shared/spec/reference-ranking.md §2.3-2.4 exactly (semble's ``benchmarks/data.py``
and ``metrics.py``):

* a hit ``(path, start_line, end_line)`` *covers* a target when the paths match - backslashes
  normalised to ``/``, then equal, or either one ends with ``"/" + other`` - and, for a span
  target, the line ranges overlap (1-based, inclusive);
* a target's rank is the 1-based rank of the *first* hit covering it; later hits of the same
  file earn nothing;
* ``rels[r - 1] = 1`` for every target rank ``r <= k`` (a rank shared by two targets counts
  once); ``DCG = sum(rels[i] / log2(i + 2))``; ``IDCG`` sums ``1 / log2(i + 2)`` over
  ``i < min(k, n_rel)`` with ``n_rel = |relevant| + |secondary|``;
* chunk level scores the hits as returned; file level dedupes the hits' paths in order, keeps
  10 files and ignores spans;
* per repo: mean over its queries; overall: mean of the per-repo means; per language: mean over
  that language's repos; per category: per-repo category means, then the mean over the repos
  that have the category.

Only the standard library is used, so the semble worker's parent and the tests stay light.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

K = 10
METRICS = ("ndcg10", "ndcg5", "ndcg10_file", "ndcg5_file")
CATEGORIES = ("semantic", "architecture", "symbol")


@dataclass(frozen=True)
class Target:
    """A judged file, optionally narrowed to a 1-based inclusive line span."""

    path: str
    start_line: int | None = None
    end_line: int | None = None

    @property
    def has_span(self) -> bool:
        return self.start_line is not None and self.end_line is not None


@dataclass(frozen=True)
class Hit:
    """One returned result, reduced to what judging needs."""

    path: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class Query:
    """One annotated query (``annotations/<repo>.json`` entry, §2.2)."""

    query: str
    category: str
    relevant: tuple[Target, ...]
    secondary: tuple[Target, ...] = ()

    @property
    def targets(self) -> tuple[Target, ...]:
        return self.relevant + self.secondary


def parse_target(raw: Any) -> Target:
    """A path string or ``{path, start_line, end_line}``."""
    if isinstance(raw, str):
        return Target(raw)
    if isinstance(raw, Mapping) and isinstance(raw.get("path"), str):
        start, end = raw.get("start_line"), raw.get("end_line")
        if start is None or end is None:
            return Target(raw["path"])
        return Target(raw["path"], int(start), int(end))
    raise ValueError(f"not a target: {raw!r}")


def infer_category(query: str) -> str:
    """The fallback used only when an annotation lacks ``category`` (§2.4)."""
    if " " not in query:
        return "symbol"
    if query.startswith("how "):
        return "architecture"
    return "semantic"


def parse_query(raw: Mapping[str, Any]) -> Query:
    text = raw["query"]
    return Query(
        query=text,
        category=raw.get("category") or infer_category(text),
        relevant=tuple(parse_target(t) for t in raw.get("relevant") or ()),
        secondary=tuple(parse_target(t) for t in raw.get("secondary") or ()),
    )


def load_annotations(path: Path | str) -> list[Query]:
    """Read ``annotations/<repo>.json`` (a JSON array of query objects)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON array")
    return [parse_query(item) for item in data]


# -- judging ---------------------------------------------------------------------------------
def normalise_path(path: str) -> str:
    return path.replace("\\", "/")


def path_matches(file_path: str, target_path: str) -> bool:
    """Equal, or either path is a ``/``-bounded suffix of the other (§2.3 rule 1)."""
    a, b = normalise_path(file_path), normalise_path(target_path)
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def covers(hit: Hit, target: Target, *, use_spans: bool = True) -> bool:
    """§2.3: path match and, for a span target (when spans count), any line overlap."""
    if not path_matches(hit.path, target.path):
        return False
    if not use_spans or not target.has_span:
        return True
    assert target.start_line is not None and target.end_line is not None
    return not (hit.end_line < target.start_line or hit.start_line > target.end_line)


def target_ranks(
    hits: Sequence[Hit], targets: Sequence[Target], *, use_spans: bool = True
) -> list[int | None]:
    """Per target, the 1-based rank of the first hit covering it (``None``: never covered)."""
    ranks: list[int | None] = []
    for target in targets:
        rank = None
        for i, hit in enumerate(hits, start=1):
            if covers(hit, target, use_spans=use_spans):
                rank = i
                break
        ranks.append(rank)
    return ranks


def ndcg_from_ranks(ranks: Iterable[int | None], n_rel: int, k: int = K) -> float:
    """Binary NDCG@k from target ranks; a rank shared by two targets counts once (§2.4)."""
    if n_rel <= 0:
        return 0.0
    hit_ranks = {r for r in ranks if r is not None and 1 <= r <= k}
    dcg = sum(1.0 / math.log2(r + 1) for r in hit_ranks)  # rank r = index r - 1
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(k, n_rel)))
    return dcg / idcg


def file_level(hits: Sequence[Hit], k: int = K) -> list[Hit]:
    """The hits' paths deduplicated in order, truncated to ``k`` files (spans dropped)."""
    seen: set[str] = set()
    files: list[Hit] = []
    for hit in hits:
        path = normalise_path(hit.path)
        if path in seen:
            continue
        seen.add(path)
        files.append(Hit(path, 0, 0))
        if len(files) == k:
            break
    return files


def score_query(hits: Sequence[Hit], query: Query, k: int = K) -> dict[str, float]:
    """NDCG@10 and NDCG@5, chunk level (hits as returned, top ``k``) and file level."""
    targets = query.targets
    n_rel = len(targets)
    chunks = list(hits)[:k]
    files = file_level(hits, k)
    chunk_ranks = target_ranks(chunks, targets, use_spans=True)
    file_ranks = target_ranks(files, targets, use_spans=False)
    return {
        "ndcg10": ndcg_from_ranks(chunk_ranks, n_rel, 10),
        "ndcg5": ndcg_from_ranks(chunk_ranks, n_rel, 5),
        "ndcg10_file": ndcg_from_ranks(file_ranks, n_rel, 10),
        "ndcg5_file": ndcg_from_ranks(file_ranks, n_rel, 5),
    }


def hits_from_json(raw: Iterable[Any]) -> list[Hit]:
    """``[[path, start, end], ...]`` or ``[{"path", "start_line", "end_line"}, ...]``."""
    out: list[Hit] = []
    for item in raw:
        if isinstance(item, Mapping):
            out.append(Hit(str(item["path"]), int(item["start_line"]), int(item["end_line"])))
        else:
            path, start, end = item
            out.append(Hit(str(path), int(start), int(end)))
    return out


# -- aggregation -----------------------------------------------------------------------------
def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def repo_summary(
    scores: Sequence[Mapping[str, float]], categories: Sequence[str]
) -> dict[str, Any]:
    """Per-repo means of every metric, overall and per category."""
    if len(scores) != len(categories):
        raise ValueError("one category per scored query")
    summary: dict[str, Any] = {"queries": len(scores)}
    for metric in METRICS:
        summary[metric] = _mean([s[metric] for s in scores])
    by_cat: dict[str, dict[str, Any]] = {}
    for cat in sorted(set(categories)):
        idx = [i for i, c in enumerate(categories) if c == cat]
        entry: dict[str, Any] = {"queries": len(idx)}
        for metric in METRICS:
            entry[metric] = _mean([scores[i][metric] for i in idx])
        by_cat[cat] = entry
    summary["categories"] = by_cat
    return summary


def aggregate(
    repos: Mapping[str, Mapping[str, Any]], languages: Mapping[str, str]
) -> dict[str, Any]:
    """Overall, per-language and per-category means over per-repo summaries (§2.4).

    ``repos`` maps a repo name to its :func:`repo_summary`; ``languages`` maps it to its language.
    """
    names = [name for name in repos if repos[name].get("queries")]
    overall: dict[str, Any] = {"repos": len(names), "queries": 0}
    overall["queries"] = sum(repos[n]["queries"] for n in names)
    for metric in METRICS:
        overall[metric] = _mean([repos[n][metric] for n in names])

    per_language: dict[str, dict[str, Any]] = {}
    for lang in sorted({languages.get(n, "?") for n in names}):
        members = [n for n in names if languages.get(n, "?") == lang]
        entry: dict[str, Any] = {"repos": len(members)}
        for metric in METRICS:
            entry[metric] = _mean([repos[n][metric] for n in members])
        per_language[lang] = entry

    per_category: dict[str, dict[str, Any]] = {}
    all_cats = {c for n in names for c in repos[n].get("categories", {})}
    ordered = [c for c in CATEGORIES if c in all_cats] + sorted(all_cats - set(CATEGORIES))
    for cat in ordered:
        members = [n for n in names if cat in repos[n].get("categories", {})]
        entry = {
            "repos": len(members),
            "queries": sum(repos[n]["categories"][cat]["queries"] for n in members),
        }
        for metric in METRICS:
            entry[metric] = _mean([repos[n]["categories"][cat][metric] for n in members])
        per_category[cat] = entry

    return {"overall": overall, "per_language": per_language, "per_category": per_category}


# -- latency ---------------------------------------------------------------------------------
def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolation percentile (numpy's default), ``q`` in [0, 100]."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = math.ceil(pos)
    if lo == hi:
        return ordered[lo]
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def latency_summary(per_query_ms: Sequence[float]) -> dict[str, Any]:
    """p50/p95 (and mean) of per-query median latencies."""
    return {
        "queries": len(per_query_ms),
        "p50_ms": percentile(per_query_ms, 50),
        "p95_ms": percentile(per_query_ms, 95),
        "mean_ms": _mean(list(per_query_ms)),
    }
