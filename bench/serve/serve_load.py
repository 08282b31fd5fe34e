"""Load on `seek serve`: N concurrent clients for T seconds on one workspace (loopback only).

    python -m bench.serve.serve_load BENCH_DIR [--repo flask] [--clients 50] [--seconds 30]

The server runs as its own `seek serve` process on 127.0.0.1 with the built-in model; each
client thread sends `POST /v1/search` with the repository's benchmark questions in turn.
The loop is bounded by time and stops by itself.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from bench.common import (
    ANNOTATIONS,
    REPOS_JSON,
    SERVE_AUTH,
    SERVE_TOKEN,
    add_bench_dir,
    free_port,
    resolve_bench_dir,
)


def start_indexed_server(
    root: Path, port: int, env: dict[str, str], stderr: int | None = subprocess.DEVNULL
) -> subprocess.Popen:
    """Index ``root``, then run `seek serve` on it (with :data:`SERVE_TOKEN`) and wait until
    a search is answered."""
    env = {**env, "SEEK_TOKEN": SERVE_TOKEN}
    subprocess.run([sys.executable, "-m", "seek", "index", "-q", str(root)], env=env, check=True)
    server = subprocess.Popen(
        [sys.executable, "-m", "seek", "serve", "--port", str(port), "--workspace", str(root)],
        env=env, stderr=stderr, text=True,
    )  # fmt: skip
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            httpx.post(f"http://127.0.0.1:{port}/v1/search", json={"query": "warm up"},
                       timeout=30, headers=SERVE_AUTH)  # fmt: skip
            break
        except httpx.TransportError:
            time.sleep(0.2)
    return server


def run_clients(client: Callable[[int], None], clients: int) -> float:
    """Run ``client(0..clients-1)`` on as many threads; the wall time until all are done."""
    started = time.perf_counter()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.serve.serve_load", description=__doc__.splitlines()[0]
    )
    add_bench_dir(parser)
    parser.add_argument("--repo", default="flask")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    args.bench_dir = resolve_bench_dir(parser, args.bench_dir)
    spec = {r["name"]: r for r in json.loads(REPOS_JSON.read_text())}[args.repo]
    root = args.bench_dir / args.repo / (spec.get("benchmark_root") or "")
    queries = [q["query"] for q in json.loads((ANNOTATIONS / f"{args.repo}.json").read_text())]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as home:
        server = start_indexed_server(root, port, {**os.environ, "SEEK_HOME": home})
        try:
            latencies: list[float] = []
            errors: list[str] = []
            lock = threading.Lock()
            stop_at = time.perf_counter() + args.seconds

            def client(n: int) -> None:
                with httpx.Client(timeout=60, headers=SERVE_AUTH) as http:
                    i = n
                    while time.perf_counter() < stop_at:
                        started = time.perf_counter()
                        try:
                            answer = http.post(
                                f"{url}/v1/search", json={"query": queries[i % len(queries)]}
                            )
                            ok = answer.status_code == 200 and answer.json()["hits"]
                        except httpx.HTTPError as exc:
                            ok, answer = False, exc
                        elapsed = time.perf_counter() - started
                        with lock:
                            latencies.append(elapsed)
                            if not ok:
                                errors.append(str(answer))
                        i += 1

            wall = run_clients(client, args.clients)
        finally:
            server.terminate()
            server.wait(30)
    ordered = sorted(latencies)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    p50 = statistics.median(ordered)
    print(f"{args.clients} clients, {wall:.1f} s on {args.repo}: {len(latencies)} requests, "
          f"{len(latencies) / wall:.1f} requests/s, p50 {p50 * 1000:.0f} ms, "
          f"p95 {p95 * 1000:.0f} ms, errors {len(errors)}")  # fmt: skip
    for error in errors[:5]:
        print("  error:", error)
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
