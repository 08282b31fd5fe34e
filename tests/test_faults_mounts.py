"""The fault campaign on real file systems (issue 31): the index folder on a small tmpfs that
fills up, and on a read-only bind mount, as a user meets them (a full laptop disk, a
read-only container volume). Mounting needs root (CI runs as root); elsewhere these tests
skip and say why. The injected faults at each write step are in tests/test_faults.py.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from test_faults import QUERIES, answers, edit, tree, write_tree

from seek.errors import IndexUnwritableError
from seek.index.indexer import index_workspace
from seek.settings import load_settings
from seek.store import index_dir_for


def mount(*args: str) -> None:
    if os.name != "posix" or os.geteuid() != 0:
        pytest.skip("mounting a file system needs root (CI runs as root)")
    done = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"mount is not permitted here: {done.stderr.strip()}")


def unmount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


@contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    path.mkdir(parents=True, exist_ok=True)
    mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path))
    try:
        yield path
    finally:
        unmount(path)


@contextmanager
def read_only(path: Path) -> Iterator[Path]:
    """``path`` seen read-only (a bind mount of itself, remounted read-only)."""
    mount("--bind", str(path), str(path))
    try:
        mount("-o", "remount,ro,bind", str(path))
        yield path
    finally:
        unmount(path)


def fill(folder: Path) -> Path:
    """Take every free byte of ``folder``'s file system."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as fh:
        for block in (65536, 4096, 512):
            try:
                while True:
                    fh.write(b"\0" * block)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
    return filler


def settings_in(root: Path, home: Path, **more: object):
    return load_settings(root, overrides={"home": str(home), "provider": "test-hash", **more},
                         env={}, user_config=home.parent / "no-config.toml")  # fmt: skip


def test_a_full_tmpfs_keeps_answering_refuses_in_one_line_and_resumes(
    tmp_path, hash_provider, monkeypatch
):
    root = write_tree(tmp_path / "ws", tree())
    with tmpfs(tmp_path / "small", "2m") as home:
        settings = settings_in(root, home)
        index_dir = index_dir_for(root, settings)
        index_workspace(root, settings)
        before = answers(root, settings)[0]
        filler = fill(home)
        edit(root)
        found, notes = answers(root, settings, update=True)
        assert found == before
        assert len(notes) == 1 and "no space left on device" in notes[0]
        with pytest.raises(IndexUnwritableError) as caught:
            index_workspace(root, settings)
        assert caught.value.errno == errno.ENOSPC and str(index_dir) in str(caught.value)
        # With the check before the run off, LanceDB's own error on the full disk (the
        # traceback of issue 31) maps to the same one line.
        monkeypatch.setattr("seek.index.indexer.check_room", lambda folder, needed: None)
        with pytest.raises(IndexUnwritableError) as caught:
            index_workspace(root, settings)
        assert caught.value.errno == errno.ENOSPC and "\n" not in str(caught.value)
        assert answers(root, settings, update=True)[0] == before
        filler.unlink()
        index_workspace(root, settings)
        after = answers(root, settings)
    clean = settings_in(root, tmp_path / "clean-home")
    index_workspace(root, clean)
    assert after == (answers(root, clean)[0], [])


def test_a_first_run_on_a_tmpfs_too_small_fails_in_lancedb_in_one_line(
    tmp_path, hash_provider, monkeypatch
):
    """LanceDB's write itself hits the full disk (the check before the run is off)."""
    files = {  # text that does not compress: the table must outgrow the disk
        f"pkg/m{i}.py": f"def f{i}(x):\n"
        + "".join(f"    x += {hashlib.sha1(f'{i} {n}'.encode()).hexdigest()}\n" for n in range(300))
        for i in range(20)
    }
    root = write_tree(tmp_path / "ws", files)
    monkeypatch.setattr("seek.index.indexer.check_room", lambda folder, needed: None)
    with tmpfs(tmp_path / "tiny", "64k") as home:
        settings = settings_in(root, home)
        with pytest.raises(IndexUnwritableError) as caught:
            index_workspace(root, settings)
        assert caught.value.errno == errno.ENOSPC
        assert "\n" not in str(caught.value) and str(home) in str(caught.value)


def seek_cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real ``seek`` in its own process, with the built-in model."""
    env = {**os.environ, "SEEK_HOME": str(home), "XDG_CONFIG_HOME": str(home.parent / "cfg")}
    return subprocess.run([sys.executable, "-m", "seek", *args], capture_output=True,
                          text=True, env=env, timeout=300, check=False)  # fmt: skip


@pytest.mark.slow
def test_the_cli_on_a_read_only_index_folder(tmp_path):
    """The rows of issue 31's table on a read-only SEEK_HOME: search and status answer
    (once stale), index stops in one line; writable again, it resumes."""
    root = write_tree(tmp_path / "ws", tree())
    home = tmp_path / "home"
    home.mkdir()
    assert seek_cli(home, "index", str(root)).returncode == 0
    hits = seek_cli(home, "search", "-C", str(root), "--format", "jsonl", QUERIES[0]).stdout
    edit(root)
    with read_only(home):
        found = seek_cli(home, "search", "-C", str(root), "--format", "jsonl", QUERIES[0])
        assert found.returncode == 0 and found.stdout == hits, found.stderr
        assert found.stderr.count("\n") == 1, found.stderr  # the one note, nothing else
        assert found.stderr.startswith(
            "note: The index is stale: it cannot be updated (read-only file system in "
        )
        status = seek_cli(home, "status", "--json", str(root))
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["stale"].startswith("read-only file system")
        refused = seek_cli(home, "index", str(root))
        assert refused.returncode == 1 and refused.stderr.count("\n") == 1, refused.stderr
        assert refused.stderr.startswith("seek: error: read-only file system writing the index in ")
        assert "Traceback" not in found.stderr + status.stderr + refused.stderr
    resumed = seek_cli(home, "index", str(root))
    assert resumed.returncode == 0 and resumed.stdout.startswith("Indexed: 2 files embedded"), (
        resumed.stdout
    )
    status = json.loads(seek_cli(home, "status", "--json", str(root)).stdout)
    assert status["stale"] is None and not status["interrupted"] and status["files"] == 6
