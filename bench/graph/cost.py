"""What building the code graph costs next to a cold `seek index` of the same folder
(issue 28: wiring the graph into the index may add at most +25 % time and +10 % peak RSS).

    .venv/bin/python -m bench.graph.cost BENCH_DIR [--repos flask,chi,...]
        [--out bench/results/graph_cost.json]

Per repository, two fresh child processes on the folder bench.graph.oracle uses:

* ``python -m bench.speed.index_speed --worker seek FOLDER``: a cold index (model load excluded),
  its wall and CPU seconds and peak RSS (bench/README.md, "Indexing speed");
* ``python -m bench.graph.cost --worker FOLDER``: reads the files (not timed), then times
  `build_graph` plus one `CodeGraph.inbound()` (every use bound once, what a stored graph
  would precompute) and reports the peak RSS and its rise over the process before the build.

The rise is the estimate of what the graph adds to an index process; the ratio of times is
the estimate of the added index time if extraction ran serially beside chunking.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.common import REPO_ROOT, REPOS_JSON

DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "graph_cost.json"


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def graph_worker(folder: str) -> dict:
    from bench.graph.oracle import workspace_files
    from seek.graph import build_graph

    files = workspace_files(Path(folder))
    before = _rss_mb()
    started, cpu = time.perf_counter(), _cpu_s()
    graph = build_graph(files)
    graph.inbound()
    return {
        "graph_s": round(time.perf_counter() - started, 2),
        "graph_cpu_s": round(_cpu_s() - cpu, 2),
        "files": len(graph.files),
        "definitions": sum(len(f.definitions) for f in graph.files.values()),
        "references": sum(len(f.references) for f in graph.files.values()),
        "rss_before_mb": round(before, 1),
        "peak_rss_mb": round(_rss_mb(), 1),
    }


def _child(args: list[str]) -> dict:
    run = subprocess.run(
        [sys.executable, "-m", *args], capture_output=True, text=True, timeout=3600, cwd=REPO_ROOT
    )
    if run.returncode != 0:
        raise RuntimeError(run.stderr[-600:])
    return json.loads(run.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench_dir", type=Path)
    parser.add_argument("--repos", default="flask,redux,chi,zod,gin")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(graph_worker(str(args.bench_dir))))
        return 0
    specs = {r["name"]: r for r in json.loads(REPOS_JSON.read_text())}
    rows = []
    for name in args.repos.split(","):
        spec = specs[name]
        folder = args.bench_dir / name
        if spec["language"] != "go":  # Go: the module root, as bench.graph.oracle
            folder = folder / (spec.get("benchmark_root") or "")
        index = _child(["bench.speed.index_speed", "--worker", "seek", str(folder)])
        graph = _child(["bench.graph.cost", "--worker", str(folder)])
        row = {
            "repo": name,
            "index_cold_s": round(index["cold_s"], 2),
            "index_cold_cpu_s": round(index.get("cold_cpu_s", 0.0), 2),
            "index_peak_rss_mb": round(index["peak_rss_mb"], 1),
            **graph,
            "time_ratio": round(graph["graph_s"] / index["cold_s"], 3),
            "rss_rise_ratio": round(
                (graph["peak_rss_mb"] - graph["rss_before_mb"]) / index["peak_rss_mb"], 3
            ),
        }
        print(json.dumps(row), file=sys.stderr, flush=True)
        rows.append(row)
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "python -m bench.graph.cost " + " ".join(sys.argv[1:] if argv is None else argv),
        "repos": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
