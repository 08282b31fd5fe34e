"""Scanning: ignore rules (nested, negations, exclude, .seekignore, globs), submodules,
symlinks, size limits and skip reasons."""

import os

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
