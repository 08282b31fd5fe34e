"""The fault campaign for a corpus in a local folder (issue 31; docs/reliability.md): the
corpus folder cannot be written - no space, read-only, quota, permission, I/O error - at
each write step of ``seek corpus index`` (a repository's lock, its manifest's write, sync
and rename, LanceDB's deletes, commits and index refresh, the last manifest save), injected
as the OS or LanceDB reports them. Each case checks: the run stops with one
:class:`IndexUnwritableError` naming the cause and the corpus folder, no lock or temporary
file is left behind, the corpus stays searchable, and once the fault is gone the next run
resumes to a corpus equal to a clean one. LanceDB failures on S3 are one line too, with the
credentials masked (tests/test_corpus_s3.py has the server).
"""

from __future__ import annotations

import builtins
import errno
import io
import os
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from corpus_helpers import REPO_A, REPO_B, add_repos, assert_same_corpus, index

import seek.cli.corpus_cmd  # noqa: F401 - registers `seek corpus`
from seek.corpus.location import CorpusLocation
from seek.corpus.search import CorpusSearcher
from seek.errors import CorpusError, IndexUnwritableError
from seek.store.corpus_table import CorpusTable

QUERIES = ("configure retries", "Router add_route", "parse tokens", "brand new feature")
CODES = (errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EACCES, errno.EIO)
BEFORE_ROWS = ("lock", "manifest", "fsync", "replace", "table-delete")
"""Steps whose fault comes before any row of the run changes: searches answer exactly as
before the run."""
STEPS = (*BEFORE_ROWS, "table-commit", "finish", "last-manifest")


def lance_error(code: int, where: str) -> RuntimeError:
    """An error as LanceDB raises it (the shape seen on a full disk, issue 31)."""
    return RuntimeError(
        f"lance error: LanceError(IO): {os.strerror(code)} (os error {code}), "
        f"{where}/lancedb/chunks.lance/data/1.lance, /build/lance-io/src/local.rs:120:9"
    )


@contextmanager
def fault(step: str, code: int, uri: str):
    """Write calls that fail with ``code`` at ``step``; yields the list of hits."""
    hits: list[str] = []

    def oserror(path: object = None) -> OSError:
        hits.append(step)
        return OSError(code, os.strerror(code), None if path is None else os.fspath(path))

    with pytest.MonkeyPatch.context() as mp:
        real_open, real_os_open, real_replace = builtins.open, os.open, os.replace
        real_fsync = os.fsync

        if step == "lock":

            def fake_os_open(path, flags, *args, **kwargs):
                if "/locks/" in os.fspath(path) and flags & os.O_EXCL:
                    raise oserror(path)
                return real_os_open(path, flags, *args, **kwargs)

            mp.setattr(os, "open", fake_os_open)
        elif step in ("manifest", "last-manifest"):
            saves = {"n": 0}
            real_finish = CorpusTable.finish

            def finish(table, *args, **kwargs):
                saves["n"] += 1
                return real_finish(table, *args, **kwargs)

            mp.setattr(CorpusTable, "finish", finish)

            def fake_open(file, mode="r", *args, **kwargs):
                name = os.fspath(file) if isinstance(file, str | os.PathLike) else ""
                armed = step == "manifest" or saves["n"] > 0
                if armed and "/manifests/" in name and name.endswith(".tmp") and "w" in mode:
                    raise oserror(file)
                return real_open(file, mode, *args, **kwargs)

            mp.setattr(builtins, "open", fake_open)
            mp.setattr(io, "open", fake_open)
        elif step == "fsync":

            def fake_fsync(fd):
                raise oserror()

            mp.setattr(os, "fsync", fake_fsync)
        elif step == "replace":

            def fake_replace(src, dst, *args, **kwargs):
                if "/manifests/" in os.fspath(dst):
                    raise oserror(dst)
                return real_replace(src, dst, *args, **kwargs)

            mp.setattr(os, "replace", fake_replace)
        else:
            name = {"table-delete": "delete", "table-commit": "commit", "finish": "finish"}[step]
            real = getattr(CorpusTable, name)

            def fake(table, *args, **kwargs):
                if step == "table-delete" and not (len(args) > 1 and args[1]):
                    return real(table, *args, **kwargs)  # nothing to delete: no write
                hits.append(step)
                raise lance_error(code, uri)

            mp.setattr(CorpusTable, name, fake)
        del real_fsync
        yield hits


def edit(alpha: Path) -> None:
    """A change touching every write step: a file changed, one added, one removed."""
    (alpha / "src/retry.py").write_text("def configure_retries(policy, limit):\n    return 2\n")
    (alpha / "src/new_feature.py").write_text("def brand_new_feature():\n    return 42\n")
    (alpha / "src/router.py").unlink()


def answers(location: CorpusLocation, settings) -> list[list[tuple]]:
    searcher = CorpusSearcher(location, settings)
    found = []
    for query in QUERIES:
        hits = searcher.search(query, 10).hits
        found.append([(h.repo, h.path, h.start_line, h.end_line, round(h.score, 5)) for h in hits])
    return found


@pytest.fixture
def corpus(tmp_path, settings_for, make_tree):
    """A corpus of two repositories, indexed; its answers before and after the edit, and a
    clean corpus of the edited repositories (what a resume must equal)."""
    repos = {"alpha": make_tree(REPO_A, "alpha"), "beta": make_tree(REPO_B, "beta")}
    settings = settings_for()
    location = CorpusLocation(str(tmp_path / "corpus"))
    add_repos(location, repos)
    index(location, settings)
    before = answers(location, settings)
    edit(repos["alpha"])
    clean = CorpusLocation(str(tmp_path / "clean"))
    add_repos(clean, repos)
    index(clean, settings)
    return location, settings, before, answers(clean, settings), clean


def leftovers(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if
                  p.suffix == ".tmp" or p.parent.name == "locks")  # fmt: skip


CASES = [(step, code) for step in STEPS for code in (errno.ENOSPC, errno.EROFS)] + [
    (step, code) for step in ("lock", "manifest", "table-commit")
    for code in (errno.EDQUOT, errno.EACCES, errno.EIO)
]  # fmt: skip


@pytest.mark.parametrize(
    ("step", "code"), CASES, ids=[f"{s}-{errno.errorcode[c]}" for s, c in CASES]
)
def test_a_corpus_write_fault_stops_in_one_line_keeps_answering_and_resumes(corpus, step, code):
    location, settings, before, after, clean = corpus
    folder = Path(location.uri)
    with fault(step, code, location.uri) as hits:
        with pytest.raises(IndexUnwritableError) as caught:
            index(location, settings)
        assert hits, "the fault was never reached"
    error = caught.value
    assert error.errno == code and error.folder == location.uri
    message = str(error)
    assert "\n" not in message and location.uri in message
    assert message.startswith(os.strerror(code).lower())
    assert leftovers(folder) == []  # no lock held, nothing half-written
    found = answers(location, settings)  # the corpus stays searchable
    if step in BEFORE_ROWS:
        assert found == before
    elif step == "last-manifest":  # every row and index written: the finished run's answers
        assert found == after
    elif step == "finish":  # every row written, the keyword index not refreshed: the same
        # hits (their keyword scores differ a little until the resume refreshes it)
        assert [{h[:4] for h in hits} for hits in found] == [
            {h[:4] for h in hits} for hits in after
        ]
    else:  # a commit failed: each file's rows are whole (old or new), every query answers
        assert all(found)
    index(location, settings)  # the fault is gone: resume
    assert_same_corpus(location, clean)
    assert answers(location, settings) == after


def test_seek_corpus_index_says_one_line_and_search_still_answers(
    corpus, monkeypatch, capsys, seek_home
):
    """The CLI: `seek corpus index` on a full corpus folder exits 1 with one line naming the
    cause and the folder; `seek corpus search` answers from the corpus as it was."""
    from seek.cli import main

    location, settings, before, after, clean = corpus
    monkeypatch.setenv("SEEK_HOME", str(seek_home))

    def seek(*args: str) -> int:
        monkeypatch.setattr(sys, "argv", ["seek", *args])
        try:
            main()
        except SystemExit as exc:
            return int(exc.code or 0)
        return 0

    with fault("table-delete", errno.ENOSPC, location.uri):
        code = seek("corpus", "index", location.uri, "--in-process")
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in err
    assert err.count("\n") == 1 and err.startswith(
        f"seek: error: no space left on device writing the index in {location.uri}: "
    )
    assert seek("corpus", "search", location.uri, "Router add_route") == 0
    out, err = capsys.readouterr()
    assert "alpha:src/router.py:" in out  # the removed file's rows are still there


def test_lancedb_failures_on_s3_are_one_line_without_credentials():
    """A LanceDB error opening an S3 corpus's table (here: nothing listens at the endpoint)
    is one CorpusError line naming the corpus, with the endpoint's user:password masked."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {"AWS_ACCESS_KEY_ID": "AKIAABCDEFGHIJKLMNOP", "AWS_SECRET_ACCESS_KEY": "s3cr3tvalue99",
           "AWS_REGION": "us-east-1",
           "AWS_ENDPOINT_URL": f"http://user:secretpw@127.0.0.1:{port}"}  # fmt: skip
    table = CorpusTable(CorpusLocation("s3://no-bucket/x", env=env))
    with pytest.raises(CorpusError) as caught:
        table.count_rows()
    message = str(caught.value)
    assert message.startswith("cannot open s3://no-bucket/x/lancedb: ")
    assert "\n" not in message
    for secret in ("secretpw", "AKIAABCDEFGHIJKLMNOP", "s3cr3tvalue99"):
        assert secret not in message
