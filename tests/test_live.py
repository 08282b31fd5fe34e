"""Searchers kept by long-running servers (seek.workspace.live): reused while the index is
unchanged, replaced and freed when it changes (issue 20)."""

import gc
import weakref

from conftest import SMALL_PROJECT

from seek.workspace import live
from seek.workspace.live import LiveIndexes


def test_a_server_keeps_its_searcher_until_the_index_changes(make_tree, settings_for, monkeypatch):
    monkeypatch.setattr(live, "FRESHNESS_S", 0.0)  # an update check before every search
    root = make_tree(SMALL_PROJECT).resolve()
    settings = settings_for(root)
    indexes = LiveIndexes()
    first, _ = indexes.searcher(root, settings)
    # The check rewrites the manifest (updatedAt) but changes nothing: no reload of every row.
    assert indexes.searcher(root, settings)[0] is first
    (root / "src" / "new.py").write_text("def brand_new():\n    pass\n")
    gc.disable()  # the replaced searcher must go by reference counting alone
    try:
        replaced = weakref.ref(first)
        del first
        newer, _ = indexes.searcher(root, settings)
        assert replaced() is None
    finally:
        gc.enable()
    assert newer.search("brand_new", 3).hits[0].path == "src/new.py"
