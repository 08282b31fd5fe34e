"""`seek context` re-reads files to widen hits (issue 12, defect 4): a file or folder swapped
for a symlink after indexing must not bring the link target's lines into the answer."""

import os

import pytest

from seek.retrieve.context import build_context
from seek.retrieve.types import Hit, SearchResult

SOURCE = "class Greeter:\n    def hello(self):\n        return 'hello'\n"
SECRET = "class Stolen:\n    password = 'hunter2'\n    token = 'abc'\n"


@pytest.fixture
def layout(make_tree, tmp_path):
    root = make_tree({"app.py": SOURCE, "pkg/mod.py": SOURCE, "keep.py": SOURCE})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "app.py").write_text(SECRET)
    (outside / "mod.py").write_text(SECRET)
    return root, outside


def context_for(root, settings_for, *paths):
    hits = [Hit(p, 2, 3, 0.9, "    def hello(self):\n        return 'hello'") for p in paths]
    return build_context(root, SearchResult("q", "q", hits), settings_for(), threshold=0.0)


def test_a_file_swapped_for_a_symlink_is_left_out_with_a_note(layout, settings_for):
    root, outside = layout
    (root / "app.py").unlink()
    os.symlink(outside / "app.py", root / "app.py")
    out = context_for(root, settings_for, "app.py", "keep.py")
    assert "hunter2" not in out.prompt()
    assert [b.path for b in out.blocks] == ["keep.py"]
    assert any("app.py was left out" in note for note in out.notes)


def test_a_folder_swapped_for_a_symlink_is_left_out(layout, settings_for):
    root, outside = layout
    (root / "pkg" / "mod.py").unlink()
    (root / "pkg").rmdir()
    os.symlink(outside, root / "pkg")
    out = context_for(root, settings_for, "pkg/mod.py")
    assert "hunter2" not in out.prompt() and out.blocks == []
    assert any("pkg/mod.py was left out" in note for note in out.notes)


def test_a_deleted_file_keeps_its_indexed_lines(layout, settings_for):
    root, _ = layout
    (root / "app.py").unlink()
    out = context_for(root, settings_for, "app.py")
    assert [b.path for b in out.blocks] == ["app.py"] and "hello" in out.prompt()
