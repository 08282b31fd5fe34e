"""The store's upkeep, through its public API (real LanceDB in temp dirs): dropping tables,
the index size ``seek status`` shows, the writer-lock probe, the manifest token live indexes
poll, and the one-line damage reports. Written for the mutation run of ``store/`` (issue 19):
each test pins a promise of a docstring or of the README, not the code's own constants."""

import logging
import os
import re
import socket
import threading
import time

import numpy as np

from seek.store import (
    ChunkTable,
    Manifest,
    RowBatch,
    WriterLock,
    describe_holder,
    health,
    is_locked,
)
from seek.store.files import folder_size
from seek.store.health import one_line
from seek.store.protocol import NO_MANIFEST, LocalIndexStore


def rows(paths, dims=4):
    batch = RowBatch.empty(dims)
    for number, path in enumerate(paths):
        batch.append_row(path, number, 0, 3, 0, f"def f{number}(): pass", f"f{number}")
    batch.vectors = np.eye(dims, dtype=np.float32)[[i % dims for i in range(len(paths))]]
    return batch


def filled(index_dir, name, paths):
    table = ChunkTable(index_dir, name)
    table.replace_files([], rows(paths))
    return table


def test_drop_removes_this_table_and_it_can_be_written_again(tmp_path):
    table = filled(tmp_path, "current", ["a.py", "b.py"])
    table.finish()  # with its keyword index
    other = filled(tmp_path, "other", ["c.py"])
    assert sorted(table.table_names()) == ["current", "other"]
    table.drop()  # the default: this table
    assert not table.exists() and table.table_names() == ["other"]
    assert table.stored_paths() == set() and table.count_chunks() == 0
    assert not (tmp_path / "lancedb" / "current.lance").exists()
    assert other.stored_paths() == {"c.py"}  # the other table keeps every row
    table.replace_files([], rows(["d.py"]))  # a dropped table is created again on write
    assert table.stored_paths() == {"d.py"}
    table.finish()  # and gets a keyword index of its own: the old one went with the table
    assert health.check(ChunkTable(tmp_path, "current"), expected_chunks=1) == ""
    assert [hit.path for hit in table.keyword_search("f0", 5)] == ["d.py"]


def test_drop_by_name_leaves_this_table_open(tmp_path):
    table = filled(tmp_path, "current", ["a.py"])
    filled(tmp_path, "old", ["b.py"])
    assert table.stored_paths() == {"a.py"}  # opened before the other is dropped
    table.drop("old")
    assert table.table_names() == ["current"]
    assert not (tmp_path / "lancedb" / "old.lance").exists()
    assert table.stored_paths() == {"a.py"}
    table.replace_files(["a.py"], rows(["a.py", "e.py"]))
    assert table.stored_paths() == {"a.py", "e.py"}


def test_dropping_a_missing_table_is_fine_and_clears_its_leftovers(tmp_path, caplog):
    table = filled(tmp_path, "current", ["a.py"])
    with caplog.at_level(logging.WARNING):
        table.drop("never-written")  # nothing to drop: no error, nothing to warn about
    assert not caplog.records
    # A killed writer's leftovers: a folder that is not a readable table.
    leftovers = tmp_path / "lancedb" / "broken.lance"
    (leftovers / "data").mkdir(parents=True)
    (leftovers / "data" / "part.lance").write_bytes(b"\0" * 64)
    table.drop("broken")
    assert not leftovers.exists()
    assert table.stored_paths() == {"a.py"}
    ChunkTable(tmp_path / "elsewhere", "x").drop()  # no database at all: fine too


def test_folder_size_counts_every_file_below_it_and_not_what_links_point_to(tmp_path):
    (tmp_path / "a").write_bytes(b"x" * 100)
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "sub" / "b").write_bytes(b"x" * 250)
    (tmp_path / "sub" / "deeper" / "c").write_bytes(b"x" * 7)
    (tmp_path / "empty").mkdir()
    assert folder_size(tmp_path) == 357
    outside = tmp_path.parent / f"{tmp_path.name}-big"
    outside.write_bytes(b"x" * 10_000)
    os.symlink(outside, tmp_path / "link")
    assert folder_size(tmp_path) == 357 + os.lstat(tmp_path / "link").st_size
    assert folder_size(tmp_path / "missing") == 0


def test_folder_size_goes_on_past_a_file_that_vanishes_while_it_is_walked(tmp_path, monkeypatch):
    """The docstring's case: a writer's lock note or a compacted fragment disappears between
    the listing of a folder and the size of its file; the other files still count."""
    for name, size in (("a", 10), ("b", 20), ("c", 40)):
        (tmp_path / name).write_bytes(b"x" * size)
    walk = os.walk

    def walk_then_vanish(folder):
        for parent, dirs, names in walk(folder):
            gone = sorted(names)[0]  # "a": listed, then removed before it is measured
            os.unlink(os.path.join(parent, gone))
            yield parent, dirs, [gone, *(n for n in names if n != gone)]

    monkeypatch.setattr(os, "walk", walk_then_vanish)
    assert folder_size(tmp_path) == 60


def test_a_tables_size_is_its_database_folder(tmp_path):
    table = filled(tmp_path, "current", ["a.py", "b.py"])
    assert table.size_bytes() == folder_size(tmp_path / "lancedb") > 0


def test_is_locked_while_another_holder_has_the_writer_lock(tmp_path):
    store = LocalIndexStore(tmp_path)
    assert not store.is_locked() and not is_locked(tmp_path)  # no lock file yet
    held, release = threading.Event(), threading.Event()

    def writer():
        with store.writer_lock("seek index"):
            held.set()
            release.wait(30)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert held.wait(30)
        assert store.is_locked() and is_locked(tmp_path)
    finally:
        release.set()
        thread.join(30)
    assert (tmp_path / "writer.lock").exists()  # the file stays; nobody holds it
    assert not store.is_locked()
    with WriterLock(tmp_path, "seek index"):  # the probe did not keep the lock
        pass


def test_the_manifest_token_moves_on_every_save(tmp_path):
    store = LocalIndexStore(tmp_path)
    assert store.manifest_token() == NO_MANIFEST
    manifest = Manifest()
    store.save_manifest(manifest)
    first = store.manifest_token()
    assert first != NO_MANIFEST and store.manifest_token() == first  # stable until a save
    store.save_manifest(manifest)  # the same content, a new save
    second = store.manifest_token()
    assert second != first
    store.save_manifest(manifest, "manifest.next.json")  # another file: not the manifest
    assert store.manifest_token() == second


def test_damage_is_reported_on_one_short_line():
    assert one_line(ValueError("bad\n  data\tfile  here ")) == "bad data file here"
    assert one_line(KeyError()) == "KeyError"  # no message: its kind
    assert one_line(OSError("x" * 160)) == "x" * 160
    assert one_line(OSError("y" * 161)) == "y" * 157 + "..."
    long = one_line(OSError("word " * 100))
    assert len(long) == 160 and long.endswith("...") and long.startswith("word word")
    assert long[:157] == ("word " * 100)[:157]


def test_check_reports_a_damaged_table_on_one_line(tmp_path):
    table = filled(tmp_path, "current", [f"f{i}.py" for i in range(20)])
    for data in (tmp_path / "lancedb" / "current.lance" / "data").iterdir():
        data.write_bytes(b"damaged\n" * 3)
    problem = health.check(ChunkTable(tmp_path, "current"), None)
    assert problem.startswith("the table cannot be read (") and problem.endswith(")")
    assert "\n" not in problem and len(problem) <= len("the table cannot be read ()") + 160
    assert health.check(table, None) != ""


def test_load_all_gives_every_row_and_a_float32_matrix(tmp_path):
    """``load_all``'s docstring: plain lists and a float32 ``vectors`` matrix (rows x dims),
    also for a table with nothing in it; every row, however many (searches in memory read it
    whole)."""
    empty = ChunkTable(tmp_path / "none", "current").load_all()
    assert empty["path"] == [] and empty["vectors"].shape == (0, 0)
    assert empty["vectors"].dtype == np.float32
    paths = [f"src/m{i:02d}.py" for i in range(37)]
    table = filled(tmp_path, "current", paths)
    data = ChunkTable(tmp_path, "current").load_all()
    assert sorted(data["path"]) == paths
    assert data["vectors"].shape == (37, 4) and data["vectors"].dtype == np.float32
    by_path = dict(zip(data["path"], data["vectors"], strict=True))
    assert by_path["src/m05.py"].tolist() == np.eye(4)[5 % 4].tolist()
    assert table.count_rows() == 37
    assert table.stored_paths() == set(paths)  # every file, not a first page of them


def test_the_writer_is_named_with_its_pid_command_host_and_start_time(tmp_path):
    """What ``seek status`` shows as the writer (README: "who is writing it") and what a
    second writer is told; without the holder's note it is "another process"."""
    assert describe_holder(tmp_path) == "another process"
    before = time.time()
    with WriterLock(tmp_path, "seek index /srv/project"):
        time.sleep(2.1)  # "since" is when it started, not when it is asked
        named = describe_holder(tmp_path)
    prefix = f"pid {os.getpid()} (seek index /srv/project) on {socket.gethostname()} since "
    assert named.startswith(prefix)
    since = named[len(prefix) :]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", since)
    started = time.mktime(time.strptime(since, "%Y-%m-%d %H:%M:%S"))  # local time
    assert before - 1 <= started <= time.time() - 2
    assert describe_holder(tmp_path) == "another process"  # the note goes with the lock


def test_keyword_scores_filter_by_path_before_they_limit(tmp_path):
    """The searcher's keyword candidates: ``limit`` best BM25 matches among ``paths`` only
    (a search limited to a folder must not lose its matches to files outside it)."""
    paths = [f"vendor/v{i:02d}.py" for i in range(30)] + ["src/mine.py"]
    batch = RowBatch.empty(4)
    for number, path in enumerate(paths):
        text = "retry retry retry policy" if path.startswith("vendor") else "retry policy"
        batch.append_row(path, number, 0, 3, 0, text, text)
    batch.vectors = np.ones((len(paths), 4), dtype=np.float32)
    table = ChunkTable(tmp_path, "current")
    table.replace_files([], batch)
    table.finish()
    assert len(table.keyword_scores("retry", 1)) == 1
    assert len(table.keyword_scores("retry", 5)) == 5
    assert table.keyword_scores("retry", 0) == []
    [(path, chunk, score)] = table.keyword_scores("retry", 1, paths=["src/mine.py"])
    assert (path, chunk) == ("src/mine.py", 30) and score > 0
    inside = table.keyword_scores("retry", 3, paths=["src/mine.py", "vendor/v07.py"])
    assert sorted(p for p, _, _ in inside) == ["src/mine.py", "vendor/v07.py"]


def test_vector_and_keyword_search_follow_the_tables_contract(tmp_path):
    """The contract in ``seek.store.table``'s docstring: ``vector_search`` returns the
    nearest chunks, one hit per chunk at the rank of its nearest window, optionally only
    within ``paths``; ``keyword_search`` gives one hit per chunk with its lines and content."""
    batch = RowBatch.empty(4)
    vectors = []
    # Two-window chunks of ten files: the windows of a chunk sit side by side in distance.
    # (With three windows or more a chunk can take more than two of the 2 x limit rows it
    # fetches, and fewer than `limit` chunks come back: noted in bench/mutation-survivors.md.)
    for number in range(10):
        path = f"src/f{number}.py"
        for part in range(2):
            keywords = f"alpha{number}" if part == 0 else ""
            batch.append_row(path, 0, 10 * number, 10 * number + 5, part, f"body {number}",
                             keywords)  # fmt: skip
            vectors.append([1.0, number + part / 10, 0.0, 0.0])
    batch.vectors = np.array(vectors, dtype=np.float32)
    table = ChunkTable(tmp_path, "current")
    table.replace_files([], batch)
    table.finish()
    query = np.array([1.0, 0.0, 0.0, 0.0])
    hits = table.vector_search(query, 3)
    assert [h.path for h in hits] == ["src/f0.py", "src/f1.py", "src/f2.py"]  # one per chunk
    assert [(h.chunk, h.start_line, h.end_line, h.content) for h in hits][1] == (
        0, 10, 15, "body 1",
    )  # fmt: skip
    assert hits[0].score == 0.0 and hits[0].score < hits[1].score < hits[2].score
    inside = table.vector_search(query, 2, paths=["src/f8.py", "src/f9.py"])
    assert [h.path for h in inside] == ["src/f8.py", "src/f9.py"]
    [hit] = table.keyword_search("alpha7", 5)
    assert (hit.path, hit.chunk, hit.start_line, hit.end_line, hit.content) == (
        "src/f7.py", 0, 70, 75, "body 7",
    )  # fmt: skip
    assert hit.score > 0
    assert table.keyword_search("alpha7", 5, paths=["src/f1.py"]) == []


def test_check_says_what_is_wrong_with_the_stored_table(tmp_path, monkeypatch):
    """``ChunkTable.check``'s docstring: the table must exist (unless the index is empty),
    hold the chunks the manifest counts and, when large enough, have a keyword index; after
    an interrupted run (``expected_chunks=None``) only existence and readability count. ""
    when all is well."""
    small = filled(tmp_path, "small", ["a.py", "b.py"])
    assert health.check(small, expected_chunks=2) == ""  # searched in memory: no index needed
    monkeypatch.setattr("seek.store.table.KEYWORD_INDEX_MIN_CHUNKS", 2)
    missing = ChunkTable(tmp_path, "current")
    assert health.check(missing, expected_chunks=None) == ""
    assert health.check(missing, expected_chunks=0) == ""  # an index of no files has no table
    assert health.check(missing, expected_chunks=1) == "table current is missing"
    table = filled(tmp_path, "current", ["a.py", "b.py"])
    assert health.check(table, expected_chunks=None) == ""  # no keyword index yet: fine mid-run
    assert health.check(table, expected_chunks=2) == "the keyword index is missing"
    table.finish()
    assert health.check(ChunkTable(tmp_path, "current"), expected_chunks=2) == ""
    assert health.check(table, expected_chunks=3) == "the table holds 2 chunks, the manifest 3"
    table.delete_files(["a.py", "b.py"])  # every row gone, the table still there
    assert (
        health.check(table, expected_chunks=0) == ""
        and health.check(table, expected_chunks=None) == ""
    )


def test_a_sound_table_is_not_read_again_until_its_files_change(tmp_path):
    """``ChunkTable.check``: a table found sound is not read again while its files (names,
    sizes, modification times) stay as they were - also with other tables checked in between
    (a server checks every workspace) - and damage that keeps a file's size and time is not
    seen until the next change; then it is, and the earlier verdict is not reused."""
    filled(tmp_path, "current", ["a.py", "b.py"]).finish()
    filled(tmp_path, "other", ["c.py"]).finish()
    assert health.check(ChunkTable(tmp_path, "current"), expected_chunks=2) == ""
    assert health.check(ChunkTable(tmp_path, "other"), expected_chunks=1) == ""
    data = sorted((tmp_path / "lancedb" / "current.lance" / "data").glob("*.lance"))
    assert data
    times = {}
    for path in data:  # zeroed, each file keeping its size and modification time
        info = path.stat()
        times[path] = (info.st_atime_ns, info.st_mtime_ns)
        path.write_bytes(b"\0" * info.st_size)
        os.utime(path, ns=times[path])
    assert health.check(ChunkTable(tmp_path, "current"), expected_chunks=2) == ""  # not read again
    assert health.check(ChunkTable(tmp_path, "other"), expected_chunks=1) == ""
    atime, mtime = times[data[0]]
    os.utime(data[0], ns=(atime, mtime + 1_000_000))  # a change: read again, damage shown
    assert health.check(ChunkTable(tmp_path, "current"), expected_chunks=2) != ""
    os.utime(data[0], ns=(atime, mtime))  # the time put back, the damage still there
    assert health.check(ChunkTable(tmp_path, "current"), expected_chunks=2) != ""
    assert health.check(ChunkTable(tmp_path, "other"), expected_chunks=1) == ""


def test_only_lance_folders_are_tables(tmp_path):
    table = filled(tmp_path, "current", ["a.py"])
    (tmp_path / "lancedb" / "notes").mkdir()
    (tmp_path / "lancedb" / "stray.lance").write_text("not a table")
    assert table.table_names() == ["current"]


def test_an_empty_batch_has_no_rows_and_no_vectors():
    empty = RowBatch.empty(4)
    assert len(empty) == 0 and len(empty.vectors) == 0
    assert empty.vectors.shape == (0, 4) and empty.vectors.dtype == np.float32


def test_lancedb_log_lines_are_errors_only_unless_asked(tmp_path, monkeypatch):
    """lance logs through Rust's env_logger (``LANCEDB_LOG``): its "creating dataset"
    warnings would reach the user's terminal; a level the user chose is kept."""
    monkeypatch.delenv("LANCEDB_LOG", raising=False)
    filled(tmp_path, "current", ["a.py"])
    assert os.environ["LANCEDB_LOG"].lower() == "error"
    monkeypatch.setenv("LANCEDB_LOG", "debug")
    filled(tmp_path / "again", "current", ["a.py"])
    assert os.environ["LANCEDB_LOG"] == "debug"


def test_a_local_store_names_its_folder_in_messages(tmp_path):
    store = LocalIndexStore(tmp_path / "idx")
    assert store.location == str(tmp_path / "idx")  # IndexStore.location: "for messages"


def test_a_second_writer_is_refused_at_once_and_told_who_writes(tmp_path):
    """docs/indexing.md: only one process writes an index at a time (a second
    one is told who holds it); by default it does not wait."""
    from seek.errors import IndexLockedError

    with WriterLock(tmp_path, "seek index /srv/project"):
        started = time.monotonic()
        try:
            WriterLock(tmp_path, "seek watch").__enter__()
        except IndexLockedError as exc:
            refused = str(exc)
        else:
            raise AssertionError("a second writer got the lock")
        assert time.monotonic() - started < 0.9
    prefix = f"the index is being written by pid {os.getpid()} (seek index /srv/project) on "
    assert refused.startswith(prefix)
    assert refused.endswith("; wait for it to finish or stop it")


def test_a_lock_taken_without_a_command_names_the_program_and_its_command(tmp_path, monkeypatch):
    monkeypatch.setattr("sys.argv", ["/usr/bin/seek", "watch", "--quiet"])
    with WriterLock(tmp_path, ""):
        assert describe_holder(tmp_path).startswith(f"pid {os.getpid()} (/usr/bin/seek watch) on ")


def test_the_index_folder_may_be_deleted_while_the_lock_is_held(tmp_path):
    """README: deleting the index folder is always safe - also during a run."""
    import shutil

    index_dir = tmp_path / "index"
    with WriterLock(index_dir, "seek index"):
        shutil.rmtree(index_dir)
    assert not index_dir.exists()


def test_vectors_are_stored_as_float32_whatever_they_came_as(tmp_path):
    """A provider package may hand back float64 vectors: they are stored as float32, not as
    their bytes reread."""
    batch = rows(["a.py", "b.py"])
    batch.vectors = batch.vectors.astype(np.float64)
    table = ChunkTable(tmp_path, "current")
    table.replace_files([], batch)
    assert np.array_equal(table.load_all()["vectors"], np.eye(4, dtype=np.float32)[[0, 1]])
