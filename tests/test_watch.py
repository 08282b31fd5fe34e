"""`seek watch` with a real file watcher (watchdog) and the deterministic embedder."""

import os
import threading
import time

import pytest
from conftest import HashEmbedder

from seek.errors import IndexLockedError
from seek.index.indexer import Indexer, index_workspace
from seek.index.watch import Watcher
from seek.store import ChunkTable, WriterLock, index_dir_for, load_manifest

DEBOUNCE_S = 0.2


def wait_for(condition, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def watching(make_tree, settings_for):
    root = make_tree({
        "src/a.py": "def alpha():\n    return 1\n",
        "src/b.py": "def beta():\n    return 2\n",
        "pkg/c.py": "def gamma():\n    return 3\n",
    })  # fmt: skip
    settings = settings_for()
    embedder = HashEmbedder()
    lines = []
    watcher = Watcher(root, settings, embedder=embedder, echo=lines.append, debounce_s=DEBOUNCE_S)
    stop, ready = threading.Event(), threading.Event()
    thread = threading.Thread(target=watcher.run, args=(stop, ready), daemon=True)
    thread.start()
    assert ready.wait(30)
    index_dir = index_dir_for(root, settings)

    def stamps():
        return load_manifest(index_dir).files

    def stored():
        return ChunkTable(index_dir).stored_paths()

    yield root, embedder, lines, stamps, stored, watcher
    stop.set()
    thread.join(10)
    assert not thread.is_alive()  # stops cleanly


def test_save_delete_rename_and_folder_delete(watching):
    root, embedder, lines, stamps, stored, _ = watching
    assert set(stamps()) == {"src/a.py", "src/b.py", "pkg/c.py"}

    (root / "src/a.py").write_text("def alpha():\n    return 10\n")
    assert wait_for(lambda: any("re-indexed src/a.py" in line for line in lines))

    (root / "src/b.py").unlink()
    assert wait_for(lambda: "src/b.py" not in stamps() and "src/b.py" not in stored())

    (root / "src/a.py").rename(root / "src/renamed.py")
    assert wait_for(lambda: "src/renamed.py" in stamps() and "src/a.py" not in stamps())
    assert "src/a.py" not in stored()

    import shutil

    shutil.rmtree(root / "pkg")
    assert wait_for(lambda: "pkg/c.py" not in stamps() and "pkg/c.py" not in stored())


def test_a_save_without_a_change_embeds_nothing(watching):
    root, embedder, lines, stamps, _, watcher = watching
    before = len(embedder.texts)
    updates = watcher.updates
    path = root / "src/b.py"
    path.write_text(path.read_text())  # same bytes, new mtime
    assert wait_for(lambda: watcher.updates > updates)
    assert len(embedder.texts) == before


def test_files_that_turn_binary_empty_or_ignored_lose_their_rows(watching):
    root, _, _, stamps, stored, _ = watching
    (root / "src/a.py").write_bytes(b"\x00binary")
    (root / "src/b.py").write_text("")
    assert wait_for(lambda: not {"src/a.py", "src/b.py"} & stored())
    # Rows go before stamps (a crash in between leaves a file to redo, not a stale row), and
    # a.py may be in a later batch than b.py: wait for its stamp too, not only its rows.
    assert wait_for(lambda: "src/b.py" not in stamps())
    assert wait_for(lambda: getattr(stamps().get("src/a.py"), "skip", None) == "binary")
    (root / ".gitignore").write_text("pkg/\n")
    assert wait_for(lambda: "pkg/c.py" not in stamps() and "pkg/c.py" not in stored())


def test_new_folders_and_burst_saves_are_picked_up(watching):
    root, _, _, stamps, _, _ = watching
    (root / "lib").mkdir()
    for i in range(5):
        (root / f"lib/m{i}.py").write_text(f"def m{i}():\n    pass\n")
    assert wait_for(lambda: all(f"lib/m{i}.py" in stamps() for i in range(5)))


def test_a_rebuild_with_another_model_stops_updates_with_a_message(watching, settings_for):
    root, _, lines, _, _, watcher = watching
    other = HashEmbedder()
    other.model_id = "test/other"
    index_workspace(root, watcher.settings, embedder=other)  # someone rebuilt the index
    (root / "src/a.py").write_text("def alpha():\n    return 99\n")
    assert wait_for(lambda: watcher.error is not None)
    assert lines[-1] == (
        "seek: error: updates stopped: model changed (test/other -> test/hash); run `seek index`"
    )


def test_a_new_event_restarts_the_debounce_timer(make_tree, settings_for):
    # docs/commands.md, "seek watch": a file is updated 1.5 s after its LAST change (reference
    # §5.6: the timer is restarted by each save). Timers never fire early, so the path may only come
    # out a whole debounce after the second event, however loaded the machine is.
    root = make_tree({"a.py": "x = 1\n"})
    watcher = Watcher(root, settings_for(), embedder=HashEmbedder(), debounce_s=1.0)
    watcher.schedule("a.py")
    time.sleep(0.3)
    restarted = time.monotonic()
    watcher.schedule("a.py")
    assert watcher.queue.get(timeout=10) == "a.py"
    assert time.monotonic() - restarted >= 1.0
    time.sleep(0.2)
    assert watcher.queue.empty()  # one update for the two events


def test_single_file_updates_take_the_writer_lock(make_tree, settings_for):
    # docs/indexing.md: only one process writes an index at a time.
    root = make_tree({"a.py": "def a():\n    pass\n"})
    settings = settings_for()
    index_workspace(root, settings, embedder=HashEmbedder())
    (root / "a.py").write_text("def a():\n    return 2\n")
    embedder = HashEmbedder()
    with WriterLock(index_dir_for(root, settings), "seek index (another one)"):
        with pytest.raises(IndexLockedError, match=rf"pid {os.getpid()} \(seek index \(another"):
            Indexer(root, settings, embedder=embedder).run_paths(["a.py"])
    assert embedder.texts == []  # nothing was embedded or written meanwhile
    assert Indexer(root, settings, embedder=embedder).run_paths(["a.py"]).embedded == 1


def test_watch_waits_for_another_writer_then_applies_the_change(watching):
    # seek.md §4 / watch.py: a locked index is waited for; the change is kept, not dropped.
    root, _, lines, stamps, _, watcher = watching
    with WriterLock(watcher.index_dir, "seek index (someone else)"):
        (root / "src/a.py").write_text("def alpha():\n    return 42\n")
        assert wait_for(lambda: any(line.startswith("waiting: ") for line in lines))
        waiting = next(line for line in lines if line.startswith("waiting: "))
        assert f"pid {os.getpid()} (seek index (someone else))" in waiting
        assert not any("re-indexed src/a.py" in line for line in lines)
    assert wait_for(lambda: any("re-indexed src/a.py" in line for line in lines))
    size = (root / "src/a.py").stat().st_size
    assert stamps()["src/a.py"].size == size
