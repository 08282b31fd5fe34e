"""Context assembly (reference §8): widening, imports, merging, limit, budget, blocks."""

from dataclasses import replace

import pytest

from seek.retrieve.context import (
    CROSS_ENCODER_UNAVAILABLE,
    RERANKER_UNAVAILABLE,
    Block,
    build_context,
    format_block,
)
from seek.retrieve.types import Hit, SearchResult

SOURCE = """import os
import sys  # why: argv

class Greeter:
    def hello(self):
        return "hello"

    def bye(self):
        return "bye"


def helper():
    return 1
"""


def result_for(*hits):
    return SearchResult("question", "question", list(hits))


def hit(path, start, end):
    """A search hit with the file's real lines as its indexed content (1-based lines)."""
    lines = (SOURCE if path == "app.py" else "# Notes\n\nplain text\n").split("\n")
    return Hit(path, start, end, 0.5, "\n".join(lines[start - 1 : end]))


@pytest.fixture
def root(make_tree):
    return make_tree({"app.py": SOURCE, "notes.md": "# Notes\n\nplain text\n"})


def build(root, settings_for, *hits, **kw):
    settings = settings_for(**kw.pop("overrides", {}))
    return build_context(root, result_for(*hits), settings, **kw)


def test_a_method_grows_to_its_class_when_the_class_fits(root, settings_for):
    out = build(root, settings_for, hit("app.py", 5, 6), overrides={"widen_chars": 120})
    code = [b for b in out.blocks if b.kind == "code"][0]
    assert (code.start + 1, code.end + 1) == (4, 9)  # class Greeter, lines 4-9
    assert code.content.startswith("class Greeter:") and code.content.endswith('"bye"')


def test_a_method_stays_a_method_when_the_class_is_one_char_too_big(root, settings_for):
    # In Python the class body (lines 5-9, without the `class` line) is the next node up.
    body_chars = sum(len(line) + 1 for line in SOURCE.split("\n")[4:9])
    grown = build(root, settings_for, hit("app.py", 5, 6), overrides={"widen_chars": body_chars})
    assert (grown.blocks[0].start + 1, grown.blocks[0].end + 1) == (5, 9)
    out = build(root, settings_for, hit("app.py", 5, 6),
                overrides={"widen_chars": body_chars - 1})  # fmt: skip
    code = [b for b in out.blocks if b.kind == "code"][0]
    assert (code.start + 1, code.end + 1) == (5, 6)  # the method (def hello) itself


def test_a_big_budget_widens_to_the_whole_file(root, settings_for):
    out = build(root, settings_for, hit("app.py", 5, 6), overrides={"widen_chars": 10_000})
    code = out.blocks[0]
    assert (code.start, code.end + 1) == (0, len(SOURCE.rstrip("\n").split("\n")))


def test_imports_block_trails_with_the_hits_score(root, settings_for):
    out = build(root, settings_for, hit("app.py", 12, 13), overrides={"widen_chars": 40})
    kinds = [(b.kind, b.start + 1, b.end + 1) for b in out.blocks]
    assert kinds == [("code", 12, 13), ("imports", 1, 2)]
    assert out.blocks[1].score == out.blocks[0].score
    assert out.blocks[1].content == "import os\nimport sys  # why: argv"


def test_scores_fall_back_to_retrieval_order_with_a_note(root, settings_for):
    hits = [hit("app.py", 12, 13), hit("notes.md", 1, 3), hit("app.py", 5, 6)]
    out = build(root, settings_for, *hits, overrides={"widen_chars": 0, "imports_chars": 0})
    assert sorted(round(b.score, 3) for b in out.blocks) == [0.333, 0.667, 1.0]
    assert out.notes == [RERANKER_UNAVAILABLE]
    higher = build(root, settings_for, *hits, threshold=0.5,
                   overrides={"widen_chars": 0, "imports_chars": 0})  # fmt: skip
    assert len(higher.blocks) == 2 and [round(b.score, 3) for b in higher.near_misses] == [0.333]
    assert "closest of the rest: app.py:5-6 0.33" in higher.context_line()


def test_budget_skips_what_does_not_fit_but_keeps_smaller_ones(root, settings_for):
    a = hit("app.py", 1, 2)  # 33 chars
    b = hit("app.py", 4, 9)  # ~110 chars
    c = hit("app.py", 12, 13)  # 25 chars
    out = build(root, settings_for, a, b, c, budget=70,
                overrides={"widen_chars": 0, "imports_chars": 0, "merge_chars": 0})  # fmt: skip
    assert [(x.start + 1) for x in out.blocks] == [1, 12]
    assert [(x.start + 1) for x in out.over_budget] == [4]
    assert "left out for the 70-character budget: app.py:4-9 0.67 (" in out.context_line()


def test_a_hit_that_fits_no_budget_is_not_called_unscored(root, settings_for):
    out = build(root, settings_for, hit("app.py", 4, 9), budget=10,
                overrides={"widen_chars": 0, "imports_chars": 0})  # fmt: skip
    assert out.blocks == [] and len(out.over_budget) == 1
    line = out.context_line()
    assert "nothing scored above" not in line and "10-character budget" in line


def test_adjacent_hits_merge_with_the_best_score(root, settings_for):
    out = build(root, settings_for, hit("app.py", 4, 6), hit("app.py", 7, 9),
                overrides={"widen_chars": 0, "imports_chars": 0})  # fmt: skip
    assert [(b.start + 1, b.end + 1, round(b.score, 2)) for b in out.blocks] == [(4, 9, 1.0)]


def test_snippet_limit(root, settings_for):
    hits = [hit("app.py", 1, 1), hit("app.py", 5, 5), hit("app.py", 12, 12)]
    out = build(root, settings_for, *hits, snippets=2,
                overrides={"widen_chars": 0, "imports_chars": 0, "merge_chars": 0})  # fmt: skip
    assert len(out.blocks) == 2


def test_block_fences_outgrow_backticks_and_carry_the_language():
    block = Block("docs/a.md", 0, 1, "use ```code``` here\n````", 1.0)
    text = format_block(block)
    assert text.splitlines()[0] == "docs/a.md (lines 1-2)"
    assert text.splitlines()[1] == "`````md" and text.splitlines()[-1] == "`````"
    assert format_block(Block("a.py", 2, 2, "x = 1", 1.0)) == "a.py (lines 3-3)\n```py\nx = 1\n```"


def test_team_hits_follow_outside_the_budget(root, settings_for):
    team = Hit("team:shared/lib.py", 1, 2, 0.9, "def shared():\n    pass")
    out = build(root, settings_for, hit("app.py", 12, 13), team, budget=30,
                overrides={"widen_chars": 0, "imports_chars": 0})  # fmt: skip
    assert [b.kind for b in out.blocks] == ["code", "team"]
    assert out.candidates == 1


def test_the_learned_rankers_probabilities_are_the_scores(root, settings_for):
    hits = [replace(hit("app.py", 12, 13), score=0.6), replace(hit("notes.md", 1, 3), score=0.005)]
    result = replace(result_for(*hits), calibrated=True)
    plain = settings_for(widen_chars=0, imports_chars=0)
    out = build_context(root, result, plain)
    assert [b.score for b in out.blocks] == [0.6]
    assert [b.score for b in out.near_misses] == [0.005]  # below the 0.01 threshold
    assert out.notes == []
    missing = settings_for(widen_chars=0, imports_chars=0, reranker_model="not-pulled-yet")
    assert build_context(root, result, missing).notes == [CROSS_ENCODER_UNAVAILABLE]


def test_blank_lines_at_a_blocks_edges_are_trimmed_with_its_line_numbers(root, settings_for):
    # Lines 8-11 end with the two blank lines before `def helper`; 10-13 start with them.
    out = build(root, settings_for, hit("app.py", 8, 11), hit("app.py", 10, 13),
                overrides={"widen_chars": 0, "imports_chars": 0, "merge_chars": 0})  # fmt: skip
    spans = sorted((b.start + 1, b.end + 1, b.content) for b in out.blocks)
    assert spans == [
        (8, 9, '    def bye(self):\n        return "bye"'),
        (12, 13, "def helper():\n    return 1"),
    ]


@pytest.mark.parametrize("now", ["", "import os\n", SOURCE.replace("return 1", "return 2")])
def test_a_file_changed_since_it_was_indexed_gives_the_indexed_lines(root, settings_for, now):
    # A server answers from the index while the file on disk may already be shorter (an edit
    # not checked yet, or a save caught half-written): the soak saw an IndexError here.
    (root / "app.py").write_text(now)
    first, second = hit("app.py", 5, 6), hit("app.py", 12, 13)
    out = build(root, settings_for, first, second, overrides={"widen_chars": 500})
    code = sorted((b for b in out.blocks if b.kind == "code"), key=lambda b: b.start)
    assert [(b.start + 1, b.end + 1, b.content) for b in code] == [
        (5, 6, first.content),
        (12, 13, second.content),
    ]
