"""The LanceDB table and the manifest, for real (temp dirs)."""

import json

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from seek.store import ChunkingSpec, ChunkTable, Manifest, RowBatch, Stamp
from seek.store.manifest import load_manifest, save_manifest
from seek.store.table import sql_quote
from seek.text import keyword_column, keyword_query


def rows_for(chunks, dims=4):
    """chunks: list of (path, start, end, content, n_windows)."""
    batch = RowBatch.empty(dims)
    vectors = []
    for number, (path, start, end, content, windows) in enumerate(chunks):
        for part in range(windows):
            batch.path.append(path)
            batch.chunk.append(number)
            batch.start_line.append(start)
            batch.end_line.append(end)
            batch.part.append(part)
            batch.content.append(content)
            batch.keywords.append(keyword_column(path, content) if part == 0 else "")
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


def test_keyword_search_never_writes_a_missing_index(tmp_path):
    """Searches only read (a reader building the index raced the writer's commits): the
    missing index is reported by check(), and the next run rebuilds it."""
    table = ChunkTable(tmp_path)
    table.replace_files([], rows_for([("a.py", 0, 1, "repair me", 1)]))  # no finish()
    assert table.keyword_search("repair", 5) == []
    assert not table.has_keyword_index()
    assert table.check(1) == "the keyword index is missing"
    table.finish()
    assert table.check(1) == ""
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
