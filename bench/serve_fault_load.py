"""Load with faults on `seek serve`: searches, contexts and status requests from N clients
while a share of the requests rebuild the index (issue 12; loopback only, bounded in time).

    python -m bench.serve_fault_load /root/bench [--repo flask] [--clients 20] [--seconds 20]
                                     [--rebuilds 0.03] [--seed 12] [--data SHARED/bench/semble]

The server is its own `seek serve` process on 127.0.0.1 (built-in model), the workspace's
index is built first. Each client thread picks, per request: a rebuild (`POST /v1/index
{"rebuild": true}`) with probability --rebuilds, else a search (55 %), a context (25 %) or a
status (20 %), with the repository's benchmark questions. It counts answers by status, the
5xx, the answers that say "has no index" (a reader that saw a half-built index), and at the
end compares the served index with a clean one built in another home (same rows, same
vectors). Exit status 0 only when there are no 5xx, no "no index" answers, no transport
errors and the indexes are equal.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import numpy as np

from bench.data import SHARED
from bench.serve_load import free_port, run_clients, start_indexed_server

KINDS = (("search", 0.55), ("context", 0.25), ("status", 0.20))
FALLBACK_QUESTIONS = (
    "how is the application configured?",
    "where are requests routed?",
    "error handling",
    "how are templates rendered?",
    "session cookie",
    "register a blueprint",
    "run the tests",
)


def index_rows(home: str, root: Path) -> tuple[list[tuple], np.ndarray]:
    """Every row of the workspace's current table, sorted, and the vectors in that order."""
    from seek.settings import load_settings
    from seek.store import ChunkTable, index_dir_for

    settings = load_settings(overrides={"home": home}, env={})
    data = ChunkTable(index_dir_for(root, settings)).load_all()
    columns = ("path", "chunk", "start_line", "end_line", "part", "content")
    keyed = list(zip(*(data[c] for c in columns), strict=True))
    order = sorted(range(len(keyed)), key=lambda i: keyed[i])
    return [keyed[i] for i in order], data["vectors"][order]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bench_dir", type=Path)
    parser.add_argument("--repo", default="flask")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rebuilds", type=float, default=0.03)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--data", type=Path, default=SHARED,
                        help="the shared benchmark data (repos.json, annotations/)")  # fmt: skip
    args = parser.parse_args()
    repos_json, annotations = args.data / "repos.json", args.data / "annotations"
    # The shared benchmark data names the repository's benchmark folder and questions; a
    # checkout without it uses the whole repository and a few generic questions.
    spec = (
        {r["name"]: r for r in json.loads(repos_json.read_text())}.get(args.repo, {})
        if repos_json.exists() else {}
    )  # fmt: skip
    root = (args.bench_dir / args.repo / (spec.get("benchmark_root") or "")).resolve()
    questions = annotations / f"{args.repo}.json"
    queries = (
        [q["query"] for q in json.loads(questions.read_text())]
        if questions.exists() else list(FALLBACK_QUESTIONS)
    )  # fmt: skip
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    answers: dict[str, Counter[int]] = {kind: Counter() for kind in ("rebuild", *dict(KINDS))}
    latencies: dict[str, list[float]] = {kind: [] for kind in answers}
    no_index: list[str] = []
    failures: list[str] = []  # 5xx answers
    transport: list[str] = []  # no answer at all
    lock = threading.Lock()
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as clean_home:
        env = {**os.environ, "SEEK_HOME": home}
        server = start_indexed_server(root, port, env, stderr=subprocess.PIPE)
        try:
            stop_at = time.perf_counter() + args.seconds

            def client(n: int) -> None:
                rng = random.Random(args.seed * 1000 + n)
                with httpx.Client(base_url=url, timeout=60) as http:
                    while time.perf_counter() < stop_at:
                        query = rng.choice(queries)
                        pick = rng.random()
                        if pick < args.rebuilds:
                            kind, request = "rebuild", ("POST", "/v1/index", {"rebuild": True})
                        else:
                            pick = rng.random()
                            kind = "status"
                            for name, share in KINDS:
                                if pick < share:
                                    kind = name
                                    break
                                pick -= share
                            request = {
                                "search": ("POST", "/v1/search", {"query": query, "k": 10}),
                                "context": ("POST", "/v1/context", {"question": query}),
                                "status": ("GET", "/v1/status", None),
                            }[kind]
                        method, endpoint, body = request
                        started = time.perf_counter()
                        try:
                            answer = http.request(method, endpoint, json=body)
                        except httpx.HTTPError as exc:
                            with lock:
                                transport.append(f"{kind}: {type(exc).__name__}: {exc}")
                            continue
                        elapsed = time.perf_counter() - started
                        with lock:
                            answers[kind][answer.status_code] += 1
                            latencies[kind].append(elapsed)
                            if "has no index" in answer.text:
                                no_index.append(f"{kind}: {answer.text[:200]}")
                            if answer.status_code >= 500:
                                failures.append(f"{kind}: {answer.status_code} {answer.text[:200]}")

            wall = run_clients(client, args.clients)
            # Let a rebuild still running finish before comparing (two minutes at most).
            settle_until = time.time() + 120
            while time.time() < settle_until:
                try:
                    if not httpx.get(f"{url}/v1/status", timeout=10).json().get("writer"):
                        break
                except (httpx.HTTPError, ValueError):
                    pass
                time.sleep(0.5)
        finally:
            server.terminate()
            _, stderr = server.communicate(timeout=30)
        subprocess.run([sys.executable, "-m", "seek", "index", "-q", str(root)],
                       env={**os.environ, "SEEK_HOME": clean_home}, check=True)  # fmt: skip
        served_rows, served_vectors = index_rows(home, root)
        clean_rows, clean_vectors = index_rows(clean_home, root)
        same = served_rows == clean_rows and np.allclose(served_vectors, clean_vectors, atol=1e-6)
    total = sum(sum(c.values()) for c in answers.values())
    server_errors = sum(n for c in answers.values() for code, n in c.items() if code >= 500)
    result = {
        "repo": args.repo, "clients": args.clients, "seconds": round(wall, 1),
        "rebuild_share": args.rebuilds, "requests": total,
        "requests_per_s": round(total / wall, 1),
        "by_kind": {
            kind: {"answers": dict(sorted(c.items())),
                   "p50_ms": round(statistics.median(latencies[kind]) * 1000)
                   if latencies[kind] else None,
                   "p95_ms": round(sorted(latencies[kind])[int(0.95 * len(latencies[kind]))]
                                   * 1000) if latencies[kind] else None}
            for kind, c in answers.items()
        },
        "server_errors_5xx": server_errors, "no_index_answers": len(no_index),
        "transport_errors": len(transport),
        "final_index_equals_clean": same, "rows": len(served_rows),
        "server_stderr_bytes": len(stderr or ""),
    }  # fmt: skip
    print(json.dumps(result, indent=2))
    for line in (failures + no_index + transport)[:5]:
        print("  ", line)
    ok = not server_errors and not no_index and not transport and same
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
