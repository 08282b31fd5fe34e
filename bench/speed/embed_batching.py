"""Batching against an embeddings server: 2,000 texts in batches of 16 vs one per request.

    python -m bench.speed.embed_batching [--texts 2000] [--runs 3]

The server is the test suite's HTTP embeddings server (``tests/embed_server.py``, stdlib,
127.0.0.1, Ollama protocol, deterministic vectors): what is measured is seek's client and the
per-request cost of HTTP, not a model. Both runs use one request in flight.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from bench.common import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "tests"))

from embed_server import serve  # noqa: E402

from seek.embed.http import HttpEmbedder  # noqa: E402


def sample_texts(count: int) -> list[str]:
    source = (REPO_ROOT / "src" / "seek" / "indexer.py").read_text(encoding="utf-8")
    return [
        f"src/file{i}.py\n{source[(i * 97) % 5000 : (i * 97) % 5000 + 600]}" for i in range(count)
    ]


def time_embedding(url: str, texts: list[str], batch_size: int) -> float:
    embedder = HttpEmbedder(
        "ollama", "test-embed", base_url=url, batch_size=batch_size, concurrency=1
    )
    started = time.perf_counter()
    vectors = embedder.embed(texts)
    elapsed = time.perf_counter() - started
    assert vectors.shape[0] == len(texts)
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.speed.embed_batching", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    texts = sample_texts(args.texts)
    with serve() as (url, _):
        batched = statistics.median(time_embedding(url, texts, 16) for _ in range(args.runs))
        singles = statistics.median(time_embedding(url, texts, 1) for _ in range(args.runs))
    print(f"{args.texts} texts, median of {args.runs} runs, one request in flight")
    print(f"batches of 16: {batched:.2f} s ({args.texts / batched:.0f} texts/s)")
    print(f"one per request: {singles:.2f} s ({args.texts / singles:.0f} texts/s)")
    print(f"batching is {singles / batched:.1f}x faster")
    return 0


if __name__ == "__main__":
    sys.exit(main())
