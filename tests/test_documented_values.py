"""Numbers the documents promise, checked against behaviour rather than against the code's
own constants: each test names the document (README section or spec paragraph) its values
come from, so changing a promise means changing the document too."""

from types import SimpleNamespace

import numpy as np
import pytest
from conftest import SMALL_PROJECT, HashEmbedder

from seek.embed import task_prefixes
from seek.index.indexer import Indexer, index_workspace
from seek.retrieve import Searcher
from seek.retrieve.signals import SIGNALS
from seek.retrieve.signals import query as query_kind
from seek.scan.walk import TOO_BIG, ScannedFile, check_file, scan_workspace
from seek.settings import load_settings
from seek.store import ChunkTable, index_dir_for
from seek.text import is_follow_up
from seek.workspace import Workspaces, live

ALL_SIGNALS_OFF = frozenset(SIGNALS)


def defaults(tmp_path):
    return load_settings(env={}, user_config=tmp_path / "no-user-config.toml")


# -- docs/settings.md defaults that the README states in words ------------------------------
def test_defaults_match_the_readme(tmp_path):
    s = defaults(tmp_path)
    assert s.max_file_bytes == 512 * 1024  # "What gets indexed": 1 byte to 512 KiB
    assert s.watch_debounce_s == 1.5  # "seek watch": 1.5 s after its last change
    assert (s.team_k, s.team_timeout_s) == (6, 8.0)  # "Team context": 6 hits, 8 s timeout
    assert s.rrf_k == 60  # "How search ranks" 2: reciprocal rank fusion (k = 60)
    assert (s.embed_batch_size, s.embed_concurrency, s.embed_timeout_s) == (16, 4, 60.0)


# -- "How search ranks" ---------------------------------------------------------------------
def test_an_identifier_leans_on_keywords_and_a_sentence_is_balanced():
    # docs/ranking.md 2: "0.3 vector / 0.7 keywords", "a sentence is balanced".
    assert query_kind.semantic_weight("getUser") == pytest.approx(0.3)
    assert query_kind.semantic_weight("Sinatra::Base") == pytest.approx(0.3)
    assert query_kind.semantic_weight("where are users loaded") == pytest.approx(0.5)


@pytest.fixture
def indexed(make_tree, settings_for):
    def build(files=SMALL_PROJECT, **overrides):
        root = make_tree(files)
        settings = settings_for(**overrides)
        embedder = HashEmbedder()
        index_workspace(root, settings, embedder=embedder)
        return root, settings, Searcher.open(root, settings, embedder=embedder)

    return build


@pytest.mark.parametrize("rrf_k", [1, 60])
def test_search_fuses_with_the_rrf_k_setting(indexed, rrf_k):
    # Reference-ranking "RRF": each list adds weight / (k + rank), rank from 1. A keyword-only
    # search with every signal off scores its best hit 1 / (k + 1).
    _, _, searcher = indexed(rrf_k=rrf_k)
    hits = searcher.search("HttpClient", k=3, mode="bm25", disabled=ALL_SIGNALS_OFF).hits
    assert hits[0].path == "src/http_client.py"
    assert hits[0].score == pytest.approx(1 / (rrf_k + 1), abs=1e-6)


def test_a_chunk_scores_three_tenths_of_its_best_window_and_seven_of_the_mean(indexed):
    # docs/ranking.md 1: "a chunk scores 0.3 x its best window + 0.7 x its
    # windows' mean". A 1,000-character chunk has two or more 600-character windows.
    long_file = "\n".join(f"value_{i} = compute_{i}(argument_{i})" for i in range(30)) + "\n"
    root, settings, searcher = indexed({**SMALL_PROJECT, "src/long.py": long_file})
    data = ChunkTable(index_dir_for(root, settings)).load_all()
    q = np.random.default_rng(7).normal(size=data["vectors"].shape[1]).astype(np.float32)
    q /= np.linalg.norm(q)
    by_chunk: dict[tuple[str, int], list[float]] = {}
    for path, chunk, vector in zip(data["path"], data["chunk"], data["vectors"], strict=True):
        by_chunk.setdefault((path, chunk), []).append(float(vector @ q / np.linalg.norm(vector)))
    assert max(len(s) for s in by_chunk.values()) >= 2  # the blend matters somewhere
    similarities = searcher.index.chunk_similarities(q)
    for key, sims in by_chunk.items():
        expected = 0.3 * max(sims) + 0.7 * (sum(sims) / len(sims))
        assert similarities[searcher.index.chunk_of_key[key]] == pytest.approx(expected, abs=1e-5)


def test_each_retriever_contributes_five_candidates_per_result(indexed):
    # docs/ranking.md 1: "50 candidates each for -k 10" (5 x k once above the
    # retrieve_k floor of 20).
    files = {
        f"src/widget_{i:02d}.py": f"def widget_{i}():\n    return 'widget'\n" for i in range(70)
    }
    _, _, searcher = indexed(files)
    for k, expected in ((10, 50), (6, 30), (2, 20)):
        pool, _, _ = searcher.pipeline.candidates(
            "widget", 200, k=k, mode="bm25", disabled=ALL_SIGNALS_OFF
        )
        assert len(pool) == expected, k


# -- follow-ups (reference-workspace-index §6.2) ---------------------------------------------
@pytest.mark.parametrize(
    ("question", "follow_up"),
    [
        ("how is it tested", True),  # 1 content word
        ("does that use a cache", True),  # 2 content words and a pronoun
        ("does caching use a lock", False),  # 2 content words, no pronoun
        ("is it tested by pytest fixtures", False),  # 3 content words, even with a pronoun
        ("where is it called from the parser loop", False),
    ],
)
def test_follow_up_boundaries(question, follow_up):
    # §6.2: "fewer than 2 content words; else fewer than 3 content words AND a pronoun".
    assert is_follow_up(question) is follow_up


# -- task prefixes (docs/embedding.md, reference §3.5) ------------------------
@pytest.mark.parametrize(
    ("model", "prefixes"),
    [
        ("nomic-embed-text", ("search_document: ", "search_query: ")),
        ("intfloat/multilingual-e5-small", ("passage: ", "query: ")),
        ("E5-large-v2", ("passage: ", "query: ")),
        ("text-embedding-3-small", ("", "")),
    ],
)
def test_task_prefixes_by_model_name(model, prefixes):
    assert task_prefixes(model) == prefixes


def test_e5_documents_are_embedded_with_their_passage_prefix(make_tree, settings_for):
    root = make_tree(SMALL_PROJECT)
    embedder = HashEmbedder()
    embedder.model_id = "ollama/e5-small"
    index_workspace(root, settings_for(), embedder=embedder)
    assert embedder.texts and all(t.startswith("passage: ") for t in embedder.texts)


# -- the size limit (docs/indexing.md: 1 byte to 512 KiB) ---------------------------
def test_a_file_of_exactly_the_size_limit_is_indexed_by_the_scan_and_by_watch(make_tree, tmp_path):
    limit = defaults(tmp_path).max_file_bytes
    root = make_tree({"edge.py": "x" * limit, "over.py": "x" * (limit + 1)})
    assert isinstance(check_file(root, "edge.py", max_file_bytes=limit), ScannedFile)
    assert check_file(root, "over.py", max_file_bytes=limit) == TOO_BIG
    scan = scan_workspace(root, max_file_bytes=limit)
    assert [f.rel for f in scan.files] == ["edge.py"] and scan.skipped == {"too_big": 1}


def test_watch_updates_keep_a_file_of_exactly_the_limit(make_tree, settings_for):
    root = make_tree({"a.py": "def a():\n    pass\n"})
    settings = settings_for(max_file_bytes=64)
    index_workspace(root, settings, embedder=HashEmbedder())
    (root / "a.py").write_text("def a():\n" + "#" * (64 - len("def a():\n") - 1) + "\n")
    assert (root / "a.py").stat().st_size == 64
    report = Indexer(root, settings, embedder=HashEmbedder()).run_paths(["a.py"])
    assert report.embedded == 1 and report.removed == 0


# -- freshness (docs/http-api.md: the index is checked at most once a second) ----------------
def test_live_indexes_check_for_changes_at_most_once_a_second(make_tree, settings_for, monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(live, "time", SimpleNamespace(monotonic=lambda: now[0]))
    root = make_tree(SMALL_PROJECT)
    settings = settings_for()
    spaces = Workspaces(settings=settings)  # a server's facade: its searchers kept live
    assert spaces.search(root, "HttpClient", 3).hits
    (root / "src/fresh.py").write_text("def brand_new_function():\n    return 1\n")

    def found():
        hits = spaces.search(root, "brand_new_function", 3).hits
        return "src/fresh.py" in {h.path for h in hits}

    now[0] += 0.9
    assert not found()  # checked 0.9 s ago: the index is used as it stands
    now[0] += 0.1
    assert found()  # a second has passed: the change is picked up
