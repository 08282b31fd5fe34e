"""The chunk table through LanceDB's engine alone (``seek.store.lance``) and through the
``lancedb`` package: the same contract, the same stored table (each reads what the other
wrote), the package kept for what only it does, and the lean path refused where it was not
tested (issue 14)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from test_store import rows_for

from seek.store import ChunkTable, health, lance
from seek.store.table import KEYWORD_COLUMN

CHUNKS = [
    ("src/app.py", 0, 3, "def run_server(port): return serve(port)", 2),
    ("src/retry.py", 0, 2, "class RetryPolicy: max_attempts = 3", 1),
    ("src/o'brien.py", 0, 1, "quote = 'irish names'", 1),
    ("lib/util.py", 4, 9, "def helper(): pass", 3),
]
COLUMNS = ("path", "chunk", "start_line", "end_line", "part", "content", "keywords")


@pytest.fixture(params=["engine", "package"])
def path_kind(request, monkeypatch):
    """Each test runs once on the lean path and once on the package's."""
    if request.param == "package":
        monkeypatch.setattr(lance, "native_module", lambda: None)
    else:
        assert lance.native_module() is not None  # the installed lancedb is a tested one
    return request.param


def connection_kind(table: ChunkTable) -> str:
    return "package" if isinstance(table._connect(), lance.PackageConnection) else "engine"


def rows(table: ChunkTable) -> list[tuple]:
    data = table.load_all()
    vectors = [v.tobytes() for v in data["vectors"]]
    return sorted(zip(*(data[c] for c in COLUMNS), vectors, strict=True))


def test_the_contract_on_either_path(tmp_path, path_kind, lance_keywords):
    table = ChunkTable(tmp_path)
    assert connection_kind(table) == path_kind
    assert table.count_chunks() == 0 and table.stored_paths() == set()
    table.replace_files([], rows_for(CHUNKS))
    assert table.count_rows() == 7 and table.count_chunks() == 4
    assert table.stored_paths() == {c[0] for c in CHUNKS}
    table.replace_files(["src/app.py"], rows_for(CHUNKS[:1]))  # replaced, not doubled
    table.delete_files(["src/o'brien.py"])  # a quote in a path
    assert table.stored_paths() == {"src/app.py", "src/retry.py", "lib/util.py"}
    assert table.count_chunks() == 3
    table.finish()  # the package builds the keyword index; the engine compacts after it
    assert table.has_keyword_index()
    assert [i for i in table._open().list_indices() if KEYWORD_COLUMN in i.columns]
    hits = table.keyword_search("retry policy", 3)
    assert hits and hits[0].path == "src/retry.py"
    near = table.vector_search(np.eye(4, dtype=np.float32)[1], 2)
    assert len(near) == 2 and near[0].score == 0.0
    assert health.check(table, 3) == ""
    assert "chunks, the manifest 9" in health.check(table, 9)
    data = table.load_all()
    assert data["vectors"].dtype == np.float32 and data["vectors"].shape == (6, 4)
    table.drop()
    assert not table.exists() and table.count_chunks() == 0


def test_writes_after_the_keyword_index_reach_both_handles(tmp_path, lance_keywords):
    """The engine writes, the package builds the keyword index, the engine writes and
    compacts again: neither handle works on a version older than the other's write."""
    table = ChunkTable(tmp_path)
    table.replace_files([], rows_for(CHUNKS[:2]))
    table.finish()
    assert table.keyword_search("retry", 1)[0].path == "src/retry.py"
    table.replace_files([], rows_for([("src/extra.py", 0, 1, "def retry_later(): pass", 1)]))
    table.compact()  # brings the keyword index up to date with the new rows
    assert {h.path for h in table.keyword_search("retry", 5)} >= {"src/extra.py"}
    assert table.count_chunks() == 3 and table.has_keyword_index()


@pytest.mark.parametrize("writer", ["engine", "package"])
def test_each_path_reads_what_the_other_wrote(tmp_path, monkeypatch, writer):
    """The same stored table: written by one path, read row for row (vectors byte for byte)
    and with the same schema by the other; and the other can go on writing it."""
    native = lance.native_module()
    assert native is not None
    use = {"engine": lambda: native, "package": lambda: None}
    reader = "package" if writer == "engine" else "engine"

    monkeypatch.setattr(lance, "native_module", use[writer])
    written = ChunkTable(tmp_path)
    written.replace_files([], rows_for(CHUNKS))
    written.replace_files(["lib/util.py"], rows_for(CHUNKS[3:]))
    expected = rows(written)
    schema = written._open().scan(list(COLUMNS) + ["vector"]).schema

    monkeypatch.setattr(lance, "native_module", use[reader])
    read = ChunkTable(tmp_path)
    assert connection_kind(read) == reader
    assert rows(read) == expected
    assert read._open().scan(list(COLUMNS) + ["vector"]).schema == schema
    read.replace_files(["src/app.py"], rows_for(CHUNKS[:1]))
    read.compact()
    assert rows(read) == expected

    monkeypatch.setattr(lance, "native_module", use[writer])
    assert rows(ChunkTable(tmp_path)) == expected

    # The same rows written afresh by the other path: the same table, schema metadata too.
    monkeypatch.setattr(lance, "native_module", use[reader])
    other = ChunkTable(tmp_path / "other")
    other.replace_files([], rows_for(CHUNKS))
    other.replace_files(["lib/util.py"], rows_for(CHUNKS[3:]))
    assert rows(other) == expected
    other_schema = other._open().scan(list(COLUMNS) + ["vector"]).schema
    assert other_schema.equals(schema, check_metadata=True)


def test_the_lean_path_only_with_tested_versions(monkeypatch):
    """Another lancedb release, or SEEK_LANCEDB=package: the package does everything."""
    assert lance._load_native() is not None
    monkeypatch.setattr(lance, "_installed_version", lambda folder: "0.99.1")
    assert lance._load_native() is None
    monkeypatch.setattr(lance, "_installed_version", lambda folder: None)
    assert lance._load_native() is None
    monkeypatch.undo()
    monkeypatch.setenv(lance.ENV_SWITCH, "package")
    assert lance._load_native() is None


def test_an_index_process_loads_the_engine_not_the_package(tmp_path):
    """A cold index of a small folder in a fresh process: lancedb's extension, not its
    Python package (~1 s of imports); with SEEK_LANCEDB=package, the package."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("def main():\n    return 1\n")
    code = (
        "import os, sys, json\n"
        "from seek import index_workspace, load_settings\n"
        "s = load_settings(overrides={'home': os.environ['SEEK_HOME']}, env={})\n"
        f"r = index_workspace({str(tmp_path / 'src')!r}, s)\n"
        "loaded = [m in sys.modules for m in ('lancedb', 'lancedb._lancedb')]\n"
        "print(json.dumps([r.chunks, *loaded]))\n"
    )
    for switch, expected in (("", [1, False, True]), ("package", [1, True, True])):
        env = {**os.environ, lance.ENV_SWITCH: switch, "SEEK_HOME": str(tmp_path / f"h{switch}")}
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=env, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout.strip().splitlines()[-1]) == expected, switch
