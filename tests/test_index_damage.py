"""A damaged LanceDB folder (issue 12, defect 6): status names the damage, a search answers
from the search cache or with one line, and the next `seek index` rebuilds it with the reason
"index damaged: ..."."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import SMALL_PROJECT, HashEmbedder

from seek.errors import SeekError
from seek.index.indexer import REBUILD, index_workspace
from seek.index.rules import damage_reason
from seek.index.status import workspace_status
from seek.retrieve import Searcher
from seek.settings import load_settings
from seek.store import ChunkTable, index_dir_for, load_manifest


def rows(root, settings):
    data = ChunkTable(index_dir_for(root, settings)).load_all()
    columns = ("path", "chunk", "start_line", "end_line", "part", "content")
    return sorted(zip(*(data[c] for c in columns), strict=True))


def table_folder(root, settings):
    index_dir = index_dir_for(root, settings)
    return index_dir / "lancedb" / f"{load_manifest(index_dir).table}.lance"


def truncate_data_file(folder):
    biggest = max((folder / "data").iterdir(), key=lambda p: p.stat().st_size)
    biggest.write_bytes(biggest.read_bytes()[: biggest.stat().st_size // 2])


DAMAGE = {
    "table folder deleted": lambda folder: shutil.rmtree(folder),
    "data file truncated": truncate_data_file,
    "_indices deleted": lambda folder: shutil.rmtree(folder / "_indices"),
    "_versions deleted": lambda folder: shutil.rmtree(folder / "_versions"),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damage_is_reported_and_repaired(make_tree, settings_for, damage, request):
    if damage == "_indices deleted":  # only a table with a full-text index has one
        request.getfixturevalue("lance_keywords")
    root = make_tree(SMALL_PROJECT)
    settings = settings_for(root)
    index_workspace(root, settings, embedder=HashEmbedder())
    index_workspace(root, settings, mode=REBUILD, embedder=HashEmbedder())  # a compacted table
    clean = rows(root, settings)
    before = Searcher.open(root, settings, HashEmbedder()).search("configure retries", 3).hits
    DAMAGE[damage](table_folder(root, settings))

    index_dir = index_dir_for(root, settings)
    assert damage_reason(index_dir, load_manifest(index_dir)).startswith("index damaged: ")
    # The search cache is a complete copy: searches keep their answers until `seek index`
    # repairs the table; without it, the damage is one line.
    cached = Searcher.open(root, settings, HashEmbedder())
    assert cached.from_cache and cached.search("configure retries", 3).hits == before
    for folder in index_dir.glob("search-*"):
        shutil.rmtree(folder)
    if damage == "_indices deleted":  # the rows are whole: keywords are searched in memory
        assert Searcher.open(root, settings, HashEmbedder()).search("configure retries", 3).hits
        for folder in index_dir.glob("search-*"):
            shutil.rmtree(folder)
    else:
        with pytest.raises(SeekError, match="damaged|no index") as failure:
            Searcher.open(root, settings, HashEmbedder()).search("configure retries", 3)
        assert "\n" not in str(failure.value)

    report = index_workspace(root, settings, embedder=HashEmbedder())
    assert report.mode == REBUILD and report.rebuild_reason.startswith("index damaged: ")
    assert damage_reason(index_dir, load_manifest(index_dir)) == ""
    assert rows(root, settings) == clean
    assert Searcher.open(root, settings, HashEmbedder()).search("configure retries", 3).hits
    again = index_workspace(root, settings, embedder=HashEmbedder())
    assert again.rebuild_reason == "" and not again.changed


def test_table_that_disagrees_with_the_manifest_is_rebuilt(make_tree, settings_for):
    root = make_tree(SMALL_PROJECT)
    settings = settings_for(root)
    index_workspace(root, settings, embedder=HashEmbedder())
    index_dir = index_dir_for(root, settings)
    ChunkTable(index_dir).delete_files(["src/retry.py"])
    assert "chunks, the manifest" in damage_reason(index_dir, load_manifest(index_dir))
    report = index_workspace(root, settings, embedder=HashEmbedder())
    assert report.rebuild_reason.startswith("index damaged: the table holds")


def test_manifest_with_null_files_is_rebuilt_not_a_traceback(make_tree, settings_for):
    """Defect 9: `"files": null` raised AttributeError."""
    root = make_tree(SMALL_PROJECT)
    settings = settings_for(root)
    index_workspace(root, settings, embedder=HashEmbedder())
    path = index_dir_for(root, settings) / "manifest.json"
    data = json.loads(path.read_text())
    for broken in (None, [], "x", {"a.py": None}):
        path.write_text(json.dumps({**data, "files": broken}))
        assert load_manifest(path.parent).files == {}
        assert not workspace_status(root, settings).exists
    report = index_workspace(root, settings, embedder=HashEmbedder())
    assert report.embedded == 5


@pytest.mark.slow
def test_cli_status_names_the_damage_and_index_repairs_it(make_tree, seek_home):
    root = make_tree(SMALL_PROJECT)
    env = {**os.environ, "SEEK_HOME": str(seek_home), "XDG_CONFIG_HOME": str(seek_home / "c")}

    def seek(*args):
        return subprocess.run([sys.executable, "-m", "seek", *args], capture_output=True,
                              text=True, env=env, cwd=root, timeout=300)  # fmt: skip

    assert seek("index").returncode == 0
    settings = load_settings(overrides={"home": str(seek_home)}, env={})
    truncate_data_file(table_folder(root, settings))
    status = seek("status")
    assert status.returncode == 0 and "index damaged: " in status.stdout
    repaired = seek("index")
    assert repaired.returncode == 0
    assert "Rebuilt the index: index damaged: " in repaired.stderr
    found = seek("search", "configure retries")
    assert found.returncode == 0 and "src/retry.py" in found.stdout
