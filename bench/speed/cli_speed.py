"""Whole-process CLI speed and memory: seek against semble 0.7.0, same run (issue 14, item 4).

    python -m bench.speed.cli_speed BENCH_DIR [--repos a,b] [--runs N] [--dev-runs N]
        [--searches N] [--query TEXT] [--semble PATH | --no-semble]
        [--out bench/results/cli_speed.json]

Unlike ``bench.speed.index_speed`` (which times in a worker and excludes imports and model load),
this measures what an agent pays: one whole process per command, started from this parent,
timed wall-clock around ``subprocess`` and sized by the child's own ``rusage`` (``os.wait4``:
``ru_maxrss`` is the largest resident set of that process or any process it waited for - what
GNU ``time -v`` reports as "Maximum resident set size"; semble's index workers are separate
processes, so its figure is the largest one, not their sum).

Per repository and run, with a fresh home/cache folder per run:

* seek: ``seek -C DIR index -q`` (cold: an empty ``SEEK_HOME``), the same again (no change),
  ``seek -C DIR search QUERY -k 10`` (warm index), ``seek -C DIR status``;
* semble (it has no ``index`` command; its ``search`` indexes on first use and caches the
  index under ``SEMBLE_CACHE_LOCATION``): ``semble search QUERY DIR -k 10`` into an empty cache
  (= cold index + one search), then the same again (warm cache = its no-change path and its
  warm search; semble validates the cache against the tree on every call).
* once per run (first repository): ``seek --help`` and ``semble --help``.

The tools alternate which goes first from run to run, and the ``--searches`` warm searches of a
run alternate between the tools, so machine load hits both alike. semble
is pointed at seek's built-in model folder (``SEMBLE_MODEL_NAME``, ``HF_HUB_OFFLINE=1``) as in
``bench/speed/_semble_worker.py``. Decision: one fixed query for every repository (``--query``): the
process cost barely depends on the words, and a fixed query keeps runs comparable.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.common import (
    RESULTS,
    add_bench_dir,
    builtin_model_dir,
    git_commit,
    log,
    machine_info,
    read_benchmark_roots,
    read_repo_list,
    repo_folder,
    resolve_bench_dir,
    semble_cli_path,
)
from bench.speed.index_speed import prewarm

DEFAULT_OUT = RESULTS / "cli_speed.json"
DEFAULT_QUERY = "where is the configuration file parsed"
LARAVEL = "laravel-framework"
LARAVEL_ROOT = "src/Illuminate"
TIMEOUT_S = 600.0

# (row name, seek operation, semble operation); None = the tool has no counterpart.
OPERATIONS = (
    ("search -k 10 (warm index)", "search", "search_warm"),
    ("index, cold", "index_cold", "search_cold"),
    ("index, no change", "index_nochange", "search_warm"),
    ("status", "status", None),
    ("--help", "help", "help"),
)


def run_measured(command: list[str], env: dict[str, str], cwd: Path) -> dict:
    """Run ``command`` to completion: wall time, CPU time and peak RSS (MiB) of the process
    tree, reaped with ``os.wait4`` for its own rusage (no other child of this parent counts)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=err)
        deadline = started + TIMEOUT_S
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                raise RuntimeError(f"timed out after {TIMEOUT_S:.0f} s: {command}")
            time.sleep(0.002)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)  # keep Popen from reaping again
        err.seek(0)
        tail = err.read().decode("utf-8", "replace").strip().splitlines()[-10:]
    if proc.returncode != 0:
        raise RuntimeError(f"exit {proc.returncode}: {' '.join(command)}\n" + "\n".join(tail))
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024,  # Linux: KiB
    }


def seek_commands(seek: Path, folder: Path, query: str) -> dict[str, list[str]]:
    base = [str(seek), "-C", str(folder)]
    return {
        "index_cold": [*base, "index", "-q"],
        "index_nochange": [*base, "index", "-q"],
        "search": [*base, "search", query, "-k", "10"],
        "status": [*base, "status"],
        "help": [str(seek), "--help"],
    }


def semble_commands(semble: Path, folder: Path, query: str) -> dict[str, list[str]]:
    search = [str(semble), "search", query, str(folder), "-k", "10"]
    return {"search_cold": search, "search_warm": search, "help": [str(semble), "--help"]}


def median_of(samples: list[dict]) -> dict:
    """One run's figure for a command repeated ``--searches`` times: the medians."""
    if len(samples) == 1:
        return samples[0]
    return {key: statistics.median(s[key] for s in samples)
            for key in ("wall_s", "cpu_s", "peak_rss_mb")}  # fmt: skip


def measure_run(
    seek: Path, semble: Path | None, folder: Path, query: str, env: dict[str, str],
    with_help: bool, searches: int, seek_first: bool,
) -> dict[str, dict[str, dict]]:  # fmt: skip
    """One run: each tool indexes into a fresh home/cache (seek: cold, then no change; semble:
    its first search), then the warm searches alternate between the tools (``searches`` per
    tool, their median kept), then seek's status and both tools' ``--help``."""
    seek_cmds = seek_commands(seek, folder, query)
    seek_home = Path(tempfile.mkdtemp(prefix="bench-cli-seek-"))
    seek_env = {**env, "SEEK_HOME": str(seek_home), "XDG_CONFIG_HOME": str(seek_home / "config")}
    sample: dict[str, dict[str, dict]] = {"seek": {}}
    cache = Path(tempfile.mkdtemp(prefix="bench-cli-semble-"))
    semble_env = {**env, "SEMBLE_CACHE_LOCATION": str(cache)}
    semble_cmds = semble_commands(semble, folder, query) if semble else {}
    tools = (["seek", "semble"] if seek_first else ["semble", "seek"]) if semble else ["seek"]

    def run(tool: str, op: str) -> dict:
        if tool == "seek":
            return run_measured(seek_cmds[op], seek_env, folder)
        return run_measured(semble_cmds[op], semble_env, folder)

    try:
        for tool in tools:
            if tool == "seek":
                sample["seek"]["index_cold"] = run("seek", "index_cold")
                sample["seek"]["index_nochange"] = run("seek", "index_nochange")
            else:
                sample["semble"] = {"search_cold": run("semble", "search_cold")}
        warm: dict[str, list[dict]] = {tool: [] for tool in tools}
        for i in range(searches):
            for tool in tools if i % 2 == 0 else tools[::-1]:
                warm[tool].append(run(tool, "search" if tool == "seek" else "search_warm"))
        for tool in tools:
            sample[tool]["search" if tool == "seek" else "search_warm"] = median_of(warm[tool])
        sample["seek"]["status"] = run("seek", "status")
        if with_help:
            for tool in tools:
                sample[tool]["help"] = run(tool, "help")
    finally:
        shutil.rmtree(seek_home, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    return sample


# -- pure parts: aggregation and the table ---------------------------------------------------
def median_sample(samples: list[dict]) -> dict:
    """Medians of wall, CPU and peak RSS over runs (and the per-run walls, for the record)."""
    return {
        "wall_s": statistics.median(s["wall_s"] for s in samples),
        "cpu_s": statistics.median(s["cpu_s"] for s in samples),
        "peak_rss_mb": statistics.median(s["peak_rss_mb"] for s in samples),
        "wall_runs": [round(s["wall_s"], 3) for s in samples],
        "runs": len(samples),
    }


def aggregate_runs(runs: list[dict[str, dict[str, dict]]]) -> dict[str, dict[str, dict]]:
    """``runs``: one ``{tool: {operation: sample}}`` per run -> ``{tool: {operation: median}}``."""
    result: dict[str, dict[str, dict]] = {}
    for run in runs:
        for tool, operations in run.items():
            for op, sample in operations.items():
                result.setdefault(tool, {}).setdefault(op, []).append(sample)  # type: ignore[arg-type]
    return {
        tool: {op: median_sample(samples) for op, samples in ops.items()}  # type: ignore[arg-type]
        for tool, ops in result.items()
    }


def ratio(seek: float | None, semble: float | None) -> float | None:
    return seek / semble if seek is not None and semble else None


def comparison_rows(medians: dict[str, dict[str, dict]]) -> list[dict]:
    """One row per operation: seek's and semble's median wall and peak RSS, and the ratios."""
    rows = []
    seek, semble = medians.get("seek", {}), medians.get("semble", {})
    for name, seek_op, semble_op in OPERATIONS:
        mine = seek.get(seek_op)
        theirs = semble.get(semble_op) if semble_op else None
        if mine is None and theirs is None:
            continue
        row = {"operation": name, "seek_op": seek_op, "semble_op": semble_op}
        for key in ("wall_s", "cpu_s", "peak_rss_mb"):
            row[f"seek_{key}"] = mine[key] if mine else None
            row[f"semble_{key}"] = theirs[key] if theirs else None
            row[f"{key}_ratio"] = ratio(row[f"seek_{key}"], row[f"semble_{key}"])
        rows.append(row)
    return rows


def median_repo(repos: dict[str, list[dict]], operation: str = "search -k 10 (warm index)") -> str:
    """The repository with the median seek/semble wall ratio for ``operation`` (the lower
    middle one for an even count)."""
    ranked = sorted(
        (row["wall_s_ratio"], name)
        for name, rows in repos.items()
        for row in rows
        if row["operation"] == operation and row["wall_s_ratio"] is not None
    )
    if not ranked:
        raise ValueError(f"no repository has a ratio for {operation!r}")
    return ranked[(len(ranked) - 1) // 2][1]


def dev_summary(repos: dict[str, list[dict]]) -> list[dict]:
    """Per operation over repositories: median and max of the per-repo ratios, and the ratio
    of the mean walls (the issue's "ratio of means" for cold indexing)."""
    by_op: dict[str, list[dict]] = {}
    for rows in repos.values():
        for row in rows:
            by_op.setdefault(row["operation"], []).append(row)
    summary = []
    for name, rows in by_op.items():
        walls = [r["wall_s_ratio"] for r in rows if r["wall_s_ratio"] is not None]
        rss = [r["peak_rss_mb_ratio"] for r in rows if r["peak_rss_mb_ratio"] is not None]
        paired = [r for r in rows if r["wall_s_ratio"] is not None]
        summary.append(
            {
                "operation": name,
                "repos": len(rows),
                "wall_ratio_median": statistics.median(walls) if walls else None,
                "wall_ratio_max": max(walls) if walls else None,
                "wall_ratio_of_means": ratio(
                    statistics.mean(r["seek_wall_s"] for r in paired),
                    statistics.mean(r["semble_wall_s"] for r in paired),
                )
                if paired
                else None,
                "seek_wall_median": statistics.median(
                    r["seek_wall_s"] for r in rows if r["seek_wall_s"] is not None
                )
                if any(r["seek_wall_s"] is not None for r in rows)
                else None,
                "rss_ratio_median": statistics.median(rss) if rss else None,
                "rss_ratio_max": max(rss) if rss else None,
            }
        )
    return summary


def summary_table(summary: list[dict]) -> str:
    lines = [
        "| command | repos | seek wall, median | wall ratio: median / max / of means "
        "| RSS ratio: median / max |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in summary:
        lines.append(
            f"| `{row['operation']}` | {row['repos']} | {_fmt(row['seek_wall_median'], ' s')} "
            f"| {_fmt(row['wall_ratio_median'], '×')} / {_fmt(row['wall_ratio_max'], '×')} "
            f"/ {_fmt(row['wall_ratio_of_means'], '×')} "
            f"| {_fmt(row['rss_ratio_median'], '×')} / {_fmt(row['rss_ratio_max'], '×')} |"
        )
    return "\n".join(lines)


def print_report(report: dict) -> None:
    """The tables for bench/README.md: laravel, the median dev repository, the dev summary."""
    rows = {name: comparison_rows(repo["medians"]) for name, repo in report["repos"].items()}
    for name in [LARAVEL, report.get("median_dev_repo")]:
        if name in rows:
            print(markdown_table(name, rows[name]) + "\n")
    dev = {k: v for k, v in rows.items() if k != LARAVEL}
    if dev:
        print(f"**{len(dev)} dev repositories**\n\n" + summary_table(dev_summary(dev)) + "\n")


def _fmt(value: float | None, unit: str = "", digits: int = 2) -> str:
    return "" if value is None else f"{value:.{digits}f}{unit}"


def markdown_table(title: str, rows: list[dict]) -> str:
    lines = [
        f"**{title}**",
        "",
        "| command | seek wall | semble wall | ratio | seek CPU | semble CPU "
        "| seek peak RSS | semble peak RSS | ratio |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| `{row['operation']}` | {_fmt(row['seek_wall_s'], ' s')} "
            f"| {_fmt(row['semble_wall_s'], ' s')} | {_fmt(row['wall_s_ratio'], '×')} "
            f"| {_fmt(row['seek_cpu_s'], ' s')} | {_fmt(row['semble_cpu_s'], ' s')} "
            f"| {_fmt(row['seek_peak_rss_mb'], ' MiB', 0)} "
            f"| {_fmt(row['semble_peak_rss_mb'], ' MiB', 0)} "
            f"| {_fmt(row['peak_rss_mb_ratio'], '×')} |"
        )
    return "\n".join(lines)


# -- driver ------------------------------------------------------------------------------
def measure_repo(
    folder: Path, runs: int, seek: Path, semble: Path | None, query: str, env: dict,
    help_: bool, searches: int = 1,
) -> tuple[dict, list[float]]:  # fmt: skip
    per_run, loads = [], []
    for run in range(runs):
        per_run.append(measure_run(seek, semble, folder, query, env, help_, searches, run % 2 == 0))
        loads.append(os.getloadavg()[0])
    return aggregate_runs(per_run), loads


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.speed.cli_speed", description=__doc__.split("\n\n")[0]
    )
    add_bench_dir(parser)
    parser.add_argument("--repos", help="comma-separated names (default: laravel + dev repos)")
    parser.add_argument("--runs", type=int, default=5, help="runs on laravel-framework")
    parser.add_argument("--dev-runs", type=int, default=3, help="runs on each dev repository")
    parser.add_argument("--query", default=DEFAULT_QUERY)
    parser.add_argument(
        "--searches", type=int, default=1,
        help="warm searches per tool and run, alternating between the tools (median kept)",
    )  # fmt: skip
    parser.add_argument("--semble", help="semble's command (default: $SEMBLE)")
    parser.add_argument("--no-semble", action="store_true")
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    parser.add_argument(
        "--resume", action="store_true", help="keep the repositories already in --out, skip them"
    )
    parser.add_argument("--report", metavar="JSON", help="print the tables of a results file")
    args = parser.parse_args(argv)
    if args.report:
        print_report(json.loads(Path(args.report).read_text()))
        return 0

    checkouts = resolve_bench_dir(parser, args.bench_dir).resolve()
    seek = Path(sys.executable).with_name("seek")
    semble = None if args.no_semble else semble_cli_path(args.semble)
    if not args.no_semble and semble is None:
        parser.error("no semble: pass --semble PATH, set SEMBLE, or pass --no-semble")
    if semble is not None and not semble.exists():
        parser.error(f"no semble at {semble} (or pass --no-semble)")
    names = args.repos.split(",") if args.repos else [LARAVEL, *read_repo_list()]
    roots = {**read_benchmark_roots(), LARAVEL: LARAVEL_ROOT}
    env = dict(os.environ)
    env.update(HF_HUB_OFFLINE="1", SEMBLE_MODEL_NAME=str(builtin_model_dir().resolve()))
    env.pop("PYTHONPATH", None)
    revision = checkouts / LARAVEL / ".bench-revision"
    report: dict = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "python -m bench.speed.cli_speed " + " ".join(argv or sys.argv[1:]),
        "query": args.query,
        "machine": machine_info(),
        "commit": git_commit(),
        "laravel_revision": revision.read_text().strip() if revision.is_file() else None,
        "repos": {},
    }
    out = Path(args.out)
    if args.resume and out.is_file():
        # A long run cut short (the JSON is written after every repository) goes on where it
        # stopped; the commands of both parts are kept.
        previous = json.loads(out.read_text())
        previous["command"] = f"{previous['command']}; then {report['command']}"
        report = {**previous, "date_resumed": report["date"]}
    for index, name in enumerate(names):
        folder = repo_folder(checkouts, name, roots)
        if name in report["repos"]:
            continue
        if not folder.is_dir():
            log(f"warning: {name}: no checkout at {folder}, skipped")
            continue
        files, _ = prewarm(folder)
        runs = args.runs if name == LARAVEL else args.dev_runs
        medians, loads = measure_repo(
            folder, runs, seek, semble, args.query, env, index == 0, args.searches
        )
        rows = comparison_rows(medians)
        report["repos"][name] = {"files": files, "loadavg_1m": loads, "medians": medians}
        report.setdefault("rows", {})[name] = rows
        search = next(r for r in rows if r["seek_op"] == "search")
        log(
            f"{name}: search {_fmt(search['seek_wall_s'])} s vs {_fmt(search['semble_wall_s'])} s"
            f", RSS {_fmt(search['seek_peak_rss_mb'], '', 0)} vs "
            f"{_fmt(search['semble_peak_rss_mb'], '', 0)} MiB, load {loads}"
        )
        dev = {k: v for k, v in report["rows"].items() if k != LARAVEL}
        if dev and semble:
            report["median_dev_repo"] = median_repo(dev)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=1) + "\n")  # after every repo: partial runs keep
    print_report(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
