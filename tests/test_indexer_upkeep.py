"""The tables a rebuild leaves behind (docs/indexing.md: a rebuild fills a new table
beside the index and switches to it when complete; the indexer's docstring: a cancelled
rebuild keeps the old index in place and its half-built table is dropped by the next run).
Written for the mutation run of ``indexer.py`` (issue 19); checked through the public
``index_workspace`` and the store's table list, not the indexer's internals."""

import logging
import os
import re
import threading
import time

import pytest
from conftest import SMALL_PROJECT, HashEmbedder

import seek.index.stages
from seek.errors import EmbeddingError
from seek.index.indexer import REBUILD, Indexer, index_workspace
from seek.scan.walk import EXAMPLES_PER_REASON
from seek.store import ChunkTable, index_dir_for, load_manifest, save_manifest
from seek.store.graph_table import GRAPH_SUFFIX, graph_table_name


class CancelAfterFirstBatch(HashEmbedder):
    """Embeds, then asks the run to stop: the files in hand are written, the rest are not."""

    def __init__(self, cancel: threading.Event) -> None:
        super().__init__()
        self.cancel = cancel

    def embed(self, texts):
        self.cancel.set()
        return super().embed(texts)


def tables(root, settings):
    """The chunk tables; each may have its code-graph table, and no graph table outlives its
    chunk table (issue 28)."""
    names = ChunkTable(index_dir_for(root, settings)).table_names()
    chunks = sorted(n for n in names if not n.endswith(GRAPH_SUFFIX))
    assert {n for n in names if n.endswith(GRAPH_SUFFIX)} <= {graph_table_name(n) for n in chunks}
    return chunks


def test_a_cancelled_rebuilds_half_built_table_is_dropped_by_the_next_run(make_tree, settings_for):
    root = make_tree(SMALL_PROJECT)
    settings = settings_for(root, flush_every_files=1, embed_batch_size=1)
    index_workspace(root, settings, embedder=HashEmbedder())
    current = load_manifest(index_dir_for(root, settings)).table
    cancel = threading.Event()
    embedder = CancelAfterFirstBatch(cancel)
    report = index_workspace(root, settings, mode=REBUILD, embedder=embedder, cancel=cancel)
    assert report.cancelled and report.kept_previous
    assert load_manifest(index_dir_for(root, settings)).table == current
    half_built = set(tables(root, settings)) - {current}
    assert len(half_built) == 1  # the rows it wrote sit in their own table, beside the index
    again = HashEmbedder()
    index_workspace(root, settings, embedder=again)  # an ordinary update
    assert tables(root, settings) == [current]
    assert not again.texts  # nothing changed: the update embedded nothing


def test_a_finished_rebuild_switches_tables_and_keeps_the_old_one_for_readers(
    make_tree, settings_for
):
    root = make_tree(SMALL_PROJECT)
    settings = settings_for(root)
    index_workspace(root, settings, embedder=HashEmbedder())
    old = load_manifest(index_dir_for(root, settings)).table
    index_workspace(root, settings, mode=REBUILD, embedder=HashEmbedder())
    new = load_manifest(index_dir_for(root, settings)).table
    assert new != old
    # A search that opened the old table a moment ago can still read it.
    assert tables(root, settings) == sorted([old, new])
    assert ChunkTable(index_dir_for(root, settings), old).count_chunks() > 0
    for _ in range(2):  # later runs within the grace period keep it too
        index_workspace(root, settings, embedder=HashEmbedder())
        assert tables(root, settings) == sorted([old, new])
    # Once the grace period is over (the retirement dated back 10 minutes), it goes.
    index_dir = index_dir_for(root, settings)
    manifest = load_manifest(index_dir)
    assert set(manifest.retired) == {old}
    manifest.retired[old] -= 10 * 60 * 1000
    save_manifest(index_dir, manifest)
    index_workspace(root, settings, embedder=HashEmbedder())
    assert tables(root, settings) == [new]
    assert load_manifest(index_dir).retired == {}


def test_a_single_file_update_reports_how_long_it_took(make_tree, settings_for):
    """The index report's ``seconds`` (docs/commands.md) for watch's single-file runs."""
    root = make_tree(SMALL_PROJECT)
    settings = settings_for(root)
    index_workspace(root, settings, embedder=HashEmbedder())
    (root / "src/retry.py").write_text("def configure_retries(policy, count):\n    return 2\n")
    report = Indexer(root, settings, embedder=HashEmbedder()).run_paths(["src/retry.py"])
    assert report.embedded == 1
    seconds = report.to_json()["seconds"]
    assert isinstance(seconds, float) and 0 < seconds < 60


@pytest.mark.parametrize(
    ("setting", "value", "reason"),
    [
        ("chunk_max_chars", 500, "max 1000 -> 500"),
        ("chunk_min_chars", 50, "min 100 -> 50"),
        ("chunk_overlap_chars", 40, "overlap 100 -> 40"),
        ("window_chars", 400, "window 600 -> 400"),
        ("window_overlap_chars", 30, "window_overlap 80 -> 30"),
    ],
)
def test_every_chunk_setting_change_rebuilds(make_tree, settings_for, setting, value, reason):
    """docs/settings.md: changing the chunk settings makes the next `seek index`
    rebuild the index; each of the five counts (from the defaults `seek config` lists)."""
    root = make_tree(SMALL_PROJECT)
    index_workspace(root, settings_for(root), embedder=HashEmbedder())
    embedder = HashEmbedder()
    report = index_workspace(root, settings_for(root, **{setting: value}), embedder=embedder)
    assert report.rebuild_reason == f"chunk settings changed ({reason})"
    assert embedder.files_embedded() == set(SMALL_PROJECT)


def test_index_reports_name_the_workspace_the_index_the_mode_and_the_time(make_tree, settings_for):
    """The index report's fields (docs/commands.md: `workspace`, `index`, `mode`,
    `rebuild_reason`, `seconds`): a first index is an update with nothing to rebuild; a
    requested rebuild and a change of vector size are rebuilds that say why."""
    root = make_tree(SMALL_PROJECT)
    settings = settings_for(root)
    first = index_workspace(root, settings, embedder=HashEmbedder()).to_json()
    assert first["chunks"] == ChunkTable(index_dir_for(root, settings)).count_chunks() >= 5
    assert first["workspace"] == str(root)
    assert first["index"] == str(index_dir_for(root, settings))
    assert (first["mode"], first["rebuild_reason"]) == ("update", "")
    assert isinstance(first["seconds"], float) and 0 < first["seconds"] < 60
    again = index_workspace(root, settings, mode=REBUILD, embedder=HashEmbedder()).to_json()
    assert (again["mode"], again["rebuild_reason"]) == ("rebuild", "rebuild requested")
    (root / "src/retry.py").write_text("def configure_retries(policy, count):\n    return 2\n")
    wider = HashEmbedder(dims=HashEmbedder().dims * 2)  # the same model name, other vectors
    changed = index_workspace(root, settings, embedder=wider).to_json()
    assert changed["mode"] == "rebuild"
    assert changed["rebuild_reason"].startswith("vector dimensions changed")
    assert 0 < changed["seconds"] < 60


def test_two_rebuilds_in_a_row_keep_both_retired_tables_for_readers(make_tree, settings_for):
    root = make_tree(SMALL_PROJECT)
    settings = settings_for(root)
    index_workspace(root, settings, embedder=HashEmbedder())
    names = [load_manifest(index_dir_for(root, settings)).table]
    for _ in range(2):
        index_workspace(root, settings, mode=REBUILD, embedder=HashEmbedder())
        names.append(load_manifest(index_dir_for(root, settings)).table)
    assert len(set(names)) == 3 and tables(root, settings) == sorted(names)
    index_workspace(root, settings, embedder=HashEmbedder())  # within the grace period
    assert tables(root, settings) == sorted(names)


def test_files_left_out_by_the_scan_are_counted_by_reason(make_tree, settings_for):
    """docs/indexing.md: the `ignored_globs` setting leaves files out, and every
    file left out is counted by reason (what `seek status` shows); an ignored folder once."""
    root = make_tree(
        {
            **SMALL_PROJECT,
            "vendor/lib.py": "def vendored():\n    pass\n",
            "vendor/more.py": "def more():\n    pass\n",
            "src/huge.py": "x = 1\n" * 100,
            "src/empty.py": "",
        }
    )
    settings = settings_for(root, ignored_globs=["vendor/"], max_file_bytes=400)
    report = index_workspace(root, settings, embedder=HashEmbedder())
    stored = ChunkTable(index_dir_for(root, settings)).stored_paths()
    assert stored == set(SMALL_PROJECT)
    skipped = {"ignored": 1, "too_big": 1, "empty": 1}  # "An ignored folder counts once."
    assert load_manifest(index_dir_for(root, settings)).skipped == skipped
    assert report.to_json()["skipped"] == skipped


def test_unreadable_files_found_by_the_scan_and_by_the_read_are_counted_together(
    make_tree, settings_for, monkeypatch, caplog
):
    """docs/indexing.md: every file left out is counted by reason and `seek status`
    names unreadable files. A folder the scan cannot list and files that fail when read are
    one count, named as examples like every other reason (as many as the scan keeps)."""
    files = {f"src/locked{i}.py": f"def locked{i}():\n    pass\n" for i in range(6)}
    root = make_tree({**SMALL_PROJECT, **files, "sealed/inner.py": "x = 1\n"})
    real_read, real_scandir = seek.index.stages.read_beneath, os.scandir
    sealed = str(root / "sealed")

    def read(root, rel):
        if rel.rsplit("/", 1)[-1].startswith("locked"):
            raise PermissionError(13, "Permission denied", rel)
        return real_read(root, rel)

    def scandir(path="."):
        if isinstance(path, str) and path == sealed:
            raise PermissionError(13, "Permission denied", sealed)
        return real_scandir(path)

    monkeypatch.setattr(seek.index.stages, "read_beneath", read)
    monkeypatch.setattr(os, "scandir", scandir)
    settings = settings_for(root)
    with caplog.at_level(logging.WARNING, logger="seek"):
        report = index_workspace(root, settings, embedder=HashEmbedder())
    assert sorted(report.unreadable) == sorted(files)
    # Each one is also said as it happens (stderr of `seek index`), with the reason.
    assert "cannot read src/locked3.py: Permission denied" in caplog.messages
    assert report.skipped == {"unreadable": 7}
    named = load_manifest(index_dir_for(root, settings)).skipped_examples["unreadable"]
    assert named[0] == "sealed/" and len(named) == EXAMPLES_PER_REASON
    assert set(named[1:]) <= set(files)
    monkeypatch.setattr(os, "scandir", real_scandir)  # the folder can be listed again
    again = index_workspace(root, settings, embedder=HashEmbedder())
    assert sorted(again.unreadable) == sorted(files)  # tried again, still unreadable
    assert again.skipped == {"unreadable": 6}
    named = load_manifest(index_dir_for(root, settings)).skipped_examples["unreadable"]
    assert len(named) == EXAMPLES_PER_REASON and set(named) <= set(files)


def test_the_index_records_when_it_was_updated(make_tree, settings_for):
    """`updated_at` (docs/commands.md: ms since the epoch) is the end of the last run."""
    root = make_tree(SMALL_PROJECT)
    settings = settings_for(root)
    before = time.time() * 1000
    index_workspace(root, settings, embedder=HashEmbedder())
    updated = load_manifest(index_dir_for(root, settings)).updated_at
    assert before - 1000 <= updated <= time.time() * 1000 + 1000


def test_a_cancelled_run_keeps_every_file_it_had_in_hand(make_tree, settings_for):
    """README, `seek index`: "Ctrl-C stops after the files in hand and keeps them; the next
    run continues". Every file the progress named before the stop is kept, not only the
    ones already written in an earlier batch."""
    files = {f"m{i:03d}.py": f"def f{i}():\n    return {i}\n" for i in range(40)}
    root = make_tree(files)
    settings = settings_for(root, flush_every_files=10)
    cancel = threading.Event()
    named: set[str] = set()

    def progress(event):
        if event.phase == "embedding" and not cancel.is_set():
            named.update(event.current)
            if len(named) >= 15:
                cancel.set()

    report = index_workspace(
        root, settings, embedder=HashEmbedder(), progress=progress, cancel=cancel
    )
    stored = ChunkTable(index_dir_for(root, settings)).stored_paths()
    assert report.cancelled and len(named) >= 15 and named <= stored
    assert report.embedded == len(stored) < 40
    rest = HashEmbedder()
    resumed = index_workspace(root, settings, embedder=rest)
    assert rest.files_embedded() == set(files) - stored and resumed.embedded == 40 - len(stored)


def test_each_row_carries_its_chunks_number_in_the_file(make_tree, settings_for):
    """The table's rows (``seek.store.table``: ``chunk``, its number in the file; every
    window of a chunk carries it): a file of several definitions has chunks 0, 1, 2, ..."""
    body = "".join(f"def step_{i}(value):\n" + "    value += 1\n" * 30 + "    return value\n\n"
                   for i in range(4))  # fmt: skip
    root = make_tree({"pkg/steps.py": body})
    settings = settings_for(root, chunk_max_chars=600)
    index_workspace(root, settings, embedder=HashEmbedder())
    data = ChunkTable(index_dir_for(root, settings)).load_all()
    numbers = sorted({c for c, part in zip(data["chunk"], data["part"], strict=True) if part == 0})
    assert len(numbers) >= 3 and numbers == list(range(len(numbers)))
    by_chunk = {}
    for chunk, start in zip(data["chunk"], data["start_line"], strict=True):
        by_chunk.setdefault(chunk, set()).add(start)
    assert all(len(starts) == 1 for starts in by_chunk.values())  # windows share their chunk


def test_an_embedder_that_loses_vectors_is_a_clear_error(make_tree, settings_for):
    """Bad input gets a clear error: an embedder answering fewer vectors than texts is named
    with both counts, and nothing is stored for those files."""

    class Short(HashEmbedder):
        def embed(self, texts):
            return super().embed(texts)[:-1]

    root = make_tree(SMALL_PROJECT)
    settings = settings_for(root, embed_batch_size=64, flush_every_files=64)
    with pytest.raises(
        EmbeddingError, match=r"^the embedder returned \d+ vectors for \d+ texts$"
    ) as caught:
        index_workspace(root, settings, embedder=Short())
    got, asked = map(int, re.findall(r"\d+", str(caught.value)))
    assert got == asked - 1 >= len(SMALL_PROJECT) - 1
