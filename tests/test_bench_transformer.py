"""bench.experiments.transformer_embed: issue 13's fifth round (transformer embeddings measured
in seek's pipeline, not shipped; MODELS.md). The routing and the vector cache, with stand-in
models."""

from __future__ import annotations

import numpy as np

from bench.experiments.transformer_embed import TransformerEmbedder, VectorCache, _asking


class Counting:
    """A stand-in encoder: the text's length in every dimension, calls recorded."""

    def __init__(self, value: float = 0.0) -> None:
        self.calls: list[list[str]] = []
        self.value = value

    def __call__(self, texts):
        self.calls.append(list(texts))
        return np.array([[len(t) + self.value] * 3 for t in texts], dtype=np.float32)

    def embed(self, texts):  # the static table's protocol
        return self(texts)


def test_full_mode_sends_everything_to_the_transformer_once(tmp_path):
    static, model = Counting(100.0), Counting()
    embedder = TransformerEmbedder("m", "full", static, model, VectorCache(tmp_path))
    first = embedder.embed(["ab", "abc", "ab"])
    assert first[:, 0].tolist() == [2.0, 3.0, 2.0]
    assert model.calls == [["ab", "abc"]] and static.calls == []  # a repeated text once
    embedder.embed(["abc"])
    assert model.calls == [["ab", "abc"]]  # cached
    assert embedder.model_id == "tx/m-full"


def test_query_mode_keeps_the_static_table_except_for_the_question(tmp_path):
    static, model = Counting(100.0), Counting()
    embedder = TransformerEmbedder("m", "query", static, model, VectorCache(tmp_path))
    assert embedder.embed(["window"])[0, 0] == 106.0  # indexing and paths: the static table
    token = _asking.set(True)
    try:
        assert embedder.embed(["window"])[0, 0] == 6.0  # the question: the transformer
    finally:
        _asking.reset(token)
    assert model.calls == [["window"]] and static.calls == [["window"]]


def test_a_question_is_cached_apart_from_a_passage_of_the_same_text(tmp_path):
    model = Counting()
    embedder = TransformerEmbedder("m", "full", Counting(), model, VectorCache(tmp_path))
    embedder.embed(["retry"])
    token = _asking.set(True)
    try:
        embedder.embed(["retry"])
    finally:
        _asking.reset(token)
    assert model.calls == [["retry"], ["retry"]]  # e5 encodes the two differently


def test_the_cache_persists_indexing_batches_and_reloads_them(tmp_path):
    cache = VectorCache(tmp_path)
    texts = [f"text {i}" for i in range(70)]
    keys = [VectorCache.key(t) for t in texts]
    vectors = np.arange(70 * 2, dtype=np.float32).reshape(70, 2)
    cache.add(keys, vectors)
    cache.add([VectorCache.key("question")], np.ones((1, 2), dtype=np.float32))
    reloaded = VectorCache(tmp_path)
    assert len(reloaded.known) == 70  # a single question stays in memory only
    assert np.array_equal(reloaded.known[keys[69]], vectors[69])


def test_install_routes_the_bench_harness_settings_to_the_transformer(tmp_path, monkeypatch):
    """bench_settings reads load_settings from seek.settings: the harness must patch it
    there (it once patched only seek.load_settings and measured the static table)."""
    import seek
    import seek.settings
    from bench.common import bench_settings
    from bench.experiments import transformer_embed
    from seek.retrieve import retrievers
    from seek.settings import providers

    # teardown puts back every door install() patches
    monkeypatch.setattr(seek, "load_settings", seek.load_settings)
    monkeypatch.setattr(seek.settings, "load_settings", seek.settings.load_settings)
    monkeypatch.setattr(retrievers.QueryEmbedding, "__call__", retrievers.QueryEmbedding.__call__)
    monkeypatch.setitem(providers.PROVIDERS, "tx", None)
    monkeypatch.setattr(transformer_embed, "MiniLM", lambda onnx, tokenizer: Counting())
    monkeypatch.setenv("SEEK_TX_CACHE", str(tmp_path / "cache"))
    transformer_embed.install("full", ranker_off=True)
    settings = bench_settings(tmp_path / "home")
    assert (settings.provider, settings.model) == ("tx", "minilm-int8-full")
    assert settings.ranker_model == "off"
    assert providers.PROVIDERS["tx"](settings).model_id == "tx/minilm-int8-full"
