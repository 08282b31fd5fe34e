"""The search cache (issue 14): a search on an unchanged index reads it and imports neither
LanceDB nor pyarrow nor model2vec, writes nothing, and answers what a search on the table
answers; a changed index gets a new cache; a missing, stale, half-written or damaged cache is
never used (the table is read instead)."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from conftest import SMALL_PROJECT, HashEmbedder

from seek.index.indexer import index_workspace
from seek.index.refresh import refresh_before_search
from seek.retrieve import Searcher
from seek.retrieve.search_cache import PREFIX, cache_key, table_unchanged
from seek.store import index_dir_for, load_manifest
from seek.store.manifest import MANIFEST_NAME

QUESTIONS = ["configure retries", "HttpClient send request", "router add route", "policy"]


def answers(searcher):
    return [[(h.path, h.start_line, h.end_line, h.score) for h in searcher.search(q, 5).hits]
            for q in QUESTIONS]  # fmt: skip


def caches(index_dir):
    return sorted(p.name for p in index_dir.iterdir() if p.name.startswith(PREFIX))


@pytest.fixture(autouse=True)
def test_provider():
    """Settings whose model id is the hash embedder's (``test/hash``), so the freshness
    check and the index runs it starts agree with the indexes these tests build."""
    from seek.embed import PROVIDERS, register_provider

    register_provider("test", lambda settings: HashEmbedder())
    yield
    PROVIDERS.pop("test", None)


def indexed(make_tree, settings_for):
    root = make_tree(SMALL_PROJECT)
    settings = settings_for(root, provider="test", model="hash")
    index_workspace(root, settings, embedder=HashEmbedder())
    return root, settings, index_dir_for(root, settings)


def test_index_run_writes_the_cache_and_search_reads_it(make_tree, settings_for):
    root, settings, index_dir = indexed(make_tree, settings_for)
    key = cache_key(load_manifest(index_dir))
    assert caches(index_dir) == [PREFIX + key]
    cached = Searcher.open(root, settings, HashEmbedder())
    assert cached.from_cache
    # memory-mapped, not read into memory (the module's promise; mutation testing found
    # ``np.load(..., mmap_mode="r")`` -> ``mmap_mode=None`` unseen)
    assert isinstance(cached.index.vectors, np.memmap)
    for folder in index_dir.glob(PREFIX + "*"):  # the same index read from the table
        for f in folder.iterdir():
            f.unlink()
        folder.rmdir()
    from_table = Searcher.open(root, settings, HashEmbedder())
    assert not from_table.from_cache
    assert answers(cached) == answers(from_table)
    assert np.array_equal(cached.index.vectors, from_table.index.vectors)
    assert (
        cached.index.chunk_of_key == from_table.index.chunk_of_key
    )  # each chunk's number in its file
    assert caches(index_dir) == [PREFIX + key]  # the searcher wrote it back


def test_unchanged_workspace_is_not_reindexed_or_rewritten(make_tree, settings_for):
    root, settings, index_dir = indexed(make_tree, settings_for)
    before = (index_dir / MANIFEST_NAME).stat().st_mtime_ns
    assert refresh_before_search(root, settings) == []
    assert (index_dir / MANIFEST_NAME).stat().st_mtime_ns == before


def test_a_change_gets_a_new_cache(make_tree, settings_for):
    root, settings, index_dir = indexed(make_tree, settings_for)
    old = caches(index_dir)
    (root / "src/retry.py").write_text("def configure_backoff(jitter):\n    return jitter\n")
    assert refresh_before_search(root, settings) == []  # an index run (the test provider)
    new = caches(index_dir)
    assert new != old and len(new) == 1
    searcher = Searcher.open(root, settings, HashEmbedder())
    assert searcher.from_cache
    assert any("configure_backoff" in c for c in searcher.index.contents)
    assert not any("configure_retries" in c for c in searcher.index.contents)


def test_a_touched_file_keeps_the_cache(make_tree, settings_for):
    """The key is the rows' content: an mtime that moved without a change keeps it."""
    root, settings, index_dir = indexed(make_tree, settings_for)
    old = caches(index_dir)
    os.utime(root / "src/router.py", ns=(1, 1))
    report = index_workspace(root, settings, embedder=HashEmbedder())
    assert not report.changed and caches(index_dir) == old


@pytest.mark.parametrize("damage", ["half written", "truncated vectors", "a row short",
                                    "other format", "stale key", "run open"])  # fmt: skip
def test_a_bad_cache_is_never_used(make_tree, settings_for, damage):
    root, settings, index_dir = indexed(make_tree, settings_for)
    expected = answers(Searcher.open(root, settings, HashEmbedder()))
    [folder] = index_dir.glob(PREFIX + "*")
    manifest_path = index_dir / MANIFEST_NAME
    if damage == "half written":  # a writer that died before the rename leaves a .tmp only
        folder.rename(index_dir / f".{folder.name}.123.4.tmp")
        (index_dir / f".{folder.name}.123.4.tmp" / "vectors.npy").write_bytes(b"x")
    elif damage == "truncated vectors":
        vectors = folder / "vectors.npy"
        vectors.write_bytes(vectors.read_bytes()[:200])
    elif damage == "a row short":  # a readable array, of other rows than meta.json says
        vectors = np.load(folder / "vectors.npy")
        with open(folder / "vectors.npy", "wb") as fh:
            np.save(fh, vectors[:-1])
    elif damage == "other format":
        meta = json.loads((folder / "meta.json").read_text())
        (folder / "meta.json").write_text(json.dumps({**meta, "format": -1}))
    elif damage == "stale key":  # a cache of other rows under this manifest's name
        meta = json.loads((folder / "meta.json").read_text())
        (folder / "meta.json").write_text(json.dumps({**meta, "key": "0" * 24}))
    elif damage == "run open":  # a run died mid-write: the rows may disagree with its stamps
        data = json.loads(manifest_path.read_text())
        manifest_path.write_text(json.dumps({**data, "runOpen": True}))
    searcher = Searcher.open(root, settings, HashEmbedder())
    # The cache of a run that stopped is the last complete index (issue 31): it is read
    # rather than the table's half-updated rows; it is never written over meanwhile.
    assert searcher.from_cache == (damage == "run open")
    assert answers(searcher) == expected
    if damage == "run open":
        assert caches(index_dir) == [folder.name]  # nothing written while a run is open


def test_status_sees_table_damage_without_lancedb(make_tree, settings_for):
    root, settings, index_dir = indexed(make_tree, settings_for)
    manifest = load_manifest(index_dir)
    assert table_unchanged(index_dir, manifest) is True
    data = max((index_dir / "lancedb" / f"{manifest.table}.lance" / "data").iterdir(),
               key=lambda p: p.stat().st_size)  # fmt: skip
    data.write_bytes(data.read_bytes()[:10])
    assert table_unchanged(index_dir, manifest) is False


def run_seek(args, env, check_modules):
    code = (
        "import sys, json\n"
        f"sys.argv = ['seek', *{args!r}]\n"
        "from seek.cli import main\n"
        "main()\n"
        f"print(json.dumps({{m: m in sys.modules for m in {check_modules!r}}}), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout, json.loads(done.stderr.strip().splitlines()[-1])


HEAVY = ["lancedb", "pyarrow", "model2vec", "huggingface_hub", "httpx", "rich"]


@pytest.mark.slow
def test_cli_search_on_an_unchanged_index_stays_lean(make_tree, seek_home):
    root = make_tree(SMALL_PROJECT)
    env = {**os.environ, "SEEK_HOME": str(seek_home), "XDG_CONFIG_HOME": str(seek_home / "c")}
    subprocess.run([sys.executable, "-m", "seek", "-C", str(root), "index", "-q"], env=env,
                   check=True, capture_output=True, timeout=300)  # fmt: skip
    [index_dir] = [p for p in seek_home.iterdir() if p.is_dir() and p.name != "c"]
    before = (index_dir / MANIFEST_NAME).stat().st_mtime_ns
    out, loaded = run_seek(["-C", str(root), "search", "configure retries"], env, HEAVY)
    assert "src/retry.py" in out
    assert not any(loaded.values()), loaded
    assert (index_dir / MANIFEST_NAME).stat().st_mtime_ns == before
    out, loaded = run_seek(["-C", str(root), "status"], env, [*HEAVY, "numpy"][:-1])
    assert "chunks" in out and not any(loaded.values()), loaded
    _, loaded = run_seek(["--help"], env, [*HEAVY, "numpy"])
    assert not any(loaded.values()), loaded
    # A no-change `seek index` trusts the table its cache records: no LanceDB, no model.
    store_and_model = ["lancedb", "lancedb._lancedb", "pyarrow", "model2vec", "huggingface_hub"]
    out, loaded = run_seek(["-C", str(root), "index"], env, store_and_model)
    assert "nothing changed" in out and not any(loaded.values()), (out, loaded)
    assert (index_dir / MANIFEST_NAME).stat().st_mtime_ns != before  # it did run


def test_caches_are_read_one_at_a_time(tmp_path, monkeypatch):
    """numpy parses array headers with ``ast.literal_eval``, which CPython 3.11 cannot run in
    two threads at once ("AST constructor recursion depth mismatch", seen when a search
    opened a cache while a rebuild replaced it): reads of caches never overlap."""
    import threading
    import time

    from seek.retrieve import search_cache

    key = "k" * 16
    folder = search_cache.cache_dir(tmp_path, key)
    folder.mkdir(parents=True)
    meta = {"format": search_cache.CACHE_FORMAT, "key": key, "chunks": 0, "rows": 0}
    (folder / "meta.json").write_text(json.dumps(meta))
    inside, most = [0], [0]
    count = threading.Lock()

    def slow_read(*args):
        with count:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.02)
        with count:
            inside[0] -= 1
        return "data"

    monkeypatch.setattr(search_cache, "_read_folder", slow_read)
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(search_cache.load_cache(tmp_path, key)))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == ["data"] * 4
    assert most[0] == 1


def test_a_cold_run_caches_what_it_wrote_as_reading_the_table_would(
    make_tree, settings_for, monkeypatch
):
    """A run that created its table builds the cache from the rows it wrote, without reading
    the table back; the files are the ones a cache read from the table has, byte for byte
    (bar the time in meta.json). Rows that do not add up to the manifest are not used."""
    from seek.retrieve import search_cache
    from seek.store import ChunkTable

    loads = []
    real_load_all = ChunkTable.load_all
    monkeypatch.setattr(ChunkTable, "load_all", lambda self: loads.append(1) or real_load_all(self))
    tree = make_tree(SMALL_PROJECT)
    settings = settings_for(tree, provider="test", model="hash", flush_every_files=2)
    index_workspace(tree, settings, embedder=HashEmbedder())  # several writes
    assert loads == []
    index_dir = index_dir_for(tree, settings)
    [folder] = index_dir.glob(PREFIX + "*")
    from_run = {f.name: f.read_bytes() for f in folder.iterdir() if f.name != "meta.json"}
    shutil.rmtree(folder)
    search_cache.refresh_search_cache(index_dir)
    assert loads == [1]
    [again] = index_dir.glob(PREFIX + "*")
    from_table = {f.name: f.read_bytes() for f in again.iterdir() if f.name != "meta.json"}
    assert from_run == from_table and len(from_run) == 7

    table = load_manifest(index_dir).table
    short = {name: [] for name in ("path", "chunk", "start_line", "end_line", "part")}
    short.update(content=[], keywords=[], vectors=np.zeros((0, 8), dtype=np.float32))
    data = ChunkTable(index_dir, table).load_all()
    loads.clear()
    for written in ({**short, "table": table}, {**data, "table": "chunks_other"}):
        shutil.rmtree(next(index_dir.glob(PREFIX + "*")))
        search_cache.refresh_search_cache(index_dir, written)  # not the table's: read it
        [third] = index_dir.glob(PREFIX + "*")
        assert {f.name: f.read_bytes() for f in third.iterdir() if f.name != "meta.json"} == (
            from_table
        )
    assert loads == [1, 1]


def test_a_writer_keeps_a_fresh_temporary_folder_and_removes_a_crashed_ones(
    make_tree, settings_for
):
    """Another writer (a searcher in another process) may be filling its temporary folder
    while this one finishes: that folder is left alone; one older than ``STALE_TEMP_S`` is a
    crashed writer's and goes (issue 27). Mutations this pins (search_cache.py
    ``_remove_others``): the ``if old:`` test dropped (a live writer's folder deleted under
    it), and ``> STALE_TEMP_S`` -> ``< STALE_TEMP_S``."""
    import time

    from seek.retrieve.search_cache import STALE_TEMP_S

    root, settings, index_dir = indexed(make_tree, settings_for)
    fresh = index_dir / f".{PREFIX}{'1' * 24}.4242.7.tmp"
    crashed = index_dir / f".{PREFIX}{'2' * 24}.4343.8.tmp"
    for folder in (fresh, crashed):
        folder.mkdir()
        (folder / "vectors.npy").write_bytes(b"half")
    long_ago = time.time() - 2 * STALE_TEMP_S
    os.utime(crashed, (long_ago, long_ago))
    (root / "src/retry.py").write_text("def configure_backoff(jitter):\n    return jitter\n")
    assert refresh_before_search(root, settings) == []  # an index run writes a new cache
    assert len(caches(index_dir)) == 1
    assert (fresh / "vectors.npy").read_bytes() == b"half"
    assert not crashed.exists()


def test_without_its_cache_or_with_a_run_open_an_index_is_not_current(make_tree, settings_for):
    """The freshness check (index/freshness.py) trusts an index only when its cache exists
    and no run is open: a run that died mid-write, or a cache gone, makes the next search
    update first (issue 27, mutation testing). Mutations this pins (search_cache.py):
    ``has_cache``'s ``key is not None and ...`` -> ``or`` (no cache needed), and
    ``cache_key``'s ``run_open or not has_index`` -> ``and`` (a key while a run is open)."""
    from seek.index.freshness import is_current

    root, settings, index_dir = indexed(make_tree, settings_for)
    assert is_current(root, settings)
    [folder] = index_dir.glob(PREFIX + "*")
    shutil.rmtree(folder)
    assert not is_current(root, settings)
    assert refresh_before_search(root, settings) == []
    assert caches(index_dir) == [folder.name] and is_current(root, settings)
    manifest_path = index_dir / MANIFEST_NAME
    data = json.loads(manifest_path.read_text())
    manifest_path.write_text(json.dumps({**data, "runOpen": True}))
    assert not is_current(root, settings)
    assert refresh_before_search(root, settings) == []
    assert not load_manifest(index_dir).run_open and is_current(root, settings)


def test_the_key_changes_with_whatever_determines_the_rows():
    """Two indexes of the same files under another model, dimensions, chunking, table or
    format hold other rows: their caches must have other keys, or a rebuild would keep the
    old rows' cache (its folder exists, so it is not written again). A touched file (new
    mtime, same content) keeps the key. Mutations this pins (search_cache.py ``cache_key``):
    the head (model, chunking...) left out of the digest, the chunking always None."""
    import dataclasses

    from seek.store import ChunkingSpec, Manifest, Stamp

    files = {"a.py": Stamp("h1", 10, 1, 2), "b.py": Stamp("h2", 20, 2, 1)}
    chunking = ChunkingSpec(1000, 100, 100, 600, 80)
    base = Manifest(model="m", dimensions=16, chunking=chunking, files=files, table="t1")
    others = [
        dataclasses.replace(base, model="other"),
        dataclasses.replace(base, dimensions=32),
        dataclasses.replace(base, chunking=dataclasses.replace(chunking, max=800)),
        dataclasses.replace(base, chunking=None),
        dataclasses.replace(base, table="t2"),
        dataclasses.replace(base, format=base.format + 1),
        dataclasses.replace(base, files={**files, "b.py": Stamp("h3", 20, 2, 1)}),
        dataclasses.replace(base, files={**files, "b.py": Stamp("h2", 20, 2, 2)}),
    ]
    keys = [cache_key(m) for m in (base, *others)]
    assert None not in keys and len(set(keys)) == len(keys)
    touched = dataclasses.replace(base, files={**files, "a.py": Stamp("h1", 10, 99, 2)})
    assert cache_key(touched) == cache_key(base)
