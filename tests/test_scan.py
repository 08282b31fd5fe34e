"""Scanning: ignore rules (nested, negations, exclude, .seekignore, globs), submodules,
symlinks, size limits and skip reasons."""

import json
import os
import socket
import subprocess
import sys
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from seek.scan import scan_workspace
from seek.scan.ignore import rules_from_lines


def scan(root, **kw):
    return scan_workspace(root, max_file_bytes=kw.pop("max_file_bytes", 524_288), **kw)


def paths(result):
    return sorted(f.rel for f in result.files)


def test_nested_gitignore_and_negation(make_tree):
    root = make_tree(
        {
            ".gitignore": "*.log\nbuild/\n",
            "a.py": "x",
            "debug.log": "x",
            "build/out.py": "x",
            "pkg/.gitignore": "!keep.log\nlocal.py\n",
            "pkg/keep.log": "x",  # .log is not allowlisted anyway, but must not count as ignored
            "pkg/local.py": "x",
            "pkg/mod.py": "x",
            "other/local.py": "x",  # the nested rule applies only under pkg/
        }
    )
    result = scan(root)
    assert paths(result) == ["a.py", "other/local.py", "pkg/mod.py"]
    assert result.skipped["ignored"] == 5  # debug.log, build/, pkg/local.py, 2 .gitignore
    assert result.skipped["not_allowlisted"] == 1  # pkg/keep.log, re-included by negation


def test_git_info_exclude_and_seekignore(make_tree):
    root = make_tree(
        {
            ".git/info/exclude": "secret.py\n",
            ".git/config": "x",
            ".seekignore": "generated/\n",
            ".gitignore": "!generated/\n",
            "secret.py": "x",
            "generated/g.py": "x",
            "ok.py": "x",
        }
    )
    assert paths(scan(root)) == ["ok.py"]


def test_ignored_globs_beat_gitignore_negations(make_tree):
    root = make_tree({".gitignore": "*.py\n!keep.py\n", "keep.py": "x", "a.md": "x"})
    assert paths(scan(root)) == ["a.md", "keep.py"]
    assert paths(scan(root, ignored_globs=("keep.py",))) == ["a.md"]


def test_submodules_match_as_path_prefixes_not_substrings(make_tree):
    root = make_tree(
        {
            ".gitmodules": '[submodule "lib"]\n\tpath = lib\n\turl = x\n',
            "lib/vendored.py": "x",
            "src/lib_util.py": "x",  # contains "lib" but is not inside the submodule
            "library/a.py": "x",
        }
    )
    assert paths(scan(root)) == ["library/a.py", "src/lib_util.py"]


def test_index_folder_inside_the_workspace_is_excluded(make_tree):
    root = make_tree({"a.py": "x", ".seek-index/manifest.json": "{}"})
    assert paths(scan(root, exclude_dirs=(root / ".seek-index",))) == ["a.py"]


def test_symlinks_are_not_followed(make_tree, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.py").write_text("x")
    root = make_tree({"a.py": "x"})
    os.symlink(outside, root / "link-dir")
    os.symlink(root / "a.py", root / "link.py")
    os.symlink(root, root / "loop")
    result = scan(root)
    assert paths(result) == ["a.py"]
    assert result.skipped["symlink"] == 3


def test_size_limits_and_reasons(make_tree):
    root = make_tree({"empty.py": "", "big.py": "x" * 101, "ok.py": "x" * 100, "pic.png": "x"})
    result = scan(root, max_file_bytes=100)
    assert paths(result) == ["ok.py"]
    assert result.skipped == {"empty": 1, "too_big": 1, "not_allowlisted": 1}
    assert result.examples["too_big"] == ["big.py"]


@pytest.mark.skipif(
    os.geteuid() == 0,
    reason="root reads every folder; the same counting is covered for root by "
    "test_hostile_input.py::test_unreadable_folder_is_counted_once (a monkeypatched scandir "
    "raising PermissionError)",
)
def test_unreadable_folder_is_counted(make_tree):
    root = make_tree({"locked/a.py": "x", "b.py": "x"})
    (root / "locked").chmod(0)
    try:
        result = scan(root)
    finally:
        (root / "locked").chmod(0o755)
    assert paths(result) == ["b.py"] and result.skipped["unreadable"] == 1


names = st.from_regex(r"[a-z]{1,6}(\.py|\.md|\.log)?", fullmatch=True)


@given(st.lists(names, min_size=1, max_size=4), names)
def test_a_matching_negation_always_reincludes(patterns, name):
    rules = rules_from_lines([*patterns, f"!{name}"], "")
    assert rules is not None
    assert rules.decide(name, is_dir=False) is False


@given(names, st.lists(st.from_regex(r"[a-z]{1,5}", fullmatch=True), max_size=3))
def test_rules_apply_only_below_their_folder(name, folders):
    rules = rules_from_lines([name], "pkg")
    assert rules is not None
    rel = "/".join([*folders, name])
    assert rules.decide(rel, is_dir=False) is None or rel.startswith("pkg/")
    assert rules.decide("pkg/" + rel, is_dir=False) is True


def test_check_file_agrees_with_the_full_scan(make_tree):
    from seek.scan.walk import check_file

    root = make_tree({
        ".gitignore": "build/\n*.log\n",
        "pkg/.gitignore": "local.py\n",
        "pkg/local.py": "x", "pkg/mod.py": "x", "build/out.py": "x", "a.py": "x",
        "empty.py": "", "big.py": "x" * 200, "pic.png": "x", "d.log": "x",
    })  # fmt: skip
    full = {f.rel for f in scan(root, max_file_bytes=100).files}
    names = ["pkg/local.py", "pkg/mod.py", "build/out.py", "a.py", "empty.py", "big.py",
             "pic.png", "d.log", "gone.py", "pkg", "../a.py"]  # fmt: skip
    verdicts = {n: check_file(root, n, max_file_bytes=100) for n in names}
    assert {n for n, v in verdicts.items() if not isinstance(v, str)} == full
    assert verdicts["pkg/local.py"] == "ignored" and verdicts["build/out.py"] == "ignored"
    assert verdicts["empty.py"] == "empty" and verdicts["big.py"] == "too_big"
    assert verdicts["pic.png"] == "not_allowlisted" and verdicts["gone.py"] == "missing"
    assert verdicts["pkg"] == "missing" and verdicts["../a.py"] == "missing"


# -- exact rules of the single-file check (watch) and the scan's edges ------------------------
from seek.scan.walk import (  # noqa: E402 - grouped with the tests that use them
    BAD_NAME,
    IGNORED,
    MISSING,
    NOT_ALLOWLISTED,
    ScannedFile,
    check_file,
    has_bad_name,
    printable,
    submodule_paths,
)


def check(root, rel, **kw):
    return check_file(root, rel, max_file_bytes=kw.pop("max_file_bytes", 524_288), **kw)


def test_check_file_judges_a_path_like_the_scan(make_tree, tmp_path):
    root = make_tree({
        "pkg/a.py": "print(1)\n", "idx/a.py": "x", ".git/a.py": "x",
        "pkg/.seekignore": "/secret.py\n", "pkg/secret.py": "x", "secret.py": "x",
    })  # fmt: skip
    (tmp_path / "outside.py").write_text("x")
    st_ = (root / "pkg/a.py").stat()
    assert check(root, "pkg/a.py") == ScannedFile("pkg/a.py", st_.st_size, st_.st_mtime_ns)
    assert check(root, "idx/a.py", exclude_dirs=(root / "idx",)) == IGNORED  # the index folder
    assert check(root, ".git/a.py") == IGNORED
    # A nested ignore file's anchored pattern applies inside its own folder only.
    assert check(root, "pkg/secret.py") == IGNORED
    assert isinstance(check(root, "secret.py"), ScannedFile)
    for rel in ("../outside.py", "./pkg/a.py", "pkg/../pkg/a.py", ""):
        assert check(root, rel) == MISSING, rel


def test_scan_reads_a_folders_seekignore_without_a_gitignore(make_tree):
    root = make_tree({"pkg/.seekignore": "/secret.py\n", "pkg/secret.py": "x", "secret.py": "x"})
    result = scan(root)
    assert paths(result) == ["secret.py"]
    assert result.skipped == {"ignored": 1, "not_allowlisted": 1}  # pkg/secret.py, .seekignore


def test_folder_only_patterns_match_folders_not_files(make_tree):
    root = make_tree({".gitignore": "build/\nMakefile/\n", "build/a.py": "x", "Makefile": "x"})
    result = scan(root)
    assert paths(result) == ["Makefile"] and result.examples["ignored"] == [".gitignore", "build/"]
    assert check(root, "build/a.py") == IGNORED and isinstance(check(root, "Makefile"), ScannedFile)
    globbed = make_tree({"build/a.py": "x", "a.py": "x"}, name="globbed")
    assert check(globbed, "build/a.py", ignored_globs=("build/",)) == IGNORED
    assert paths(scan(globbed, ignored_globs=("build/",))) == ["a.py"]


def test_rule_files_are_read_quietly_and_undecodable_bytes_tolerated(make_tree, caplog):
    root = make_tree({".gitignore": b"secret.py\n\xff\n", "secret.py": "x", "a.py": "x",
                      "pkg/b.py": "x"})  # fmt: skip
    with caplog.at_level("WARNING"):
        assert paths(scan(root)) == ["a.py", "pkg/b.py"]
        assert isinstance(check(root, "pkg/b.py"), ScannedFile)
    assert caplog.messages == []  # no rule file missing is worth a warning


def test_an_unreadable_ignore_file_is_a_warning_naming_it(make_tree, caplog):
    root = make_tree({"pkg/a.py": "x"})
    (root / "pkg/.gitignore").mkdir()  # a folder where a rules file is expected
    with caplog.at_level("WARNING"):
        assert paths(scan(root)) == ["pkg/a.py"]
    assert caplog.messages == [
        f"cannot read ignore file {root / 'pkg/.gitignore'}: not a regular file"
    ]


def test_malformed_ignore_lines_are_skipped_with_a_warning(caplog):
    with caplog.at_level("WARNING"):
        # A source of its own: each file and line is warned about once per process.
        rules = rules_from_lines(["!", "*.log", "foo\\"], "", source="malformed.ignore")
    assert rules is not None and rules.decide("a.log", is_dir=False) is True
    assert "malformed.ignore line 1: ignoring the malformed pattern '!'" in caplog.messages
    assert "malformed.ignore line 3: ignoring the malformed pattern 'foo\\\\'" in caplog.messages


def test_a_malformed_line_in_an_ignore_file_is_warned_about_naming_that_file(make_tree, caplog):
    # docs/indexing.md: a malformed pattern matches nothing, "with one warning naming
    # its file and line"; the other lines of the file still apply.
    root = make_tree({"pkg/.gitignore": "*.log\n[z-a]\n", "pkg/a.py": "x", "pkg/b.log": "x"})
    with caplog.at_level("WARNING"):
        assert paths(scan(root)) == ["pkg/a.py"]  # b.log ignored by the valid line
    gitignore = root / "pkg" / ".gitignore"
    assert caplog.messages == [f"{gitignore} line 2: ignoring the malformed pattern '[z-a]'"]


def test_a_malformed_line_is_warned_about_once_per_file_and_line(caplog):
    # docs/indexing.md: "one warning naming its file and line"; servers re-read the
    # rules on every update, so the same line read again stays quiet.
    with caplog.at_level("WARNING"):
        for _ in range(3):
            rules_from_lines(["[z-a]", "ok.txt"], "", source="once.ignore")
        rules_from_lines(["[z-a]"], "", source="other.ignore")
    assert caplog.messages == [
        "once.ignore line 1: ignoring the malformed pattern '[z-a]'",
        "other.ignore line 1: ignoring the malformed pattern '[z-a]'",
    ]


class SortedListing:
    """``os.scandir`` in name order (a fixed order makes "the entries after it" definite),
    with the entries named in ``swap`` replaced by ``swap[name](entry)``."""

    real_scandir = os.scandir
    swap: dict = {}

    def __init__(self, path):
        self.inner = SortedListing.real_scandir(path)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.inner.close()

    def __iter__(self):
        entries = sorted(self.inner, key=lambda e: e.name)
        return iter([self.swap[e.name](e) if e.name in self.swap else e for e in entries])


def test_an_entry_whose_type_cannot_be_read_is_counted_and_the_rest_scanned(make_tree, monkeypatch):
    # A folder's listing names an entry that vanishes (or cannot be examined) before its
    # type is read: it is counted unreadable, and the entries after it are still scanned.
    root = make_tree({"a.py": "x", "b.py": "x", "c.py": "x", "pkg/d.py": "x"})

    class Vanished:
        def __init__(self, entry):
            self.name, self.path = entry.name, entry.path

        def is_symlink(self):
            raise FileNotFoundError(2, "No such file or directory", self.path)

        is_dir = is_file = is_symlink

    monkeypatch.setattr(SortedListing, "swap", {"a.py": Vanished})
    monkeypatch.setattr(os, "scandir", SortedListing)
    result = scan(root)
    assert paths(result) == ["b.py", "c.py", "pkg/d.py"]
    assert result.skipped == {"unreadable": 1} and result.examples == {"unreadable": ["a.py"]}


def test_a_file_that_cannot_be_measured_is_unreadable_and_one_that_vanished_is_gone(
    make_tree, monkeypatch
):
    # Between the listing and the stat of a file: gone (deleted meanwhile) means not there,
    # an error means unreadable; either way the entries after it are still scanned.
    root = make_tree({"a.py": "x", "b.py": "x", "c.py": "xyz", "d.py": "x"})

    def failing(error):
        class Entry:
            def __init__(self, entry):
                self.entry = entry

            def __getattr__(self, name):
                return getattr(self.entry, name)

            def stat(self, **kw):
                raise error

        return Entry

    swap = {"a.py": failing(PermissionError(13, "Permission denied")),
            "b.py": failing(FileNotFoundError(2, "No such file or directory"))}  # fmt: skip
    monkeypatch.setattr(SortedListing, "swap", swap)
    monkeypatch.setattr(os, "scandir", SortedListing)
    result = scan(root)
    assert paths(result) == ["c.py", "d.py"]
    assert result.skipped == {"unreadable": 1} and result.examples == {"unreadable": ["a.py"]}


def test_scanned_files_carry_their_size_and_modification_time(make_tree):
    # The stamp an update compares (README, `seek index`: "only files whose size or
    # modification time changed are read").
    root = make_tree({"a.py": "x = 1\n", "pkg/b.py": "y = 22\n"})
    for file in scan(root).files:
        st = os.stat(root / file.rel)
        assert (file.size, file.mtime_ns) == (st.st_size, st.st_mtime_ns)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifos_and_sockets_are_counted_not_opened_and_the_rest_scanned(make_tree, monkeypatch):
    # docs/indexing.md: `not_a_file` (FIFOs, sockets, devices: never opened).
    root = make_tree({"b.py": "x", "z.py": "x", "pkg/d.py": "x"})
    os.mkfifo(root / "a_pipe.py")
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(root / "pkg" / "a.sock"))
        monkeypatch.setattr(os, "scandir", SortedListing)  # the pipe comes first
        result = scan(root)
    finally:
        server.close()
    assert paths(result) == ["b.py", "pkg/d.py", "z.py"]
    assert result.skipped == {"not_a_file": 2}
    assert sorted(result.examples["not_a_file"]) == ["a_pipe.py", "pkg/a.sock"]


def test_an_unreadable_folder_is_counted_and_named(make_tree, monkeypatch):
    # The permission itself cannot be tested as root; the scan's handling can.
    root = make_tree({"locked/a.py": "x", "b.py": "x"})
    real_scandir = os.scandir

    def scandir(path):
        if os.fspath(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    (root / "zeta").mkdir()
    (root / "zeta/c.py").write_text("x")  # a folder after the unreadable one is still scanned
    result = scan(root)
    assert paths(result) == ["b.py", "zeta/c.py"]
    assert result.skipped == {"unreadable": 1} and result.examples == {"unreadable": ["locked/"]}
    monkeypatch.setattr(os, "scandir", lambda path: scandir(os.path.join(path, "locked")))
    unreadable_root = scan(root)
    assert unreadable_root.files == [] and unreadable_root.examples == {"unreadable": ["./"]}


def test_examples_are_capped_at_five_per_reason(make_tree):
    root = make_tree({f"big{i}.py": "x" * 20 for i in range(7)})
    result = scan(root, max_file_bytes=10)
    assert result.skipped == {"too_big": 7} and len(result.examples["too_big"]) == 5


def test_names_that_are_not_utf8(make_tree):
    bad = os.fsdecode(b"bad\xff.py")
    assert has_bad_name(bad) and not has_bad_name("good.py")
    assert printable(bad) == "bad\\xff.py"
    root = make_tree({"a.py": "x", "b.py": "x"})
    assert check(root, bad) == BAD_NAME
    (root / os.fsdecode(b"a\xff.py")).write_text("x")
    result = scan(root)  # the bad name sorts first; the files after it are still scanned
    assert paths(result) == ["a.py", "b.py"]
    assert result.skipped == {"bad_name": 1} and result.examples == {"bad_name": ["a\\xff.py"]}
    assert check(root, "notes.unknownext") in (MISSING, NOT_ALLOWLISTED)


def test_submodule_paths_from_gitmodules(make_tree):
    root = make_tree({
        ".gitmodules": b'[submodule "x"]\n\tpath = vendor/libX/\n  path=third\xff \n',
    })  # fmt: skip
    assert submodule_paths(root) == ("vendor/libX", "third\ufffd")


def test_an_ignored_folder_counts_once_and_is_not_entered(make_tree):
    # docs/indexing.md: "An ignored folder counts once."
    root = make_tree(
        {
            ".gitignore": "build/\n",
            "build/a.py": "x",
            "build/deep/b.py": "x",
            "src/build.py": "x",  # a file: the folder-only pattern does not touch it
        }
    )
    result = scan(root)
    assert paths(result) == ["src/build.py"]
    # The folder once (not its two files); the ignore file itself is left out too.
    assert result.skipped == {"ignored": 2}
    assert sorted(result.examples["ignored"]) == [".gitignore", "build/"]


def test_a_malformed_ignored_globs_pattern_is_warned_about_as_the_setting(make_tree, caplog):
    # docs/indexing.md: the warning names where the pattern came from; for the
    # `ignored_globs` setting that is the setting's name.
    root = make_tree({"a.py": "x", "b.log.py": "x"})
    with caplog.at_level("WARNING"):
        assert paths(scan(root, ignored_globs=("[y-b]", "b.log.py"))) == ["a.py"]
    assert caplog.messages == ["ignored_globs line 1: ignoring the malformed pattern '[y-b]'"]


def test_ignore_patterns_keep_their_last_character(make_tree):
    # gitignore: trailing spaces are dropped unless escaped with a backslash; nothing else at
    # the end of a pattern is ever dropped (here an upper-case X and an escaped space).
    root = make_tree({"cacheX/a.py": "x", "cache/b.py": "x", "tmp /c.py": "x", "tmp/d.py": "x"})
    (root / ".gitignore").write_text("cacheX\ntmp\\ \n")
    assert paths(scan(root)) == ["cache/b.py", "tmp/d.py"]


# -- hostile patterns (issue 27 finding 2) -----------------------------------------------------
# pattern: (a long name it does not match, a name it matches). Each takes exponential time in a
# backtracking matcher (Python's ``re``, behind pathspec's own) against the first name; RE2
# takes linear time.
CATASTROPHIC = {
    "a*a*a*a*a*a*a*a*a*a*b": ("a" * 100, "a" * 30 + "b"),  # the reproduction
    "**/a*a*a*a*a*a*a*a*a*a*b": ("a" * 100 + ".py", "x/" + "a" * 30 + "b"),
    "*a*a*a*a*a*a*a*a*a*a*[!x]": ("a" * 100 + "x", "a" * 30 + "y"),
    "a/**/a/**/a/**/a/**/a/**/a/**/b": ("/".join(["a"] * 40), "a/a/a/a/a/a/b"),
}


def test_hostile_ignore_patterns_are_matched_in_linear_time(make_tree):
    # The glob setting and ignore files of every depth go through the same matcher. A child
    # process, killed after a while: a regex blow-up cannot be interrupted where it runs.
    files = {
        "ok.py": "x",
        "src/util.py": "x",
        **{f"p{i}/{miss}": "x" for i, (miss, _) in enumerate(CATASTROPHIC.values())},
    }
    root = make_tree(files)
    (root / ".gitignore").write_text("\n".join(CATASTROPHIC) + "\n")
    (root / "p1/.gitignore").write_text("\n".join(CATASTROPHIC) + "\n")
    code = (
        "import json, sys, pathlib\n"
        "from seek.scan import scan_workspace\n"
        "from seek.scan.ignore import rules_from_lines\n"
        "globs = json.loads(sys.argv[2])\n"
        "root = pathlib.Path(sys.argv[1])\n"
        "r = scan_workspace(root, max_file_bytes=9, ignored_globs=tuple(globs))\n"
        "misses = [rules_from_lines([g], '').decide(m, False) for g, (m, _) in globs.items()]\n"
        "print(json.dumps([sorted(f.rel for f in r.files), misses]))"
    )
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", code, str(root), json.dumps(CATASTROPHIC)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert time.monotonic() - start < 15, "matching hostile patterns took many seconds"
    assert done.returncode == 0, done.stderr
    files, misses = json.loads(done.stdout)
    assert files == ["ok.py", "src/util.py"]
    assert misses == [None] * len(CATASTROPHIC)


@pytest.mark.parametrize("pattern", sorted(CATASTROPHIC))
def test_hostile_patterns_still_match_what_they_name(pattern):
    hit = CATASTROPHIC[pattern][1]
    rules = rules_from_lines([pattern], "")
    assert rules is not None
    assert rules.decide(hit, is_dir=False) is True  # (the misses are timed in a child above)


def test_an_ignore_file_of_thousands_of_lines_still_matches_every_line():
    # Past RE2's memory budget for one set the lines are split over several; the last
    # matching line still decides across the split.
    lines = [f"dir{i}/*.x{i}" for i in range(5000)] + ["*.log", "!keep.log"]
    rules = rules_from_lines(lines, "")
    assert rules is not None
    assert len(rules.matcher._sets) > 1  # the case under test: more than one set
    assert rules.decide("dir0/a.x0", is_dir=False) is True
    assert rules.decide("dir4999/a.x4999", is_dir=False) is True
    assert rules.decide("dir4999/a.x4998", is_dir=False) is None
    assert rules.decide("dir7/z.log", is_dir=False) is True
    assert rules.decide("dir7/keep.log", is_dir=False) is False


def test_ignore_files_are_read_as_every_workspace_file_is(make_tree, tmp_path, caplog):
    """Issue 43 finding 4: an ignore file in a subfolder was read with ``read_text()``: a link
    followed anywhere (``/dev/zero``, another user's file, the client's pipe), a FIFO waited
    on, any size. Now: no link followed, regular files only, at most ``MAX_RULES_BYTES``; one
    that fails is left out with one warning, the rest of the scan goes on."""
    import threading

    from seek.scan.ignore import MAX_RULES_BYTES

    root = make_tree({"linked/a.py": "x", "linked/keep.py": "x", "pipe/b.py": "x",
                      "big/c.py": "x", "fits/d.py": "x", "fits/e.py": "x"})  # fmt: skip
    outside = tmp_path / "outside-rules"
    outside.write_text("a.py\n")
    (root / "linked" / ".gitignore").symlink_to(outside)  # would leave a.py out if followed
    os.mkfifo(root / "pipe" / ".seekignore")
    (root / "big" / ".gitignore").write_text("c.py\n" + "#" * MAX_RULES_BYTES)
    (root / "fits" / ".gitignore").write_text("d.py\n" + "#" * (MAX_RULES_BYTES - 6) + "\n")
    found: list[list[str]] = []
    worker = threading.Thread(target=lambda: found.append(paths(scan(root))), daemon=True)
    with caplog.at_level("WARNING"):
        worker.start()
        worker.join(30)
    if worker.is_alive():  # blocked on the FIFO: release it, then fail
        with open(root / "pipe" / ".seekignore", "wb"):
            pass
        pytest.fail("the scan blocked on a FIFO ignore file")
    assert found == [["big/c.py", "fits/e.py", "linked/a.py", "linked/keep.py", "pipe/b.py"]]
    warned = sorted(m.split(": ")[0] for m in caplog.messages)
    assert warned == [f"cannot read ignore file {root / rel}" for rel in
                      ("big/.gitignore", "linked/.gitignore", "pipe/.seekignore")]  # fmt: skip
