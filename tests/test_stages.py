"""The pure per-file stage (issue 18): ``prepare_file`` needs nothing but its arguments, so
it gives the same answer in another process, and it never touches the run's state."""

from __future__ import annotations

import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from seek.index.rules import chunking_spec
from seek.index.stages import FileSpec, Prepared, prepare_file
from seek.scan import scan_workspace
from seek.store import Stamp

SOURCE = "def configure_retries(policy):\n    return RetryPolicy(policy)\n" * 40


def spec(settings) -> FileSpec:
    return FileSpec(chunking_spec(settings), settings.binary_sniff_bytes, "doc: ")


def test_the_stage_runs_alike_in_another_process(make_tree, settings_for):
    root = make_tree({"src/retry.py": SOURCE, "bin.dat.py": b"\x00\x01" * 10})
    files = scan_workspace(root, max_file_bytes=1_000_000).files
    made = spec(settings_for(root))
    here = [prepare_file(root, f, None, made) for f in files]
    context = multiprocessing.get_context("spawn")  # nothing inherited: only the arguments
    with ProcessPoolExecutor(1, mp_context=context) as pool:
        there = list(pool.map(prepare_file, [root] * len(files), files, [None] * len(files),
                              [made] * len(files)))  # fmt: skip
    assert there == here
    retry = next(p for p in here if p.rel == "src/retry.py")
    assert retry.stamp.chunks > 0 and len(retry.rows) == len(retry.texts) > 0
    assert retry.texts[0].startswith("doc: src/retry.py\n")
    assert next(p for p in here if p.rel == "bin.dat.py").stamp.skip == "binary"
    assert pickle.loads(pickle.dumps(retry)) == retry


def test_an_unchanged_file_is_only_restamped_and_an_unreadable_one_says_why(
    make_tree, settings_for, tmp_path
):
    root = make_tree({"a.py": "x = 1\n"})
    scanned = scan_workspace(root, max_file_bytes=1_000_000).files[0]
    made = spec(settings_for(root))
    first = prepare_file(root, scanned, None, made)
    old = Stamp(first.stamp.hash, 0, 0, first.stamp.chunks)
    again = prepare_file(root, scanned, old, made)
    assert again.unchanged and again.rows == [] and again.stamp.chunks == old.chunks
    (root / "a.py").unlink()
    gone = prepare_file(root, scanned, old, made)
    assert gone == Prepared("a.py", unreadable=gone.unreadable) and gone.unreadable
    assert Path(root / "a.py").exists() is False


def test_the_local_store_keeps_the_index_store_contract(tmp_path):
    from seek.store import IndexStore, LocalIndexStore, Manifest
    from seek.store.protocol import NO_MANIFEST

    store = LocalIndexStore(tmp_path / "index")
    assert isinstance(store, IndexStore)
    assert store.manifest_token() == NO_MANIFEST and not store.load_manifest().has_index
    store.save_manifest(Manifest(model="m", table="t1"))
    first = store.manifest_token()
    assert first != NO_MANIFEST and store.load_manifest().table == "t1"
    with store.writer_lock("test"):
        assert store.is_locked()
        store.save_manifest(Manifest(model="m", table="t2"))
    assert not store.is_locked()
    assert store.manifest_token() != first and store.load_manifest().table == "t2"


def test_a_folder_swapped_for_a_link_after_the_scan_is_not_followed(make_tree, settings_for):
    """Issue 43 finding 9c: the scan saw ``pkg/`` as a folder; by the time the file is read
    (``seek watch`` reacting to a change, a ``git checkout`` midway) ``pkg`` is a link to a
    folder outside the workspace holding a file of the same name. Opening only the last
    component without following links read the outside file; no component may be followed."""
    root = make_tree({"pkg/mod.py": SOURCE})
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "mod.py").write_text("def stolen_secret():\n    return 'outside the workspace'\n")
    [scanned] = scan_workspace(root, max_file_bytes=1_000_000).files
    (root / "pkg" / "mod.py").unlink()
    (root / "pkg").rmdir()
    (root / "pkg").symlink_to(outside, target_is_directory=True)
    prepared = prepare_file(root, scanned, None, spec(settings_for(root)))
    assert prepared.stamp is None and prepared.rows == [] and prepared.texts == []
    assert prepared.unreadable  # ENOTDIR or ELOOP, said as the system says it
