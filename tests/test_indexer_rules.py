"""The indexer's documented rules, case by case (docs/commands.md, "seek index";
docs/indexing.md, "What gets indexed", "Where the index lives"; reference-workspace-index
§4-§5), with the deterministic embedder and a real LanceDB."""

import os

import pytest
from conftest import HashEmbedder

from seek.errors import IndexLockedError, IndexMismatchError, WorkspaceError
from seek.index.indexer import (
    REBUILD,
    Indexer,
    IndexReport,
    Progress,
    index_workspace,
    resolve_workspace,
)
from seek.index.refresh import refresh_before_search
from seek.index.report import format_duration
from seek.index.rules import rebuild_reason
from seek.store import (
    ChunkingSpec,
    ChunkTable,
    Manifest,
    Stamp,
    WriterLock,
    index_dir_for,
    load_manifest,
)

FILES = {
    "src/app.py": "def main():\n    return run_server()\n",
    "src/util.py": "def helper(x):\n    return x * 2\n",
    "docs/guide.md": "# Guide\n\nHow to run it.\n",
}


def run(root, settings, **kw):
    embedder = kw.pop("embedder", None) or HashEmbedder()
    return index_workspace(root, settings, embedder=embedder, **kw), embedder


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(0.004, "0.00 s"), (9.994, "9.99 s"), (10.0, "10.0 s"), (119.9, "119.9 s"),
     (120.0, "2 min 0 s"), (3725.0, "62 min 5 s")],
)  # fmt: skip
def test_durations_as_the_closing_line_shows_them(seconds, shown):
    assert format_duration(seconds) == shown


def test_closing_lines(tmp_path):
    report = IndexReport(tmp_path, tmp_path, embedded=3, chunks=7, unchanged=2, removed=1)
    report.seconds = 12.04
    assert (
        report.summary()
        == "Indexed: 3 files embedded (7 chunks), 2 unchanged, 1 removed in 12.0 s."
    )
    quiet = IndexReport(tmp_path, tmp_path, files=5, seconds=0.02)
    assert quiet.summary() == "Index is up to date: 5 files, nothing changed (0.02 s)."
    assert not quiet.changed and IndexReport(tmp_path, tmp_path, removed=1).changed
    assert IndexReport(tmp_path, tmp_path, rebuild_reason="x").changed
    cancelled = IndexReport(tmp_path, tmp_path, embedded=4, cancelled=True)
    assert cancelled.summary() == (
        "Indexing cancelled. 4 files were embedded and kept; run again to continue."
    )


def test_rebuild_reasons_name_what_changed():
    spec = ChunkingSpec(1000, 100, 100, 600, 80)
    stamped = {"a.py": Stamp("0" * 40, 1, 1, 1)}
    same = Manifest(model="m", chunking=spec, files=stamped)
    assert rebuild_reason(same, "m", spec) == ""
    assert rebuild_reason(Manifest(), "other", spec) == ""  # nothing to rebuild yet
    assert rebuild_reason(same, "n", spec) == "model changed (m -> n)"
    assert rebuild_reason(
        Manifest(model="m", chunking=spec, files=stamped, format=1), "m", spec
    ) == ("index format changed (1 -> 3)")
    assert rebuild_reason(Manifest(model="m", files=stamped), "m", spec) == "chunk settings unknown"
    other = ChunkingSpec(500, 100, 50, 600, 40)
    assert rebuild_reason(same, "m", other) == (
        "chunk settings changed (max 1000 -> 500, overlap 100 -> 50, window_overlap 80 -> 40)"
    )


def test_progress_names_each_phase_and_counts_files(make_tree, settings_for):
    root = make_tree(FILES)
    events: list[Progress] = []
    report, _ = run(root, settings_for(flush_every_files=1), progress=events.append)
    phases = [e.phase for e in events]
    assert phases[0] == "scanning" and phases[-1] == "finishing"
    embedding = [e for e in events if e.phase == "embedding"]
    assert [(e.done, e.total) for e in embedding] == [(0, 3), (1, 3), (2, 3), (3, 3)]
    assert embedding[2].current == ("docs/guide.md", "src/app.py", "src/util.py")
    assert report.updated == ["docs/guide.md", "src/app.py", "src/util.py"]
    assert report.files == 3 and report.embedded == 3 and report.unchanged == 0


def test_reports_count_unchanged_removed_and_forgotten(make_tree, settings_for):
    root = make_tree(FILES)
    settings = settings_for()
    run(root, settings)
    (root / "src/util.py").unlink()
    (root / "src/app.py").write_text("def main():\n    return 2\n")
    report, embedder = run(root, settings)
    assert (report.embedded, report.unchanged, report.removed) == (1, 1, 1)
    assert report.forgotten == ["src/util.py"] and report.updated == ["src/app.py"]
    assert embedder.files_embedded() == {"src/app.py"}
    assert report.files == 2 and report.mode == "update" and report.rebuild_reason == ""


def test_binary_is_judged_on_the_first_sniff_bytes(make_tree, settings_for):
    root = make_tree({"late.py": b"x = 1\n" * 10 + b"\x00", "early.py": b"\x00x = 1\n"})
    settings = settings_for(binary_sniff_bytes=20)
    report, _ = run(root, settings)
    stamps = load_manifest(index_dir_for(root, settings)).files
    assert stamps["early.py"].skip == "binary" and stamps["late.py"].skip == ""
    assert report.skipped == {"binary": 1} and report.embedded == 1


def test_single_path_updates_follow_the_scan_rules(make_tree, settings_for):
    root = make_tree({**FILES, "pkg/a.py": "def a():\n    pass\n", "pkg/b.py": "def b(): pass\n"})
    settings = settings_for(max_file_bytes=100)
    run(root, settings)
    indexer = Indexer(root, settings, embedder=HashEmbedder())
    unchanged = indexer.run_paths(["src/app.py", "src/app.py"])  # named twice, judged once
    assert (unchanged.unchanged, unchanged.embedded, unchanged.removed) == (1, 0, 0)
    (root / "src/app.py").write_text("x = '" + "y" * 200 + "'\n")  # now too big
    for rel in ("pkg/a.py", "pkg/b.py"):
        (root / rel).unlink()
    (root / "pkg").rmdir()
    report = Indexer(root, settings, embedder=HashEmbedder()).run_paths(["src/app.py", "pkg"])
    assert report.forgotten == ["pkg/a.py", "pkg/b.py", "src/app.py"] and report.removed == 3
    stored = ChunkTable(index_dir_for(root, settings)).stored_paths()
    assert stored == {"docs/guide.md", "src/util.py"} and report.files == 2


def test_single_path_updates_refuse_an_index_that_must_be_rebuilt(make_tree, settings_for):
    root = make_tree(FILES)
    settings = settings_for()
    with pytest.raises(IndexMismatchError, match="updates stopped: there is no index yet"):
        Indexer(root, settings, embedder=HashEmbedder()).run_paths(["src/app.py"])
    run(root, settings)
    other = HashEmbedder()
    other.model_id = "test/other"
    with pytest.raises(IndexMismatchError, match=r"model changed \(test/hash -> test/other\)"):
        Indexer(root, settings, embedder=other).run_paths(["src/app.py"])


def test_workspace_errors_and_modes(tmp_path, settings_for):
    with pytest.raises(WorkspaceError, match="does not exist"):
        resolve_workspace(tmp_path / "nope")
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(WorkspaceError, match="is not a folder"):
        resolve_workspace(tmp_path / "file.txt")
    with pytest.raises(ValueError, match="mode must be"):
        index_workspace(tmp_path, settings_for(), mode="sideways")


def test_a_search_goes_ahead_while_another_process_writes(make_tree, settings_for):
    root = make_tree(FILES)
    settings = settings_for()
    run(root, settings)
    with WriterLock(index_dir_for(root, settings), "seek index (elsewhere)"):
        notes = refresh_before_search(root, settings)
        with pytest.raises(IndexLockedError):
            run(root, settings, mode=REBUILD)
    assert len(notes) == 1 and notes[0].startswith("The index was not updated first: ")
    assert "seek index (elsewhere)" in notes[0]
    assert refresh_before_search(root, settings) == []


class WatchingEmbedder(HashEmbedder):
    """Records, at each embedding call, who holds the writer lock and whether the manifest
    marks a run in progress (both must be set while rows are being written)."""

    def __init__(self, index_dir):
        super().__init__()
        self.index_dir = index_dir
        self.seen: list[tuple[str, bool]] = []

    def embed(self, texts):
        from seek.store import describe_holder

        self.seen.append((describe_holder(self.index_dir), load_manifest(self.index_dir).run_open))
        return super().embed(texts)


def test_while_rows_are_written_the_lock_names_the_command_and_the_run_is_open(
    make_tree, settings_for
):
    root = make_tree(FILES)
    settings = settings_for()
    index_dir = index_dir_for(root, settings)
    full = WatchingEmbedder(index_dir)
    run(root, settings, embedder=full)
    (root / "src/app.py").write_text("def main():\n    return 3\n")
    single = WatchingEmbedder(index_dir)
    report = Indexer(root, settings, embedder=single).run_paths(["src/app.py"])
    assert full.seen and all(
        holder.startswith(f"pid {os.getpid()} (seek index {root})") and run_open
        for holder, run_open in full.seen
    )
    assert single.seen and all(
        holder.startswith(f"pid {os.getpid()} (seek watch {root})") and run_open
        for holder, run_open in single.seen
    )
    assert not load_manifest(index_dir).run_open  # closed again at the end
    assert (report.workspace, report.index_dir) == (root, index_dir)
    assert report.embedded == 1 and report.updated == ["src/app.py"]


def test_unchanged_files_are_not_even_read(make_tree, settings_for, monkeypatch):
    # docs/commands.md, "seek index": only files whose size or modification time changed are read.
    import seek.index.stages

    root = make_tree(FILES)
    settings = settings_for()
    run(root, settings)
    reads = []
    real_read = seek.index.stages.read_beneath

    def counting_read(root, rel):
        reads.append(rel)
        return real_read(root, rel)

    monkeypatch.setattr(seek.index.stages, "read_beneath", counting_read)
    assert run(root, settings)[0].unchanged == 3
    report = Indexer(root, settings, embedder=HashEmbedder()).run_paths(
        ["src/app.py", "src/util.py", "gone.py"]
    )
    assert reads == [] and report.unchanged == 2 and report.removed == 0


def test_single_path_updates_honour_ignored_globs_and_skip_the_index_folder(
    make_tree, settings_for
):
    root = make_tree({**FILES, "src/api.gen.py": "def generated():\n    pass\n"})
    settings = settings_for(home=str(root / ".seek-home"), ignored_globs=("*.gen.py",))
    run(root, settings)
    index_dir = index_dir_for(root, settings)
    manifest_rel = (index_dir / "manifest.json").relative_to(root).as_posix()
    report = Indexer(root, settings, embedder=HashEmbedder()).run_paths(
        ["src/api.gen.py", manifest_rel]
    )
    assert report.embedded == 0 and report.updated == []
    assert set(load_manifest(index_dir).files) == set(FILES)


def test_rows_left_by_an_interrupted_run_are_removed_and_logged(make_tree, settings_for, caplog):
    from seek.store import save_manifest

    root = make_tree(FILES)
    settings = settings_for()
    run(root, settings)
    index_dir = index_dir_for(root, settings)
    before = load_manifest(index_dir)
    (root / "ghost.py").write_text("def ghost():\n    pass\n")
    run(root, settings)  # rows for ghost.py...
    before.run_open = True
    save_manifest(index_dir, before)  # ...whose stamp a killed run never saved
    (root / "ghost.py").unlink()
    with caplog.at_level("INFO", logger="seek.index.indexer"):
        run(root, settings)
    assert "removing rows of 1 files left by an interrupted run" in caplog.messages
    assert ChunkTable(index_dir).stored_paths() == set(FILES)
