"""Chunking invariants and examples ported from the reference's chunker tests (§11.1)."""

import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seek.chunk import chunk_file, embedding_windows, languages
from seek.chunk.packing import chunks_from_breaks, prose_breaks
from seek.chunk.syntax import syntax_breaks


def chunk_text(text, *, path="notes.txt", max_chars=60, min_chars=20, overlap=15):
    return chunk_file(
        path, text.encode(), max_chars=max_chars, min_chars=min_chars, overlap_chars=overlap
    )


def assert_exact_slices_and_coverage(text, chunks):
    lines = text.split("\n")
    covered = set()
    for chunk in chunks:
        whole = "\n".join(lines[chunk.start_line : chunk.end_line + 1])
        assert chunk.content in whole  # exact slice (giant lines are sliced further)
        covered.update(range(chunk.start_line, chunk.end_line + 1))
    non_blank = {i for i, line in enumerate(lines) if line.strip()}
    assert non_blank <= covered


PARAGRAPHS = "\n".join(
    f"paragraph {i} line {j} with some words" for i in range(6) for j in range(3)
)


def test_exact_slices_and_full_coverage():
    chunks = chunk_text(PARAGRAPHS)
    assert len(chunks) > 1
    assert_exact_slices_and_coverage(PARAGRAPHS, chunks)


def test_pieces_respect_max_except_overlap_and_folding():
    chunks = chunk_text(PARAGRAPHS, overlap=0, min_chars=0)
    assert all(len(c.content) <= 60 for c in chunks)


def test_overlap_makes_the_next_chunk_start_inside_the_previous_one():
    text = "\n".join(f"line {i:04d}" for i in range(40))  # 10-char lines
    chunks = chunk_text(text, overlap=15)
    assert len(chunks) > 2
    for previous, current in zip(chunks, chunks[1:], strict=False):
        assert previous.start_line < current.start_line <= previous.end_line


def test_tiny_segments_pack_together():
    text = "\n\n".join(f"w{i}" for i in range(10))  # ten tiny paragraphs
    chunks = chunk_text(text, max_chars=1000, min_chars=0, overlap=0)
    assert len(chunks) == 1 and chunks[0].content == text


def test_short_tail_folds_into_previous_chunk():
    lines = ["x" * 30, "x" * 30, "", "tail"]
    chunks = chunks_from_breaks(lines, [0, 3], max_chars=62, min_chars=20, overlap_chars=0)
    assert [(c.start_line, c.end_line) for c in chunks] == [(0, 3)]


def test_prose_breaks_example():
    lines = ["# Title", "para one", "still one", "", "para two", "## Sub", "para three"]
    assert prose_breaks(lines) == [0, 4, 5]


def test_paragraphs_never_lose_text():
    text = "alpha beta\n\ngamma delta\nepsilon\n\n# head\nzeta"
    chunks = chunk_text(text, max_chars=20, min_chars=0, overlap=0)
    joined = "\n".join(c.content for c in chunks)
    for word in ("alpha", "beta", "gamma", "delta", "epsilon", "head", "zeta"):
        assert word in joined


def test_giant_line_is_cut_into_max_sized_slices():
    chunks = chunk_text("x" * 500, max_chars=100, min_chars=20, overlap=15)
    assert [len(c.content) for c in chunks] == [100] * 5
    assert {(c.start_line, c.end_line) for c in chunks} == {(0, 0)}


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t\n"])
def test_whitespace_or_empty_gives_no_chunks(text):
    assert chunk_text(text) == []


def test_windows_are_bounded_cover_every_line_and_share_seams():
    text = "\n".join(f"line number {i:03d}" for i in range(40))
    windows = embedding_windows(text, 100, 30)
    assert all(len(w) <= 100 for w in windows)
    assert set(text.split("\n")) <= {line for w in windows for line in w.split("\n")}
    for first, second in zip(windows, windows[1:], strict=False):
        assert first.split("\n")[-1] == second.split("\n")[0] or set(first.split("\n")) & set(
            second.split("\n")
        )


def test_long_line_windows():
    assert [len(w) for w in embedding_windows("y" * 250, 100, 30)] == [100, 100, 50]


def test_short_chunk_is_one_window():
    assert embedding_windows("short", 600, 80) == ["short"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text(alphabet="ab \t#x\n", max_size=80), max_size=40),
    st.integers(20, 200),
    st.integers(0, 50),
    st.integers(0, 60),
)
def test_packing_properties(parts, max_chars, min_chars, overlap):
    text = "\n".join(parts)
    chunks = chunk_text(text, max_chars=max_chars, min_chars=min_chars, overlap=overlap)
    assert_exact_slices_and_coverage(text, chunks)
    for chunk in chunks:
        assert chunk.content.strip()
        assert 0 <= chunk.start_line <= chunk.end_line


# One small program per grammar (all 21): two definitions of about 420 characters each,
# written WITHOUT a blank line between them, so the prose splitter sees one paragraph and
# only the grammar knows where the second definition starts. With max 500 the syntax breaks
# must start the second definition's chunk exactly there (the tests below check that prose
# packing would not, so each sample can only pass through its tree-sitter grammar).
def body(comment: str, n: int = 11) -> str:
    return "\n".join(f"    {comment} step {i} of the work goes here" for i in range(n))


CSS_BODY = "\n".join(f'  --step-{i}: "of the work goes here";' for i in range(11))

SAMPLES = {
    "a.py": "def first():\n{b}\n    return 1\ndef second():\n{b}\n    return 2\n",
    "a.js": "function first() {{\n{b}\n}}\nfunction second() {{\n{b}\n}}\n",
    "a.ts": "function first(): number {{\n{b}\n  return 1;\n}}\nfunction second(): number {{\n{b}\n  return 2;\n}}\n",
    "a.tsx": "function First() {{\n{b}\n  return <div/>;\n}}\nfunction Second() {{\n{b}\n  return <p/>;\n}}\n",
    "a.go": "package a\n\nfunc first() {{\n{b}\n}}\nfunc second() {{\n{b}\n}}\n",
    "a.rs": "fn first() {{\n{b}\n}}\nfn second() {{\n{b}\n}}\n",
    "A.java": "class A {{\n  void first() {{\n{b}\n  }}\n  void second() {{\n{b}\n  }}\n}}\n",
    "a.kt": "fun first() {{\n{b}\n}}\nfun second() {{\n{b}\n}}\n",
    "a.scala": "object A {{\n  def first(): Unit = {{\n{b}\n  }}\n  def second(): Unit = {{\n{b}\n  }}\n}}\n",
    "a.swift": "func first() {{\n{b}\n}}\nfunc second() {{\n{b}\n}}\n",
    "a.c": "void first(void) {{\n{b}\n}}\nvoid second(void) {{\n{b}\n}}\n",
    "a.cpp": "namespace a {{\nvoid first() {{\n{b}\n}}\nvoid second() {{\n{b}\n}}\n}}\n",
    "a.cs": "class A {{\n  void First() {{\n{b}\n  }}\n  void Second() {{\n{b}\n  }}\n}}\n",
    "a.rb": "def first\n{b}\nend\ndef second\n{b}\nend\n",
    "a.php": "<?php\nfunction first() {{\n{b}\n}}\nfunction second() {{\n{b}\n}}\n",
    "a.ex": "defmodule A do\n  def first do\n{b}\n  end\n  def second do\n{b}\n  end\nend\n",
    "a.hs": "module A where\n\nfirst :: Int\nfirst =\n{b}\n  1\nsecond :: Int\nsecond =\n{b}\n  2\n",
    "a.lua": "function first()\n{b}\nend\nfunction second()\n{b}\nend\n",
    "a.zig": "fn first() void {{\n{b}\n}}\nfn second() void {{\n{b}\n}}\n",
    "a.sh": "first() {{\n{b}\n}}\nsecond() {{\n{b}\n}}\n",
    "a.css": ".first {{\n{css}\n}}\n.second {{\n{css}\n}}\n",
}
COMMENT = {
    "py": "#",
    "rb": "#",
    "ex": "#",
    "sh": "#",
    "hs": "--",
    "lua": "--",
}


def sample(path: str) -> str:
    ext = path.rsplit(".", 1)[1]
    return SAMPLES[path].format(b=body(COMMENT.get(ext, "//")), css=CSS_BODY)


def definition_rows(text: str) -> tuple[int, int]:
    """Rows where the first and the second definition's own line is (Haskell: the equation,
    not the signature, which packs with the definition before it)."""
    rows = text.split("\n")

    def row(name: str) -> int:
        return next(i for i, line in enumerate(rows) if name in line.lower() and "::" not in line)

    return row("first"), row("second")


def test_every_grammar_has_a_sample():
    assert {languages.grammar_for_path(p) for p in SAMPLES} == set(languages.GRAMMARS)


@pytest.mark.parametrize("path", sorted(SAMPLES))
def test_syntax_breaks_start_each_definition_and_never_split_one(path):
    text = sample(path)
    grammar = languages.grammar_for_path(path)
    parser = languages.parser_for(grammar)
    assert parser is not None, f"the {grammar} grammar did not load"
    breaks = syntax_breaks(parser.parse(text.encode()), text.encode(), 500)
    first, second = definition_rows(text)
    assert {first, second} <= set(breaks), (path, breaks)
    # No break inside a definition's body: each fits in 500 characters, so it stays whole.
    body_rows = {i for i, line in enumerate(text.split("\n")) if "step" in line}
    assert not body_rows & set(breaks), (path, breaks)
    # Without a blank line the prose splitter has no break at the second definition.
    assert second not in prose_breaks(text.split("\n"))


@pytest.mark.parametrize("path", sorted(SAMPLES))
def test_syntax_chunking_splits_at_definitions(path):
    text = sample(path)
    chunks = chunk_text(text, path=path, max_chars=500, min_chars=50, overlap=0)
    assert_exact_slices_and_coverage(text, chunks)
    _, second = definition_rows(text)
    lines = text.rstrip("\n").split("\n")
    prose = chunks_from_breaks(
        lines, prose_breaks(lines), max_chars=500, min_chars=50, overlap_chars=0
    )
    # The second definition starts a chunk and the chunk before it ends just above...
    assert second in [c.start_line for c in chunks], (path, [c.start_line for c in chunks])
    assert second - 1 in [c.end_line for c in chunks], (path, [c.end_line for c in chunks])
    # ...which cutting the same lines as prose does not do: the sample tests the grammar.
    assert second not in [c.start_line for c in prose], path


def test_syntax_and_prose_differ_for_code():
    # No blank line between the definitions: only the parser sees where the second starts.
    text = sample("a.py")
    second = text.split("\n").index("def second():")
    syntax = chunk_text(text, path="a.py", max_chars=500, min_chars=50, overlap=0)
    prose = chunk_text(text, path="a.unknownext", max_chars=500, min_chars=50, overlap=0)
    assert second in [c.start_line for c in syntax]
    assert second not in [c.start_line for c in prose]


def test_broken_grammar_degrades_to_prose_with_a_warning(monkeypatch, caplog):
    monkeypatch.setitem(languages.GRAMMARS, "python", ("tree_sitter_not_installed", "language"))
    languages.load_language.cache_clear()
    monkeypatch.setattr(languages, "_local", type(languages._local)())
    try:
        text = sample("a.py")
        with caplog.at_level(logging.WARNING):
            chunks = chunk_text(text, path="a.py", max_chars=500, min_chars=50, overlap=0)
        assert chunks and "could not be loaded" in caplog.text
        assert_exact_slices_and_coverage(text, chunks)
    finally:
        languages.load_language.cache_clear()


def test_non_ascii_source_chunks_by_characters():
    text = "def é():\n" + "\n".join(f"    x = '{'é' * 30}'" for _ in range(30)) + "\n"
    chunks = chunk_text(text, path="u.py", max_chars=500, min_chars=50, overlap=0)
    assert_exact_slices_and_coverage(text, chunks)
    assert all(len(c.content) <= 1000 for c in chunks)


# -- exact boundaries of the chunker's rules (reference §2.3-§2.5, §3.4) ----------------------
def test_a_final_newline_ends_the_last_line_and_starts_no_other():
    assert [(c.start_line, c.end_line) for c in chunk_text("one line\n")] == [(0, 0)]
    two = chunk_text("first\nsecond\n", max_chars=1000)
    assert [(c.start_line, c.end_line, c.content) for c in two] == [(0, 1, "first\nsecond")]


def test_invalid_utf8_is_replaced_not_an_error():
    (chunk,) = chunk_file("a.py", b"x = '\xff\xfe'\n", max_chars=100, min_chars=0, overlap_chars=0)
    assert chunk.content == "x = '\ufffd\ufffd'"


def test_prose_chunks_start_at_paragraphs():
    # Cut by size alone these lines would start chunks at rows 0 and 4, not at the paragraph.
    text = "\n".join(["a" * 10, "", "b" * 30, "c" * 30, "d" * 30])
    chunks = chunk_text(text, max_chars=80, min_chars=0, overlap=0)
    assert [c.start_line for c in chunks] == [0, 2, 4]
    assert prose_breaks(["a", "b", "", "c"]) == [0, 3]  # the first line starts a paragraph


def test_files_with_a_line_over_4000_characters_are_split_as_prose():
    # docs/indexing.md: such files are split as prose, not parsed.
    base = sample("a.py")
    _, second = definition_rows(base)
    for line_chars, parsed in ((4000, True), (4001, False)):
        text = base + "LONG = '" + "x" * (line_chars - 9) + "'\n"
        assert len(text.split("\n")[-2]) == line_chars
        chunks = chunk_text(text, path="a.py", max_chars=500, min_chars=50, overlap=0)
        assert (second in [c.start_line for c in chunks]) is parsed, line_chars


def test_a_parser_failure_is_logged_and_the_file_split_as_prose(monkeypatch, caplog):
    import seek.chunk

    def broken(tree, source, max_chars):
        raise RuntimeError("boom")

    monkeypatch.setattr(seek.chunk, "syntax_breaks", broken)  # fault injection
    text = sample("a.py")
    with caplog.at_level(logging.WARNING):
        chunks = chunk_text(text, path="a.py", max_chars=500, min_chars=50, overlap=0)
    assert caplog.messages == ["cannot parse a.py as python (boom); using prose breaks"]
    assert_exact_slices_and_coverage(text, chunks)


@pytest.mark.parametrize(
    ("path", "grammar"),
    [
        ("src/a.py", "python"), ("jquery.min.js", "javascript"), ("X.py", "python"),
        ("a.b.TS", "typescript"), (".py", None), ("src/.sh", None), ("a/b/.py", None),
        ("Makefile", None), ("dir.py/README", None),
    ],
)  # fmt: skip
def test_grammar_by_the_last_extension_of_the_file_name(path, grammar):
    assert languages.grammar_for_path(path) == grammar


def test_line_sizes_count_each_line_and_its_newline():
    from seek.chunk.packing import LineSizes, segments

    sizes = LineSizes(["ab", "c", ""])
    assert (sizes.chars(0, 0), sizes.chars(0, 1), sizes.chars(1, 2)) == (3, 5, 3)
    assert segments([0, 3, 5], 3) == [(0, 2)]  # breaks past the end are ignored
    assert segments([2], 4) == [(0, 1), (2, 3)]


def test_packing_boundaries_are_inclusive():
    from seek.chunk.packing import LineSizes, add_overlap, fold_small, pack

    sizes = LineSizes(["x" * 9] * 6)  # 10 characters a line
    assert pack([(0, 1), (2, 3)], sizes, 40) == [(0, 3)]  # exactly 40 still fits
    assert pack([(0, 3)], sizes, 40) == [(0, 3)]
    assert pack([(0, 4)], sizes, 40) == [(0, 3), (4, 4)]  # cut by lines
    long_first = LineSizes(["x" * 100, "y"])
    assert pack([(0, 1)], long_first, 60) == [(0, 0), (1, 1)]  # an oversized line alone
    # A range under min folds into the previous one while the sum stays <= 1.5 x max.
    assert fold_small([(0, 3), (4, 5)], sizes, 20, 40) == [(0, 3), (4, 5)]  # 20 is not < 20
    assert fold_small([(0, 3), (4, 5)], sizes, 21, 40) == [(0, 5)]  # 60 <= 60
    assert fold_small([(0, 3), (4, 5)], sizes, 21, 39) == [(0, 3), (4, 5)]  # 60 > 58.5
    # The overlap takes whole lines totalling at most overlap_chars, down to line 0.
    assert add_overlap([(0, 1), (2, 3), (4, 5)], sizes, 20) == [(0, 1), (0, 3), (2, 5)]
    assert add_overlap([(0, 1), (2, 3)], sizes, 19) == [(0, 1), (1, 3)]
    assert add_overlap([(0, 0), (1, 1)], sizes, 100) == [(0, 0), (0, 1)]


def test_only_pieces_over_twice_the_maximum_are_sliced():
    assert [len(c.content) for c in chunk_text("x" * 120, max_chars=60)] == [120]
    assert [len(c.content) for c in chunk_text("x" * 150, max_chars=60)] == [60, 60, 30]


def test_syntax_breaks_exact_rows():
    def breaks(text, max_chars):
        parser = languages.parser_for("python")
        return syntax_breaks(parser.parse(text.encode()), text.encode(), max_chars)

    # A node of exactly max_chars is kept whole; one character more and it is opened.
    func = "def a():\n    return 1\n"
    assert breaks(func, 21) == [0] and breaks(func, 20) == [0, 1]
    # A leaf (a comment) longer than the maximum still starts a break.
    text = "def a():\n    pass\n# " + "c" * 200 + "\ndef b():\n    pass\n"
    assert breaks(text, 100) == [0, 2, 3]


def test_windows_fill_exactly_and_overlap_by_whole_lines():
    content = "\n".join(f"line {i:03d}" for i in range(10))  # 9 characters a line with "\n"
    lines = content.split("\n")

    def spans(windows):
        return [(lines.index(w.split("\n")[0]), lines.index(w.split("\n")[-1])) for w in windows]

    assert spans(embedding_windows(content, 27, 9)) == [(0, 2), (2, 4), (4, 6), (6, 8), (8, 9)]
    assert spans(embedding_windows(content, 27, 0)) == [(0, 2), (3, 5), (6, 8), (9, 9)]
    # An overlap as large as a window still moves forward by at least a line.
    assert spans(embedding_windows(content, 18, 80)) == [(i, i + 1) for i in range(9)]
    assert embedding_windows("   \n ", 600, 80) == []
