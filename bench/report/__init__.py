"""Numbers in the docs are generated, not typed (issue 46).

Every benchmark table in README.md and bench/README.md sits between two markers,

    <!-- bench.report:NAME -->
    ... written by ``python -m bench.report`` ...
    <!-- /bench.report:NAME -->

and is rendered from results files in ``bench/results/`` that record the date, commit and
machine of their run (``bench.common.run_record``). ``tests/test_bench_report.py`` fails
when a table in a doc differs from what its results generate, and when a results file is
older than the code it measures by more than ``max_commits`` commits touching ``measures``.

Adding a table: write a renderer in :mod:`bench.report.tables` (results in, lines out), add
an entry to ``TABLES`` below, put the two markers where it goes in each doc, and run
``python -m bench.report`` (``--check`` only compares, as the test does).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bench.report import tables


@dataclass(frozen=True)
class Table:
    results: tuple[str, ...]
    """Results files, relative to the repository root, in the order the renderer takes."""
    render: Callable[[tables.Results], list[str]]
    docs: tuple[str, ...]
    """The docs that hold the table (each between its markers)."""
    measures: tuple[str, ...]
    """Paths (git pathspecs) whose commits can change the numbers: the results are stale
    once more than ``max_commits`` commits touched them after the run's commit."""
    max_commits: int = 30


# What ranking and indexing are made of: a commit here can move NDCG or a time.
RANKING = ("src/seek/retrieve", "src/seek/models", "src/seek/chunk", "src/seek/embed")
INDEXING = ("src/seek/index", "src/seek/scan", "src/seek/chunk", "src/seek/embed",
            "src/seek/store/table.py", "src/seek/store/manifest.py")  # fmt: skip
# The oracle harness builds the graph in memory from the library alone.
GRAPH = ("src/seek/graph",)

QUALITY = "bench/results/quality-summary.json"
QUERY_CPU = "bench/results/query_cpu_side.json"
INDEX_SPEED = "bench/results/index_speed.json"
CLI_SPEED = "bench/results/cli_speed.json"

TABLES: dict[str, Table] = {
    "headline": Table(
        (QUALITY, QUERY_CPU, INDEX_SPEED, CLI_SPEED),
        tables.headline,
        ("README.md",),
        RANKING + INDEXING,
    ),  # fmt: skip
    "quality": Table((QUALITY,), tables.quality, ("bench/README.md",), RANKING),
    "query_cpu": Table((QUERY_CPU,), tables.query_cpu, ("bench/README.md",), RANKING),
    "index_speed": Table((INDEX_SPEED,), tables.index_speed, ("bench/README.md",), INDEXING),
    "cli_speed": Table(
        (CLI_SPEED,),
        tables.cli_speed,
        ("bench/README.md",),
        RANKING + INDEXING + ("src/seek/cli", "src/seek/workspace"),
    ),  # fmt: skip
    "graph_oracle": Table(
        ("bench/results/graph_oracle.json",),
        tables.graph_oracle,
        ("README.md",),
        GRAPH,
        max_commits=40,
    ),  # fmt: skip
    "graph_tokens": Table(
        ("bench/results/graph_tokens.json",),
        tables.graph_tokens,
        ("README.md",),
        GRAPH + RANKING,
        max_commits=60,
    ),  # fmt: skip
    "change_tools": Table(
        (
            "bench/results/tests_oracle.json",
            "bench/results/impact_history.json",
            "bench/results/review_context.json",
        ),
        tables.change_tools,
        ("README.md",),
        GRAPH + ("src/seek/change",),
        max_commits=40,
    ),  # fmt: skip
    "org_scale": Table(
        ("bench/results/org_scale.json",),
        tables.org_scale,
        ("bench/README.md",),
        ("src/seek/corpus", "src/seek/store/corpus_graph.py", "src/seek/store/corpus_links.py"),
        max_commits=40,
    ),  # fmt: skip
    "org_refs": Table(
        ("bench/results/org_refs.json",),
        tables.org_refs,
        ("README.md",),
        GRAPH + ("src/seek/corpus",),
        max_commits=40,
    ),  # fmt: skip
}
