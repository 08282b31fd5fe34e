"""bench.quality.context_recall: judging `seek context` blocks against a question's targets, and the
benchmark sets' files (issue 13)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from bench.common import SPANS_OWN, BenchSet
from bench.quality.context_recall import judge, summarise
from bench.quality.scoring import Query, Target, load_annotations


@dataclass
class Block:
    path: str
    start: int  # 0-based, as seek.retrieve.context.Block
    end: int
    content: str
    score: float = 0.5
    kind: str = "code"


QUERY = Query(
    "q",
    "semantic",
    relevant=(Target("src/a.py", 10, 20), Target("src/b.py")),
    secondary=(Target("src/c.py"),),
)


def test_recalled_when_every_relevant_target_is_covered() -> None:
    blocks = [Block("a.py", 19, 30, "x" * 5), Block("b.py", 0, 3, "y" * 7)]
    verdict = judge(QUERY, blocks)
    assert verdict["recalled"]
    assert verdict["blocks"] == 2 and verdict["chars"] == 12
    assert [t["covered"] for t in verdict["targets"]] == [True, True]


def test_a_block_of_the_right_file_but_other_lines_does_not_count() -> None:
    # 0-based lines 0-8 are 1-based 1-9: just above the span 10-20.
    verdict = judge(QUERY, [Block("a.py", 0, 8, "x"), Block("b.py", 0, 3, "y")])
    assert not verdict["recalled"]
    first = verdict["targets"][0]
    assert first == {"target": "src/a.py:10-20", "covered": False, "file_in_context": True}


def test_secondary_targets_are_not_required_and_team_blocks_do_not_count() -> None:
    blocks = [Block("a.py", 9, 9, "x"), Block("b.py", 0, 0, "y", kind="team")]
    verdict = judge(QUERY, blocks)
    assert not verdict["recalled"]  # b.py came only from the team server
    assert verdict["blocks"] == 1
    summary = summarise([{**verdict, "context_ms": 3.0}, {**judge(QUERY, []), "context_ms": 5.0}])
    assert summary["recall"] == 0.0 and summary["target_recall"] == 0.25
    assert summary["median_context_ms"] == 4.0 and summary["mean_blocks"] == 0.5


@pytest.mark.parametrize("name", json.loads((SPANS_OWN / "repos.json").read_text()))
def test_own_set_is_well_formed(name: dict) -> None:
    """60 questions, 15 a repository in the spans mix, every target with a sane span."""
    bench_set = BenchSet(SPANS_OWN)
    assert bench_set.default_names() == ["viper", "immer", "jsoup", "spdlog"]
    queries = load_annotations(bench_set.annotations / f"{name['name']}.json")
    categories = [q.category for q in queries]
    assert len(queries) == 15
    assert categories.count("semantic") == 8 and categories.count("architecture") == 4
    assert categories.count("symbol") == 3
    for query in queries:
        assert query.relevant
        for target in query.targets:
            root = name["benchmark_root"]
            assert root is None or target.path.startswith(root + "/")
            if target.has_span:
                assert 1 <= target.start_line <= target.end_line
