"""Property tests and a fuzz run: chunk packing, embedding windows, ignore matching against
pathspec, and the chunker over random bytes in every supported language.

Example counts are the ``*_EXAMPLES`` constants below (each is hypothesis' ``max_examples``);
the fuzz run tries ``FUZZ_EXAMPLES_PER_EXTENSION`` random inputs for each of the extensions in
``EXTENSION_GRAMMAR`` plus the fixed ``NASTY`` inputs for each of them.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections import defaultdict

import pathspec
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from seek.chunk import chunk_file, embedding_windows
from seek.chunk.languages import EXTENSION_GRAMMAR
from seek.chunk.packing import chunks_from_breaks
from seek.scan.ignore import rules_from_lines
from seek.settings import Settings, effective_chunk_sizes

PACKING_EXAMPLES = 300
BREAKS_EXAMPLES = 300
WINDOW_EXAMPLES = 400
IGNORE_EXAMPLES = 400
FUZZ_EXAMPLES_PER_EXTENSION = 80
EXTENSIONS = sorted(EXTENSION_GRAMMAR)

FAST = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)


# -- strategies --------------------------------------------------------------------------------
CHARS = st.one_of(
    st.sampled_from(list(" \t\r#(){}[];:=.,'\"\\x_aZ9\u00e9\u65e5\U0001f600\ufeff\u2028")),
    st.characters(exclude_categories=("Cs",)),
)
short_line = st.text(CHARS, max_size=40)
long_line = st.text(CHARS, min_size=100, max_size=700)
blank_line = st.sampled_from(["", " ", "\t", "\r", "  \r", "\u00a0"])
line = st.one_of(short_line, short_line, blank_line, long_line)
texts = st.lists(line, max_size=40).map("\n".join)


@st.composite
def chunk_sizes(draw):
    """(max, min, overlap) as the settings clamp them."""
    raw = Settings(
        chunk_max_chars=draw(st.integers(1, 400)),
        chunk_min_chars=draw(st.integers(0, 800)),
        chunk_overlap_chars=draw(st.integers(0, 800)),
    )
    max_chars, min_chars, overlap = effective_chunk_sizes(raw)
    assert 0 <= min_chars <= max_chars and 0 <= overlap <= max_chars // 2
    return max_chars, min_chars, overlap


def split_lines(text: str) -> list[str]:
    """The lines chunk_file works on (a final newline does not start another line)."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def assert_chunk_invariants(chunks, lines: list[str], max_chars: int) -> None:
    by_range = defaultdict(list)
    for chunk in chunks:
        assert 0 <= chunk.start_line <= chunk.end_line < len(lines)
        assert chunk.content.strip(), "a chunk is never blank"
        assert len(chunk.content) <= 2 * max_chars, "the giant-line guard bounds every chunk"
        by_range[chunk.start_line, chunk.end_line].append(chunk.content)
    for (start, end), contents in by_range.items():
        whole = "\n".join(lines[start : end + 1])
        if len(whole) > 2 * max_chars:  # sliced: the non-blank max-sized slices, in order
            pieces = [whole[i : i + max_chars] for i in range(0, len(whole), max_chars)]
            assert contents == [p for p in pieces if p.strip()]
        else:
            assert contents == [whole]
    ends = [chunk.end_line for chunk in chunks]
    assert ends == sorted(ends)
    covered = {row for start, end in by_range for row in range(start, end + 1)}
    assert {i for i, text in enumerate(lines) if text.strip()} <= covered


# -- chunk packing ------------------------------------------------------------------------------
@settings(max_examples=PACKING_EXAMPLES, **FAST)
@given(
    text=texts,
    sizes=chunk_sizes(),
    path=st.sampled_from(["notes.txt", "README.md", "x.py", "x.js", "x.go", "x.css"]),
)
@example(text="x" * 5000, sizes=(1000, 100, 100), path="x.js")
@example(text="a\r\n\r\nb\r\n" * 50, sizes=(7, 7, 3), path="notes.txt")
@example(text=" " * 3000 + "x" + " " * 3000, sizes=(1000, 0, 0), path="notes.txt")
def test_chunks_are_exact_slices_covering_every_non_blank_line(text, sizes, path):
    max_chars, min_chars, overlap = sizes
    chunks = chunk_file(
        path, text.encode(), max_chars=max_chars, min_chars=min_chars, overlap_chars=overlap
    )
    assert_chunk_invariants(chunks, split_lines(text), max_chars)


@settings(max_examples=BREAKS_EXAMPLES, **FAST)
@given(
    lines=st.lists(line, max_size=40),
    breaks=st.lists(st.integers(-5, 50), max_size=20),
    sizes=chunk_sizes(),
)
def test_packing_any_breaks_keeps_the_invariants(lines, breaks, sizes):
    max_chars, min_chars, overlap = sizes
    chunks = chunks_from_breaks(
        lines, breaks, max_chars=max_chars, min_chars=min_chars, overlap_chars=overlap
    )
    assert_chunk_invariants(chunks, lines, max_chars)


# -- embedding windows --------------------------------------------------------------------------
@st.composite
def window_sizes(draw):
    window = draw(st.integers(1, 300))
    return window, draw(st.integers(0, window - 1))  # settings: overlap < window


@settings(max_examples=WINDOW_EXAMPLES, **FAST)
@given(content=texts, sizes=window_sizes())
@example(content="y" * 1201, sizes=(600, 80))
@example(content="short\n" + "z" * 700 + "\nshort again", sizes=(600, 599))
def test_windows_are_bounded_non_blank_and_cover_every_line(content, sizes):
    window, overlap = sizes
    windows = embedding_windows(content, window, overlap)
    assert all(len(w) <= window and w.strip() for w in windows)
    window_lines = [set(w.split("\n")) for w in windows]
    for text in content.split("\n"):
        if not text.strip():
            continue
        if len(text) <= window:
            assert any(text in lines for lines in window_lines), text
        else:  # a line longer than a window: each of its non-blank window-sized slices
            for i in range(0, len(text), window):
                piece = text[i : i + window]
                assert not piece.strip() or piece in windows, (i, piece)


# -- ignore rules against pathspec --------------------------------------------------------------
def _pathspec_accepts(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line], backend="simple")
    except Exception:  # pathspec rejects some lines (seek skips them)
        return False
    return True


SEGMENT = st.text("ab.*? #!\\[]-:é日", min_size=1, max_size=4).filter(
    lambda s: s not in (".", "..")
)
REL_PATHS = st.lists(SEGMENT, min_size=1, max_size=4).map("/".join)
PATTERN_LINES = st.one_of(
    st.text("ab.*?/ #!\\[]-:é日\t", max_size=10),
    st.builds("".join, st.lists(st.sampled_from(["**", "*", "/", "a", "b", "!", "#", " "]))),
    st.sampled_from(["", "#", "# c", "*", "**", "/", "a/", "/a", "!a", "\\#a", "\\!a", "a\\ "]),
)
VALID_PATTERNS = st.lists(PATTERN_LINES.filter(_pathspec_accepts), min_size=1, max_size=5)
BASES = st.sampled_from(["", "sub", "a/b"])


def _compare(patterns, rel, is_dir, base):
    """(seek's verdict is True, pathspec matches) for ``rel`` under a rule set at ``base``."""
    rules = rules_from_lines(patterns, base)
    full = f"{base}/{rel}" if base else rel
    ours = rules.decide(full, is_dir) if rules is not None else None
    # The oracle is pathspec's own matcher on Python's ``re``; seek matches with RE2.
    theirs = pathspec.GitIgnoreSpec.from_lines(patterns, backend="simple").match_file(
        rel + "/" if is_dir else rel
    )
    if base and rules is not None:  # outside its folder a rule set has no say
        assert rules.decide(f"other/{rel}", is_dir) is None
    return ours is True, theirs


@pytest.mark.filterwarnings("ignore::FutureWarning")  # pathspec's regexes for '[[' patterns
@settings(max_examples=IGNORE_EXAMPLES, **FAST)
@given(patterns=VALID_PATTERNS, rel=REL_PATHS, is_dir=st.booleans(), base=BASES)
@example(patterns=[" #x"], rel=" #x", is_dir=False, base="")  # a pattern, not a comment
@example(patterns=["!a", "a"], rel="a", is_dir=False, base="")
@example(patterns=["a", "!a"], rel="a", is_dir=False, base="sub")
@example(patterns=["a/"], rel="a", is_dir=True, base="a/b")
@example(patterns=["/a"], rel="b/a", is_dir=False, base="")
@example(patterns=["**/b"], rel="a/a/b", is_dir=True, base="sub")
@example(patterns=["[[:alpha:]]"], rel="a]", is_dir=False, base="")  # "[" in a class: literal
@example(patterns=["[!]a]b"], rel="]b", is_dir=False, base="")
@example(patterns=["*/"], rel="a/b", is_dir=False, base="")  # unanchored: "(?P<ps_d>/)"
@example(patterns=["a", "!b/"], rel="b/a", is_dir=False, base="")  # a file match beats a folder's
def test_ignore_rules_agree_with_pathspec(patterns, rel, is_dir, base):
    ours, theirs = _compare(patterns, rel, is_dir, base)
    assert ours == theirs


@settings(max_examples=50, **FAST)
@given(patterns=st.lists(PATTERN_LINES, min_size=1, max_size=5))
@example(patterns=["*.log", "!"])
def test_rules_from_lines_accepts_any_line(patterns):
    rules_from_lines(patterns, "")


# -- the chunker over random bytes in every language --------------------------------------------
TOKENS = [
    *(b"(", b")", b"{", b"}", b"[", b"]", b"<", b">", b'"', b"'", b"`", b"/*", b"*/", b"//"),
    *(b"#", b"--", b"\\", b"\n", b"\r\n", b"\r", b"\t", b" ", b"\x00", b"\xff", b"\xc3"),
    *(b"\xef\xbb\xbf", b"def ", b"fn ", b"func ", b"class ", b"end", b"do", b"<?php", b"@"),
    *(b"<<EOF\n", b"$", b"x", b"1", b"\xe6\x97\xa5", b"\xf0\x9f\x98\x80"),
]
random_sources = st.one_of(
    st.binary(max_size=4096),
    st.lists(st.sampled_from(TOKENS), max_size=600).map(b"".join),
)

NASTY = {
    "nuls": b"\x00" * 4096,
    "newlines": b"\n" * 100_000,
    "crlf-lines": b"\r\n" * 50_000,
    "open-parens": b"(" * 100_000,
    "invalid-utf8": b"\xff\xfe\xc3\x28\xa0\xa1\xe2\x28\xa1\xf0\x28\x8c\xbc\xc0\xaf" * 200,
    "bom": b"\xef\xbb\xbf" + b"x = 1\n" * 3,
    "bom-only": b"\xef\xbb\xbf",
    "empty": b"",
    "lone-surrogate-bytes": b"\xed\xb2\x80" * 1000,
}


def _chunk_and_check(ext: str, source: bytes, sizes: tuple[int, int, int]) -> None:
    max_chars, min_chars, overlap = sizes
    chunks = chunk_file(
        f"x.{ext}", source, max_chars=max_chars, min_chars=min_chars, overlap_chars=overlap
    )
    assert_chunk_invariants(chunks, split_lines(source.decode("utf-8", "replace")), max_chars)


@pytest.mark.parametrize("ext", EXTENSIONS)
@settings(max_examples=FUZZ_EXAMPLES_PER_EXTENSION, **FAST)
@given(source=random_sources, sizes=st.one_of(st.just((1000, 100, 100)), chunk_sizes()))
def test_fuzz_chunker_random_bytes(ext, source, sizes):
    _chunk_and_check(ext, source, sizes)


@pytest.mark.parametrize("name", list(NASTY))
@pytest.mark.parametrize("ext", EXTENSIONS)
def test_fuzz_chunker_nasty_inputs(ext, name):
    _chunk_and_check(ext, NASTY[name], (1000, 100, 100))


# Some grammars parse hostile input in quadratic time (measured at 50 KB: elixir on '\r' 10 s,
# scala on '[' * n + ']' * n 11 s, go/c/java/lua on '{[(<"\'`/*' repeated 2.3 s; x4 per
# doubling, so a 512 KiB file takes minutes). The fuzz inputs above stay clear of them.
PARSE_BUDGET_S = 4.0


def test_chunking_a_hostile_file_has_a_time_bound():
    code = textwrap.dedent(
        """
        from seek.chunk import chunk_file
        chunk_file("x.ex", b"\\r" * 200_000, max_chars=1000, min_chars=100, overlap_chars=100)
        """
    )
    try:
        subprocess.run([sys.executable, "-c", code], timeout=PARSE_BUDGET_S, check=True)
    except subprocess.TimeoutExpired:
        pytest.fail(f"chunking 200 KB of x.ex took more than {PARSE_BUDGET_S} s")
