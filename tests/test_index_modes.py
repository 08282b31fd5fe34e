"""What seek keeps is the user's alone: ``SEEK_HOME`` and every index folder 0700, the files
in them 0600, under the usual umask 022 (issue 43, finding 8; docs/security.md, "Files seek
writes").

An index holds copies of the code and chat sessions; an older seek left them 0644 in 0755
folders, readable by every user of the machine. The real `seek index` and `seek search` run
as processes whose umask is set to 022, and every path under the home is checked with
``os.stat``.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SMALL_PROJECT, HashEmbedder

from seek.chat import Turn, save_session
from seek.index.indexer import index_workspace
from seek.retrieve.search_cache import PREFIX
from seek.retrieve.searcher import Searcher
from seek.store.private import private_home

pytestmark = pytest.mark.slow


def loose(top: Path) -> list[str]:
    """Every folder or file at or under ``top`` that a group or other user could use, as
    ``mode path`` lines (links are not seek's to tighten)."""
    found = []
    for parent, dirs, files in os.walk(top):
        for path in [Path(parent), *(Path(parent, n) for n in [*dirs, *files])]:
            info = os.lstat(path)
            if not stat.S_ISLNK(info.st_mode) and info.st_mode & 0o077:
                found.append(f"{stat.S_IMODE(info.st_mode):o} {path.relative_to(top)}")
    return sorted(set(found))


def seek(home: Path | None, tmp_path: Path, *args: str, env: dict | None = None) -> None:
    env = dict(os.environ if env is None else env, XDG_CONFIG_HOME=str(tmp_path / "config"))
    if home is not None:
        env["SEEK_HOME"] = str(home)
    done = subprocess.run(
        [sys.executable, "-m", "seek", *args], env=env, capture_output=True, text=True,
        timeout=300, preexec_fn=lambda: os.umask(0o022),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def files_under(top: Path) -> list[Path]:
    return [Path(p, n) for p, _, names in os.walk(top) for n in names]


def test_index_and_search_leave_home_and_index_private_under_umask_022(tmp_path, make_tree):
    root = make_tree(SMALL_PROJECT)
    home = tmp_path / "cache" / "seek"  # seek makes it, and its parent
    seek(home, tmp_path, "index", "-q", str(root))
    seek(home, tmp_path, "search", "-C", str(root), "how are retries configured")

    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert loose(home) == []
    written = files_under(home)
    # The run wrote what is to protect: LanceDB's own files and the search cache.
    assert any("/lancedb/" in str(p) and "/data/" in str(p) for p in written), written
    assert any(p.name == "contents.txt" for p in written), written


def test_a_search_that_writes_the_cache_writes_it_private(tmp_path, make_tree, settings_for):
    """A searcher that finds no search cache writes one itself, outside any index run."""
    root = make_tree(SMALL_PROJECT)
    settings = settings_for(root)
    seek_home = Path(settings.home)
    index_workspace(root, settings, embedder=HashEmbedder())
    for cache in seek_home.glob(f"*/{PREFIX}*"):
        shutil.rmtree(cache)
    before = os.umask(0o022)
    try:
        Searcher.open(root, settings, HashEmbedder()).search("how are retries configured")
    finally:
        os.umask(before)
    assert any(p.name == "contents.txt" for p in files_under(seek_home))
    assert [line for index in seek_home.iterdir() for line in loose(index)] == []


def test_an_older_index_and_the_default_home_are_tightened_at_the_next_write(tmp_path, make_tree):
    """No ``SEEK_HOME``: seek's default folder (under ``XDG_CACHE_HOME`` here) is its own,
    so an existing one is tightened too."""
    root = make_tree(SMALL_PROJECT)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg-cache")}
    env.pop("SEEK_HOME", None)
    home = tmp_path / "xdg-cache" / "seek"
    seek(None, tmp_path, "index", "-q", str(root), env=env)
    seek(None, tmp_path, "search", "-C", str(root), "how are retries configured", env=env)
    assert home.is_dir() and files_under(home)
    for parent, _, files in os.walk(home):  # as an older seek left them
        os.chmod(parent, 0o755)
        for name in files:
            os.chmod(Path(parent, name), 0o644)
    assert loose(home)

    seek(None, tmp_path, "index", "-q", str(root), env=env)  # nothing changed: still a write

    assert loose(home) == []


def test_a_chat_session_is_written_0600_in_a_0700_folder(tmp_path):
    session = tmp_path / "index" / "sessions" / "work.json"
    before = os.umask(0o022)
    try:
        save_session(session, [Turn("where is the key read?", "in config.py", ("config.py",))])
    finally:
        os.umask(before)
    assert loose(tmp_path / "index") == []


def test_a_seek_home_the_user_named_is_left_as_it_is_and_its_indexes_made_private(
    tmp_path, make_tree
):
    """``SEEK_HOME=/tmp`` (or a home folder) must not become 0700: only seek's own folders
    in it are; one seek makes is 0700."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    root = make_tree(SMALL_PROJECT)
    seek(shared, tmp_path, "index", "-q", str(root))
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777
    indexes = [p for p in shared.iterdir()]
    assert indexes and all(loose(p) == [] for p in indexes)
    made = tmp_path / "made-by-seek"
    private_home(made)
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
