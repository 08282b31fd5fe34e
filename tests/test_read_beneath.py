"""Reading a workspace file without leaving the workspace (``seek.scan.beneath``; README,
"What gets indexed": symbolic links are never followed, FIFOs never opened - also when a
file or folder is swapped for one after the scan): what ``read_beneath``'s docstring
promises, path by path, with real links and FIFOs."""

import errno
import os
import threading

import pytest

from seek.scan.beneath import ESCAPES, read_beneath


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "root"
    (root / "pkg" / "deep").mkdir(parents=True)
    (root / "top.py").write_bytes(b"top\n")
    (root / "pkg" / "deep" / "mod.py").write_bytes(b"\x00binary\xff and text\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_bytes(b"secret\n")
    return root, outside


def refused(root, rel):
    with pytest.raises(OSError) as caught:
        read_beneath(root, rel)
    assert caught.value.filename is not None  # an error names what it is about
    if caught.value.errno in (errno.EXDEV, errno.EINVAL):  # its own refusals: the path asked
        assert caught.value.filename == rel
    return caught.value.errno


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def test_reads_the_exact_bytes_of_a_file_at_any_depth(tree):
    root, _ = tree
    assert read_beneath(root, "top.py") == b"top\n"
    assert read_beneath(root, "pkg/deep/mod.py") == b"\x00binary\xff and text\n"
    (root / "empty.py").write_bytes(b"")
    assert read_beneath(root, "empty.py") == b""


@pytest.mark.parametrize("rel", ["", ".", "..", "../outside/secret.py", "pkg/../top.py",
                                 "pkg//deep/mod.py", "./top.py", "pkg/deep/"])  # fmt: skip
def test_paths_that_are_not_plainly_inside_are_refused(tree, rel):
    root, _ = tree
    assert refused(root, rel) == errno.EXDEV


def test_a_file_swapped_for_a_symlink_is_not_followed(tree):
    root, outside = tree
    (root / "top.py").unlink()
    (root / "top.py").symlink_to(outside / "secret.py")
    assert refused(root, "top.py") in ESCAPES


def test_a_folder_on_the_path_swapped_for_a_symlink_is_not_followed(tree):
    root, outside = tree
    (outside / "deep").mkdir()
    (outside / "deep" / "mod.py").write_bytes(b"secret\n")
    (root / "pkg" / "deep" / "mod.py").unlink()
    (root / "pkg" / "deep").rmdir()
    (root / "pkg" / "deep").symlink_to(outside / "deep", target_is_directory=True)
    assert refused(root, "pkg/deep/mod.py") in ESCAPES
    (root / "pkg" / "deep").unlink()
    (root / "pkg").rmdir()
    (root / "pkg").symlink_to(outside, target_is_directory=True)  # the first folder too
    assert refused(root, "pkg/secret.py") in ESCAPES


def test_a_file_where_a_folder_was_is_refused(tree):
    root, _ = tree
    assert refused(root, "top.py/inner.py") in ESCAPES  # a file on the path: ENOTDIR


def test_what_is_not_a_regular_file_is_refused_without_blocking(tree):
    root, _ = tree
    assert refused(root, "pkg") == errno.EINVAL  # a folder
    os.mkfifo(root / "pipe.py")
    done = threading.Event()
    result = []

    def read():
        try:
            read_beneath(root, "pipe.py")
        except OSError as exc:
            result.append(exc.errno)
        done.set()

    threading.Thread(target=read, daemon=True).start()
    if not done.wait(10):  # a blocked open: release it, then fail
        with open(root / "pipe.py", "wb"):
            pass
        pytest.fail("reading a FIFO blocked")
    assert result == [errno.EINVAL]


def test_no_file_descriptor_is_left_open(tree):
    root, outside = tree
    (root / "link.py").symlink_to(outside / "secret.py")
    read_beneath(root, "pkg/deep/mod.py")  # warm up anything opened once
    before = open_fds()
    for _ in range(20):
        read_beneath(root, "pkg/deep/mod.py")
        for rel in ("link.py", "pkg", "pkg/missing/x.py", "pkg/deep/missing.py"):
            with pytest.raises(OSError):
                read_beneath(root, rel)
    assert open_fds() == before


def test_a_missing_file_is_an_ordinary_error(tree):
    root, _ = tree
    assert refused(root, "pkg/deep/missing.py") == errno.ENOENT
    assert refused(root, "nowhere/missing.py") == errno.ENOENT
    assert refused(root.parent / "no-root", "top.py") == errno.ENOENT


def test_a_limit_refuses_a_bigger_file_and_reads_one_of_exactly_the_limit(tree):
    """Issue 43 finding 4: ignore files are read with a limit; a regular file over it is
    refused unread (EFBIG), one of exactly the limit is read whole."""
    root, _ = tree
    (root / "big.txt").write_bytes(b"x" * 101)
    (root / "fits.txt").write_bytes(b"x" * 100)
    assert read_beneath(root, "big.txt") == b"x" * 101  # no limit: read whole
    assert read_beneath(root, "fits.txt", 100) == b"x" * 100
    with pytest.raises(OSError) as caught:
        read_beneath(root, "big.txt", 100)
    assert caught.value.errno == errno.EFBIG and caught.value.filename == "big.txt"


def test_the_root_itself_may_be_a_link_the_user_chose(tree, tmp_path):
    """The workspace folder is the user's choice (``seek -C ~/link-to-project``): a link
    there is followed; nothing beneath it is."""
    root, outside = tree
    (tmp_path / "via-link").symlink_to(root, target_is_directory=True)
    assert read_beneath(tmp_path / "via-link", "pkg/deep/mod.py") == b"\x00binary\xff and text\n"
    (root / "out").symlink_to(outside, target_is_directory=True)
    assert refused(tmp_path / "via-link", "out/secret.py") in ESCAPES
