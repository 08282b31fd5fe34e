"""The graph extracted on a forked worker (seek.index.graph_worker): the same rows as an
in-process run, whatever happens to the worker, and no process left behind."""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from test_graph_damage import chunk_rows
from test_graph_index import PROJECT, graph_rows

import seek.chunk
import seek.index.embed_steps
import seek.index.graph_worker
from seek.chunk import grammar_for_path, syntax_of
from seek.index.graph_rows import file_facts
from seek.index.graph_worker import usable
from seek.index.indexer import index_workspace
from seek.retrieve.search_cache import PREFIX, build_written
from seek.store import index_dir_for

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the worker is forked on Linux only"
)


@pytest.fixture
def settings(settings_for, hash_provider):
    return settings_for(provider=hash_provider)


@pytest.fixture
def on_worker(monkeypatch):
    """Every run with a source file uses the worker (whatever this machine's cores)."""
    monkeypatch.setattr(seek.index.embed_steps, "usable", lambda files: True)


def in_process_root(make_tree, settings, monkeypatch, tree=PROJECT):
    """The same files in a folder of their own, indexed in-process (undoes ``monkeypatch``:
    called once the run under test is done)."""
    monkeypatch.setattr(seek.index.embed_steps, "usable", lambda files: False)
    root = make_tree(tree, name="in-process")
    index_workspace(root, settings)
    monkeypatch.undo()
    return root


def in_process_rows(make_tree, settings, monkeypatch):
    """The graph rows of the same project in a folder of its own, indexed in-process."""
    return graph_rows(in_process_root(make_tree, settings, monkeypatch), settings)


def record_extractions(monkeypatch, tmp_path, fail=None):
    """Make the worker module's extraction note the process it ran in (one line a file, in
    a file both processes append to), and fail as ``fail(rel)`` says in the child."""
    log = tmp_path / "extracted-in"
    parent = os.getpid()

    def facts(rel, data, root=None, tree=None):
        with open(log, "a") as out:
            out.write(f"{os.getpid()} {rel}\n")
        if os.getpid() != parent and fail is not None:
            fail(rel)
        return file_facts(rel, data, root, tree)

    monkeypatch.setattr(seek.index.graph_worker, "file_facts", facts)
    return lambda: [line.split(" ", 1) for line in log.read_text().splitlines()]


def test_the_worker_stores_the_rows_an_in_process_run_stores(
    make_tree, settings, monkeypatch, tmp_path, on_worker
):
    root = make_tree(PROJECT)
    extracted = record_extractions(monkeypatch, tmp_path)
    index_workspace(root, settings)
    rows = graph_rows(root, settings)
    pids = {pid for pid, _ in extracted()}
    assert pids and str(os.getpid()) not in pids, "every file was extracted by the worker"
    assert len(extracted()) == len(rows)
    monkeypatch.undo()
    assert rows == in_process_rows(make_tree, settings, monkeypatch)
    assert multiprocessing.active_children() == []


def test_a_worker_that_dies_midway_loses_no_row(make_tree, settings, monkeypatch, tmp_path,
                                                on_worker):  # fmt: skip
    def die_on_the_third(rel):
        if rel == "py/shop/gift.py":
            os._exit(3)

    root = make_tree(PROJECT)
    extracted = record_extractions(monkeypatch, tmp_path, fail=die_on_the_third)
    index_workspace(root, settings)
    rows = graph_rows(root, settings)
    by = {rel: pid for pid, rel in extracted()}
    assert by["py/shop/gift.py"] == str(os.getpid()), "the run extracted what the worker did not"
    monkeypatch.undo()
    assert rows == in_process_rows(make_tree, settings, monkeypatch)
    assert multiprocessing.active_children() == []


def record_parses(monkeypatch, tmp_path, fail=None):
    """Note the process each file with a grammar is parsed in for its syntax breaks (the
    run's chunker or the worker), and fail as ``fail(rel)`` says in the child."""
    log = tmp_path / "parsed-in"
    parent = os.getpid()

    def syntax(rel, source, lines, max_chars):
        if grammar_for_path(rel):  # (a file without one is never parsed)
            with open(log, "a") as out:
                out.write(f"{os.getpid()} {rel}\n")
        if os.getpid() != parent and fail is not None:
            fail(rel)
        return syntax_of(rel, source, lines, max_chars)

    monkeypatch.setattr(seek.chunk, "syntax_of", syntax)
    monkeypatch.setattr(seek.index.graph_worker, "syntax_of", syntax)
    return lambda: [line.split(" ", 1) for line in log.read_text().splitlines()]


@pytest.mark.parametrize(
    "failing", [None, ".go"], ids=["each parsed once", "a parse fails in the worker"]
)
def test_the_worker_parses_each_file_for_the_chunks_and_the_facts(
    make_tree, settings, monkeypatch, tmp_path, on_worker, failing
):
    """Every source file is sent to the worker and parsed there once, for both; one whose
    parse fails there is parsed by the run. The index is the one an in-process run makes."""

    def fail(rel):
        if failing and rel.endswith(failing):
            raise RecursionError("the worker could not")

    root = make_tree(PROJECT)
    parsed = record_parses(monkeypatch, tmp_path, fail=fail)
    index_workspace(root, settings)
    me = str(os.getpid())
    sources = sorted(rel for rel in PROJECT if grammar_for_path(rel))
    assert sorted(rel for pid, rel in parsed() if pid != me) == sources, "once each, there"
    by_run = sorted(rel for pid, rel in parsed() if pid == me)
    assert by_run == [rel for rel in sources if failing and rel.endswith(failing)]
    rows, chunks = graph_rows(root, settings), chunk_rows(root, settings)
    clean = in_process_root(make_tree, settings, monkeypatch)
    assert chunks == chunk_rows(clean, settings) and rows == graph_rows(clean, settings)


def test_a_file_the_worker_fails_on_is_extracted_by_the_run(
    make_tree, settings, monkeypatch, tmp_path, on_worker
):
    def fail_on_go(rel):
        if rel.endswith(".go"):
            raise MemoryError("the worker could not")

    root = make_tree(PROJECT)
    extracted = record_extractions(monkeypatch, tmp_path, fail=fail_on_go)
    index_workspace(root, settings)
    rows = graph_rows(root, settings)
    go_files = [rel for pid, rel in extracted() if rel.endswith(".go")]
    assert sorted(go_files) == sorted(2 * ["go/main.go", "go/store/store.go"]), "tried twice"
    monkeypatch.undo()
    assert rows == in_process_rows(make_tree, settings, monkeypatch)


def test_a_run_that_cannot_fork_extracts_in_process(make_tree, settings, monkeypatch, on_worker):
    def no_fork(root, max_chars):
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(seek.index.embed_steps, "GraphWorker", no_fork)
    root = make_tree(PROJECT)
    index_workspace(root, settings)
    rows = graph_rows(root, settings)
    monkeypatch.undo()
    assert rows == in_process_rows(make_tree, settings, monkeypatch)


@pytest.mark.parametrize("files", [3, 60], ids=["last-step", "step-in-flight"])
def test_a_run_that_fails_leaves_no_worker_behind(make_tree, settings, monkeypatch, on_worker,
                                                  files):  # fmt: skip
    def broken_embed(self, texts):
        raise RuntimeError("the embedder failed")

    monkeypatch.setattr(seek.index.embed_steps.EmbedSteps, "_embed", broken_embed)
    tree = {f"py/m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(files)}
    with pytest.raises(RuntimeError, match="the embedder failed"):
        index_workspace(make_tree(tree), settings)
    assert multiprocessing.active_children() == []


def test_a_cancelled_run_with_files_read_ahead_resumes_to_the_same_index(
    make_tree, settings_for, hash_provider, monkeypatch, on_worker
):
    """Files read and sent to the worker ahead of a cancel are neither stamped nor lost: the
    next run does them, and the index is the one an uncancelled in-process run makes."""
    tree = {f"py/m{i:03d}.py": f"def f{i}():\n    return g{i}()\n\n\ndef g{i}():\n    return {i}\n"
            for i in range(60)}  # fmt: skip
    settings = settings_for(provider=hash_provider, flush_every_files=10)
    root = make_tree(tree)
    cancel = threading.Event()

    def progress(event):
        if event.phase == "embedding" and event.done >= 25:
            cancel.set()

    report = index_workspace(root, settings, progress=progress, cancel=cancel)
    assert report.cancelled and 20 <= report.embedded < 60
    assert multiprocessing.active_children() == []
    resumed = index_workspace(root, settings)
    assert resumed.embedded == 60 - report.embedded
    rows, chunks = graph_rows(root, settings), chunk_rows(root, settings)
    clean = in_process_root(make_tree, settings, monkeypatch, tree)
    assert rows == graph_rows(clean, settings) and chunks == chunk_rows(clean, settings)


def test_a_finished_worker_exits_without_being_waited_for(tmp_path):
    """The last write tells the child no more files come and writes the graph rows while it
    exits (a join there cost a small run ~7 ms); ``close`` afterwards only collects it."""
    worker = seek.index.graph_worker.GraphWorker(tmp_path, 1500)
    try:
        source = PROJECT["py/shop/cart.py"].encode()
        worker.submit("py/shop/cart.py", source)
        assert worker.take(["py/shop/cart.py"]) == [
            ("py/shop/cart.py", *file_facts("py/shop/cart.py", source, tmp_path))
        ]
        worker.finish()
        worker.finish()  # again: nothing
        deadline = time.monotonic() + 10
        while worker._process.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not worker._process.is_alive(), "the child ended once told no more files come"
    finally:
        worker.close()
    assert multiprocessing.active_children() == []


def test_the_worker_is_used_only_where_it_can_help(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert usable(50)
    assert not usable(1), "a single saved file is extracted in-process"
    assert not usable(5), "a few files: compiling the worker's queries costs more"
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert not usable(50), "one core: nothing to overlap"
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setenv("SEEK_GRAPH_WORKER", "0")
    assert not usable(50)


def search_cache_files(root, settings):
    [folder] = [p for p in index_dir_for(root, settings).iterdir() if p.name.startswith(PREFIX)]
    names = {"meta.json", "table.json"}  # the table's own (random) file names
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.name not in names}


def test_the_search_data_built_while_the_worker_finishes_is_the_usual(
    make_tree, settings_for, hash_provider, tmp_path, monkeypatch
):
    built = []
    monkeypatch.setattr(seek.index.embed_steps, "build_written",
                        lambda written: built.append(1) or build_written(written))  # fmt: skip
    # the worker is still extracting when the run's last write comes
    record_extractions(monkeypatch, tmp_path, fail=lambda rel: time.sleep(0.5))
    caches = []
    for use_worker in (True, False):
        monkeypatch.setattr(seek.index.embed_steps, "usable", lambda files, on=use_worker: on)
        settings = settings_for(provider=hash_provider, home=str(tmp_path / f"home{use_worker}"))
        root = make_tree(PROJECT, name=f"ws{use_worker}")
        index_workspace(root, settings)
        caches.append(search_cache_files(root, settings))
    assert built == [1], "the worker's run built its search data before the graph was in"
    assert caches[0] == caches[1] and caches[0]


def test_the_worker_holds_none_of_the_process_s_sockets(
    make_tree, settings, monkeypatch, tmp_path, on_worker
):
    """A server's listening socket and connections are not kept open by the worker."""
    seen = tmp_path / "sockets"

    def note_sockets(rel):
        links = [os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
                 if os.path.exists(f"/proc/self/fd/{fd}")]  # fmt: skip
        seen.write_text("\n".join(link for link in links if link.startswith("socket:")))

    record_extractions(monkeypatch, tmp_path, fail=note_sockets)
    with socket.create_server(("127.0.0.1", 0)) as listening:
        index_workspace(make_tree(PROJECT), settings)
        mine = f"socket:[{os.fstat(listening.fileno()).st_ino}]"
    assert seen.exists()
    assert mine not in seen.read_text().splitlines()


def test_a_stop_signal_ends_the_worker_not_the_process_s_handler(
    make_tree, settings, monkeypatch, tmp_path, on_worker
):
    """A server's SIGTERM handler is not the worker's: stopped, the child ends and the run
    extracts what it did not answer."""
    handled = tmp_path / "handled"
    previous = signal.signal(signal.SIGTERM, lambda *_: handled.open("a").write(f"{os.getpid()}\n"))
    try:
        root = make_tree(PROJECT)
        stop = lambda rel: rel == "py/shop/gift.py" and os.kill(os.getpid(), signal.SIGTERM)  # noqa: E731
        record_extractions(monkeypatch, tmp_path, fail=stop)
        index_workspace(root, settings)
    finally:
        signal.signal(signal.SIGTERM, previous)
    rows = graph_rows(root, settings)
    assert not handled.exists(), "the child ran the process's handler"
    monkeypatch.undo()
    assert rows == in_process_rows(make_tree, settings, monkeypatch)


def test_a_run_in_a_process_that_uses_lancedb_prints_no_fork_warning(make_tree, tmp_path):
    """lancedb's at-fork hook warns in every child it finds itself in (a server imports the
    lancedb package); the worker never uses LanceDB, and its runs print nothing. A process
    of its own: pytest records warnings instead of printing them."""
    root = make_tree(PROJECT)
    program = f"""
import lancedb.background_loop  # registers the hook, as a server has
import seek.chunk
import seek.index.embed_steps
seek.index.embed_steps.usable = lambda files: True
from pathlib import Path
from seek import index_workspace, load_settings
home = Path({str(tmp_path / "home")!r})
settings = load_settings(overrides={{"home": str(home)}}, env={{}},
                         user_config=home / "no-user-config.toml")
index_workspace({str(root)!r}, settings)
"""
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "fork" not in run.stderr, run.stderr
