"""The LanceDB table and the manifest, for real (temp dirs)."""

import json
import threading
import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from seek.errors import IndexLockedError
from seek.store import (
    ChunkingSpec,
    ChunkTable,
    Manifest,
    RowBatch,
    Stamp,
    WriterLock,
    health,
    is_locked,
)
from seek.store.lock import LOCK_NAME
from seek.store.manifest import load_manifest, save_manifest
from seek.store.table import sql_quote
from seek.text import keyword_column, keyword_query


def rows_for(chunks, dims=4):
    """chunks: list of (path, start, end, content, n_windows)."""
    batch = RowBatch.empty(dims)
    vectors = []
    for number, (path, start, end, content, windows) in enumerate(chunks):
        for part in range(windows):
            keywords = keyword_column(path, content) if part == 0 else ""
            batch.append_row(path, number, start, end, part, content, keywords)
            vectors.append(np.eye(dims, dtype=np.float32)[(number + part) % dims])
    batch.vectors = np.array(vectors, dtype=np.float32)
    return batch


def make_table(tmp_path, chunks):
    table = ChunkTable(tmp_path)
    table.replace_files([], rows_for(chunks))
    table.finish()
    return table


def test_keyword_search_stems_and_splits_identifiers(tmp_path):
    table = make_table(
        tmp_path,
        [
            ("src/status-bar.ts", 0, 3, "export function render() { return 1 }", 1),
            ("src/csp.ts", 0, 2, "const policy = build()", 1),
            ("src/chunker.ts", 0, 5, "split the file into chunks", 1),
            ("src/proxy.py", 0, 2, "def get_environ_proxies(url): pass", 1),
        ],
    )

    def top(question):
        return table.keyword_search(keyword_query(question), 5)[0].path

    assert top("status bar") == "src/status-bar.ts"
    assert top("where is the statusBar drawn") == "src/status-bar.ts"
    assert top("csp") == "src/csp.ts"  # a path word
    assert top("chunk") == "src/chunker.ts"  # stemming: "chunk" finds "chunks"
    assert top("environ") == "src/proxy.py"  # pre-split identifier


def test_two_window_chunk_is_one_hit_each_way(tmp_path):
    table = make_table(
        tmp_path,
        [
            ("a.py", 0, 30, "alpha window text", 2),
            ("b.py", 0, 10, "beta text", 1),
        ],
    )
    assert table.count_chunks() == 2 and table.count_rows() == 3
    vector_hits = table.vector_search(np.eye(4, dtype=np.float32)[0], 5)
    assert [h.path for h in vector_hits].count("a.py") == 1
    keyword_hits = table.keyword_search("alpha", 5)
    assert [h.path for h in keyword_hits] == ["a.py"]


def test_filters_restrict_to_paths_and_quotes_are_escaped(tmp_path):
    table = make_table(
        tmp_path,
        [
            ("it's.py", 0, 1, "shared words here", 1),
            ("other.py", 0, 1, "shared words here", 1),
        ],
    )
    hits = table.keyword_search("shared", 5, paths=["it's.py"])
    assert [h.path for h in hits] == ["it's.py"]
    assert [h.path for h in table.vector_search(np.ones(4), 5, paths=["other.py"])] == ["other.py"]
    assert sql_quote("it's") == "'it''s'"


def test_replace_and_delete_files(tmp_path):
    table = make_table(tmp_path, [("a.py", 0, 1, "one", 1), ("b.py", 0, 1, "two", 1)])
    table.replace_files(["a.py"], rows_for([("a.py", 0, 2, "uno", 1)]))
    table.delete_files(["b.py"])
    assert table.stored_paths() == {"a.py"}
    assert table.keyword_search("uno", 5)[0].content == "uno"
    assert table.keyword_search("one", 5) == []


def test_keyword_search_never_writes_a_missing_index(tmp_path, monkeypatch):
    """Searches only read (a reader building the index raced the writer's commits): the
    missing index is reported by check(), and the next run rebuilds it (a table large enough
    to need one: here every table)."""
    monkeypatch.setattr("seek.store.table.KEYWORD_INDEX_MIN_CHUNKS", 1)
    table = ChunkTable(tmp_path)
    table.replace_files([], rows_for([("a.py", 0, 1, "repair me", 1)]))  # no finish()
    assert table.keyword_search("repair", 5) == []
    assert not table.has_keyword_index()
    assert health.check(table, 1) == "the keyword index is missing"
    table.finish()
    assert health.check(table, 1) == ""
    assert [h.path for h in table.keyword_search("repair", 5)] == ["a.py"]


def test_manifest_missing_or_corrupt_reads_empty(tmp_path):
    assert load_manifest(tmp_path).files == {}
    (tmp_path / "manifest.json").write_text("{not json")
    assert load_manifest(tmp_path).files == {}
    (tmp_path / "manifest.json").write_text(json.dumps({"version": 2, "files": {"a": {}}}))
    assert load_manifest(tmp_path).files == {}


stamps = st.builds(
    Stamp,
    hash=st.text("0123456789abcdef", min_size=40, max_size=40),
    size=st.integers(1, 2**20),
    mtime_ns=st.integers(0, 2**62),
    chunks=st.integers(0, 500),
    skip=st.sampled_from(["", "binary", "no_chunks"]),
)


@given(
    st.dictionaries(st.text(min_size=1, max_size=30), stamps, max_size=8),
    st.text(max_size=20),
    st.integers(0, 4096),
    st.dictionaries(st.sampled_from(["too_big", "binary", "ignored"]), st.integers(0, 99)),
    st.booleans(),
)
def test_manifest_round_trip(tmp_path_factory, files, model, dims, skipped, run_open):
    folder = tmp_path_factory.mktemp("m")
    manifest = Manifest(
        model=model,
        dimensions=dims,
        chunking=ChunkingSpec(1000, 100, 100, 600, 80),
        files=files,
        skipped=skipped,
        updated_at=123,
        run_open=run_open,
    )
    save_manifest(folder, manifest)
    assert load_manifest(folder) == manifest
    assert [p.name for p in folder.iterdir()] == ["manifest.json"]  # no temp file left


def test_a_minimal_manifest_reads_with_defaults(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps({"version": 3}))
    manifest = load_manifest(tmp_path)
    assert manifest == Manifest(format=0)  # no format: an old index, rebuilt on the next run
    assert not manifest.run_open and manifest.updated_at is None and not manifest.has_index


def test_stamps_keep_their_skip_reason_and_examples_survive(tmp_path):
    manifest = Manifest(
        model="m",
        files={"a.bin": Stamp("0" * 40, 3, 4, 0, "binary"), "a.py": Stamp("1" * 40, 5, 6, 2)},
        skipped_examples={"too_big": ["big.json"]},
    )
    save_manifest(tmp_path, manifest)
    raw = json.loads((tmp_path / "manifest.json").read_text())
    assert raw["files"]["a.bin"]["skip"] == "binary" and "skip" not in raw["files"]["a.py"]
    loaded = load_manifest(tmp_path)
    assert loaded == manifest and loaded.files["a.py"].skip == ""


def test_unusable_manifests_are_reported_and_read_as_empty(tmp_path, caplog):
    path = tmp_path / "manifest.json"
    cases = {
        "{not json": "is unreadable",
        json.dumps({"version": 2}): "has another version",
        json.dumps([1, 2]): "has another version",
        json.dumps({"version": 3, "files": {"a.py": {"hash": "x"}}}): "is malformed",
    }
    for text, message in cases.items():
        path.write_text(text)
        caplog.clear()
        with caplog.at_level("WARNING"):
            assert load_manifest(tmp_path) == Manifest()
        [line] = caplog.messages
        assert line.startswith(f"manifest {path} {message}"), line
        assert line.endswith("; the index will be rebuilt") and "(None)" not in line, line


def test_index_folders_are_named_after_the_workspace_and_its_path(tmp_path):
    from seek.settings import load_settings
    from seek.store import index_dir_for

    settings = load_settings(overrides={"home": str(tmp_path / "home")}, env={})
    one, two = tmp_path / "a" / "my proj!", tmp_path / "b" / "my proj!"
    one.mkdir(parents=True)
    two.mkdir(parents=True)
    first, second = index_dir_for(one, settings), index_dir_for(two, settings)
    assert first.parent == second.parent == (tmp_path / "home").resolve()
    assert first.name.startswith("my_proj_-") and len(first.name) == len("my_proj_-") + 12
    assert first != second and index_dir_for(one / ".." / "my proj!", settings) == first
    upper = tmp_path / "MyProject"
    upper.mkdir()
    assert index_dir_for(upper, settings).name.startswith("MyProject-")


def test_the_index_home_is_the_os_cache_folder_without_a_home_setting(tmp_path, monkeypatch):
    """docs/indexing.md: ``$SEEK_HOME`` or the OS cache folder (``~/.cache/seek``
    on Linux)."""
    from seek.settings import load_settings
    from seek.store.location import seek_home

    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    settings = load_settings(overrides={}, env={}, user_config=tmp_path / "none.toml")
    assert settings.home == ""
    assert seek_home(settings) == tmp_path / ".cache" / "seek"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert seek_home(settings) == tmp_path / "cache" / "seek"


def test_load_all_has_the_same_columns_with_or_without_rows(tmp_path):
    empty = ChunkTable(tmp_path / "empty").load_all()
    full = make_table(tmp_path / "full", [("a.py", 2, 4, "alpha", 2), ("b.py", 0, 1, "beta", 1)])
    data = full.load_all()
    assert set(empty) == set(data) and empty["vectors"].shape == (0, 0)
    rows = sorted(zip(data["path"], data["chunk"], data["start_line"], data["end_line"],
                      data["part"], data["content"], strict=True))  # fmt: skip
    assert rows == [("a.py", 0, 2, 4, 0, "alpha"), ("a.py", 0, 2, 4, 1, "alpha"),
                    ("b.py", 1, 0, 1, 0, "beta")]  # fmt: skip
    assert data["vectors"].shape == (3, 4) and data["vectors"].dtype == np.float32


def test_keyword_scores_are_best_first_per_chunk(tmp_path):
    table = make_table(tmp_path, [("a.py", 0, 1, "parser parser parser", 1),
                                  ("b.py", 0, 1, "parser and more words", 1)])  # fmt: skip
    scores = table.keyword_scores("parser", 5)
    assert [(path, chunk) for path, chunk, _ in scores] == [("a.py", 0), ("b.py", 1)]
    assert scores[0][2] > scores[1][2] > 0
    assert table.keyword_scores("parser", 5, paths=["b.py"])[0][:2] == ("b.py", 1)
    assert table.keyword_scores("   ", 5) == [] and table.keyword_scores("parser", 0) == []


def test_is_locked_only_while_a_writer_holds_the_lock(tmp_path):
    from seek.store import WriterLock, is_locked

    assert not is_locked(tmp_path)  # never written: no lock file at all
    with WriterLock(tmp_path, "seek index"):
        assert is_locked(tmp_path)
    assert not is_locked(tmp_path)  # the lock file stays, unheld
    assert (tmp_path / "writer.lock").exists() and not (tmp_path / "writer.json").exists()


def test_a_writer_is_not_refused_by_someone_probing_the_lock(tmp_path):
    """``seek status`` and every search's freshness check probe the writer lock by taking
    it for an instant: a writer starting in that instant waits it out (``PROBE_GRACE_S``)
    instead of failing with "the index is being written by another process"."""
    stop = threading.Event()
    probes = [0]

    def probe() -> None:
        while not stop.is_set():
            is_locked(tmp_path)
            probes[0] += 1

    (tmp_path / LOCK_NAME).touch()
    prober = threading.Thread(target=probe)
    prober.start()
    try:
        for _ in range(300):
            with WriterLock(tmp_path, "seek index"):
                pass
    finally:
        stop.set()
        prober.join()
    assert probes[0] > 300


def test_a_held_lock_still_refuses_a_second_writer_at_once(tmp_path):
    with WriterLock(tmp_path, "seek watch"):
        started = time.monotonic()
        with pytest.raises(IndexLockedError, match="seek watch"):
            with WriterLock(tmp_path, "seek index"):
                pass
        assert time.monotonic() - started < 2.0


def test_the_holder_note_goes_before_the_lock_so_the_next_writers_note_stays(tmp_path):
    """A writer waiting for the lock (``seek watch`` behind ``seek index``) takes it the
    moment it is released and writes its own holder note: the first writer must have
    removed its note before that, or it deletes the new holder's note and ``seek status``
    says "another process" for the whole run (issue 27). Mutation this pins (store/lock.py
    ``WriterLock.__exit__``): the note's ``unlink`` and ``self._lock.release()`` swapped."""
    from seek.store.lock import HOLDER_NAME, describe_holder

    first = WriterLock(tmp_path, "seek index")
    second = WriterLock(tmp_path, "seek watch")
    release = first._lock.release
    notes_at_release = []

    def release_then_the_next_writer_enters(*args, **kwargs):
        notes_at_release.append((tmp_path / HOLDER_NAME).exists())
        release(*args, **kwargs)
        if not second._lock.is_locked:  # the one waiting gets the lock at once
            second.__enter__()

    first._lock.release = release_then_the_next_writer_enters
    with first:
        assert "(seek index)" in describe_holder(tmp_path)
    try:
        assert notes_at_release == [False]
        assert "(seek watch)" in describe_holder(tmp_path)
    finally:
        second.__exit__(None, None, None)
    assert not (tmp_path / HOLDER_NAME).exists() and not is_locked(tmp_path)
    with pytest.raises(RuntimeError), WriterLock(tmp_path, "seek index"):
        raise RuntimeError("the run failed")
    assert not (tmp_path / HOLDER_NAME).exists() and not is_locked(tmp_path)


def test_the_lock_makes_its_folder_and_survives_a_note_already_gone(tmp_path):
    """The first index of a workspace under a home not made yet takes the lock in folders
    that do not exist; a holder note removed meanwhile (a cleaned folder) does not stop the
    lock's release. Mutations this pins (store/lock.py): ``mkdir(parents=False)``,
    ``unlink(missing_ok=False)``."""
    from seek.store.lock import HOLDER_NAME

    index_dir = tmp_path / "home" / "ws-0123"
    with WriterLock(index_dir, "seek index"):
        assert is_locked(index_dir)
        (index_dir / HOLDER_NAME).unlink()
    assert not is_locked(index_dir)


def test_an_unwritten_table_is_empty_not_an_error(tmp_path):
    table = ChunkTable(tmp_path)
    assert (table.count_chunks(), table.count_rows(), table.stored_paths()) == (0, 0, set())
    assert table.vector_search(np.ones(4), 5) == [] and table.keyword_scores("x", 5) == []
    assert not (tmp_path / "lancedb").exists()  # reading never creates files


def test_vector_search_filters_before_ranking(tmp_path):
    # far.py is the least similar chunk: only a filter applied before the top-k finds it.
    chunks = [(f"near{i}.py", 0, 1, "near", 1) for i in range(3)] + [("far.py", 0, 1, "far", 1)]
    table = ChunkTable(tmp_path)
    batch = rows_for(chunks)
    batch.vectors = np.array([[1, 0, 0, 0]] * 3 + [[0, 0, 0, 1]], dtype=np.float32)
    table.replace_files([], batch)
    query = np.array([1, 0, 0, 0], dtype=np.float32)
    assert [h.path for h in table.vector_search(query, 1, paths=["far.py"])] == ["far.py"]
    assert len(table.vector_search(query, 1)) == 1 and table.vector_search(query, 0) == []
    assert len(table.vector_search(query, 10)) == 4


def test_retired_tables_and_the_table_name_survive_a_round_trip(tmp_path):
    """manifest.py: a rebuild's table replaces the old one, which is listed in ``retired``
    with the time until a later run drops it."""
    manifest = Manifest(model="m", table="chunks_1a2b", retired={"chunks_0f1e": 1767000000000})
    save_manifest(tmp_path, manifest)
    loaded = load_manifest(tmp_path)
    assert loaded.table == "chunks_1a2b" and loaded.retired == {"chunks_0f1e": 1767000000000}


@pytest.mark.parametrize("table", ["../elsewhere", "chunks/x", "", 5])
def test_a_manifest_naming_a_table_outside_the_index_is_not_followed(tmp_path, caplog, table):
    """A table name becomes a folder name: one that could leave the index folder (or is not
    a name at all) makes the manifest unusable, said in the warning with the file's path."""
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({**Manifest(model="m").to_json(), "table": table}))
    with caplog.at_level("WARNING"):
        assert load_manifest(tmp_path) == Manifest()
    assert caplog.messages == [
        f"manifest {path} is malformed (bad table name {table!r}); the index will be rebuilt"
    ]


def test_an_unreadable_manifest_is_named_in_the_warning(tmp_path, caplog):
    (tmp_path / "manifest.json").write_text("{not json")
    with caplog.at_level("WARNING"):
        load_manifest(tmp_path)
    [line] = caplog.messages
    assert line.startswith(f"manifest {tmp_path / 'manifest.json'} is unreadable (Expecting ")
    assert line.endswith("); the index will be rebuilt")


def test_a_manifest_is_saved_into_an_index_folder_not_made_yet(tmp_path):
    """The first run under a new ``home``: neither it nor the index folder exist yet."""
    index_dir = tmp_path / "new-home" / "project-0123456789ab"
    save_manifest(index_dir, Manifest(model="m"))
    assert load_manifest(index_dir).model == "m"
