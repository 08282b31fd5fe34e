"""A run's progress published beside the writer lock (seek.index.progress_file, issue 16):
what another process (``seek ui``) reads while a CLI run goes on."""

from __future__ import annotations

import json
import os
import time

import pytest
from conftest import HashEmbedder

from seek.errors import IndexLockedError
from seek.index import progress_file
from seek.index.indexer import index_workspace
from seek.index.progress_file import PROGRESS_NAME, ProgressFile, read_progress
from seek.index.report import Progress
from seek.store import WriterLock, index_dir_for


class SlowEmbedder(HashEmbedder):
    def embed(self, texts):
        time.sleep(0.05)
        return super().embed(texts)


def test_a_run_publishes_its_progress_beside_the_lock_and_removes_it(make_tree, settings_for):
    root = make_tree({f"pkg/m{i:02}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(16)})
    settings = settings_for(root, flush_every_files=2)
    index_dir = index_dir_for(root, settings)
    seen = []

    def progress(event: Progress) -> None:
        seen.append(read_progress(index_dir))

    report = index_workspace(root, settings, embedder=SlowEmbedder(), progress=progress)
    assert report.embedded == 16
    published = [p for p in seen if p is not None]
    assert published, "nothing was published during a run of about half a second"
    assert {p["pid"] for p in published} == {os.getpid()}
    last = published[-1]
    assert last["phase"] == "embedding" and last["total"] == 16
    assert 0 < last["done"] <= 16
    assert any(p["current"] and p["current"][-1].startswith("pkg/m") for p in published)
    assert last["chunks"] > 0 and last["elapsed"] > 0
    dones = [p["done"] for p in published]
    assert dones == sorted(dones)
    assert not (index_dir / PROGRESS_NAME).exists()
    assert not list(index_dir.glob(f"{PROGRESS_NAME}.*"))  # no temporary file left


def test_a_quick_run_writes_nothing(make_tree, settings_for, monkeypatch):
    root = make_tree({"a.py": "def a():\n    return 1\n"})
    settings = settings_for(root)
    writes = []
    monkeypatch.setattr(ProgressFile, "_write", lambda self, event: writes.append(event))
    index_workspace(root, settings, embedder=HashEmbedder())
    index_workspace(root, settings, embedder=HashEmbedder())  # the update before a search
    assert writes == []


def test_writes_are_throttled_but_each_phase_change_is_written(tmp_path, monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(progress_file.time, "monotonic", lambda: clock[0])
    published = ProgressFile(tmp_path)

    def at(t: float, event: Progress) -> dict | None:
        clock[0] = 100.0 + t
        published(event)
        path = tmp_path / PROGRESS_NAME
        return json.loads(path.read_text()) if path.exists() else None

    assert at(0.0, Progress("scanning")) is None  # younger than DELAY_S
    assert at(0.1, Progress("embedding", 1, 10, ("a.py",), 2)) is None
    assert at(0.35, Progress("embedding", 2, 10, ("b.py",), 4))["done"] == 2
    assert at(0.4, Progress("embedding", 3, 10, ("c.py",), 6))["done"] == 2  # too soon
    assert at(0.65, Progress("embedding", 4, 10, ("d.py",), 8))["done"] == 4
    finishing = at(0.7, Progress("finishing"))  # a new phase: written at once
    assert finishing["phase"] == "finishing"
    assert (finishing["done"], finishing["total"], finishing["chunks"]) == (4, 10, 8)


def test_readers_trust_the_file_only_while_its_pid_holds_the_lock(tmp_path):
    path = tmp_path / PROGRESS_NAME
    mine = {"pid": os.getpid(), "phase": "embedding", "done": 3, "total": 9,
            "current": ["x.py"], "chunks": 5, "started": time.time() - 2}  # fmt: skip
    path.write_text(json.dumps(mine))
    assert read_progress(tmp_path) is None  # left by a run that died: no lock held
    with WriterLock(tmp_path, "seek index"):
        shown = read_progress(tmp_path)
        assert (shown["done"], shown["total"], shown["chunks"]) == (3, 9, 5)
        assert 1.5 <= shown["elapsed"] < 60
        path.write_text(json.dumps({**mine, "pid": os.getpid() + 1}))
        assert read_progress(tmp_path) is None  # an earlier writer's file
        path.write_text("{half a fi")
        assert read_progress(tmp_path) is None


def test_a_run_refused_by_the_lock_leaves_the_holders_file(make_tree, settings_for):
    root = make_tree({"a.py": "def a():\n    return 1\n"})
    settings = settings_for(root)
    index_dir = index_dir_for(root, settings)
    with WriterLock(index_dir, "seek index"):
        (index_dir / PROGRESS_NAME).write_text('{"pid": 1}')
        with pytest.raises(IndexLockedError):
            index_workspace(root, settings, embedder=HashEmbedder())
        assert (index_dir / PROGRESS_NAME).exists()
