"""A damaged code graph table (a data file cut short or replaced): the graph tools never
answer with a traceback; they have the index repaired (an index run that reads the graph
table and makes a damaged one again from the files, leaving the chunk table as it is) and
answer, with a note; `seek index` repairs it too; and a graph that stays unreadable is one
line (issue 28 deliver 1: "crash-safe"; the standard: a damaged index is repaired, never a
traceback)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from test_graph_tools import PROJECT, sites

from seek.errors import DamagedIndexError
from seek.index.indexer import index_workspace
from seek.store import ChunkTable, index_dir_for, load_manifest
from seek.store.graph_table import GraphTable, graph_table_name
from seek.workspace import Workspaces
from seek.workspace.code_graph import GRAPH_REPAIRED


def graph_table(root, settings) -> GraphTable:
    index_dir = index_dir_for(root, settings)
    return GraphTable(index_dir, graph_table_name(load_manifest(index_dir).table))


def damage(table: GraphTable) -> None:
    """Every data file of the graph table cut to half its size."""
    for data in (table.db_dir / f"{table.name}.lance" / "data").iterdir():
        data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])


def chunk_rows(root, settings):
    data = ChunkTable(index_dir_for(root, settings)).load_all()
    return sorted(zip(data["path"], data["start_line"], data["content"], strict=True))


@pytest.mark.parametrize("live", [False, True], ids=["one call", "server"])
def test_the_tools_repair_a_damaged_graph_and_answer(make_tree, settings_for, hash_provider, live):
    root = make_tree(PROJECT)
    settings = settings_for(provider=hash_provider)
    workspaces = Workspaces(live=live, settings=settings)
    expected = {
        "defs": sites(workspaces.defs(root, "price_of")),
        "outline": workspaces.outline(root, "py/shop/cart.py").rows,
    }
    chunks = chunk_rows(root, settings)
    damage(graph_table(root, settings))
    if live:
        workspaces = Workspaces(live=True, settings=settings)  # a server started now
    assert graph_table(root, settings).problem()
    for tool, ask in (
        ("outline", lambda: workspaces.outline(root, "py/shop/cart.py")),
        ("defs", lambda: workspaces.defs(root, "price_of")),
    ):
        found = ask()
        assert (found.rows if tool == "outline" else sites(found)) == expected[tool]
        if tool == "outline":  # the first call repaired it; the next reads a sound table
            assert GRAPH_REPAIRED in found.notes
        else:
            assert GRAPH_REPAIRED not in found.notes
    assert graph_table(root, settings).problem() == ""
    assert chunk_rows(root, settings) == chunks  # only the graph was made again


def test_seek_index_repairs_a_damaged_graph(make_tree, settings_for, hash_provider):
    root = make_tree(PROJECT)
    settings = settings_for(provider=hash_provider)
    index_workspace(root, settings)
    before = sorted(graph_table(root, settings).load_all())
    damage(graph_table(root, settings))
    report = index_workspace(root, settings)
    assert not report.rebuild_reason and report.embedded == 0  # the chunks stay
    assert graph_table(root, settings).problem() == ""
    assert sorted(graph_table(root, settings).load_all()) == before


def test_a_graph_that_stays_unreadable_is_one_line(make_tree, settings_for, hash_provider,
                                                   monkeypatch):  # fmt: skip
    root = make_tree(PROJECT)
    settings = settings_for(provider=hash_provider)
    workspaces = Workspaces(live=False, settings=settings)
    workspaces.defs(root, "price_of")

    def unreadable(self):
        raise RuntimeError("lance error: LanceError(IO): failed to fill whole buffer\nat x.rs:1")

    monkeypatch.setattr(GraphTable, "load_all", unreadable)  # every read fails, repair or not
    with pytest.raises(DamagedIndexError) as caught:
        workspaces.defs(root, "price_of")
    message = str(caught.value)
    assert "\n" not in message and "cannot be read (lance error" in message
    assert message.endswith("run `seek index` to repair it")


def test_every_read_of_a_damaged_graph_names_the_index_and_the_cause(
    make_tree, settings_for, hash_provider
):
    """The whole graph (a server's), a lazy one (a one-shot lookup's) and one file's
    definitions (a search hit's enclosing definition) read from a damaged table: each is the
    one line that names the index folder and LanceDB's reason."""
    from seek.workspace import stored_graph as sg

    root = make_tree(PROJECT)
    settings = settings_for(provider=hash_provider)
    Workspaces(live=False, settings=settings).defs(root, "price_of")
    index_dir = index_dir_for(root, settings)
    damage(graph_table(root, settings))
    for read in (
        lambda: sg.load_graph(index_dir),
        lambda: sg.load_graph(index_dir, lazy=True),
        lambda: sg.file_definitions(index_dir, ["py/shop/cart.py"]),
    ):
        with pytest.raises(DamagedIndexError) as caught:
            read()
        message = str(caught.value)
        assert message.startswith(f"the code graph stored in {index_dir} cannot be read (")
        assert message.endswith("): run `seek index` to repair it") and "\n" not in message
        assert caught.value.__cause__ is not None and "(None)" not in message
        assert message == str(sg.graph_damaged(index_dir, caught.value.__cause__))


def test_a_row_a_one_shot_lookup_cannot_decode_is_the_same_one_line(
    make_tree, settings_for, hash_provider, monkeypatch
):
    """A one-shot lookup decodes a file's facts after the table is read (a lazy graph,
    seek.index.graph_rows.StoredFacts): a row whose text does not decode then is damage
    as a table that does not read is, not a traceback."""
    root = make_tree(PROJECT)
    settings = settings_for(provider=hash_provider)
    workspaces = Workspaces(live=False, settings=settings)
    workspaces.defs(root, "price_of")
    read = GraphTable.load_all
    cut = []

    def one_row_cut(self):
        rows = read(self)
        for n, (path, defined, facts) in enumerate(rows):
            if path == "py/shop/cart.py":  # it uses price_of, so the lookup decodes it
                rows[n] = (path, defined, facts[: facts.index('"price_of"') + 12])
                cut.append(rows[n][2])
        return rows

    monkeypatch.setattr(GraphTable, "load_all", one_row_cut)
    with pytest.raises(DamagedIndexError) as caught:
        workspaces.defs(root, "price_of")
    assert cut and all('"price_of"' in text for text in cut)
    message = str(caught.value)
    assert "\n" not in message and "(None)" not in message
    assert message.startswith(
        f"the code graph stored in {index_dir_for(root, settings)} cannot be read ("
    ) and message.endswith("run `seek index` to repair it")


def test_the_cli_answers_after_a_repair_without_a_traceback(make_tree, seek_home):
    root = make_tree(PROJECT)
    env = {"SEEK_HOME": str(seek_home), "XDG_CONFIG_HOME": str(seek_home / "config")}

    def seek(*args):
        return subprocess.run([sys.executable, "-m", "seek", *args], cwd=root, env=env,
                              capture_output=True, text=True, timeout=120)  # fmt: skip

    assert seek("index", "-q").returncode == 0
    from seek.settings import load_settings

    settings = load_settings(overrides={"home": str(seek_home)}, user_config=seek_home / "none")
    damage(graph_table(root, settings))
    found = seek("def", "price_of")
    assert found.returncode == 0 and "Traceback" not in found.stderr
    assert found.stdout.startswith("py/shop/prices.py:4")
