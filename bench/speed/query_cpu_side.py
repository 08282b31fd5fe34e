"""``bench.speed.query_cpu`` for seek and semble side by side on the dev repositories (issue 14):
per repository semble's ``bench/speed/_semble_query_cpu.py``, then seek (and optionally a second
seek source tree, e.g. main's, with ``--baseline-src``) one after the other, so the ratios
come from the same minutes of the same machine. Prints a table and writes JSON.

    OPENBLAS_NUM_THREADS=1 python -m bench.speed.query_cpu_side --home DIR \\
        [--repos a,b] [--baseline-src /path/to/main/src] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

from bench.common import (
    BENCH_DIR_HELP,
    REPO_ROOT,
    SHARED,
    builtin_model_dir,
    read_benchmark_roots,
    read_repo_list,
    repo_folder,
    resolve_bench_dir,
    run_record,
    semble_python_path,
)

ROOT = REPO_ROOT
SEMBLE_WORKER = Path(__file__).resolve().with_name("_semble_query_cpu.py")


def _p50(command: list[str], env: dict[str, str]) -> float | None:
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    found = re.search(r"cpu p50 ([0-9.]+) ms", done.stdout)
    if found is None:
        print(done.stdout + done.stderr, file=sys.stderr)
        return None
    return float(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.speed.query_cpu_side", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--home", required=True, help="SEEK_HOME holding the indexes")
    parser.add_argument("--repos", help="comma-separated names (default: the dev set)")
    parser.add_argument("--bench-dir", help=BENCH_DIR_HELP)
    parser.add_argument("--semble-python", help="semble's python (default: $SEMBLE_PYTHON)")
    parser.add_argument("--baseline-src", help="another seek source tree to time as well")
    parser.add_argument("--out", help="JSON file for the results")
    args = parser.parse_args(argv)
    checkouts = resolve_bench_dir(parser, args.bench_dir)
    semble = semble_python_path(args.semble_python)
    if semble is None:
        parser.error("no semble: pass --semble-python PATH or set SEMBLE_PYTHON")
    names = args.repos.split(",") if args.repos else read_repo_list()
    roots = read_benchmark_roots()
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    record = run_record()  # at the start: the code that runs is the code of this moment
    record["command"] = "python -m bench.speed.query_cpu_side " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    rows = []
    for name in names:
        folder = str(repo_folder(checkouts, name, roots).resolve())
        questions = str(SHARED / "annotations" / f"{name}.json")
        row: dict[str, object] = {"repo": name}
        row["semble"] = _p50([str(semble), str(SEMBLE_WORKER), folder,
                              str(builtin_model_dir()), questions], env)  # fmt: skip
        seek = [
            sys.executable,
            "-m",
            "bench.speed.query_cpu",
            folder,
            questions,
            "--home",
            args.home,
        ]
        row["seek"] = _p50(seek, env)
        if args.baseline_src:
            row["baseline"] = _p50(seek, {**env, "PYTHONPATH": f"{args.baseline_src}:{ROOT}"})
        rows.append(row)
        print(json.dumps(row), flush=True)
    done = [r for r in rows if r["semble"] and r["seek"]]
    ratios = [r["seek"] / r["semble"] for r in done]  # type: ignore[operator]
    summary = {
        "repos": len(done),
        "median_ratio": statistics.median(ratios) if ratios else None,
        "mean_seek_ms": statistics.mean(r["seek"] for r in done) if done else None,  # type: ignore[misc]
        "mean_semble_ms": statistics.mean(r["semble"] for r in done) if done else None,  # type: ignore[misc]
        "load": os.getloadavg(),
    }
    if args.baseline_src:
        base = [r["baseline"] / r["semble"] for r in done if r.get("baseline")]  # type: ignore[operator]
        summary["baseline_median_ratio"] = statistics.median(base) if base else None
    print(json.dumps(summary))
    if args.out:
        Path(args.out).write_text(
            json.dumps({**record, "rows": rows, "summary": summary}, indent=1) + "\n"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
