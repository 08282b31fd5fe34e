"""Rebuilds while searches and status requests run (issue 12, defect 3): a reader always
sees the last complete index, and only the writer writes."""

import threading
import time

from conftest import SMALL_PROJECT, HashEmbedder

from seek.index.indexer import REBUILD, index_workspace
from seek.index.status import workspace_status
from seek.retrieve import Searcher
from seek.store import ChunkTable, index_dir_for, load_manifest
from seek.store.graph_table import GRAPH_SUFFIX, graph_table_name

RUN_S = 4.0


def rows(root, settings):
    data = ChunkTable(index_dir_for(root, settings)).load_all()
    columns = ("path", "chunk", "start_line", "end_line", "part", "content")
    return sorted(zip(*(data[c] for c in columns), strict=True))


def test_searches_and_status_during_rebuilds_never_fail(make_tree, settings_for):
    root = make_tree(SMALL_PROJECT)
    settings = settings_for(root)
    index_workspace(root, settings, embedder=HashEmbedder())
    stop = threading.Event()
    errors: list[str] = []
    searches = [0]
    rebuilds = [0]

    def rebuild():  # the status thread probes the writer lock: never a refusal for that
        while not stop.is_set():
            try:
                report = index_workspace(root, settings, mode=REBUILD, embedder=HashEmbedder())
                assert report.rebuild_reason == "rebuild requested"
                rebuilds[0] += 1
            except Exception as exc:
                errors.append(f"rebuild: {type(exc).__name__}: {exc}")

    def search():
        while not stop.is_set():
            try:
                found = Searcher.open(root, settings, HashEmbedder()).search("retries", 3)
                assert found.hits, "a search found nothing"
                searches[0] += 1
            except Exception as exc:  # every failure is the finding
                errors.append(f"search: {type(exc).__name__}: {exc}")

    def status():
        while not stop.is_set():
            try:
                assert workspace_status(root, settings).files == 5
            except Exception as exc:
                errors.append(f"status: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=f) for f in (rebuild, search, search, status)]
    for thread in threads:
        thread.start()
    time.sleep(RUN_S)
    stop.set()
    for thread in threads:
        thread.join(60)
    assert not errors, f"{len(errors)} failures, first: {errors[:3]}"
    assert rebuilds[0] >= 3 and searches[0] >= 10
    clean_settings = settings_for(root, home=str(root.parent / "clean-home"))
    index_workspace(root, clean_settings, embedder=HashEmbedder())
    assert rows(root, settings) == rows(root, clean_settings)
    names = ChunkTable(index_dir_for(root, settings)).table_names()
    tables = [n for n in names if not n.endswith(GRAPH_SUFFIX)]  # each with its code graph's
    assert {n for n in names if n.endswith(GRAPH_SUFFIX)} <= {graph_table_name(n) for n in tables}
    assert len(tables) <= rebuilds[0] + 1  # retired tables wait for their grace period only


def test_a_cancelled_rebuild_keeps_the_previous_index(make_tree, settings_for):
    root = make_tree(SMALL_PROJECT)
    settings = settings_for(root)
    index_workspace(root, settings, embedder=HashEmbedder())
    before = rows(root, settings)
    table = load_manifest(index_dir_for(root, settings)).table
    stop = threading.Event()
    stop.set()
    report = index_workspace(root, settings, mode=REBUILD, embedder=HashEmbedder(), cancel=stop)
    assert report.cancelled and report.kept_previous
    assert report.summary().startswith("Rebuild cancelled; the previous index is kept.")
    assert load_manifest(index_dir_for(root, settings)).table == table
    assert rows(root, settings) == before
    assert Searcher.open(root, settings, HashEmbedder()).search("retries", 3).hits
