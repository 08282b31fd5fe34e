"""Searching a real index (LanceDB in a temp dir) built with the deterministic embedder."""

import pytest
from conftest import SMALL_PROJECT, HashEmbedder

from seek.errors import EmbeddingError, SeekError
from seek.index.indexer import index_workspace
from seek.retrieve import Searcher
from seek.store import WriterLock, index_dir_for
from seek.workspace import search


@pytest.fixture
def searcher(make_tree, settings_for):
    root = make_tree(SMALL_PROJECT)
    settings = settings_for()
    embedder = HashEmbedder()
    index_workspace(root, settings, embedder=embedder)
    return Searcher.open(root, settings, embedder=embedder)


def test_hits_have_one_based_lines_and_content(searcher):
    result = searcher.search("configure_retries", k=3)
    top = result.hits[0]
    assert (top.path, top.start_line, top.end_line) == ("src/retry.py", 1, 2)
    assert top.content == SMALL_PROJECT["src/retry.py"].rstrip("\n")  # 2 lines, no phantom third
    assert result.keyword_query == "configure_retries configure retries"


def test_symbol_query_finds_the_definition_before_the_test(searcher):
    paths = [h.path for h in searcher.search("Router", k=5).hits]
    assert paths[0] == "src/router.py"
    assert paths.index("tests/test_router.py") > 0


def test_focus_files_get_their_own_passes(searcher):
    plain = searcher.search("send request", k=5)
    focused = searcher.search("send request", k=5, focus=("src/router.py",))
    plain_score = {h.path: h.score for h in plain.hits}
    focused_score = {h.path: h.score for h in focused.hits}
    assert focused_score["src/router.py"] > plain_score.get("src/router.py", 0.0)


def test_modes_and_unknown_signal(searcher):
    assert searcher.search("HttpClient", mode="bm25").hits[0].path == "src/http_client.py"
    assert searcher.search("HttpClient", mode="vector").hits
    with pytest.raises(SeekError, match="unknown signals: nope"):
        searcher.search("x", disabled=frozenset({"nope"}))


def test_empty_query_returns_nothing(searcher):
    assert searcher.search("   ").hits == []


def test_model_mismatch_falls_back_to_keywords_with_a_note(make_tree, settings_for):
    root = make_tree(SMALL_PROJECT)
    settings = settings_for()  # configured: the built-in local model
    index_workspace(root, settings, embedder=HashEmbedder())  # built with test/hash
    result = Searcher.open(root, settings).search("HttpClient send")
    assert result.hits[0].path == "src/http_client.py"
    assert result.notes == (
        "The index was built with test/hash, not local/minilm-code, so only keywords were matched.",
    )


def test_no_index_is_a_clear_error(make_tree, settings_for, seek_home):
    with pytest.raises(SeekError, match="has no index yet: run `seek index"):
        Searcher.open(make_tree({"a.py": "x"}), settings_for())
    assert not any(seek_home.iterdir())  # searching creates nothing


class BrokenEmbedder(HashEmbedder):
    def embed(self, texts):
        if len(texts) == 1:  # queries come one at a time; the index was built fine
            raise EmbeddingError("server went away")
        return super().embed(texts)


def test_embedder_failure_falls_back_to_keywords_with_a_note(make_tree, settings_for):
    root = make_tree(SMALL_PROJECT)
    settings = settings_for()
    embedder = BrokenEmbedder()
    index_workspace(root, settings, embedder=embedder)
    result = Searcher.open(root, settings, embedder=embedder).search("HttpClient send")
    assert result.hits[0].path == "src/http_client.py"
    assert result.notes == (
        "The embedder failed (server went away), so only keywords were matched.",
    )


def test_search_uses_the_index_as_it_stands_while_another_process_writes(make_tree, settings_for):
    root = make_tree(SMALL_PROJECT)
    settings = settings_for()
    index_workspace(root, settings)  # the built-in model, as `search` will use
    (root / "src/new.py").write_text("def brand_new():\n    pass\n")
    with WriterLock(index_dir_for(root, settings), "seek watch"):
        result = search(root, "brand_new", settings)
    assert result.notes[0].startswith("The index was not updated first: the index is being")
    assert "src/new.py" not in {h.path for h in result.hits}
    assert search(root, "brand_new", settings).hits[0].path == "src/new.py"


def test_a_workspace_whose_files_hold_no_rows_searches_to_nothing(make_tree, settings_for):
    # Only a binary file: the index exists (a stamp) but the table has no rows.
    root = make_tree({"a.py": b"x\x00y"})
    settings = settings_for()
    embedder = HashEmbedder()
    index_workspace(root, settings, embedder=embedder)
    assert Searcher.open(root, settings, embedder=embedder).search("anything").hits == []


def test_a_deleted_file_makes_the_index_stale_and_leaves_the_results(make_tree, settings_for):
    """seek.md §4: a search brings the index up to date first. A deleted file is a change
    like an edit: the freshness check says stale, the search updates first and no longer
    answers with the file (issue 27). Mutation this pins (index/freshness.py): the
    ``len(scan.files) != len(stamps)`` check dropped (only files still on disk compared)."""
    from seek.index.freshness import is_current

    root = make_tree(SMALL_PROJECT)
    settings = settings_for()
    index_workspace(root, settings)  # the built-in model, as `search` will use
    assert is_current(root, settings)
    assert search(root, "configure_retries", settings).hits[0].path == "src/retry.py"
    (root / "src/retry.py").unlink()
    assert not is_current(root, settings)
    result = search(root, "configure_retries", settings)
    assert "src/retry.py" not in {h.path for h in result.hits}
    assert result.notes == ()
    assert is_current(root, settings)  # the search's update recorded the deletion


def test_a_large_index_matches_keywords_on_lancedb_as_in_memory(
    make_tree, settings_for, monkeypatch
):
    # Above KEYWORDS_IN_MEMORY_MAX_CHUNKS the keyword passes run on LanceDB's full-text index
    # (on a helper thread): here, with LanceDB's tokens and scores, the same hits as in memory,
    # for a scope filtered by path and for one fetched wider and cut (SCOPE_FILTER_PATHS).
    from seek.retrieve import retrievers
    from seek.retrieve import searcher as searcher_module
    from seek.retrieve.scope import Scope

    monkeypatch.setattr("seek.store.table.KEYWORD_INDEX_MIN_CHUNKS", 1)  # the run builds it
    root = make_tree(SMALL_PROJECT)
    settings, embedder = settings_for(), HashEmbedder()
    index_workspace(root, settings, embedder=embedder)
    memory = Searcher.open(root, settings, embedder=embedder)
    monkeypatch.setattr(searcher_module, "KEYWORDS_IN_MEMORY_MAX_CHUNKS", 0)
    lancedb = Searcher.open(root, settings, embedder=embedder)
    assert memory.keywords.in_memory and not lancedb.keywords.in_memory

    def lines(result):
        return [(h.path, h.start_line, h.end_line) for h in result.hits]

    for query in ("configure_retries", "send request", "Router", "how are retries configured"):
        for mode in ("bm25", "hybrid"):
            assert lines(lancedb.search(query, mode=mode)) == lines(memory.search(query, mode=mode))
        scope = Scope(prefixes=("src/",))
        scoped = lines(memory.search(query, mode="bm25", scope=scope))
        assert scoped and all(path.startswith("src/") for path, _, _ in scoped)
        assert lines(lancedb.search(query, mode="bm25", scope=scope)) == scoped
        with monkeypatch.context() as patch:
            patch.setattr(retrievers, "SCOPE_FILTER_PATHS", 0)  # fetch more, keep the scope's
            assert lines(lancedb.search(query, mode="bm25", scope=scope)) == scoped


GRAPH_PROJECT = {
    # a Java method: the definition patterns read `class`, `def`, `fn`..., not `void name(`
    "src/Builder.java": (
        "class Builder {\n"
        "    int depth;\n\n"
        "    void reconstructElements() {\n"
        "        depth = depth + 1;\n"
        "    }\n"
        "}\n"
    ),
    # the uses: more of them, and in a file whose words say more about it
    "src/State.java": (
        "class State {\n"
        "    void step(Builder tb) {\n"
        "        // reconstructElements again: reconstructElements, reconstructElements\n"
        "        tb.reconstructElements();\n"
        "        tb.reconstructElements();\n"
        "    }\n"
        "}\n"
    ),
    "src/Other.java": "class Other {\n    int reconstructElements;\n}\n",  # a field, not it
    "tests/StateTest.java": "class StateTest {\n    void t() { reconstructElements(); }\n}\n",
}


def test_a_symbol_the_patterns_cannot_see_defined_is_found_by_the_code_graph(
    make_tree, settings_for
):
    """issue 28 deliver 4: when no candidate defines a symbol by the definition patterns, the
    definitions the code graph knows gain the definition boost (a method, not a field); a
    scope keeps whatever a boost pulls in inside it."""
    from seek.retrieve.scope import Scope

    root = make_tree(GRAPH_PROJECT)
    settings = settings_for()
    embedder = HashEmbedder()
    index_workspace(root, settings, embedder=embedder)
    searcher = Searcher.open(root, settings, embedder=embedder)
    hits = searcher.search("reconstructElements", k=4).hits
    assert (hits[0].path, hits[0].start_line <= 4 <= hits[0].end_line) == ("src/Builder.java", True)
    assert hits[0].symbol is not None and hits[0].symbol.name in ("Builder", "reconstructElements")
    searcher.pipeline.definitions = None  # without the graph's evidence
    assert searcher.search("reconstructElements", k=4).hits[0].path != "src/Builder.java"
    scoped = Searcher.open(root, settings, embedder=embedder).search(
        "reconstructElements", k=4, scope=Scope(prefixes=("tests/",))
    )
    assert [h.path for h in scoped.hits] == ["tests/StateTest.java"]


def test_a_symbol_pulled_in_from_its_files_name_stays_inside_the_scope(searcher):
    from seek.retrieve.scope import Scope

    assert searcher.search("Router", k=5).hits[0].path == "src/router.py"  # pulled in
    scoped = searcher.search("Router", k=5, scope=Scope(prefixes=("tests/",)))
    assert {h.path for h in scoped.hits} == {"tests/test_router.py"}
