"""Load with faults on `seek serve`: searches, contexts and status requests from N clients
while a share of the requests rebuild the index (issue 12; loopback only, bounded in time).

    python -m bench.serve.serve_fault_load BENCH_DIR [--repo flask] [--clients 20] [--seconds 20]
                                     [--rebuilds 0.03] [--seed 12] [--data SHARED/bench/semble]

The server is its own `seek serve` process on 127.0.0.1 (built-in model), the workspace's
index is built first. Each client thread picks, per request: a rebuild (`POST /v1/index
{"rebuild": true}`) with probability --rebuilds, else a search (55 %), a context (25 %) or a
status (20 %), with the repository's benchmark questions. It counts answers by status, the
5xx, the answers that say "has no index" (a reader that saw a half-built index), and at the
end compares the served index with a clean one built in another home (same rows, same
vectors). Exit status 0 only when there are no 5xx, no "no index" answers, no transport
errors and the indexes are equal.

The index folder filling up (issue 31; as root, the index on a tmpfs)::

    python -m bench.serve.serve_fault_load BENCH_DIR --fill-at 8 --free-at 24 --seconds 40

serves a copy of the workspace, edits one of its files every ``--edit-every`` seconds (so
that searches have updates to write), takes every free byte of the index's tmpfs at
``--fill-at`` and gives it back at ``--free-at``. It also counts the answers that carried the
stale note and when the last one came, waits for the server's retry to bring the index up to
date, and compares it with a clean index of the copy as the run left it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
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

from bench.common import SERVE_AUTH, SHARED, add_bench_dir, free_port, resolve_bench_dir
from bench.serve.serve_load import run_clients, start_indexed_server
from seek.workspace.live import FRESHNESS_S

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


def mount_tmpfs(folder: Path, megabytes: int) -> None:
    """The index folder on its own small file system, to be filled (needs root)."""
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(folder)],
                   check=True)  # fmt: skip


def fill_and_free(
    home: Path, root: Path, args: argparse.Namespace, began: float, stop_at: float,
    events: dict[str, float],
) -> None:  # fmt: skip
    """Edit a file of ``root`` every ``--edit-every`` s; fill ``home`` at ``--fill-at`` and
    free it at ``--free-at`` (seconds from ``began``)."""
    files = sorted(p for p in root.rglob("*.py") if p.is_file())
    filler = home / "filler"
    edits = 0
    while time.perf_counter() < stop_at:
        now = time.perf_counter() - began
        if "filled" not in events and now >= args.fill_at:
            with open(filler, "wb", buffering=0) as fh:
                for block in (1 << 20, 65536, 4096, 512):
                    try:
                        while True:
                            fh.write(b"\0" * block)
                    except OSError:
                        pass
            events["filled"] = round(time.perf_counter() - began, 1)
        if "freed" not in events and args.free_at is not None and now >= args.free_at:
            filler.unlink(missing_ok=True)
            events["freed"] = round(time.perf_counter() - began, 1)
        target = files[edits % len(files)]
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(f"# edit {edits}\n")
        edits += 1
        events["edits"] = edits
        time.sleep(args.edit_every)


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.serve.serve_fault_load", description=__doc__.splitlines()[0]
    )
    add_bench_dir(parser)
    parser.add_argument("--repo", default="flask")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rebuilds", type=float, default=0.03)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--data", type=Path, default=SHARED,
                        help="the shared benchmark data (repos.json, annotations/)")  # fmt: skip
    parser.add_argument(
        "--fill-at",
        type=float,
        default=None,
        help="seconds into the run when the index's tmpfs is filled (root)",
    )
    parser.add_argument(
        "--free-at",
        type=float,
        default=None,
        help="seconds into the run when the space is given back",
    )
    parser.add_argument("--edit-every", type=float, default=1.0)
    parser.add_argument("--tmpfs-mb", type=int, default=512)
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    args = parser.parse_args()
    args.bench_dir = resolve_bench_dir(parser, args.bench_dir)
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
    stale: list[float] = []  # when answers carried the stale note (seconds into the run)
    events: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as clean_home, \
            tempfile.TemporaryDirectory() as scratch:  # fmt: skip
        if args.fill_at is not None:
            copy = Path(scratch) / "ws"
            shutil.copytree(root, copy)
            root = copy.resolve()
            mount_tmpfs(Path(home), args.tmpfs_mb)
        env = {**os.environ, "SEEK_HOME": home}
        server = start_indexed_server(root, port, env, stderr=subprocess.PIPE)
        try:
            began = time.perf_counter()
            stop_at = began + args.seconds
            if args.fill_at is not None:
                threading.Thread(target=fill_and_free, daemon=True, args=(
                    Path(home), root, args, began, stop_at, events)).start()  # fmt: skip

            def client(n: int) -> None:
                rng = random.Random(args.seed * 1000 + n)
                with httpx.Client(base_url=url, timeout=60, headers=SERVE_AUTH) as http:
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
                            if "The index is stale" in answer.text:
                                stale.append(time.perf_counter() - began)
                            if "has no index" in answer.text:
                                no_index.append(f"{kind}: {answer.text[:200]}")
                            if answer.status_code >= 500:
                                failures.append(f"{kind}: {answer.status_code} {answer.text[:200]}")

            wall = run_clients(client, args.clients)
            # Let a rebuild still running finish, and a failed update be retried (the server
            # waits up to RETRY_MAX_S between tries), before comparing (six minutes at most).
            # Settled: a search made past the server's freshness window (it checks the tree
            # at most once per FRESHNESS_S, so an edit in the run's last second is seen only
            # by a search after that) answered with no note (no stale index, no other
            # request's update under way) and the status shows no writer and no fault.
            settle_until = time.time() + 360
            while time.time() < settle_until:
                time.sleep(FRESHNESS_S + 0.2)
                try:
                    answer = httpx.post(f"{url}/v1/search", json={"query": queries[0]},
                                        timeout=60, headers=SERVE_AUTH)  # fmt: skip
                    status = httpx.get(f"{url}/v1/status", timeout=10, headers=SERVE_AUTH).json()
                    quiet = not status.get("writer") and not status.get("update_fault")
                    if quiet and answer.status_code == 200 and not answer.json().get("notes"):
                        events["settled"] = round(time.perf_counter() - began, 1)
                        break
                except (httpx.HTTPError, ValueError):
                    pass
        finally:
            server.terminate()
            _, stderr = server.communicate(timeout=30)
        subprocess.run([sys.executable, "-m", "seek", "index", "-q", str(root)],
                       env={**os.environ, "SEEK_HOME": clean_home}, check=True)  # fmt: skip
        served_rows, served_vectors = index_rows(home, root)
        clean_rows, clean_vectors = index_rows(clean_home, root)
        same = served_rows == clean_rows and np.allclose(served_vectors, clean_vectors, atol=1e-6)
        # the files whose rows differ, so that a mismatch says where it is
        differ = sorted({row[0] for row in set(served_rows) ^ set(clean_rows)})
        if args.fill_at is not None:
            subprocess.run(["umount", "-l", home], check=False)
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
        "final_index_equals_clean": same, "differing_files": differ[:20],
        "rows": len(served_rows),
        "server_stderr_bytes": len(stderr or ""),
    }  # fmt: skip
    if args.fill_at is not None:
        result["fill"] = {
            "fill_at_s": args.fill_at, "free_at_s": args.free_at, **events,
            "stale_answers": len(stale),
            "first_stale_s": round(min(stale), 1) if stale else None,
            "last_stale_s": round(max(stale), 1) if stale else None,
            "tracebacks_in_server_stderr": (stderr or "").count("Traceback"),
        }  # fmt: skip
    print(json.dumps(result, indent=2))
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    if stderr:
        print("server stderr:", stderr[-2000:])
    for line in (failures + no_index + transport)[:5]:
        print("  ", line)
    ok = not server_errors and not no_index and not transport and same
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
