"""A short soak of a real `seek serve` (issue 20): distinct questions must not grow its memory,
files or threads. The long version is `python -m bench.soak` (bench/README.md, "Soak")."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from bench.common import free_port
from bench.soak.soak import proc_sample
from bench.soak.soak_questions import QuestionSource

pytestmark = pytest.mark.slow

SRC = Path(__file__).resolve().parent.parent / "src" / "seek"
WORKSPACE_PARTS = ("retrieve", "text.py")
"""A small copy of seek's own code (17 files, 162 chunks; all of src/seek is 106 files, 776
chunks): real code to ask about, cheap to index and to search."""
EDIT_TARGET = "text.py"
QUESTIONS = 2_000
SAMPLE_EVERY = 100
EDIT_EVERY = 100
CONTEXT_EVERY = 10
MAX_SECOND_HALF_GROWTH = 0.03
"""Measured on the 2-core dev machine with an update every 100 questions: +0.6 % (RSS 273 MiB
after 1,000 questions), fds constant, threads 15 until the 5th update opened LanceDB's few
workers, then 23 to the end. Before issue 20's fixes (the searcher reloaded after every update
check and kept alive by a reference cycle), without updates: +8.9 %, fds 20 -> 43."""
LAZY_POOL_THREADS = 2
SETTLE_S = 30.0
"""How long idle LanceDB workers may take to end (tokio keeps an idle worker 10 s)."""

TOKEN = secrets.token_urlsafe(32)
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@dataclass
class Server:
    workspace: Path
    url: str
    process: subprocess.Popen
    temp: Path
    """The server's TMPDIR, empty at start."""
    temp_made: int
    """Its modification time (ns) when it was made."""
    updated: bool = False
    """An index update ran in it (a test edited the workspace)."""
    original: str | None = None
    """The edited file's text before the first edit."""


def copy_workspace(root: Path) -> Path:
    workspace = root / "seek"
    workspace.mkdir()
    for part in WORKSPACE_PARTS:
        source = SRC / part
        if source.is_dir():
            shutil.copytree(source, workspace / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, workspace / part)
    return workspace


@contextmanager
def serving(tmp_path: Path) -> Iterator[Server]:
    """A real `seek serve` on an indexed small copy of src/seek."""
    workspace = copy_workspace(tmp_path)
    # A token the test chooses, as a script would (issue 43: every request carries one).
    env = {**os.environ, "SEEK_HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path),
           "SEEK_TOKEN": TOKEN}  # fmt: skip
    env.pop("LANCE_IO_THREADS", None)  # seek's own default is what is under test
    seek = [sys.executable, "-m", "seek"]
    subprocess.run([*seek, "index", "-q", str(workspace)], env=env, check=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    temp = tmp_path / "server-tmp"  # where the server warms LanceDB up (see below)
    temp.mkdir()
    made = temp.stat().st_mtime_ns
    server = subprocess.Popen(
        [*seek, "serve", "--port", str(port), "--workspace", str(workspace)],
        env={**env, "TMPDIR": str(temp)}, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/v1/status", headers=AUTH).raise_for_status()
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "seek serve did not answer"
                time.sleep(0.2)
        yield Server(workspace, url, server, temp, made)
    finally:
        server.terminate()
        server.wait(30)


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    """One server for the tests below, in file order: starting and indexing one costs
    seconds, and each test reads its own window of the process's life."""
    with serving(tmp_path_factory.mktemp("soak")) as running:
        yield running


def _lance_mapped(pid: int) -> bool:
    maps = Path(f"/proc/{pid}/maps").read_text(encoding="utf-8", errors="replace")
    return "/lancedb/" in maps or "/lance/" in maps


def _wait_for_warm_up(server: Server, seconds: float = 60) -> None:
    """Until the server's LanceDB warm-up (``seek.store.warm.warm_lancedb``) has made and
    removed its throwaway table folder in the server's empty TMPDIR."""
    deadline = time.monotonic() + seconds
    while server.temp.stat().st_mtime_ns == server.temp_made or any(server.temp.iterdir()):
        assert time.monotonic() < deadline, "the server did not warm LanceDB up"
        time.sleep(0.2)


MAX_FILE_MIB_AT_FIRST_UPDATE = 20
"""Resident file pages the first update may add. Measured on the 2-core dev machine: +3.0 MiB
after the warm-up; +73.4 MiB when the server had only imported LanceDB (its code read from
disk at the first update)."""


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc")
def test_a_server_loads_lancedb_at_start_not_at_its_first_update(server):
    """A search on an unchanged index needs no LanceDB (issue 14), but a long-running server
    needs it at its first update: it loads it at start and runs an update's steps on a
    throwaway table, so that update does not stall and the memory does not jump long after
    start (what a soak read as growth: max 1.52 x the RSS at 1,000 requests, issue 20)."""
    assert not server.updated, "run this before a test that edits the workspace"
    pid = server.process.pid
    httpx.post(f"{server.url}/v1/search", json={"query": "where are settings read", "k": 3},
               headers=AUTH)  # fmt: skip
    deadline = time.monotonic() + 30
    while not _lance_mapped(pid):
        assert time.monotonic() < deadline, "LanceDB was not loaded by a server with no update"
        time.sleep(0.2)
    _wait_for_warm_up(server)
    before = proc_sample(pid)["file_mib"]
    with httpx.Client(timeout=60, headers=AUTH) as http:
        edit_and_update(http, server, 0)
    added = proc_sample(pid)["file_mib"] - before
    print(f"file pages: {before:.1f} MiB before the first update, +{added:.1f} MiB at it")
    assert added < MAX_FILE_MIB_AT_FIRST_UPDATE, (before, added)


def edit_and_update(http: httpx.Client, server: Server, edit: int) -> None:
    """Give the workspace's file a new function, update the index through the API (the same
    update a search's check would start, without waiting for that check), and wait until a
    search finds the function: the update really ran and the searcher was replaced."""
    server.updated = True
    target = server.workspace / EDIT_TARGET
    if server.original is None:
        server.original = target.read_text(encoding="utf-8")
    name = f"soak_probe_{edit}"
    target.write_text(server.original + f"\n\ndef {name}():\n    return {edit}\n")
    ran = http.post(f"{server.url}/v1/index", json={})
    assert ran.status_code in (200, 409), ran.text  # 409: a search's check started it first
    deadline = time.monotonic() + 30
    while True:
        answer = http.post(f"{server.url}/v1/search", json={"query": name, "k": 3})
        if any(h["path"] == EDIT_TARGET and name in h["content"] for h in answer.json()["hits"]):
            return
        assert time.monotonic() < deadline, f"edit {edit} never became searchable"
        time.sleep(0.05)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
# 2,000 requests take ~40 s on an idle 2-core machine and past the suite's 120 s under load
# (more workers than cores: .ci/nonroot); a hang still fails, later (issue 42).
@pytest.mark.timeout(360)
def test_two_thousand_distinct_questions_and_updates_keep_memory_files_and_threads(server):
    """Issue 20's bounded soak: distinct questions (1 in ``CONTEXT_EVERY`` a context) with an
    index update every ``EDIT_EVERY``, as `python -m bench.soak` mixes them. Before issue 20's
    fixes the searcher reloaded after every update check and lived on in a reference cycle
    (+8.9 % over the second half, fds 20 -> 43), and each update opened LanceDB worker threads
    that never ended (27 -> 61 threads over 99 edits in the long soak)."""
    samples = []
    url, workspace = server.url, server.workspace
    with httpx.Client(timeout=60, headers=AUTH) as http:
        questions = QuestionSource([workspace], seed=12)
        for n in range(1, QUESTIONS + 1):
            text = questions.question(workspace)
            if n % CONTEXT_EVERY:
                answer = http.post(f"{url}/v1/search", json={"query": text, "k": 5 + n % 10})
            else:
                answer = http.post(f"{url}/v1/context", json={"question": text})
            assert answer.status_code == 200, answer.text
            if n % EDIT_EVERY == 0:
                edit_and_update(http, server, n // EDIT_EVERY)
            if n % SAMPLE_EVERY == 0:
                samples.append(proc_sample(server.process.pid))
    half = samples[len(samples) // 2 - 1]  # after 1,000 questions
    second = samples[len(samples) // 2 :]
    growth = max(s["rss_mib"] for s in second) / half["rss_mib"] - 1
    threads = [s["threads"] for s in samples]
    print(f"RSS {half['rss_mib']:.0f} MiB at 1,000 questions, then {growth:+.1%}; {threads=}")
    assert growth < MAX_SECOND_HALF_GROWTH, (half, second)
    # The client waits for each answer, so nothing is in flight when a sample is taken.
    assert {s["fds"] for s in second} == {half["fds"]}, second
    # Bounded pools start their threads lazily (the keyword pool's 2 workers, anyio's worker
    # threads): one may first appear late (seen once: 20 -> 21). LanceDB runs workers during
    # an update and ends them when idle, so a sample taken just after an update may hold
    # them (seen under a parallel test run: 16 -> 20). So the check is that the count comes
    # back once the server is idle: leaked threads (before issue 20, 27 -> 61 over 99
    # updates) never do.
    first = max(s["threads"] for s in samples[: len(samples) // 2])
    settle = time.monotonic() + SETTLE_S
    while (now := proc_sample(server.process.pid)["threads"]) > first + LAZY_POOL_THREADS:
        assert time.monotonic() < settle, (now, samples)
        time.sleep(0.25)


def small_workspace(root: Path, files: int = 6) -> Path:
    workspace = root / "ws"
    workspace.mkdir()
    for n in range(files):
        body = "\n\n".join(f"def step_{n}_{i}(value):\n    return value + {i}\n" for i in range(8))
        (workspace / f"mod{n}.py").write_text(body, encoding="utf-8")
    return workspace


def watch_lance(monkeypatch) -> dict[str, int]:
    """Count LanceDB's reads, writes and connections from now on, and reads that ran while a
    write was in flight (``overlaps``)."""
    import lancedb
    import lancedb.query
    import lancedb.table

    state = {"writing": 0, "reading": 0, "overlaps": 0, "reads": 0, "writes": 0, "connects": 0}
    guard = threading.Lock()
    held = threading.local()

    def instrumented(method, kind):
        def call(*args, **kwargs):
            if getattr(held, "depth", 0):  # a call inside an instrumented call
                return method(*args, **kwargs)
            with guard:
                state[kind] += 1
                if state["writing"] and state["reading"]:
                    state["overlaps"] += 1
            held.depth = 1
            try:
                return method(*args, **kwargs)
            finally:
                held.depth = 0
                with guard:
                    state[kind] -= 1
                    state["reads" if kind == "reading" else "writes"] += 1

        return call

    for name in ("delete", "add", "optimize", "create_index"):
        original = getattr(lancedb.table.LanceTable, name)
        monkeypatch.setattr(lancedb.table.LanceTable, name, instrumented(original, "writing"))
    for name in ("to_list", "to_arrow"):
        original = getattr(lancedb.query.LanceQueryBuilder, name)
        monkeypatch.setattr(
            lancedb.query.LanceQueryBuilder, name, instrumented(original, "reading")
        )
    original = lancedb.table.LanceTable.count_rows
    monkeypatch.setattr(lancedb.table.LanceTable, "count_rows", instrumented(original, "reading"))
    connect = lancedb.connect

    def counted_connect(*args, **kwargs):
        state["connects"] += 1
        return connect(*args, **kwargs)

    monkeypatch.setattr(lancedb, "connect", counted_connect)
    return state


def test_an_index_update_never_runs_beside_a_search(tmp_path, monkeypatch, lance_keywords):
    """LanceDB's blocking-thread pool grows to the most file operations ever in flight and a
    busy server never shrinks it: an update (delete, add, compact, keyword index, cleanup)
    overlapping searches made it grow to their sum, at random coincidences, for weeks.
    `seek.store.threads.LANCE_GATE` runs updates alone in the process."""
    from seek.index.indexer import index_workspace
    from seek.settings import load_settings
    from seek.store import ChunkTable, index_dir_for

    monkeypatch.setenv("SEEK_HOME", str(tmp_path / "home"))
    workspace = small_workspace(tmp_path)
    settings = load_settings(workspace)
    index_workspace(workspace, settings)
    state = watch_lance(monkeypatch)

    table = ChunkTable(index_dir_for(workspace, settings))
    stop = threading.Event()

    def search_steadily() -> None:
        words = ["step value", "return", "mod value step", "value"]
        n = 0
        while not stop.is_set():
            table.keyword_scores(words[n % len(words)], 5)
            n += 1

    searchers = [threading.Thread(target=search_steadily) for _ in range(3)]
    for searcher in searchers:
        searcher.start()
    target = workspace / "mod0.py"
    original_text = target.read_text(encoding="utf-8")
    try:
        for edit in range(6):
            target.write_text(original_text + f"\n\ndef probe_{edit}():\n    return 0\n")
            index_workspace(workspace, settings)
    finally:
        stop.set()
        for searcher in searchers:
            searcher.join(60)
    assert state["reads"] > 20, state  # the searches really ran beside the updates
    assert state["overlaps"] == 0, state  # before: 155 of 391 reads ran beside a write


def test_updates_do_not_grow_the_index_on_disk(tmp_path, monkeypatch):
    """LanceDB keeps every table version (and the fragments a compaction replaced) for 7 days
    by default: an index edited all day grew without end. Updates now remove versions older
    than `OLD_VERSIONS_KEPT` (a minute; here a millisecond, and a pause between edits)."""
    from datetime import timedelta

    from seek.index.indexer import index_workspace
    from seek.settings import load_settings
    from seek.store import index_dir_for
    from seek.store import table as store_table
    from seek.store.files import folder_size

    monkeypatch.setenv("SEEK_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(store_table, "OLD_VERSIONS_KEPT", timedelta(milliseconds=1))
    workspace = small_workspace(tmp_path)
    settings = load_settings(workspace)
    index_workspace(workspace, settings)
    index_dir = index_dir_for(workspace, settings)
    target = workspace / "mod0.py"
    original = target.read_text(encoding="utf-8")
    sizes = []
    for edit in range(12):
        time.sleep(0.01)
        target.write_text(original + f"\n\ndef probe_{edit}():\n    return {edit}\n")
        index_workspace(workspace, settings)
        sizes.append(folder_size(index_dir / "lancedb"))
    # Measured without a full-text index (issue 14): 16.3 KB after most edits, 36.6 KB after
    # some (an edit's fragment not merged yet: which edits depends on timing, seen under a
    # parallel test run). Without the clean-up the table grows by ~23 KB every edit (39 ->
    # 295 KB over 12 edits). No growth: the last six stay within one unmerged fragment of
    # the smallest.
    assert max(sizes[6:]) < 3 * min(sizes), sizes


def test_update_checks_with_nothing_changed_leave_lancedb_alone(tmp_path, monkeypatch):
    """A server checks each busy workspace for changes once a second. Each check read every
    data file of the table (the damage check) through a new LanceDB connection: steady file
    operations that kept LanceDB's blocking threads from ever ending, and work for nothing."""
    from seek.index.indexer import index_workspace
    from seek.settings import load_settings

    monkeypatch.setenv("SEEK_HOME", str(tmp_path / "home"))
    workspace = small_workspace(tmp_path)
    settings = load_settings(workspace)
    index_workspace(workspace, settings)
    index_workspace(workspace, settings)  # the first check after the run reads the table
    state = watch_lance(monkeypatch)
    for _ in range(5):
        report = index_workspace(workspace, settings)
        assert not report.rebuild_reason
    # Before: 10 connections (2 a check) and 15 reads (rows counted, the table read, a search).
    assert state["connects"] == state["reads"] == state["writes"] == 0, state
