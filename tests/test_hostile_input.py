"""Hostile workspaces: odd file names, odd bytes, giant and deeply nested files, links, loops,
unreadable entries and files that change while a run reads them.

Every case indexes a real LanceDB index with the deterministic ``HashEmbedder`` and checks
that the run ends without an exception or a logged traceback, that every entry created is
either indexed or counted under a skip reason, and that search still works afterwards.
"""

from __future__ import annotations

import logging
import os
import pathlib
import threading

import pytest
from conftest import HashEmbedder

import seek.index.indexer
from seek.index.indexer import REBUILD, index_workspace
from seek.retrieve import Searcher
from seek.store import ChunkTable, index_dir_for, load_manifest

MAX_FILE_BYTES = 524_288  # the default ``max_file_bytes`` (512 KiB)
PY = "def handler(value):\n    return value + 1\n"
OK = {"ok.py": "def healthy_function():\n    return 42\n"}


# -- helpers -----------------------------------------------------------------------------------
def run(root, settings, **kw):
    return index_workspace(root, settings, embedder=HashEmbedder(), **kw)


def table(root, settings) -> ChunkTable:
    return ChunkTable(index_dir_for(pathlib.Path(root).resolve(), settings))


def manifest(root, settings):
    return load_manifest(index_dir_for(pathlib.Path(root).resolve(), settings))


def indexed_files(root, settings) -> set[str]:
    """Files the manifest holds rows for (binary and chunkless stamps are skips, not files)."""
    return {path for path, stamp in manifest(root, settings).files.items() if not stamp.skip}


def stored_chunks(root, settings) -> list[tuple[str, int, int, str]]:
    data = table(root, settings).load_all()
    columns = ("path", "start_line", "end_line", "part", "content")
    rows = zip(*(data[name] for name in columns), strict=True)
    return sorted((p, s, e, c) for p, s, e, part, c in rows if part == 0)


def assert_accounted(report, root, settings, created: int) -> None:
    """Every entry created is indexed or counted under exactly one skip reason."""
    assert all(count > 0 for count in report.skipped.values()), report.skipped
    indexed = indexed_files(root, settings)
    assert len(indexed) + sum(report.skipped.values()) == created, (indexed, report.skipped)


def assert_search_works(root, settings, query="handler value healthy function") -> list:
    searcher = Searcher.open(root, settings, embedder=HashEmbedder())
    result = searcher.search(query)
    assert all(hit.start_line >= 1 and hit.end_line >= hit.start_line for hit in result.hits)
    return result.hits


def assert_no_traceback(caplog) -> None:
    bad = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert not bad, [r.getMessage() for r in bad]


@pytest.fixture(autouse=True)
def _capture_logs(caplog):
    caplog.set_level(logging.WARNING)
    yield
    assert_no_traceback(caplog)


def _can_create(root: pathlib.Path, name: str | bytes) -> bool:
    try:
        target = os.path.join(os.fsencode(root), os.fsencode(name))
        with open(target, "wb") as fh:
            fh.write(PY.encode())
    except (OSError, UnicodeError):
        return False
    return True


# -- file names --------------------------------------------------------------------------------
HOSTILE_NAMES = [
    "with space.py",
    "it's.py",
    'say "hi".py',
    "both '\" quotes.py",
    "café.py",
    "日本語.py",
    "emoji 😀.py",
    "new\nline.py",
    "-rf.py",
    "--help.py",
    "o'brien/inner.py",
    "back\\slash.py",
    "tab\tname.py",
    "semi;colon) OR 1=1 --.py",
    "percent_100%.py",
]


def test_hostile_names_are_indexed_searched_updated_and_removed(
    make_tree, settings_for, tmp_path, lance_keywords
):
    usable = [n for n in HOSTILE_NAMES if _can_create(tmp_path, n.replace("/", "_"))]
    root = make_tree({**OK, **{name: PY for name in usable}})
    settings = settings_for()
    report = run(root, settings)
    assert report.embedded == len(usable) + 1 and report.unreadable == []
    assert table(root, settings).stored_paths() == set(usable) | {"ok.py"}
    assert_accounted(report, root, settings, len(usable) + 1)
    hits = assert_search_works(root, settings, "handler value")
    assert {hit.path for hit in hits} & set(usable)
    searcher = Searcher.open(root, settings, embedder=HashEmbedder())
    for name in usable:  # the focus passes filter by path in SQL: quotes must survive
        focused = searcher.search("handler", focus=(name,))
        assert name in {hit.path for hit in focused.hits}, name
        only = table(root, settings).keyword_search("handler", 5, paths=[name])
        assert {hit.path for hit in only} == {name}

    for name in usable:
        (root / name).write_text("def renamed_thing():\n    return 'new'\n")
    report = run(root, settings)
    assert report.embedded == len(usable) and report.unchanged == 1
    contents = {path: content for path, _, _, content in stored_chunks(root, settings)}
    assert all(contents[name].startswith("def renamed_thing") for name in usable)

    for name in usable:
        (root / name).unlink()
    report = run(root, settings)
    assert report.removed == len(usable)
    assert table(root, settings).stored_paths() == {"ok.py"}
    assert_search_works(root, settings)


@pytest.mark.parametrize(
    "name", ["it's.py", 'say "hi".py', "new\nline.py", "o'dir/x'.py", "back\\slash'.py"]
)
def test_quoted_names_alone_can_be_updated_and_deleted(make_tree, settings_for, tmp_path, name):
    if not _can_create(tmp_path, name.replace("/", "_")):
        pytest.skip("the filesystem refuses this name")
    root = make_tree({name: PY, **OK})
    settings = settings_for()
    run(root, settings)
    assert table(root, settings).stored_paths() == {name, "ok.py"}
    (root / name).write_text(PY + "\ndef second_function():\n    return 2\n")
    embedder = HashEmbedder()
    report = index_workspace(root, settings, embedder=embedder)
    assert report.embedded == 1
    assert any(name in text for text in embedder.texts)  # re-embedded under its own name
    assert any("second_function" in c for p, _, _, c in stored_chunks(root, settings) if p == name)
    (root / name).unlink()
    report = run(root, settings)
    assert report.removed == 1 and table(root, settings).stored_paths() == {"ok.py"}
    assert_search_works(root, settings)


class SurrogateSafeEmbedder(HashEmbedder):
    """HashEmbedder that accepts the lone surrogates Python uses for undecodable names, so a
    failure is seek's own and not the test embedder's."""

    def embed(self, texts):
        return super().embed([t.encode("utf-8", "surrogatepass").decode("latin-1") for t in texts])


def test_file_name_with_invalid_utf8_bytes(make_tree, settings_for):
    root = make_tree(OK)
    if not _can_create(root, b"bad\xff\xfename.py"):
        pytest.skip("the filesystem refuses names that are not UTF-8")
    settings = settings_for()
    report = index_workspace(root, settings, embedder=SurrogateSafeEmbedder())
    assert report.skipped.get("bad_name") == 1  # counted and named, never stored
    assert "ok.py" in indexed_files(root, settings)
    assert_accounted(report, root, settings, 2)
    assert_search_works(root, settings)


# -- file contents -----------------------------------------------------------------------------
def test_invalid_utf8_content_is_indexed_with_replacement_characters(make_tree, settings_for):
    raw = b"def broken():\n    return '\xff\xfe\xc3\x28 \xed\xa0\x80 \xf0\x28\x8c\xbc'\n"
    root = make_tree({"bad.py": raw, "latin1.py": "name = 'Jos\xe9'\n".encode("latin-1")})
    settings = settings_for()
    report = run(root, settings)
    assert report.embedded == 2
    assert_accounted(report, root, settings, 2)
    contents = {p: c for p, _, _, c in stored_chunks(root, settings)}
    assert "\ufffd" in contents["bad.py"] and contents["bad.py"].startswith("def broken():")
    assert contents["latin1.py"] == "name = 'Jos\ufffd'"
    assert assert_search_works(root, settings, "broken")


def test_crlf_line_endings(make_tree, settings_for):
    text = "def first():\r\n    return 1\r\n\r\ndef second():\r\n    return 2\r\n"
    root = make_tree({"crlf.py": text.encode(), "mac.md": b"# Old\rmac\rline endings\r"})
    settings = settings_for()
    report = run(root, settings)
    assert_accounted(report, root, settings, 2)
    chunks = [c for c in stored_chunks(root, settings) if c[0] == "crlf.py"]
    lines = text.split("\n")[:-1]
    for _, start, end, content in chunks:  # exact slices, \r kept, lines 0-based
        assert content == "\n".join(lines[start : end + 1])
    covered = {row for _, s, e, _ in chunks for row in range(s, e + 1)}
    assert covered == set(range(len(lines)))
    hits = assert_search_works(root, settings, "second")
    assert hits and hits[0].path == "crlf.py" and "second" in hits[0].content


def test_ten_megabyte_single_line_is_too_big(make_tree, settings_for):
    root = make_tree({**OK, "huge.js": b"x" * (10 * 1024 * 1024)})
    settings = settings_for()
    report = run(root, settings)
    assert report.skipped == {"too_big": 1}
    assert manifest(root, settings).skipped_examples["too_big"] == ["huge.js"]
    assert table(root, settings).stored_paths() == {"ok.py"}
    assert_accounted(report, root, settings, 2)
    assert_search_works(root, settings)


def test_size_limit_boundary(make_tree, settings_for):
    line = b"a=1;" * (MAX_FILE_BYTES // 4)
    root = make_tree({"at_limit.js": line, "over_limit.js": line + b"b"})
    settings = settings_for()
    report = run(root, settings)
    assert report.skipped == {"too_big": 1}
    assert indexed_files(root, settings) == {"at_limit.js"}
    assert_accounted(report, root, settings, 2)
    assert_search_works(root, settings, "a")


def test_half_megabyte_single_line_js_is_sliced_by_the_giant_line_guard(make_tree, settings_for):
    line = "var a=[" + ",".join(f"{i:07d}" for i in range(500 * 1024 // 8)) + "];"
    assert len(line) <= MAX_FILE_BYTES
    root = make_tree({"one_line.js": line + "\n", **OK})
    settings = settings_for()
    max_chars = settings.chunk_max_chars
    report = run(root, settings)
    assert report.unreadable == [] and report.skipped == {}
    chunks = [c for c in stored_chunks(root, settings) if c[0] == "one_line.js"]
    assert len(chunks) == report.chunks - 1 > 100
    # The guard: a range longer than 2 x max is cut into max-sized slices, so no chunk ever
    # exceeds 2 x max, and the slices of the one line are exactly that line, in order.
    assert all(len(content) <= 2 * max_chars for *_, content in chunks)
    assert all((start, end) == (0, 0) for _, start, end, _ in chunks)
    pieces = sorted({content for *_, content in chunks}, key=line.index)
    assert [line.index(p) for p in pieces] == list(range(0, len(line), max_chars))
    assert "".join(pieces) == line
    assert_search_works(root, settings)


DEEP = 5000
NESTED = [
    ("parens.js", "x = " + "(" * DEEP + "1" + ")" * DEEP + ";\n"),
    ("brackets.js", "[" * DEEP + "]" * DEEP + "\n"),
    ("unclosed.js", "function f() {" + "{[(" * DEEP + "\n"),
    ("parens.py", "x = " + "(" * DEEP + "1" + ")" * DEEP + "\n"),
    ("lists.py", "x = " + "[" * DEEP + "]" * DEEP + "\n"),
    ("unclosed.py", "def f(:\n" + "(" * DEEP + "\n"),
    ("indented.py", "".join(" " * (i % 60) + "if x:\n" for i in range(DEEP))),
    ("inline.json", '{"a":' * DEEP + "1" + "}" * DEEP + "\n"),
    ("lines.json", "".join('{"k":\n' for _ in range(DEEP)) + "0" + "}" * DEEP + "\n"),
    ("arrays.json", "[" * DEEP + "]" * DEEP),
    ("nested.md", "".join(">" * (i % 100) + " quote\n" for i in range(DEEP))),
]


@pytest.mark.parametrize("name,content", NESTED, ids=[name for name, _ in NESTED])
def test_deeply_nested_syntax(make_tree, settings_for, name, content):
    root = make_tree({name: content, **OK})
    settings = settings_for()
    report = run(root, settings)  # no RecursionError, no crash
    assert report.unreadable == []
    assert_accounted(report, root, settings, 2)
    assert name in indexed_files(root, settings)
    chunks = [c for c in stored_chunks(root, settings) if c[0] == name]
    lines = content.split("\n")
    assert all(len(c) <= 2 * settings.chunk_max_chars for *_, c in chunks)
    assert all(c in "\n".join(lines[s : e + 1]) for _, s, e, c in chunks)
    assert_search_works(root, settings)


def test_empty_whitespace_and_binary_files_are_counted(make_tree, settings_for):
    late_nul = b"x = 1\n" * 1400 + b"\x00 after the sniffed bytes\n"  # NUL past 8,000 bytes
    files = {
        **OK,
        "empty.py": "",
        "blank.py": "   \n\t\n  \n",
        "crlf_blank.md": "\r\n\r\n\r\n",
        "newlines.txt": "\n" * 1000,
        "nul.py": b"def f():\x00\n    pass\n",
        "only_nul.js": b"\x00" * 64,
        "late_nul.py": late_nul,
    }
    root = make_tree(files)
    settings = settings_for()
    report = run(root, settings)
    assert report.skipped == {"empty": 1, "no_chunks": 3, "binary": 2}
    assert indexed_files(root, settings) == {"ok.py", "late_nul.py"}
    assert_accounted(report, root, settings, len(files))
    stamps = manifest(root, settings).files
    assert stamps["nul.py"].skip == "binary" and stamps["blank.py"].skip == "no_chunks"
    assert_search_works(root, settings)
    again = run(root, settings)
    assert not again.changed and again.skipped == report.skipped  # stamped, not re-read


def test_fifo_is_not_opened(make_tree, settings_for):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    root = make_tree(OK)
    os.mkfifo(root / "pipe.py")  # opening it for reading would block forever
    settings = settings_for()
    report = run(root, settings)
    assert report.skipped == {"not_a_file": 1}
    assert_accounted(report, root, settings, 2)
    assert_search_works(root, settings)


# -- hostile ignore files ----------------------------------------------------------------------
def test_ignore_files_with_odd_bytes_and_line_endings(make_tree, settings_for):
    root = make_tree(
        {
            ".gitignore": b"gen_*.py\r\n\xff\xfe\x00junk\r\n# comment\r\nsub/\r\n",
            ".seekignore": "[\n]]]\n**/***.tmp\n",
            "gen_a.py": PY,
            "sub/x.py": PY,
            **OK,
        }
    )
    settings = settings_for()
    report = run(root, settings)
    assert indexed_files(root, settings) == {"ok.py"}
    # .gitignore, .seekignore (rule files are never indexed), gen_a.py and the sub/ folder
    assert report.skipped == {"ignored": 3, "not_allowlisted": 1}
    assert_accounted(report, root, settings, 5)
    assert_search_works(root, settings)


@pytest.mark.parametrize("line", ["!", "! ", "foo\\"])
def test_invalid_gitignore_line_does_not_stop_indexing(make_tree, settings_for, line):
    root = make_tree({".gitignore": f"*.log\n{line}\n", **OK})
    settings = settings_for()
    report = run(root, settings)
    assert indexed_files(root, settings) == {"ok.py"}
    assert_accounted(report, root, settings, 2)


def test_gitignore_pattern_starting_with_blank_and_hash(make_tree, settings_for):
    root = make_tree({".gitignore": " #secret.py\n", " #secret.py": PY, **OK})
    settings = settings_for()
    run(root, settings)
    assert indexed_files(root, settings) == {"ok.py"}


# -- unreadable files and folders --------------------------------------------------------------
@pytest.mark.skipif(
    os.geteuid() == 0,
    reason="root reads files whatever their mode; the same handling is covered for root by "
    "test_unreadable_file_is_counted_named_and_retried and test_unreadable_folder_is_counted_once "
    "(PermissionError raised by a monkeypatched read_beneath and os.scandir)",
)
def test_unreadable_file_and_folder_by_permissions(make_tree, settings_for):
    root = make_tree({**OK, "secret.py": PY, "locked/inner.py": PY})
    os.chmod(root / "secret.py", 0)
    os.chmod(root / "locked", 0)
    try:
        settings = settings_for()
        report = run(root, settings)
        assert report.skipped == {"unreadable": 2}
        assert sorted(report.unreadable) == ["secret.py"]
        assert set(manifest(root, settings).skipped_examples["unreadable"]) == {
            "locked/",
            "secret.py",
        }
        assert_accounted(report, root, settings, 3)
        assert_search_works(root, settings)
    finally:
        os.chmod(root / "secret.py", 0o644)
        os.chmod(root / "locked", 0o755)
    report = run(root, settings)
    assert report.embedded == 2 and "unreadable" not in report.skipped


def test_unreadable_file_is_counted_named_and_retried(make_tree, settings_for, monkeypatch):
    root = make_tree({**OK, "secret.py": PY, "pkg/fine.py": PY})
    real_read = seek.index.stages.read_beneath

    def refuse(root, rel):
        if rel.rsplit("/", 1)[-1] == "secret.py":
            raise PermissionError(13, "Permission denied", rel)
        return real_read(root, rel)

    settings = settings_for()
    monkeypatch.setattr(seek.index.stages, "read_beneath", refuse)
    report = run(root, settings)
    assert report.unreadable == ["secret.py"]
    assert report.skipped == {"unreadable": 1}
    assert manifest(root, settings).skipped_examples["unreadable"] == ["secret.py"]
    assert indexed_files(root, settings) == {"ok.py", "pkg/fine.py"}
    assert_accounted(report, root, settings, 3)
    assert_search_works(root, settings)

    monkeypatch.setattr(seek.index.stages, "read_beneath", real_read)
    retried = run(root, settings)
    assert retried.embedded == 1 and retried.unreadable == [] and retried.skipped == {}
    assert table(root, settings).stored_paths() == {"ok.py", "pkg/fine.py", "secret.py"}
    assert "unreadable" not in manifest(root, settings).skipped_examples


def test_unreadable_folder_is_counted_once(make_tree, settings_for, monkeypatch):
    root = make_tree({**OK, "locked/a.py": PY, "locked/deeper/b.py": PY})
    real_scandir = os.scandir
    locked = str(root / "locked")

    def refuse(path="."):
        if isinstance(path, str) and path == locked:
            raise PermissionError(13, "Permission denied", locked)
        return real_scandir(path)

    settings = settings_for()
    monkeypatch.setattr(os, "scandir", refuse)
    report = run(root, settings)
    assert report.skipped == {"unreadable": 1}
    assert manifest(root, settings).skipped_examples["unreadable"] == ["locked/"]
    assert_accounted(report, root, settings, 2)  # ok.py and the folder, counted once
    assert_search_works(root, settings)
    monkeypatch.setattr(os, "scandir", real_scandir)
    assert run(root, settings).embedded == 2


# -- links -------------------------------------------------------------------------------------
def test_symlink_loops_and_links_outside_are_skipped(make_tree, settings_for, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.py").write_text("def outside_secret():\n    pass\n")
    root = make_tree({**OK, "real.py": PY})
    links = {
        "self.py": "self.py",  # a link to itself
        "ping.py": "pong.py",  # two links pointing at each other
        "pong.py": "ping.py",
        "here": ".",  # a folder loop
        "up": "..",
        "outside": str(outside),  # a folder outside the workspace
        "leak.py": str(outside / "leak.py"),
        "alias.py": "real.py",  # a link to a file inside
        "dangling.py": "missing.py",
    }
    for name, target in links.items():
        os.symlink(target, root / name)
    settings = settings_for()
    report = run(root, settings)
    assert report.skipped == {"symlink": len(links)}
    assert indexed_files(root, settings) == {"ok.py", "real.py"}
    assert_accounted(report, root, settings, 2 + len(links))
    assert not [
        h for h in assert_search_works(root, settings, "outside_secret") if "leak" in h.path
    ]


def test_workspace_root_that_is_a_symlink(make_tree, settings_for, tmp_path):
    real = make_tree({**OK, "src/app.py": PY})
    link = tmp_path / "link-to-ws"
    os.symlink(real, link)
    settings = settings_for()
    report = run(link, settings)
    assert report.workspace == real.resolve()
    assert report.embedded == 2 and indexed_files(real, settings) == {"ok.py", "src/app.py"}
    assert index_dir_for(link.resolve(), settings) == report.index_dir
    hits = assert_search_works(link, settings, "handler")
    assert "src/app.py" in {hit.path for hit in hits}
    again = run(real, settings)  # the same index, through the real path
    assert not again.changed


# -- files that change while the run reads them --------------------------------------------------
class ReadHook:
    """Run ``action(path)`` once, right before the indexer reads ``target`` (the indexer reads
    files with ``read_beneath`` in ``seek.index.stages``; ``check()`` fails loudly if it stops)."""

    def __init__(self, monkeypatch, target: str, action) -> None:
        self.real_read = seek.index.stages.read_beneath
        self.fired = threading.Event()
        self.monkeypatch = monkeypatch
        real_read, fired = self.real_read, self.fired

        def hooked(root, rel):
            path = root / rel
            if path.name == target and not fired.is_set():
                fired.set()
                action(path)
            return real_read(root, rel)

        monkeypatch.setattr(seek.index.stages, "read_beneath", hooked)

    def check(self) -> None:
        if not self.fired.is_set():
            raise RuntimeError("the indexer no longer reads files with read_beneath")

    def remove(self) -> None:
        self.monkeypatch.setattr(seek.index.stages, "read_beneath", self.real_read)


def _append(path):
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("\ndef appended_late():\n    return 'late'\n")


def _shrink(path):
    path.write_text("x = 1\n")


def _delete(path):
    path.unlink()


def _to_directory(path):
    path.unlink()
    path.mkdir()


@pytest.mark.parametrize(
    "action,indexed_before",
    [
        (_append, False),
        (_append, True),
        (_shrink, True),
        (_delete, False),
        (_delete, True),
        (_to_directory, True),
    ],
    ids=["append", "append-indexed", "shrink-indexed", "delete", "delete-indexed", "to-dir"],
)
def test_file_changing_between_scan_and_read_converges(
    make_tree, settings_for, monkeypatch, action, indexed_before
):
    root = make_tree({**OK, "moving.py": PY, "other.py": "VALUE = 1\n"})
    settings = settings_for()
    if indexed_before:
        run(root, settings)
        (root / "moving.py").write_text(PY + "\n# edited\n")  # stale, so it is read again
        os.utime(root / "moving.py", ns=(1, 2_000_000_000_000))
    hook = ReadHook(monkeypatch, "moving.py", action)
    report = run(root, settings)  # must simply finish
    hook.check()
    hook.remove()
    assert report.unreadable in ([], ["moving.py"])

    settled = run(root, settings)
    assert settled.unreadable == []
    incremental = stored_chunks(root, settings)
    files = indexed_files(root, settings)
    assert not run(root, settings).changed  # and it stays settled
    created = sum(1 for path in root.rglob("*") if path.is_file())
    assert_accounted(settled, root, settings, created)

    rebuilt = run(root, settings, mode=REBUILD)
    assert stored_chunks(root, settings) == incremental
    assert indexed_files(root, settings) == files
    assert rebuilt.skipped == settled.skipped
    assert_search_works(root, settings)


def test_file_swapped_for_a_symlink_before_read_is_not_followed(
    make_tree, settings_for, monkeypatch, tmp_path
):
    secret = tmp_path / "outside-secret.txt"
    secret.write_text("TOP_SECRET_TOKEN = 'hunter2'\n")
    root = make_tree({**OK, "swapped.py": PY})

    def swap(path):
        path.unlink()
        os.symlink(secret, path)

    hook = ReadHook(monkeypatch, "swapped.py", swap)
    settings = settings_for()
    run(root, settings)
    hook.check()
    assert not [c for *_, c in stored_chunks(root, settings) if "TOP_SECRET_TOKEN" in c]


def test_file_swapped_for_a_fifo_before_read_does_not_block(make_tree, settings_for, monkeypatch):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    root = make_tree({**OK, "swapped.py": PY})
    fifo = root / "swapped.py"

    def swap(path):
        path.unlink()
        os.mkfifo(path)

    finished = threading.Event()
    released = []

    def unblock():  # a watchdog writer, so a reader blocked on the FIFO is released
        if finished.wait(1.0):
            return
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # no reader waiting (ENXIO), or no FIFO: nothing to release
            return
        released.append(True)  # a reader had the FIFO open a second after the run began
        os.close(fd)

    hook = ReadHook(monkeypatch, "swapped.py", swap)
    watchdog = threading.Thread(target=unblock, daemon=True)
    settings = settings_for()
    watchdog.start()
    try:
        run(root, settings)
    finally:
        finished.set()
        watchdog.join()
    hook.check()
    # Whether the run blocked is read from the FIFO itself (did a reader hold it open?), not
    # from a stopwatch: a slow machine or a first import of lancedb cannot make it flaky.
    assert not released, "the run blocked reading a FIFO until the watchdog released it"
