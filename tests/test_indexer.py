"""Incremental indexing through the library, with a deterministic embedder and real LanceDB."""

import os
import shutil
import threading

import pytest
from conftest import HashEmbedder

from seek.errors import IndexLockedError
from seek.index.indexer import REBUILD, index_workspace
from seek.store import (
    ChunkTable,
    WriterLock,
    health,
    index_dir_for,
    load_manifest,
    save_manifest,
)

FILES = {
    "src/app.py": "def main():\n    return run_server()\n",
    "src/util.py": "def helper(x):\n    return x * 2\n",
    "README.md": "# Demo\n\nA small project.\n",
    "web/index.ts": "export function render(): void {}\n",
}


@pytest.fixture
def workspace(make_tree):
    return make_tree(FILES)


def run(root, settings, embedder=None, **kw):
    embedder = embedder or HashEmbedder()
    report = index_workspace(root, settings, embedder=embedder, **kw)
    return report, embedder


def table_paths(root, settings):
    return ChunkTable(index_dir_for(root, settings)).stored_paths()


def test_first_run_indexes_everything_then_nothing(workspace, settings_for):
    settings = settings_for()
    report, _ = run(workspace, settings)
    assert (report.embedded, report.files, report.removed) == (4, 4, 0)
    assert table_paths(workspace, settings) == set(FILES)
    again, embedder = run(workspace, settings)
    assert not again.changed and embedder.calls == []
    assert again.summary().startswith("Index is up to date: 4 files, nothing changed")


def test_touching_every_file_embeds_nothing(workspace, settings_for):
    settings = settings_for()
    run(workspace, settings)
    for rel in FILES:
        os.utime(workspace / rel, ns=(1, 1_000_000_000_000))
    report, embedder = run(workspace, settings)
    assert report.embedded == 0 and report.unchanged == 4 and embedder.calls == []
    stamps = load_manifest(index_dir_for(workspace, settings)).files
    assert stamps["src/app.py"].mtime_ns == 1_000_000_000_000  # refreshed, so next run is cheap


def test_editing_one_file_reembeds_only_it(workspace, settings_for, lance_keywords):
    settings = settings_for()
    run(workspace, settings)
    (workspace / "src/util.py").write_text("def helper(x):\n    return x * 3\n")
    report, embedder = run(workspace, settings)
    assert report.embedded == 1 and report.unchanged == 3
    assert embedder.files_embedded() == {"src/util.py"}
    hits = ChunkTable(index_dir_for(workspace, settings)).keyword_search("helper", 5)
    assert [h.content for h in hits] == ["def helper(x):\n    return x * 3"]


def test_deleting_a_file_removes_its_rows(workspace, settings_for):
    settings = settings_for()
    run(workspace, settings)
    (workspace / "web/index.ts").unlink()
    report, _ = run(workspace, settings)
    assert report.removed == 1 and report.files == 3
    assert "web/index.ts" not in table_paths(workspace, settings)


def test_binary_and_chunkless_files_are_stamped_and_lose_rows(workspace, settings_for):
    settings = settings_for()
    run(workspace, settings)
    (workspace / "src/util.py").write_bytes(b"\x00\x01binary now")
    (workspace / "blank.md").write_text("   \n\n")
    report, _ = run(workspace, settings)
    manifest = load_manifest(index_dir_for(workspace, settings))
    assert manifest.files["src/util.py"].skip == "binary"
    assert manifest.files["blank.md"].skip == "no_chunks"
    assert "src/util.py" not in table_paths(workspace, settings)
    assert report.skipped["binary"] == 1 and report.skipped["no_chunks"] == 1
    third, embedder = run(workspace, settings)
    assert not third.changed and embedder.calls == []  # stamped: not read again


def test_chunk_setting_change_forces_a_rebuild_with_reason(workspace, settings_for):
    run(workspace, settings_for())
    report, embedder = run(workspace, settings_for(chunk_max_chars=500))
    assert report.rebuild_reason == "chunk settings changed (max 1000 -> 500)"
    assert report.embedded == 4 and embedder.calls


def test_model_change_forces_a_rebuild(workspace, settings_for):
    settings = settings_for()
    run(workspace, settings)
    other = HashEmbedder(dims=8)
    other.model_id = "test/other"
    report, _ = run(workspace, settings, embedder=other)
    assert report.rebuild_reason == "model changed (test/hash -> test/other)"
    assert load_manifest(index_dir_for(workspace, settings)).dimensions == 8


def test_dimension_change_under_the_same_name_forces_a_rebuild(workspace, settings_for):
    settings = settings_for()
    run(workspace, settings)
    (workspace / "src/app.py").write_text("def main():\n    pass\n")
    report, _ = run(workspace, settings, embedder=HashEmbedder(dims=8))
    assert report.rebuild_reason == "vector dimensions changed (16 -> 8)"
    assert report.embedded == 4


def test_explicit_rebuild(workspace, settings_for):
    settings = settings_for()
    run(workspace, settings)
    report, _ = run(workspace, settings, mode=REBUILD)
    assert report.rebuild_reason == "rebuild requested" and report.embedded == 4


def test_interrupted_run_leftovers_are_removed(workspace, settings_for):
    settings = settings_for()
    run(workspace, settings)
    index_dir = index_dir_for(workspace, settings)
    manifest = load_manifest(index_dir)
    # Simulate a run killed after writing rows of a new file but before saving its stamp,
    # and the file deleted since.
    (workspace / "ghost.py").write_text("def ghost():\n    pass\n")
    run(workspace, settings)
    manifest.run_open = True
    save_manifest(index_dir, manifest)  # the stamp of ghost.py is "lost"
    (workspace / "ghost.py").unlink()
    report, _ = run(workspace, settings)
    assert "ghost.py" not in table_paths(workspace, settings)
    assert not load_manifest(index_dir).run_open and report.files == 4


def test_cancel_keeps_what_was_embedded(make_tree, settings_for):
    root = make_tree({f"m{i:03d}.py": f"def f{i}():\n    return {i}\n" for i in range(60)})
    settings = settings_for(flush_every_files=10)
    cancel = threading.Event()
    seen = []

    def progress(event):
        if event.phase == "embedding" and event.done >= 25:
            cancel.set()
        seen.append(event.phase)

    report, _ = run(root, settings, progress=progress, cancel=cancel)
    assert report.cancelled and 20 <= report.embedded < 60
    assert report.summary().startswith(f"Indexing cancelled. {report.embedded} files were")
    assert load_manifest(index_dir_for(root, settings)).updated_at is None
    resumed, embedder = run(root, settings)
    assert resumed.embedded == 60 - report.embedded
    assert len(embedder.files_embedded()) == 60 - report.embedded


def test_second_writer_is_refused_with_the_holder(workspace, settings_for):
    settings = settings_for()
    with WriterLock(index_dir_for(workspace, settings), "seek watch"):
        with pytest.raises(IndexLockedError, match=r"pid \d+ \(seek watch\)"):
            run(workspace, settings)
    report, _ = run(workspace, settings)  # released: works again
    assert report.embedded == 4


def test_documents_carry_the_path_in_front(workspace, settings_for):
    _, embedder = run(workspace, settings_for())
    assert any(t.startswith("src/app.py\ndef main():") for t in embedder.texts)


def test_nomic_models_get_task_prefixes(workspace, settings_for):
    embedder = HashEmbedder()
    embedder.model_id = "ollama/nomic-embed-text"
    run(workspace, settings_for(), embedder=embedder)
    assert all(t.startswith("search_document: ") for t in embedder.texts)


def table_version(root, settings):
    table = ChunkTable(index_dir_for(root, settings))
    return table._open().version()


def test_cold_index_embeds_in_steps_and_writes_once(make_tree, settings_for):
    """Issue 14: a cold index overlaps chunking with embedding in steps of 25 files, but
    writes its rows in one commit (version 1: no keyword index below
    ``KEYWORD_INDEX_MIN_CHUNKS``), with no compaction."""
    root = make_tree({f"m{i:03d}.py": f"def f{i}():\n    return {i}\n" for i in range(60)})
    settings = settings_for()
    report, embedder = run(root, settings)
    assert report.embedded == 60 and len(embedder.calls) == 3
    assert table_version(root, settings) == 1
    assert health.check(ChunkTable(index_dir_for(root, settings)), 60) == ""


def test_flush_every_files_bounds_what_waits_unwritten(make_tree, settings_for, lance_keywords):
    """Rows are written (and stamps saved) every ``flush_every_files`` files, and an update
    of a table in place is compacted, keyword index included."""
    root = make_tree({f"m{i:03d}.py": f"def f{i}():\n    return {i}\n" for i in range(60)})
    settings = settings_for(flush_every_files=20)
    run(root, settings)
    assert table_version(root, settings) == 4  # 3 writes, then the keyword index
    for i in range(0, 60, 2):
        (root / f"m{i:03d}.py").write_text(f"def renamed_{i}():\n    return {i}\n")
    report, _ = run(root, settings)
    assert report.embedded == 30
    table = ChunkTable(index_dir_for(root, settings))
    assert health.check(table, 60) == ""
    assert {h.path for h in table.keyword_search("renamed", 100)} == {
        f"m{i:03d}.py" for i in range(0, 60, 2)
    }


def test_rows_are_written_once_they_have_waited_long_enough(make_tree, settings_for, monkeypatch):
    """A slow embedding server cannot make a killed run lose more than ``WRITE_AFTER_S`` of
    embedding: with 0 s every step of 25 files is written as soon as it is embedded."""
    import seek.index.embed_steps

    monkeypatch.setattr(seek.index.embed_steps, "WRITE_AFTER_S", 0.0)
    root = make_tree({f"m{i:03d}.py": f"def f{i}():\n    return {i}\n" for i in range(60)})
    settings = settings_for()
    run(root, settings)
    assert table_version(root, settings) == 3  # 3 writes (no keyword index: a small table)


def test_a_small_index_gets_no_full_text_index_and_a_large_one_does(
    workspace, settings_for, monkeypatch
):
    """Below ``KEYWORD_INDEX_MIN_CHUNKS`` chunks keywords are searched in memory, so a run
    builds no LanceDB full-text index and the table still counts as sound; a table that
    reaches the threshold gets one on its next run (issue 14)."""
    from seek.index.rules import damage_reason
    from seek.retrieve import Searcher

    settings = settings_for()
    run(workspace, settings)
    index_dir = index_dir_for(workspace, settings)
    manifest = load_manifest(index_dir)
    assert not ChunkTable(index_dir).has_keyword_index()
    assert damage_reason(index_dir, manifest) == ""
    hits = Searcher.open(workspace, settings, HashEmbedder()).search("run_server", 3, mode="bm25")
    assert hits.hits and hits.hits[0].path == "src/app.py"
    monkeypatch.setattr("seek.store.table.KEYWORD_INDEX_MIN_CHUNKS", 2)
    monkeypatch.setattr("seek.store.health._SOUND", {})  # found sound under the old threshold
    for cache in index_dir.glob("search-*"):  # ...and so was the table its cache records
        shutil.rmtree(cache)
    assert damage_reason(index_dir, manifest).endswith("the keyword index is missing")
    (workspace / "src" / "more.py").write_text("def more():\n    return 1\n")
    run(workspace, settings)
    assert ChunkTable(index_dir).has_keyword_index()
    assert damage_reason(index_dir, load_manifest(index_dir)) == ""


def test_the_model_gets_ready_on_the_writer_thread_while_files_are_chunked(workspace, settings_for):
    """A run with new or resized files has the writer thread load the model (``get_ready``)
    before the first step, so loading overlaps chunking; a run that only touched files does
    not load it; a failure there costs only the warm-up (the step that embeds reports its own)."""

    class Ready(HashEmbedder):
        def __init__(self, fail=False):
            super().__init__()
            self.ready_on, self.fail = [], fail

        def get_ready(self):
            self.ready_on.append(threading.current_thread().name)
            if self.fail:
                raise RuntimeError("no model")

    settings = settings_for()
    _, embedder = run(workspace, settings, Ready())
    assert [name.startswith("seek-writer") for name in embedder.ready_on] == [True]
    for path in workspace.rglob("*.py"):
        os.utime(path, ns=(1, 1))  # touched: same sizes
    report, embedder = run(workspace, settings, Ready())
    assert embedder.ready_on == [] and report.embedded == 0
    (workspace / "src" / "new.py").write_text("def new():\n    return 2\n")
    report, embedder = run(workspace, settings, Ready(fail=True))
    assert embedder.ready_on and report.embedded == 1  # the failure cost only the warm-up
