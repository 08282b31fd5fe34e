"""How a write fault is recognised, and how ``seek status`` sees one without writing (issue 31;
issue 47, rows 5 and 6): :mod:`seek.store.faults` on its own, and through the CLI in this
process. The campaign of faults injected at each write step of a run is in
tests/test_faults.py; real full and read-only file systems in tests/test_faults_mounts.py.

The permission cases need a user the kernel holds to the folder's mode: root writes anywhere,
so they skip as root (CI runs the suite once more as an unprivileged user).
"""

from __future__ import annotations

import errno
import json
import os
import sys
from pathlib import Path

import pytest
from test_faults import QUERIES, edit, lance_error, tree, write_tree

from seek.errors import IndexUnwritableError, SeekError
from seek.store import ChunkTable
from seek.store.faults import (
    CAUSES,
    DETAIL_CHARS,
    as_unwritable,
    existing_folder,
    fault_errno,
    free_bytes,
    probe,
)

needs_non_root = pytest.mark.skipif(
    os.name != "posix" or os.geteuid() == 0,
    reason="root writes into any folder whatever its mode: permission checks need a non-root "
    "user (CI runs the suite once more as one)",
)


def enospc_in(folder: Path) -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(folder / "data" / "1.lance"))


def raised_while_handling(first: BaseException, then: BaseException) -> BaseException:
    """``then`` raised inside the ``except`` block that caught ``first``, without ``from``:
    Python links them by ``__context__`` only (how many libraries re-raise)."""
    try:
        try:
            raise first
        except type(first):
            raise then  # noqa: B904 - the implicit chain is the case under test
    except type(then) as exc:
        assert exc.__cause__ is None and exc.__context__ is first
        return exc


# -- recognising a fault ------------------------------------------------------------------


def test_a_fault_re_raised_without_from_is_still_recognised(tmp_path):
    folder = tmp_path / "index"
    wrapped = raised_while_handling(enospc_in(folder), RuntimeError("commit failed"))
    assert fault_errno(wrapped, folder) == errno.ENOSPC
    twice = raised_while_handling(wrapped, ValueError("cleanup failed too"))
    assert fault_errno(twice, folder) == errno.ENOSPC
    error = as_unwritable(twice, folder)
    assert error is not None and error.errno == errno.ENOSPC and error.folder == str(folder)
    assert str(error).startswith(f"no space left on device writing the index in {folder}: ")


def test_an_explicit_cause_is_followed_before_the_context(tmp_path):
    """``raise X from Y`` names Y as the reason even when X was raised while handling Z."""
    folder = tmp_path / "index"
    outer = RuntimeError("commit failed")
    outer.__context__ = OSError(errno.ENOENT, "gone", str(folder / "x"))
    outer.__cause__ = lance_error(errno.EROFS, folder)
    assert fault_errno(outer, folder) == errno.EROFS


def test_a_chain_that_loops_ends(tmp_path):
    first, second = RuntimeError("a"), RuntimeError("b")
    first.__context__, second.__context__ = second, first
    assert fault_errno(first, tmp_path) is None


@pytest.mark.parametrize("code", sorted(CAUSES), ids=[errno.errorcode[c] for c in sorted(CAUSES)])
def test_each_cause_in_each_voice(tmp_path, code):
    """An OSError inside the folder, ``[Errno n]`` and ``(os error n)`` in a message, and
    LanceDB's words without a number: each is the cause it names, worded as CAUSES says."""
    folder = tmp_path / "index"
    words = os.strerror(code)
    voices = [
        OSError(code, words, str(folder / "manifest.json.tmp")),
        OSError(code, words),  # no file named: the fault is the run's
        RuntimeError(f"lance error: LanceError(IO): {words} (os error {code}), /x.rs:1:1"),
        RuntimeError(f"Timeout: [Errno {code}] {words}"),
        RuntimeError(f"lance error: Io error: {words.upper()}"),
        RuntimeError(f"LanceError(IO): {words}, /build/src/local.rs:120:9"),
        RuntimeError(f"object_store IO error: {words}"),
    ]
    for exc in voices:
        assert fault_errno(exc, folder) == code, exc
        error = as_unwritable(exc, folder)
        assert error.errno == code and str(error).startswith(f"{CAUSES[code]} writing the index")


def test_what_is_not_a_write_fault(tmp_path):
    folder = tmp_path / "index"
    not_faults = [
        OSError(errno.ENOENT, "gone", str(folder / "x")),  # not a write fault
        OSError(errno.ENOSPC, "full", str(tmp_path / "ws" / "a.py")),  # another folder's
        OSError(errno.ENOSPC, "full", str(tmp_path / "index-other" / "a")),  # a name's prefix
        OSError("no errno at all"),
        SeekError(f"no space left (os error {errno.ENOSPC})"),  # seek's own, already worded
        RuntimeError(f"lance error: (os error {errno.ENOENT}) [errno {errno.ENOENT}]"),
        RuntimeError(f"the disk said {os.strerror(errno.ENOSPC)}"),  # neither LanceDB nor IO
        RuntimeError("lance error: schema mismatch"),
    ]
    for exc in not_faults:
        assert fault_errno(exc, folder) is None, exc
        assert as_unwritable(exc, folder) is None, exc


def test_a_file_named_in_bytes_or_a_path_is_placed_in_the_folder_or_not(tmp_path):
    folder = tmp_path / "index"
    inside = OSError(errno.EIO, "io", os.fsencode(folder / "a"))
    assert fault_errno(inside, folder) == errno.EIO
    assert fault_errno(OSError(errno.EIO, "io", folder / "a"), folder) == errno.EIO
    assert fault_errno(OSError(errno.EIO, "io", os.fsencode(tmp_path / "b")), folder) is None
    # Without a folder to compare, every OSError with a write fault's errno is one.
    assert fault_errno(OSError(errno.EIO, "io", str(tmp_path / "b"))) == errno.EIO


def test_a_numbered_fault_in_a_message_is_read_whatever_else_it_says(tmp_path):
    """The first number that is a write fault wins; an unrelated number before it does not
    hide it."""
    folder = tmp_path / "index"
    text = f"lance error: (os error {errno.ENOENT}) then (os error {errno.EDQUOT})"
    assert fault_errno(RuntimeError(text), folder) == errno.EDQUOT


def test_the_error_is_one_line_cut_to_its_length(tmp_path):
    folder = tmp_path / "index"
    long = RuntimeError(
        f"lance error: LanceError(IO): {os.strerror(errno.ENOSPC)} (os error 28),\n"
        + "x" * (3 * DETAIL_CHARS)
    )
    error = as_unwritable(long, folder)
    message = str(error)
    assert "\n" not in message
    detail = message.split(f"writing the index in {folder}: ", 1)[1]
    detail = detail.split("; searches keep the last complete index")[0]
    assert len(detail) <= DETAIL_CHARS and detail.startswith("lance error: LanceError(IO)")
    assert message.endswith("; searches keep the last complete index, and the next run "
                            "resumes where this one stopped")  # fmt: skip
    assert as_unwritable(error, folder) is error  # already seek's: unchanged
    nameless = raised_while_handling(enospc_in(folder), RuntimeError())
    assert f"in {folder}: RuntimeError;" in str(as_unwritable(nameless, folder))  # no words


def test_a_cause_is_worded_by_seek_not_by_the_platform(tmp_path, monkeypatch):
    """Messages name a cause in CAUSES' words on every platform (macOS spells EDQUOT "Disc
    quota exceeded"); a code seek does not list gets the platform's words, in lower case."""
    from seek.store.faults import unwritable_error

    folder = tmp_path / "index"
    other = unwritable_error(errno.ENOENT, folder, "detail")
    assert str(other).startswith(f"no such file or directory writing the index in {folder}: ")
    monkeypatch.setattr(os, "strerror", lambda code: f"Platform Words {code}")
    for code, words in CAUSES.items():
        assert str(unwritable_error(code, folder, "d")).startswith(f"{words} writing the index")
    assert str(unwritable_error(errno.ENOENT, folder, "d")).startswith(
        f"platform words {errno.ENOENT} writing the index in {folder}: d; "
    )


# -- seeing a fault without writing (``seek status``) -------------------------------------


def test_the_folder_looked_at_before_the_first_run_is_the_nearest_that_exists(tmp_path):
    assert existing_folder(tmp_path / "a" / "b" / "c") == tmp_path
    (tmp_path / "a").mkdir()
    assert existing_folder(tmp_path / "a" / "b") == tmp_path / "a"
    assert existing_folder(tmp_path) == tmp_path
    assert existing_folder(Path("/no-such-top-folder-for-seek") / "x") == Path("/")
    assert free_bytes(tmp_path / "a" / "b") == free_bytes(tmp_path)


def test_a_writable_folder_with_room_has_nothing_to_report(tmp_path):
    assert probe(tmp_path / "index") is None


@needs_non_root
def test_a_folder_this_user_cannot_write_is_reported(tmp_path):
    """Readable and listable, not writable: the probe must ask for write permission."""
    parent = tmp_path / "home"
    parent.mkdir()
    parent.chmod(0o555)
    try:
        error = probe(parent / "index")
        assert error is not None and error.errno == errno.EACCES
        assert str(error).startswith(
            f"permission denied writing the index in {parent / 'index'}: {parent} is not "
            "writable by this user"
        )
    finally:
        parent.chmod(0o755)


def test_a_read_only_mount_and_a_full_disk_are_reported(tmp_path, monkeypatch):
    """The file system's read-only flag and its free bytes, as the OS reports them."""
    import shutil
    from types import SimpleNamespace

    folder = tmp_path / "index"
    real_statvfs, real_usage = os.statvfs, shutil.disk_usage
    monkeypatch.setattr(os, "statvfs", lambda p: SimpleNamespace(f_flag=os.ST_RDONLY))
    error = probe(folder)
    assert error.errno == errno.EROFS
    assert str(error).startswith(
        f"read-only file system writing the index in {folder}: {tmp_path} is mounted read-only"
    )
    monkeypatch.setattr(os, "statvfs", real_statvfs)
    monkeypatch.setattr(shutil, "disk_usage", lambda p: real_usage(p)._replace(free=0))
    error = probe(folder)
    assert error.errno == errno.ENOSPC and str(error).startswith(
        f"no space left on device writing the index in {folder}: 0 bytes free"
    )
    monkeypatch.setattr(shutil, "disk_usage", lambda p: real_usage(p)._replace(free=1))
    assert probe(folder) is None

    def failing(path):
        raise OSError(errno.EIO, "input/output error", str(folder))

    monkeypatch.setattr(shutil, "disk_usage", failing)
    error = probe(folder)
    assert error.errno == errno.EIO and error.folder == str(folder)
    assert str(error).startswith(f"input/output error writing the index in {folder}: ")


def test_without_statvfs_the_access_check_alone_decides(tmp_path, monkeypatch):
    """Windows has no ``os.statvfs``: the probe goes on to the permission and space checks."""
    import shutil

    usage = shutil.disk_usage(tmp_path)  # (shutil's own needs statvfs too)
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage)
    monkeypatch.delattr(os, "statvfs")
    assert probe(tmp_path / "index") is None
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage._replace(free=0))
    assert probe(tmp_path / "index").errno == errno.ENOSPC


# -- end to end, through the CLI ----------------------------------------------------------


@pytest.fixture
def cli(in_home, hash_provider, monkeypatch, capsys):
    """``seek`` run in this process on the test's home with the hash embedder: (exit status,
    stdout, stderr)."""
    from seek.cli import main

    def seek(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["seek", f"--set=provider={hash_provider}", *args])
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    return seek


def test_seek_index_says_one_line_for_a_full_disk_re_raised_without_from(
    cli, tmp_path, monkeypatch, in_home
):
    """A library that meets ENOSPC and raises its own error inside its ``except`` block
    (no ``from``): ``seek index`` still ends with the one line of a full disk, and a search
    answers from the last complete index with the stale note (issue 47, row 5)."""
    root = write_tree(tmp_path / "ws", tree())
    assert cli("index", str(root))[0] == 0
    code, before, _ = cli("search", "-C", str(root), "--format", "jsonl", QUERIES[0])
    assert code == 0 and before
    index_dir = next((in_home).glob("*/manifest.json")).parent
    edit(root)

    def full(table, *args, **kwargs):
        try:
            raise enospc_in(index_dir / "lancedb")
        except OSError:
            raise RuntimeError("commit of the new fragments failed")  # noqa: B904

    monkeypatch.setattr(ChunkTable, "replace_files", full)
    code, out, err = cli("index", str(root))
    assert code == 1 and "Traceback" not in err, err
    assert err.count("\n") == 1 and err.startswith(
        f"seek: error: no space left on device writing the index in {index_dir}: "
        "commit of the new fragments failed; "
    )
    code, found, err = cli("search", "-C", str(root), "--format", "jsonl", QUERIES[0])
    assert code == 0 and found == before, err
    assert err.startswith("note: The index is stale: it cannot be updated (no space left on")
    assert err.count("\n") == 1


@needs_non_root
def test_seek_status_reports_an_index_folder_this_user_cannot_write(cli, tmp_path, in_home):
    """A shared index folder another user owns, or one made read-only by mode: ``seek
    status`` says so before a run fails (issue 47, row 6)."""
    root = write_tree(tmp_path / "ws", tree())
    assert cli("index", str(root))[0] == 0
    index_dir = next((in_home).glob("*/manifest.json")).parent
    code, out, _ = cli("status", "--json", str(root))
    assert code == 0 and json.loads(out)["stale"] is None
    index_dir.chmod(0o555)
    try:
        code, out, err = cli("status", "--json", str(root))
        assert code == 0, err
        stale = json.loads(out)["stale"]
        assert stale == str(
            IndexUnwritableError(
                f"permission denied writing the index in {index_dir}: {index_dir} is not "
                "writable by this user; searches keep the last complete index, and the next "
                "run resumes where this one stopped",
                errno.EACCES,
                str(index_dir),
            )
        )
        code, out, _ = cli("status", str(root))
        assert code == 0 and f"stale       {stale}" in out
    finally:
        index_dir.chmod(0o755)
