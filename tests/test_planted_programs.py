"""A program planted in a repository never runs (issue 43, finding 2; docs/security.md,
"Programs seek starts").

Windows looks for a bare program name in the current folder before ``PATH``; on every
system an empty or relative ``PATH`` entry means the current folder. These tests give Linux
the same shape: a fake ``git`` / ``seek`` in the working folder, and a ``PATH`` that starts
with ``.``, ``""`` and the working folder itself before the folder with the real program.
Each planted program leaves a mark when it runs.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from seek import install
from seek.settings.programs import _lookup, find_program

PLANTED = '#!/bin/sh\necho planted > "{mark}"\nexit 0\n'


def plant(folder: Path, name: str, mark: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / name
    program.write_text(PLANTED.format(mark=mark))
    program.chmod(program.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return program


def hostile_path(work: Path, *trusted: Path) -> str:
    """``.``, an empty entry, the working folder, a relative entry and a folder inside the
    working folder come first; the trusted folders last."""
    first = [".", "", str(work), "tools", str(work / "tools")]
    return os.pathsep.join([*first, *map(str, trusted)])


@pytest.mark.skipif(os.name == "nt", reason="the Windows-shaped case, built with POSIX scripts")
@pytest.mark.parametrize("name", ["git", "seek"])
def test_lookup_skips_the_current_folder_relative_entries_and_the_workspace(tmp_path, name):
    work, real_bin = tmp_path / "repo", tmp_path / "usr-bin"
    mark = tmp_path / "ran"
    for folder in (work, work / "tools"):
        plant(folder, name, mark)
    real = plant(real_bin, name, tmp_path / "real-ran")

    found = find_program(name, (work,), path=hostile_path(work, real_bin), cwd=work)

    assert found == str(real)
    # Without a workspace named, the current folder and relative entries are still skipped
    # (an absolute entry beneath the current folder is the user's own choice then).
    found_here = find_program(name, path=hostile_path(work, real_bin), cwd=work)
    assert found_here == str(work / "tools" / name)
    assert find_program(name, (work,), path=hostile_path(work), cwd=work) is None


@pytest.mark.skipif(os.name == "nt", reason="POSIX scripts stand in for the planted .exe")
def test_seek_status_in_a_hostile_folder_runs_the_real_git_not_the_planted_one(tmp_path):
    real_git = find_program("git")
    if real_git is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    work = repo / "sub"
    work.mkdir(parents=True)
    subprocess.run([real_git, "init", "-q", str(repo)], check=True)
    mark = tmp_path / "planted-ran"
    plant(work, "git", mark)
    env = {**os.environ, "PATH": hostile_path(work, Path(real_git).parent),
           "SEEK_HOME": str(tmp_path / "home"),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}  # fmt: skip

    done = subprocess.run([sys.executable, "-m", "seek", "status", "--json"], cwd=work,
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert not mark.exists(), "the git planted in the working folder ran"
    assert '"workspace": "' + str(repo.resolve()) + '"' in done.stdout.replace("\\\\", "\\")


@pytest.mark.skipif(os.name == "nt", reason="POSIX scripts stand in for the planted .exe")
def test_install_names_the_real_seek_not_one_planted_in_the_current_folder(tmp_path, monkeypatch):
    work, real_bin, python_bin = tmp_path / "repo", tmp_path / "usr-bin", tmp_path / "py"
    mark = tmp_path / "ran"
    plant(work, "seek", mark)
    real = plant(real_bin, "seek", mark)
    python_bin.mkdir()  # an interpreter with no `seek` beside it (seek run as `python -m`)
    monkeypatch.setattr(sys, "executable", str(python_bin / "python"))
    monkeypatch.setenv("PATH", hostile_path(work, real_bin))
    monkeypatch.chdir(work)

    assert install.seek_command() == str(real)


def test_the_windows_rules_extensions_and_quoted_entries(tmp_path, monkeypatch):
    """The lookup as Windows runs it (``windows=True``): ``git`` is ``git.EXE`` and the other
    ``PATHEXT`` names, entries may be quoted, and the current folder still never counts."""
    monkeypatch.setenv("PATHEXT", ".COM;.EXE;.BAT;.CMD")
    work, real_bin = tmp_path / "repo", tmp_path / "Program Files" / "Git" / "cmd"
    mark = tmp_path / "ran"
    plant(work, "git.EXE", mark)
    real = plant(real_bin, "git.EXE", mark)
    search = os.pathsep.join([".", "", str(work), f'"{real_bin}"'])

    assert _lookup("git", search, str(work), (str(work),), True) == str(real)
    assert _lookup("git.EXE", search, str(work), (str(work),), True) == str(real)
    assert _lookup("git", search, str(work), (str(work),), False) is None  # no "git" there
