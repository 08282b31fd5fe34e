"""bench.graph.tokens's counting and covering rules (bench/graph/replay.py), on a temporary
folder with the real ``grep``: what the README's token table rests on."""

from __future__ import annotations

from pathlib import Path

from bench.graph.replay import (
    Files,
    Replay,
    file_order,
    grep_and_read,
    grep_word,
    question_words,
)
from bench.quality.scoring import Hit, Target


def test_question_words_drop_stop_words_and_repeats_the_same_way_for_every_question() -> None:
    assert question_words("How does the Cache expire an entry when the cache is full?") == [
        "cache",
        "expire",
        "entry",
        "full",
    ]
    assert question_words("parse_args in parse_args") == ["parse_args"]


def test_a_span_target_needs_an_overlapping_read_and_a_file_target_any_line() -> None:
    replay = Replay([Target("src/a.py", 10, 20), Target("b.py")], cap=1_000)
    assert not replay.deliver("read", 100, [Hit("a.py", 1, 9)])  # before the span
    assert not replay.deliver("read", 100, [Hit("a.py", 20, 30)])  # a.py covered, b.py not
    assert replay.deliver("read", 50, [Hit("b.py", 5, 5)])
    assert replay.summary() == {"covered": True, "chars": 250, "calls": 3, "covered_by": "read"}
    assert replay.deliver("more", 10, [])  # over: nothing more is counted
    assert replay.chars == 250


def test_past_the_cap_is_not_covered_and_counts_the_cap() -> None:
    assert Replay([Target("a.py")], cap=100).deliver("read", 100, [Hit("a.py", 1, 1)])
    at_cap = Replay([Target("a.py")], cap=100)
    at_cap.deliver("read", 100, [Hit("a.py", 1, 1)])
    assert at_cap.covered  # the cap itself is still within the budget
    replay = Replay([Target("a.py")], cap=100)
    assert replay.deliver("read", 101, [Hit("a.py", 1, 1)])
    assert replay.summary() == {"covered": False, "chars": 100, "calls": 1, "covered_by": None}


def _workspace(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    cache = "class Cache:\n    def expire(self):\n        pass\n"
    (tmp_path / "pkg" / "cache.py").write_text(cache)
    (tmp_path / "pkg" / "noise.py").write_text("cache = 1\ncache = 2\ncache = 3\n")
    (tmp_path / "readme.txt").write_text("nothing here\n")
    return tmp_path


def test_grep_then_read_files_by_words_matched_counting_the_listing_and_the_files(
    tmp_path: Path,
) -> None:
    folder = _workspace(tmp_path)
    greps = [grep_word(folder, w) for w in ("cache", "expire")]
    assert len(greps[0].matches) == 4  # -i: Cache and the three cache lines
    # cache.py matches both words, noise.py one word (three times): cache.py first
    assert file_order(greps) == ["pkg/cache.py", "pkg/noise.py"]
    listing = len("pkg/cache.py:1\n") + len("pkg/noise.py:3\n") + len("pkg/cache.py:1\n")
    files = Files(folder)
    cache_py = len(files.text("pkg/cache.py"))
    noise_py = len(files.text("pkg/noise.py"))

    first = grep_and_read(folder, [Target("pkg/cache.py", 2, 3)], ["cache", "expire"], "counts")
    assert first.summary() == {
        "covered": True,
        "chars": listing + cache_py,
        "calls": 3,
        "covered_by": "read pkg/cache.py",
    }
    second = grep_and_read(folder, [Target("pkg/noise.py", 2, 2)], ["cache", "expire"], "counts")
    assert second.chars == listing + cache_py + noise_py and second.covered
    # the lines mode counts grep -rniw's whole output, still only reading covers
    lines = grep_and_read(folder, [Target("pkg/cache.py", 2, 3)], ["cache", "expire"], "lines")
    assert lines.chars == greps[0].chars + greps[1].chars + cache_py and lines.covered
    assert lines.covered_by == "read pkg/cache.py"
    # an answer grep never finds is not covered, and costs the listing only
    missed = grep_and_read(folder, [Target("readme.txt")], ["cache"], "counts")
    assert not missed.covered and missed.calls == 3


def test_the_seek_arms_count_what_the_mcp_tools_print_then_what_is_read(
    make_tree, settings_for, hash_provider
) -> None:
    """seek's arms over a real index (hash embedder): the search listing costs the MCP
    ``search`` text and covers nothing; reading the hits then covers; context's blocks cover
    with its first call, costing the MCP ``context`` text."""
    from bench.graph.tokens import seek_context, seek_search
    from seek import index_workspace
    from seek.mcp import format_hits
    from seek.untrusted import printable_text
    from seek.workspace import Workspaces

    root = make_tree(
        {
            "retry.py": "def configure_retries(policy):\n    return RetryPolicy(policy)\n",
            "router.py": "class Router:\n    def add_route(self, path):\n        pass\n",
        }
    )
    settings = settings_for(root, provider=hash_provider)
    index_workspace(root, settings)
    spaces = Workspaces(settings=settings, live=False)
    question = "configure_retries policy"
    files = Files(root)

    found = spaces.search(root, question, 10)
    first = found.hits[0]
    target = [Target(first.path, first.start_line, first.end_line)]
    search = Replay(target)
    seek_search(spaces, root, question, search, files)
    listing = len(format_hits(found))
    read = files.lines(first.path, first.start_line, first.end_line)[0]
    assert search.summary() == {
        "covered": True,
        "chars": listing + read,
        "calls": 2,
        "covered_by": f"lines {first.path}",
    }

    context = spaces.context(root, question)
    block = next(b for b in context.blocks if b.kind == "code")
    text = printable_text(f"{context.prompt()}\n\n{context.context_line()}")
    replay = Replay([Target(block.path, block.start + 1, block.end + 1)])
    seek_context(spaces, root, question, replay, files)
    assert replay.summary() == {
        "covered": True,
        "chars": len(text),
        "calls": 1,
        "covered_by": "context",
    }
