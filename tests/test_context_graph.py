"""bench.experiments.context_graph: the code-graph variants of `seek context` (issue 28
deliver 5; measured and not shipped, MODELS.md) do what they are said to do, on a small
project indexed for real (tree-sitter, LanceDB), with the graph read from the store."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.experiments.context_graph import pack, variant, words
from seek import index_workspace
from seek.retrieve.context import Block
from seek.store import index_dir_for
from seek.workspace.stored_graph import load_graph

HANDLER = (
    "from jobs.backoff import retry_delay\n"
    "from jobs.adapter import push\n\n\n"
    "def handle_failure(job, error):\n"
    "    delay = retry_delay(job.attempts)\n"
    "    note(job)\n"
    "    push(job, delay)\n\n\n"
    "def note(job):\n"
    "    return job\n"
)
BACKOFF = (
    "import random\n\n\n"
    "def retry_delay(attempts):\n"
    '    """Seconds to wait before the next attempt."""\n'
    "    return attempts ** 4 + 15 + random.randint(0, 10)\n\n\n"
    "def unrelated():\n"
    "    return 0\n"
)
QUEUE = "def push(job, delay):\n    return (job, delay)\n"


@pytest.fixture
def indexed(make_tree, settings_for, hash_provider):
    root = make_tree(
        {"jobs/handler.py": HANDLER, "jobs/backoff.py": BACKOFF, "jobs/adapter.py": QUEUE}
    )
    settings = settings_for(provider=hash_provider)
    index_workspace(root, settings)
    graph, _ = load_graph(index_dir_for(root, settings))
    assert graph is not None
    return root, settings, graph


def chosen() -> list[Block]:
    """The block a context chose: handle_failure (0-based lines 4-7)."""
    content = "\n".join(HANDLER.split("\n")[4:8])
    return [Block("jobs/handler.py", 4, 7, content, 0.9)]


def test_follow_adds_the_definition_the_chosen_block_calls(indexed):
    root, settings, graph = indexed
    question = "how long to wait before the next attempt"
    out = variant("follow", root, chosen(), graph, question, settings)
    added = [(b.path, b.start, b.end) for b in out.blocks[1:]]
    # both callees, in other files; retry_delay first: it shares the question's words
    assert added == [("jobs/backoff.py", 3, 5), ("jobs/adapter.py", 0, 1)]
    assert out.blocks[1].content.startswith("def retry_delay(attempts):")
    assert not any(b.path == "jobs/backoff.py" and b.start == 8 for b in out.blocks)
    # follow+same also takes the helper in the chosen block's own file
    same = variant("follow+same", root, chosen(), graph, question, settings)
    assert ("jobs/handler.py", 10, 11) in [(b.path, b.start, b.end) for b in same.blocks]
    assert words("Seconds to wait before the next attempts") >= {"attempt", "wait"}


def test_base_adds_nothing_and_the_budget_holds(indexed):
    root, settings, graph = indexed
    assert variant("base", root, chosen(), graph, "wait", settings).blocks == chosen()
    small = len(chosen()[0].content) + 5  # the callees do not fit beside the block
    assert [b.path for b in pack(chosen() + [chosen()[0]], small)] == ["jobs/handler.py"]
    tight = replace(settings, prompt_budget_chars=small)
    out = variant("follow", root, chosen(), graph, "wait", tight)
    assert [b.path for b in out.blocks] == ["jobs/handler.py"]


def test_signatures_name_each_callee_once_without_covering_it(indexed):
    root, settings, graph = indexed
    out = variant("signatures", root, chosen(), graph, "wait", settings)
    assert out.blocks == chosen()  # a pointer block, judged only as characters
    assert out.pointers == [("jobs/backoff.py", 4), ("jobs/handler.py", 11), ("jobs/adapter.py", 1)]
    lines = [
        "jobs/backoff.py:4: def retry_delay(attempts):",
        "jobs/handler.py:11: def note(job):",
        "jobs/adapter.py:1: def push(job, delay):",
    ]
    assert out.extra_chars == len("\n".join(lines))


def test_callees_go_right_after_the_calling_block(indexed):
    root, settings, graph = indexed
    weak = Block("jobs/adapter.py", 0, 1, QUEUE.rstrip("\n"), 0.02)
    question = "how long to wait before the next attempt"
    out = variant("callees", root, [*chosen(), weak], graph, question, settings)
    placed = [(b.path, b.start, b.end) for b in out.blocks]
    # retry_delay shares the question's words; then note (first called after it); push is
    # already shown by the weak block, which keeps its place after them
    assert placed == [
        ("jobs/handler.py", 4, 7),
        ("jobs/backoff.py", 3, 5),
        ("jobs/handler.py", 10, 11),
        ("jobs/adapter.py", 0, 1),
    ]
    same = variant("callees-same", root, [*chosen(), weak], graph, question, settings)
    assert [(b.path, b.start) for b in same.blocks] == [
        ("jobs/handler.py", 4),
        ("jobs/handler.py", 10),
        ("jobs/adapter.py", 0),
    ]
    # when the budget is short, the weakest block gives way, not the callee
    tight = replace(settings, prompt_budget_chars=sum(len(b.content) for b in same.blocks[:2]))
    short = variant("callees-same", root, [*chosen(), weak], graph, question, tight)
    assert [b.path for b in short.blocks] == ["jobs/handler.py", "jobs/handler.py"]
