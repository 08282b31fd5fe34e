"""The fault campaign (issue 31; docs/reliability.md): the index folder cannot be written -
no space, read-only, quota, permission, I/O error - at each write step of a run (the lock,
its note, the manifest's write, sync and rename, LanceDB's deletes, adds and compaction),
injected as the OS or LanceDB reports them. Each case checks: the run stops with one
:class:`IndexUnwritableError` naming the cause and the folder, nothing half-written is left
behind, a search meanwhile answers from the last complete index with the same results and a
note that it is stale, and once the fault is gone the next run resumes to an index equal to
a clean one.

Real file systems (a small tmpfs, a read-only bind mount) are in tests/test_faults_mounts.py.
"""

from __future__ import annotations

import builtins
import errno
import io
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from conftest import SMALL_PROJECT

from seek.errors import IndexUnwritableError
from seek.index import backoff
from seek.index.indexer import index_workspace
from seek.settings import load_settings
from seek.store import ChunkTable, index_dir_for, load_manifest
from seek.store.faults import as_unwritable, fault_errno
from seek.workspace import Workspaces, live, search

QUERIES = ("configure retries", "http client send request", "router add route", "demo readme")
CODES = (errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EACCES, errno.EIO)
STEPS = (
    "lock",  # filelock's open of writer.lock
    "holder",  # the writer's note, writer.json
    "manifest",  # the manifest's temporary file
    "fsync",  # the manifest's sync (the first sync of a run)
    "replace",  # the manifest's rename into place
    "manifest-after-rows",  # the save of stamps after rows were written
    "table-delete",  # LanceDB deleting a removed file's rows
    "table-add",  # LanceDB adding the changed files' rows
    "compact",  # LanceDB compacting at the end of the run
)
# The search cache's writes are not among them: a run whose cache cannot be written already
# succeeded before issue 31 (the cache is a courtesy; searches read the table), so a case
# there would not fail on the code it guards against.


def lance_error(code: int, where: Path) -> RuntimeError:
    """An error as LanceDB raises it (the shape seen on a full disk, issue 31)."""
    return RuntimeError(
        f"lance error: LanceError(IO): {os.strerror(code)} (os error {code}), "
        f"{where}/lancedb/x.lance/data/1.lance, /build/lance-io/src/local.rs:120:9"
    )


class Faults:
    """Monkeypatched write calls that fail with ``code`` at ``step`` (see STEPS)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, index_dir: Path) -> None:
        self.monkeypatch = monkeypatch
        self.index_dir = index_dir
        self.hits = 0

    def fail(self, code: int, path: object = None) -> OSError:
        self.hits += 1
        return OSError(code, os.strerror(code), None if path is None else os.fspath(path))

    @contextmanager
    def at(self, step: str, code: int):
        with pytest.MonkeyPatch.context() as mp:
            self._install(mp, step, code)
            yield self

    def _install(self, mp: pytest.MonkeyPatch, step: str, code: int) -> None:
        real_open, real_os_open = builtins.open, os.open
        real_replace = os.replace

        def open_fails(predicate):
            def fake(file, mode="r", *args, **kwargs):
                if isinstance(file, str | os.PathLike) and set(mode) & set("wax+"):
                    if predicate(Path(os.fspath(file))):
                        raise self.fail(code, file)
                return real_open(file, mode, *args, **kwargs)

            mp.setattr(builtins, "open", fake)
            mp.setattr(io, "open", fake)

        if step == "lock":

            def fake_os_open(path, flags, *args, **kwargs):
                if os.fspath(path).endswith("writer.lock") and flags & (os.O_WRONLY | os.O_RDWR):
                    raise self.fail(code, path)
                return real_os_open(path, flags, *args, **kwargs)

            mp.setattr(os, "open", fake_os_open)
        elif step == "holder":
            open_fails(lambda p: p.name == "writer.json")
        elif step == "manifest":
            open_fails(lambda p: p.name.startswith("manifest") and p.name.endswith(".tmp"))
        elif step == "fsync":

            def fake_fsync(fd):
                raise self.fail(code)

            mp.setattr(os, "fsync", fake_fsync)
        elif step == "replace":

            def fake_replace(src, dst, *args, **kwargs):
                if Path(os.fspath(dst)).name == "manifest.json":
                    raise self.fail(code, dst)
                return real_replace(src, dst, *args, **kwargs)

            mp.setattr(os, "replace", fake_replace)
        elif step == "manifest-after-rows":
            saves = {"n": 0}
            real_save = ChunkTable.replace_files

            def counting(table, paths, rows):
                saves["n"] += 1
                return real_save(table, paths, rows)

            mp.setattr(ChunkTable, "replace_files", counting)
            open_fails(
                lambda p: saves["n"] > 0 and p.name.startswith("manifest") and p.suffix == ".tmp"
            )
        elif step in ("table-delete", "table-add", "compact"):
            name = {"table-delete": "delete_files", "table-add": "replace_files",
                    "compact": "compact"}[step]  # fmt: skip
            real = getattr(ChunkTable, name)
            index_dir = self.index_dir

            def fake(table, *args, **kwargs):
                if step == "table-delete" and not (args and args[0]):
                    return real(table, *args, **kwargs)  # nothing to delete: no write
                self.hits += 1
                raise lance_error(code, index_dir)

            mp.setattr(ChunkTable, name, fake)
        else:
            raise AssertionError(step)


def tree() -> dict[str, str]:
    files = dict(SMALL_PROJECT)
    files["src/extra.py"] = "def unrelated_helper():\n    return 'nothing here'\n"
    return files


def edit(root: Path) -> None:
    """A change touching every write step: a file changed, one added, one deleted."""
    (root / "src/retry.py").write_text(
        "def configure_retries(policy, attempts=3):\n    return RetryPolicy(policy, attempts)\n"
    )
    (root / "src/backoff.py").write_text("def backoff_delay(attempt):\n    return 2 ** attempt\n")
    (root / "src/extra.py").unlink()


def answers(root: Path, settings, update: bool = False):
    """Every query's hits (path, lines, score) and the notes of the last one."""
    found, notes = [], []
    for query in QUERIES:
        result = search(root, query, settings, update=update)
        found.append([(h.path, h.start_line, h.end_line, round(h.score, 5)) for h in result.hits])
        notes = list(result.notes)
    return found, notes


def stored(index_dir: Path):
    """The index's rows, sorted, with their vectors, and its stamps: what equal indexes share
    (table names and LanceDB's file layout differ from run to run)."""
    data = ChunkTable(index_dir).load_all()
    columns = ("path", "chunk", "start_line", "end_line", "part", "content", "keywords")
    keyed = list(zip(*(data[c] for c in columns), strict=True))
    order = sorted(range(len(keyed)), key=lambda i: keyed[i])
    manifest = load_manifest(index_dir)
    stamps = {p: (s.hash, s.chunks, s.skip) for p, s in manifest.files.items()}
    return [keyed[i] for i in order], np.asarray(data["vectors"])[order], stamps, manifest.run_open


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root.resolve()


def settings_in(root: Path, home: Path):
    return load_settings(root, overrides={"home": str(home), "provider": "test-hash"}, env={},
                         user_config=home / "no-config.toml")  # fmt: skip


@pytest.fixture(scope="module")
def clean_index(tmp_path_factory):
    """The workspace's answers before and after the edit, and the rows of a clean index of
    it after the edit (built once: every case ends equal to it)."""
    from conftest import HashEmbedder

    from seek.embed import PROVIDERS, register_provider

    register_provider("test-hash", lambda settings: HashEmbedder())
    try:
        base = tmp_path_factory.mktemp("clean")
        root = write_tree(base / "ws", tree())
        settings = settings_in(root, base / "home")
        index_workspace(root, settings)
        before = answers(root, settings)[0]
        edit(root)
        index_workspace(root, settings)
        after = answers(root, settings)[0]
        # A second clean index, built from scratch after the edit: what a resume must equal.
        fresh = settings_in(root, base / "fresh-home")
        index_workspace(root, fresh)
        yield before, after, stored(index_dir_for(root, fresh))
    finally:
        PROVIDERS.pop("test-hash", None)


@pytest.fixture
def indexed(clean_index, hash_provider, tmp_path):
    """An indexed workspace (before the edit), with :func:`clean_index`'s answers and rows."""
    root = write_tree(tmp_path / "ws", tree())
    settings = settings_in(root, tmp_path / "home")
    index_workspace(root, settings)
    return (root, settings, *clean_index)


def leftovers(index_dir: Path) -> list[str]:
    return sorted(p.name for p in index_dir.rglob("*.tmp"))


CASES = [(step, code) for step in STEPS for code in (errno.ENOSPC, errno.EROFS)] + [
    (step, code) for step in ("lock", "manifest", "table-add")
    for code in (errno.EDQUOT, errno.EACCES, errno.EIO)
]  # fmt: skip
"""Every step with a full disk and a read-only folder; the other causes at the lock, the
manifest and LanceDB (each voice maps every cause: the test after this one)."""


@pytest.mark.parametrize(
    ("step", "code"), CASES, ids=[f"{s}-{errno.errorcode[c]}" for s, c in CASES]
)
def test_a_write_fault_stops_in_one_line_keeps_answering_and_resumes(
    indexed, monkeypatch, step, code
):
    root, settings, before, after, clean = indexed
    index_dir = index_dir_for(root, settings)
    edit(root)
    faults = Faults(monkeypatch, index_dir)
    with faults.at(step, code):
        with pytest.raises(IndexUnwritableError) as caught:
            index_workspace(root, settings)
        assert faults.hits, "the fault was never reached"
        error = caught.value
        assert error.errno == code and error.folder == str(index_dir)
        message = str(error)
        assert "\n" not in message and str(index_dir) in message
        assert message.startswith(os.strerror(code).lower())
        # Searches meanwhile (each tries the update again): the last complete index.
        found, notes = answers(root, settings, update=True)
        assert found == before
        assert len(notes) == 1 and notes[0].startswith("The index is stale: ")
        assert str(index_dir) in notes[0]
        assert leftovers(index_dir) == []
    report = index_workspace(root, settings)  # the fault is gone: resume
    assert not report.cancelled
    assert answers(root, settings, update=True) == (after, [])
    rows, vectors, stamps, run_open = stored(index_dir)
    clean_rows, clean_vectors, clean_stamps, _ = clean
    assert rows == clean_rows and stamps == clean_stamps and not run_open
    assert np.array_equal(vectors, clean_vectors)


@pytest.mark.parametrize("code", CODES, ids=[errno.errorcode[c] for c in CODES])
def test_each_voice_of_a_write_fault_maps_to_its_errno(tmp_path, code):
    """OSError, filelock's OSError, and LanceDB's message, raised from or not."""
    folder = tmp_path / "index"
    assert fault_errno(OSError(code, os.strerror(code), str(folder / "m.tmp")), folder) == code
    assert fault_errno(lance_error(code, folder), folder) == code
    wrapped = ValueError("commit failed")
    wrapped.__cause__ = lance_error(code, folder)
    assert fault_errno(wrapped, folder) == code
    error = as_unwritable(lance_error(code, folder), folder)
    assert error is not None and "\n" not in str(error) and str(folder) in str(error)


def test_other_failures_are_not_write_faults(tmp_path):
    folder = tmp_path / "index"
    assert fault_errno(OSError(errno.ENOENT, "gone", str(folder / "x")), folder) is None
    # A workspace file that cannot be read is the run's to skip, not a reason to stop it.
    assert fault_errno(OSError(errno.EACCES, "denied", str(tmp_path / "ws/a.py")), folder) is None
    assert fault_errno(RuntimeError("lance error: schema mismatch"), folder) is None


def test_a_run_too_big_for_the_free_space_is_refused_before_a_row(indexed, monkeypatch):
    root, settings, before, after, clean = indexed
    index_dir = index_dir_for(root, settings)
    edit(root)
    manifest_before = (index_dir / "manifest.json").read_bytes()
    monkeypatch.setattr("seek.index.room.free_bytes", lambda folder: 10_000)
    with pytest.raises(IndexUnwritableError) as caught:
        index_workspace(root, settings)
    message = str(caught.value)
    assert caught.value.errno == errno.ENOSPC
    assert "this run needs about " in message and "10 kB is free" in message
    assert (index_dir / "manifest.json").read_bytes() == manifest_before  # nothing written
    assert answers(root, settings, update=True)[0] == before
    monkeypatch.undo()
    index_workspace(root, settings)
    assert answers(root, settings) == (after, [])


def test_a_server_retries_with_backoff_and_reports_it(indexed, monkeypatch):
    root, settings, before, after, clean = indexed
    index_dir = index_dir_for(root, settings)
    monkeypatch.setattr(live, "FRESHNESS_S", 0.0)
    monkeypatch.setattr(backoff, "RETRY_FIRST_S", 0.3)
    spaces = Workspaces(settings=settings)
    spaces.search(root, QUERIES[0])  # loaded
    edit(root)
    tries = []
    real = ChunkTable.replace_files

    def full(table, *args, **kwargs):
        tries.append(time.monotonic())
        raise lance_error(errno.ENOSPC, index_dir)

    monkeypatch.setattr(ChunkTable, "replace_files", full)
    for _ in range(5):  # within the first wait: one try only
        result = spaces.search(root, QUERIES[0])
        assert result.notes and result.notes[0].startswith("The index is stale: ")
    assert len(tries) == 1
    status = spaces.status(root).to_json()
    assert status["stale"].startswith("no space left on device writing the index in ")
    assert status["update_fault"]["failures"] == 1 and status["update_fault"]["retry_in_s"] > 0
    time.sleep(0.35)
    spaces.search(root, QUERIES[0])
    assert len(tries) == 2 and spaces.status(root).update_fault["failures"] == 2
    with pytest.raises(IndexUnwritableError):  # an explicit index request says so, in JSON
        spaces.index(root)
    monkeypatch.setattr(ChunkTable, "replace_files", real)
    time.sleep(0.3 * 4 + 0.1)  # the third wait: 0.3 s doubled twice
    result = spaces.search(root, QUERIES[0])
    assert not result.notes and spaces.status(root).to_json()["stale"] is None


SLOW_SYNC_S = 0.6


def test_a_slow_disk_does_not_hold_searches_on_a_server(indexed, monkeypatch):
    """An update whose syncs are slow (each takes SLOW_SYNC_S): other searches answer at
    once, before it ends."""
    root, settings, before, after, clean = indexed
    monkeypatch.setattr(live, "FRESHNESS_S", 0.0)
    spaces = Workspaces(settings=settings)
    spaces.search(root, QUERIES[0])
    edit(root)
    syncing = threading.Event()
    real_fsync = os.fsync

    def slow_fsync(fd):
        syncing.set()
        time.sleep(SLOW_SYNC_S)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    updater = threading.Thread(target=spaces.search, args=(root, QUERIES[1]))
    updater.start()
    assert syncing.wait(10)
    started = time.monotonic()
    result = spaces.search(root, QUERIES[0])
    took = time.monotonic() - started
    updating = updater.is_alive()
    updater.join(60)
    assert updating and took < SLOW_SYNC_S, f"a search waited {took:.2f} s behind the update"
    assert result.hits and list(result.notes) == [live.UPDATING_NOTE]


def test_watch_says_once_retries_and_resumes(indexed, monkeypatch):
    from seek.index.watch import Watcher

    root, settings, before, after, clean = indexed
    index_dir = index_dir_for(root, settings)
    monkeypatch.setattr(backoff, "RETRY_FIRST_S", 0.2)
    lines: list[str] = []
    watcher = Watcher(root, settings, echo=lines.append, debounce_s=0.05)
    stop, ready = threading.Event(), threading.Event()
    real = ChunkTable.replace_files
    tries = []

    def full(table, *args, **kwargs):
        tries.append(1)
        raise lance_error(errno.ENOSPC, index_dir)

    monkeypatch.setattr(ChunkTable, "replace_files", full)
    worker = threading.Thread(target=watcher.run, args=(stop, ready), daemon=True)
    worker.start()
    try:
        assert ready.wait(30)
        edit(root)
        deadline = time.monotonic() + 30
        while len(tries) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(tries) >= 3  # retried
        errors = [line for line in lines if line.startswith("seek: error: ")]
        assert len(errors) == 1 and "no space left on device writing the index in " in errors[0]
        assert watcher.error is None and worker.is_alive()
        monkeypatch.setattr(ChunkTable, "replace_files", real)
        while not any("can be written again" in line for line in lines):
            assert time.monotonic() < deadline, lines
            time.sleep(0.05)
        assert "src/backoff.py" in load_manifest(index_dir).files
    finally:
        stop.set()
        worker.join(30)
    assert answers(root, settings, update=True) == (after, [])


def test_http_answers_from_the_last_complete_index_and_never_5xx(indexed, monkeypatch):
    """`seek serve` (and the page's API) with the index folder full: searches answer 200
    with the stale note, status says why, an index request is refused in JSON, no 5xx."""
    import httpx
    from seek_server import running

    from seek.serving.config import ServeConfig

    root, settings, before, after, clean = indexed
    index_dir = index_dir_for(root, settings)
    monkeypatch.setattr(live, "FRESHNESS_S", 0.0)
    config = ServeConfig(workspaces=(root,), ui=True,
                         overrides={"home": settings.home, "provider": "test-hash"})  # fmt: skip
    query = {"query": QUERIES[0], "k": 10}
    with running(config) as url, httpx.Client(base_url=url, timeout=60) as http:
        first = http.post("/v1/search", json=query).json()
        edit(root)
        monkeypatch.setattr(
            ChunkTable, "replace_files",
            lambda *a, **k: (_ for _ in ()).throw(lance_error(errno.ENOSPC, index_dir)),
        )  # fmt: skip
        answers_ = {
            "search": http.post("/v1/search", json=query),
            "context": http.post("/v1/context", json={"question": QUERIES[0]}),
            "status": http.get("/v1/status"),
            "index": http.post("/v1/index", json={}),
            # The page keeps its own searchers: its search meets the fault, then its status
            # reports it.
            "page search": http.post("/ui/api/search", json={"query": QUERIES[0]}),
            "page status": http.get("/ui/api/status"),
        }
    assert {name: a.status_code for name, a in answers_.items()} == {
        "search": 200, "context": 200, "status": 200, "index": 422, "page status": 200,
        "page search": 200,
    }  # fmt: skip
    found = answers_["search"].json()
    assert found["hits"] == first["hits"]
    assert len(found["notes"]) == 1 and found["notes"][0].startswith("The index is stale: ")
    assert "The index is stale: " in answers_["context"].text
    for name in ("status", "page status"):
        status = answers_[name].json()
        assert status["stale"].startswith("no space left on device writing the index in ")
        assert status["update_fault"]["failures"] >= 1
    assert answers_["index"].json()["error"]["message"].startswith("no space left on device")
    assert answers_["page search"].json()["notes"][0].startswith("The index is stale: ")


def test_mcp_answers_from_the_last_complete_index_and_says_it_is_stale(indexed, monkeypatch):
    """The MCP tools (their functions, in this process) with the index folder full: the
    search answers with the stale note, status says why, no tool error."""
    import anyio

    from seek.mcp import build_server

    root, settings, before, after, clean = indexed
    index_dir = index_dir_for(root, settings)
    monkeypatch.setattr(live, "FRESHNESS_S", 0.0)
    tools = build_server(root, {"home": settings.home, "provider": "test-hash"})._tool_manager
    search_tool, status_tool = tools.get_tool("search").fn, tools.get_tool("status").fn

    async def calls() -> tuple[str, str, str]:
        first = await search_tool(query=QUERIES[0])
        edit(root)
        monkeypatch.setattr(
            ChunkTable, "replace_files",
            lambda *a, **k: (_ for _ in ()).throw(lance_error(errno.ENOSPC, index_dir)),
        )  # fmt: skip
        return first, await search_tool(query=QUERIES[0]), await status_tool()

    first, found, status = anyio.run(calls)
    hits, _, note = found.rpartition("\nnote: ")
    assert hits == first and note.startswith("The index is stale: it cannot be updated (no space")
    assert "\nstale: no space left on device writing the index in " in status
