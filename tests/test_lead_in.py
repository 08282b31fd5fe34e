"""A hit ending with the doc comment of the next definition shows that definition (issue 13)."""

import numpy as np
import pytest
from conftest import HashEmbedder

from seek.index.indexer import index_workspace
from seek.retrieve import Searcher, lead_in


@pytest.mark.parametrize(
    ("content", "count"),
    [
        ("x = 1\n/**\n * Freezes the draft.\n */\n", 3),
        ("    return v\n\n# Parse a size.\n# Like 10mb.\n\n", 2),
        ("end\n-- the next one\n", 1),
        ("#include <stdio.h>\n#endif\n", 0),  # preprocessor lines are code
        ("x = 1\n# note\ny = 2\n", 0),
    ],
)
def test_trailing_comment_lines(content, count):
    assert lead_in.trailing_comment_lines(content) == count


def corpus(contents, lines):
    paths = ["a.ts"] * len(contents)
    starts = [s for s, _ in lines]
    ends = [e for _, e in lines]
    return paths, starts, ends, contents, {"a.ts": np.arange(len(contents))}


DOC = "  return x\n}\n/**\n * Deep-freeze the result.\n */"


def test_a_chunk_ending_with_a_doc_comment_runs_into_the_next_one():
    contents = ["function a() {\n" + DOC, "function freeze(o) {\n  return o\n}", "// end\nz()"]
    args = corpus(contents, [(0, 5), (4, 8), (9, 10)])
    chosen = lead_in.with_lead_ins([(0, 0.9), (1, 0.5), (2, 0.1)], *args, k=10)
    # chunk 1 is shown inside chunk 0's hit, so it is not listed again
    assert chosen == [(0, 0.9, 1), (2, 0.1, None)]
    # k counts hits, not chunks
    assert len(lead_in.with_lead_ins([(0, 0.9), (1, 0.5), (2, 0.1)], *args, k=1)) == 1


def test_no_join_for_one_comment_line_a_long_or_an_already_listed_next_chunk():
    one = ["a()\n// just a note", "b()"]
    assert lead_in.with_lead_ins([(0, 1.0)], *corpus(one, [(0, 1), (2, 2)]), k=5)[0][2] is None
    long_next = ["a()\n" + DOC, "\n".join(["x()"] * (lead_in.MAX_NEXT_LINES + 1))]
    args = corpus(long_next, [(0, 5), (6, 6 + lead_in.MAX_NEXT_LINES)])
    assert lead_in.with_lead_ins([(0, 1.0)], *args, k=5)[0][2] is None
    listed = ["a()\n" + DOC, "b()"]
    args = corpus(listed, [(0, 5), (6, 6)])
    assert lead_in.with_lead_ins([(1, 0.9), (0, 0.5)], *args, k=5) == [
        (1, 0.9, None),
        (0, 0.5, None),
    ]
    # the file's last chunk has nothing to run into
    assert lead_in.with_lead_ins([(1, 0.9)], *args, k=5) == [(1, 0.9, None)]


def test_joined_content_skips_the_overlapping_lines():
    first = "a\nb\nc"  # lines 10-12
    second = "b\nc\nd\ne"  # lines 11-14
    assert lead_in.joined_content(first, 12, second, 11) == "a\nb\nc\nd\ne"
    assert lead_in.joined_content(first, 12, "x\ny", 13) == "a\nb\nc\nx\ny"


FUNCTIONS = "\n".join(
    f"# Step {i} of the size pipeline: scale the value.\n# Called by parse_size.\n"
    f"def step_{i}(value):\n"
    + "\n".join(
        f"    value = scale(value, factor={i + j}, rounding='half-even', limit=10**9)"
        for j in range(4)
    )
    + "\n"
    for i in range(12)
)


def test_search_hits_run_through_the_documented_definition(make_tree, settings_for):
    root = make_tree({"src/sizes.py": FUNCTIONS, "src/other.py": "def other():\n    pass\n"})
    embedder = HashEmbedder()
    index_workspace(root, settings_for(), embedder=embedder)
    searcher = Searcher.open(root, settings_for(), embedder=embedder)
    question = "which step of the size pipeline scales the value"
    off = searcher.search(question, k=20, disabled=frozenset({"lead_in"}))
    on = searcher.search(question, k=20)
    ending = [h for h in off.hits if lead_in.trailing_comment_lines(h.content) >= 2]
    assert ending, "the chunker no longer cuts before a definition's comment: rewrite the test"
    by_start = {(h.path, h.start_line): h for h in on.hits}
    pairs = [(h, by_start.get((h.path, h.start_line))) for h in ending]
    joined = [(h, j) for h, j in pairs if j is not None and j.end_line > h.end_line]
    assert joined
    for before, hit in joined:
        lines = (root / hit.path).read_text().split("\n")[hit.start_line - 1 : hit.end_line]
        assert hit.content == "\n".join(lines)
        # the definition the comment documents is now in the hit
        assert hit.content.count("def step_") > before.content.count("def step_")
    # no line is shown twice
    spans = sorted((h.start_line, h.end_line) for h in on.hits if h.path == "src/sizes.py")
    assert len({s for s, _ in spans}) == len(spans)
