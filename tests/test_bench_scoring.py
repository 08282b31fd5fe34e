"""The benchmark's judging rule and NDCG (shared/spec/reference-ranking.md §2.3-2.4)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

# bench/ is a top-level folder of the repository, not part of the installed package.
_REPO_ROOT = str(Path(__file__).resolve().parent.parent)
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

from bench.quality.scoring import (  # noqa: E402
    Hit,
    Query,
    Target,
    aggregate,
    covers,
    file_level,
    load_annotations,
    ndcg_from_ranks,
    parse_target,
    path_matches,
    percentile,
    repo_summary,
    score_query,
    target_ranks,
)


def _dcg(*ranks: int) -> float:
    return sum(1 / math.log2(r + 1) for r in ranks)


def _idcg(n: int) -> float:
    return _dcg(*range(1, n + 1))


@pytest.mark.parametrize(
    ("file_path", "target", "expected"),
    [
        ("src/flask/app.py", "src/flask/app.py", True),  # equal
        ("app.py", "src/flask/app.py", True),  # hit path is a suffix of the target
        ("src/flask/app.py", "flask/app.py", True),  # target is a suffix of the hit path
        ("src\\flask\\app.py", "flask/app.py", True),  # backslashes normalised
        ("flask/app.py", "src\\flask\\app.py", True),
        ("myapp.py", "src/flask/app.py", False),  # not /-bounded
        ("src/flask/app.py", "lask/app.py", False),
        ("src/flask/app.py", "src/flask/app.pyi", False),
        ("src/flask/app.py", "src/flask/cli.py", False),
        ("utils.py", "pkg/v1/utils.py", True),  # the known looseness
    ],
)
def test_path_match(file_path: str, target: str, expected: bool) -> None:
    assert path_matches(file_path, target) is expected


@pytest.mark.parametrize(
    ("hit", "target", "expected"),
    [
        (Hit("a/b.py", 10, 20), Target("b.py", 15, 30), True),  # partial overlap
        (Hit("a/b.py", 10, 20), Target("b.py", 20, 30), True),  # touching end line (inclusive)
        (Hit("a/b.py", 30, 40), Target("b.py", 20, 30), True),  # touching start line
        (Hit("a/b.py", 10, 20), Target("b.py", 1, 100), True),  # hit inside target
        (Hit("a/b.py", 10, 20), Target("b.py", 12, 13), True),  # target inside hit
        (Hit("a/b.py", 10, 20), Target("b.py", 21, 30), False),  # just after
        (Hit("a/b.py", 31, 40), Target("b.py", 21, 30), False),  # just before
        (Hit("a/c.py", 10, 20), Target("b.py", 10, 20), False),  # lines overlap, path not
        (Hit("a/b.py", 500, 600), Target("b.py"), True),  # path-only target: any chunk
    ],
)
def test_covers_span_overlap(hit: Hit, target: Target, expected: bool) -> None:
    assert covers(hit, target) is expected


def test_covers_ignores_spans_at_file_level() -> None:
    assert covers(Hit("b.py", 1, 2), Target("b.py", 50, 60), use_spans=False)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a/b.py", Target("a/b.py")),
        ({"path": "a/b.py", "start_line": 3, "end_line": 9}, Target("a/b.py", 3, 9)),
        ({"path": "a/b.py"}, Target("a/b.py")),
    ],
)
def test_parse_target(raw: object, expected: Target) -> None:
    assert parse_target(raw) == expected


def test_first_covering_rank_per_target() -> None:
    hits = [Hit("x.py", 1, 5), Hit("a.py", 1, 5), Hit("a.py", 6, 9), Hit("b.py", 1, 5)]
    assert target_ranks(hits, [Target("a.py"), Target("b.py"), Target("z.py")]) == [2, 4, None]
    assert target_ranks(hits, [Target("a.py", 7, 8)]) == [3]


Q1 = Query("q", "semantic", (Target("a.py"),))
Q_SEC = Query("q", "semantic", (Target("a.py"),), (Target("b.py"),))
Q_SPAN = Query("q", "symbol", (Target("a.py", 50, 60),))
Q_TWO_SPANS = Query("q", "symbol", (Target("a.py", 1, 10), Target("a.py", 20, 30)))


@pytest.mark.parametrize(
    ("name", "hits", "query", "chunk10", "file10"),
    [
        ("top hit", [Hit("a.py", 1, 5)], Q1, 1.0, 1.0),
        ("rank 3", [Hit("x.py", 1, 2), Hit("y.py", 1, 2), Hit("a.py", 1, 2)], Q1, _dcg(3), _dcg(3)),
        ("nothing returned", [], Q1, 0.0, 0.0),
        ("miss", [Hit("x.py", 1, 2)] * 10, Q1, 0.0, 0.0),
        # Later chunks of the same file earn nothing: only rank 1 counts, n_rel = 1.
        ("later chunks of same file", [Hit("a.py", 1, 5), Hit("a.py", 6, 9)], Q1, 1.0, 1.0),
        # A secondary target missing lowers the score: n_rel = 2.
        ("secondary missing", [Hit("a.py", 1, 5)], Q_SEC, 1 / _idcg(2), 1 / _idcg(2)),
        ("secondary found", [Hit("a.py", 1, 5), Hit("b.py", 1, 5)], Q_SEC, 1.0, 1.0),
        (
            "secondary at 3",
            [Hit("a.py", 1, 5), Hit("x.py", 1, 5), Hit("b.py", 1, 5)],
            Q_SEC,
            _dcg(1, 3) / _idcg(2),
            _dcg(1, 3) / _idcg(2),
        ),
        # Span target: the chunk of the right file but wrong lines earns nothing at chunk level,
        # but counts at file level (spans ignored).
        ("span no overlap", [Hit("a.py", 1, 10)], Q_SPAN, 0.0, 1.0),
        ("span overlap", [Hit("a.py", 1, 10), Hit("a.py", 55, 70)], Q_SPAN, _dcg(2), 1.0),
        # Two targets at the same rank count once: one chunk covers both spans.
        ("two targets one rank", [Hit("a.py", 1, 40)], Q_TWO_SPANS, 1 / _idcg(2), 1 / _idcg(2)),
        # ...and at file level two targets in one file share rank 1 too.
        (
            "two targets two chunks",
            [Hit("a.py", 1, 10), Hit("a.py", 20, 30)],
            Q_TWO_SPANS,
            1.0,
            1 / _idcg(2),
        ),
        # File level dedupes: 10 chunks of x.py then a.py is file rank 2, chunk rank 11 (cut).
        (
            "file dedupe",
            [Hit("x.py", i, i) for i in range(10)] + [Hit("a.py", 1, 2)],
            Q1,
            0.0,
            _dcg(2),
        ),
        # Suffix match in both directions.
        ("hit path shorter", [Hit("a.py", 1, 2)], Query("q", "s", (Target("src/a.py"),)), 1.0, 1.0),
        ("hit path longer", [Hit("src/a.py", 1, 2)], Query("q", "s", (Target("a.py"),)), 1.0, 1.0),
    ],
)
def test_score_query(name: str, hits: list[Hit], query: Query, chunk10: float, file10: float):
    scores = score_query(hits, query)
    assert scores["ndcg10"] == pytest.approx(chunk10), name
    assert scores["ndcg10_file"] == pytest.approx(file10), name


def test_ndcg5_cuts_at_five() -> None:
    hits = [Hit(f"x{i}.py", 1, 2) for i in range(5)] + [Hit("a.py", 1, 2)]
    scores = score_query(hits, Q1)
    assert scores["ndcg5"] == 0.0
    assert scores["ndcg10"] == pytest.approx(_dcg(6))
    assert score_query([Hit("a.py", 1, 2)], Q1)["ndcg5"] == 1.0


@pytest.mark.parametrize(
    ("ranks", "n_rel", "k", "expected"),
    [
        ([1], 1, 10, 1.0),
        ([None], 1, 10, 0.0),
        ([11], 1, 10, 0.0),
        ([1, 1], 2, 10, 1 / _idcg(2)),  # shared rank counted once
        ([1, 2], 2, 10, 1.0),
        ([2, 1], 2, 10, 1.0),
        ([1, None, None], 3, 10, 1 / _idcg(3)),
        ([1] + [None] * 11, 12, 10, 1 / _idcg(10)),  # IDCG is capped at k terms
        ([6], 1, 5, 0.0),
    ],
)
def test_ndcg_from_ranks(ranks: list[int | None], n_rel: int, k: int, expected: float) -> None:
    assert ndcg_from_ranks(ranks, n_rel, k) == pytest.approx(expected)


def test_file_level_keeps_first_ten_distinct_files() -> None:
    hits = [Hit(f"f{i // 2}.py", i, i) for i in range(30)]
    files = file_level(hits)
    assert [h.path for h in files] == [f"f{i}.py" for i in range(10)]


def test_aggregation_is_mean_of_repo_means() -> None:
    ones = {"ndcg10": 1.0, "ndcg5": 1.0, "ndcg10_file": 1.0, "ndcg5_file": 1.0}
    zeros = {"ndcg10": 0.0, "ndcg5": 0.0, "ndcg10_file": 0.0, "ndcg5_file": 0.0}
    repos = {
        # 4 queries, mean 0.75; semantic 1.0 (3 queries), symbol 0.0 (1 query)
        "r1": repo_summary([ones, ones, ones, zeros], ["semantic"] * 3 + ["symbol"]),
        # 1 query, mean 0.0; only semantic
        "r2": repo_summary([zeros], ["semantic"]),
        # 2 queries, mean 0.5; architecture 0.5
        "r3": repo_summary([ones, zeros], ["architecture", "architecture"]),
    }
    assert repos["r1"]["ndcg10"] == 0.75
    agg = aggregate(repos, {"r1": "python", "r2": "python", "r3": "go"})
    # Unweighted over repos, not over queries (which would be 4/7).
    assert agg["overall"]["ndcg10"] == pytest.approx((0.75 + 0.0 + 0.5) / 3)
    assert agg["overall"]["repos"] == 3
    assert agg["overall"]["queries"] == 7
    assert agg["per_language"]["python"]["ndcg10"] == pytest.approx(0.375)
    assert agg["per_language"]["go"]["ndcg10"] == pytest.approx(0.5)
    # Per category: per-repo category means, then the mean over repos that have it.
    assert agg["per_category"]["semantic"]["ndcg10"] == pytest.approx(0.5)  # (1.0 + 0.0) / 2
    assert agg["per_category"]["semantic"]["repos"] == 2
    assert agg["per_category"]["symbol"]["ndcg10"] == pytest.approx(0.0)
    assert agg["per_category"]["symbol"]["repos"] == 1
    assert agg["per_category"]["architecture"]["ndcg10"] == pytest.approx(0.5)
    assert list(agg["per_category"]) == ["semantic", "architecture", "symbol"]


def test_load_annotations(tmp_path) -> None:
    path = tmp_path / "r.json"
    path.write_text(
        json.dumps(
            [
                {
                    "query": "how does routing work",
                    "relevant": ["src/router.py"],
                    "secondary": [{"path": "src/app.py", "start_line": 3, "end_line": 8}],
                    "category": "architecture",
                    "seed": {"path": "x", "line": 1},
                },
                {"query": "Router", "relevant": ["src/router.py"]},
            ]
        )
    )
    queries = load_annotations(path)
    assert queries[0].targets == (Target("src/router.py"), Target("src/app.py", 3, 8))
    assert queries[0].category == "architecture"
    assert queries[1].category == "symbol"  # inferred when absent
    assert queries[1].secondary == ()


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([], 50, None),
        ([3.0], 95, 3.0),
        ([1.0, 2.0, 3.0, 4.0], 50, 2.5),
        ([1.0, 2.0, 3.0, 4.0, 5.0], 95, 4.8),
        ([5.0, 1.0, 3.0], 50, 3.0),
    ],
)
def test_percentile(values: list[float], q: float, expected: float | None) -> None:
    assert percentile(values, q) == (pytest.approx(expected) if expected is not None else None)
