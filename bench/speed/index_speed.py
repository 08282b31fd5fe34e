"""Indexing speed: seek against semble on the benchmark repos.

    python -m bench.speed.index_speed BENCH_DIR [--repos a,b] [--runs N]
        [--semble-python PATH | --no-semble] [--out bench/results/index_speed.json]

Every measurement runs in a fresh child process (one per repo, tool and run) that first
imports the tool and loads + warms the model - both excluded - then times

* ``cold``: a first index into a fresh, empty index home (seek) / cache folder (semble);
* ``nochange``: a second index of the same, untouched tree, keeping what the first wrote.

and reports JSON on stdout (``cold_s``, ``nochange_s``, ``files``, ``chunks``,
``peak_rss_mb``). The seek worker is ``python -m bench.speed.index_speed --worker seek REPO_DIR``;
the semble worker is ``bench/speed/_semble_worker.py``, run with semble's own python (semble is
not a dependency of seek; without it the harness measures seek alone and says so). See
bench/README.md.
"""

from __future__ import annotations

import argparse
import importlib
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
    REPO_ROOT,
    RESULTS,
    add_bench_dir,
    builtin_model_dir,
    cpu_s,
    git_commit,
    log,
    machine_info,
    peak_rss_mb,
    read_benchmark_roots,
    read_repo_list,
    repo_folder,
    resolve_bench_dir,
    semble_python_path,
    shown,
)

DEFAULT_OUT = RESULTS / "index_speed.json"
SEMBLE_WORKER = Path(__file__).resolve().with_name("_semble_worker.py")
STORE_MODULES = ("pyarrow",)  # imported lazily by seek.store; pre-imported (with the engine)
NOCHANGE_REPO = "abseil-cpp"  # the largest dev repo: its no-change time gets a summary row


# -- the seek worker (child process) -------------------------------------------------------
def seek_worker(repo_dir: str) -> dict:
    """Measure seek on one folder; runs in its own process."""
    scratch = Path(tempfile.mkdtemp(prefix="bench-seek-"))
    try:
        from seek import index_workspace, load_settings
        from seek.embed import make_embedder

        # A fresh index home, and no user config file (so ~/.config/seek cannot change what is
        # measured); SEEK_* environment variables still apply.
        settings = load_settings(
            overrides={"home": str(scratch / "home")},
            user_config=scratch / "no-config.toml",
        )
        embedder = make_embedder(settings)  # the built-in LocalEmbedder
        # Loads the model, excluded from the timings, and prepares what seek's encoder builds
        # on its first indexing-sized batch (the lower-casing tokenizer copy, ~20 ms: seek
        # defers it so that a search process, which embeds one question, never pays it);
        # semble's one-text warm-up prepares all of its encoder.
        embedder.embed(["warm up"] * 64)  # seek.embed.static.BULK
        # seek imports its store lazily on first use (pyarrow and LanceDB's engine, or the
        # lancedb package where the engine alone is not used: seek.store.lance); semble
        # imports everything up front. Import time is excluded for both, so import it here.
        started = time.perf_counter()
        for module in STORE_MODULES:
            try:
                importlib.import_module(module)
            except ImportError:
                pass
        try:
            from seek.store import lance
        except ImportError:  # a seek from before seek.store.lance (PYTHONPATH=old/src)
            importlib.import_module("lancedb")
        else:
            if lance.native_module() is None:
                lance.package()
        store_import_s = time.perf_counter() - started

        before = set(sys.modules)
        started, cpu = time.perf_counter(), cpu_s()
        cold = index_workspace(repo_dir, settings, mode="update", embedder=embedder)
        cold_s = time.perf_counter() - started
        cold_cpu_s = cpu_s() - cpu
        late_imports = sorted({name.split(".")[0] for name in set(sys.modules) - before})

        started = time.perf_counter()
        again = index_workspace(repo_dir, settings, mode="update", embedder=embedder)
        nochange_s = time.perf_counter() - started

        import seek

        return {
            "tool": "seek",
            "version": seek.__version__,
            "repo_dir": str(Path(repo_dir).resolve()),
            "model": embedder.model_id,
            "cold_s": cold_s,
            "cold_cpu_s": cold_cpu_s,
            "nochange_s": nochange_s,
            "files": cold.files,
            "chunks": cold.chunks,
            "embedded": cold.embedded,
            "skipped": dict(cold.skipped),
            "unreadable": len(cold.unreadable),
            "cold_summary": cold.summary(),
            "nochange_summary": again.summary(),
            "nochange_embedded": again.embedded,
            "nochange_removed": again.removed,
            "nochange_files": again.files,
            "store_import_s": store_import_s,
            "cold_late_imports": late_imports,
            "peak_rss_mb": peak_rss_mb(),
        }
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


# -- the parent ------------------------------------------------------------------------------
def run_child(command: list[str], env: dict[str, str], timeout: float) -> dict:
    """Run one worker; its last stdout line is the JSON result."""
    proc = subprocess.run(
        command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
        raise RuntimeError(f"exit {proc.returncode}: " + "\n".join(tail))
    lines = [line for line in proc.stdout.strip().splitlines() if line.strip()]
    if not lines:
        raise RuntimeError("the worker printed nothing")
    return json.loads(lines[-1])


def child_env(model_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["HF_HUB_OFFLINE"] = "1"
    env["SEMBLE_MODEL_NAME"] = str(model_dir)
    env.pop("PYTHONPATH", None)  # each tool sees its own venv only
    return env


def worker_command(
    tool: str, folder: Path, semble_python: Path | None, model_dir: Path
) -> list[str]:
    if tool == "seek":
        return [sys.executable, "-m", "bench.speed.index_speed", "--worker", "seek", str(folder)]
    return [str(semble_python), str(SEMBLE_WORKER), str(folder), str(model_dir)]


def prewarm(folder: Path) -> tuple[int, float]:
    """Read every file of ``folder`` once, so that neither tool pays for the OS file cache.

    "Cold" means a fresh index, not a cold disk: without this, whichever tool runs first on a
    repo reads it from disk and the other from memory.
    """
    started = time.perf_counter()
    count = 0
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for filename in filenames:
            try:
                with open(os.path.join(dirpath, filename), "rb") as handle:
                    while handle.read(1 << 20):
                        pass
                count += 1
            except OSError:
                pass
    return count, time.perf_counter() - started


def aggregate(samples: list[dict]) -> dict | None:
    """The median of each timing over the runs, the max peak RSS."""
    if not samples:
        return None
    result = dict(samples[-1])
    for key in ("cold_s", "nochange_s", "cold_cpu_s"):
        if all(key in sample for sample in samples):
            result[key] = statistics.median(sample[key] for sample in samples)
    result["peak_rss_mb"] = max(sample["peak_rss_mb"] for sample in samples)
    result["runs"] = len(samples)
    for key in ("cold_s", "nochange_s", "loadavg_1m"):
        result[f"{key}_runs"] = [sample[key] for sample in samples]
    result.pop("loadavg_1m", None)
    result["files_per_s"] = result["files"] / result["cold_s"] if result["cold_s"] else None
    result["chunks_per_s"] = result["chunks"] / result["cold_s"] if result["cold_s"] else None
    return result


def measure_repo(
    folder: Path,
    tools: list[str],
    runs: int,
    *,
    semble_python: Path | None,
    model_dir: Path,
    timeout: float,
) -> dict[str, dict | None]:
    """``runs`` rounds of one fresh process per tool; the tool order alternates by round."""
    samples: dict[str, list[dict]] = {tool: [] for tool in tools}
    for attempt in range(runs):
        order = tools if attempt % 2 == 0 else tools[::-1]
        for tool in order:
            command = worker_command(tool, folder, semble_python, model_dir)
            load = os.getloadavg()[0]
            if load > (os.cpu_count() or 1):
                log(
                    f"  warning: load average {load:.1f} before the {tool} run: the machine is "
                    "busy, timings will be noisy"
                )
            try:
                sample = run_child(command, child_env(model_dir), timeout)
            except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
                log(f"  {tool} run {attempt + 1} failed: {exc}")
                continue
            sample["loadavg_1m"] = load
            sample.pop("repo_dir", None)  # the row's "path" names it, portably
            samples[tool].append(sample)
            log(
                f"  {tool}: cold {sample['cold_s']:.2f} s "
                f"({sample.get('cold_cpu_s', 0):.2f} s CPU), no-change "
                f"{sample['nochange_s']:.3f} s, {sample['files']} files, "
                f"{sample['chunks']} chunks, {sample['peak_rss_mb']:.0f} MB"
            )
    return {tool: aggregate(samples[tool]) for tool in tools}


def find_semble_python(arg: str | None, disabled: bool) -> tuple[Path | None, str]:
    """(semble's python, why not) - checks that semble is importable there."""
    if disabled:
        return None, "disabled with --no-semble"
    candidate = semble_python_path(arg)
    if candidate is None:
        return None, "no semble python: pass --semble-python PATH or set SEMBLE_PYTHON"
    if not candidate.exists():
        return None, f"no semble python at {candidate}"
    probe = subprocess.run(
        [str(candidate), "-c", "import semble, sys; print(getattr(semble, '__version__', '?'))"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if probe.returncode != 0:
        return None, f"semble is not importable with {candidate}"
    return candidate, probe.stdout.strip()


def summarize(rows: list[dict]) -> dict:
    seek_cold = [row["seek"]["cold_s"] for row in rows if row.get("seek")]
    both = [row for row in rows if row.get("seek") and row.get("semble")]
    summary: dict = {
        "repos_measured": len(rows),
        "seek_mean_cold_s": statistics.fmean(seek_cold) if seek_cold else None,
        "seek_total_cold_s": sum(seek_cold) if seek_cold else None,
    }
    if both:
        seek_both = [row["seek"]["cold_s"] for row in both]
        semble_both = [row["semble"]["cold_s"] for row in both]
        ratios = [row["seek"]["cold_s"] / row["semble"]["cold_s"] for row in both]
        summary.update(
            {
                "repos_compared": len(both),
                "seek_mean_cold_s_compared": statistics.fmean(seek_both),
                "semble_mean_cold_s": statistics.fmean(semble_both),
                "ratio_of_means": statistics.fmean(seek_both) / statistics.fmean(semble_both),
                "mean_of_ratios": statistics.fmean(ratios),
                "geomean_of_ratios": statistics.geometric_mean(ratios),
                "median_ratio": statistics.median(ratios),
                "max_ratio": max(ratios),
                "max_ratio_repo": both[ratios.index(max(ratios))]["repo"],
                "seek_mean_nochange_s": statistics.fmean(r["seek"]["nochange_s"] for r in both),
                "semble_mean_nochange_s": statistics.fmean(r["semble"]["nochange_s"] for r in both),
            }
        )
    with_cpu = [r for r in both if "cold_cpu_s" in r["seek"] and "cold_cpu_s" in r["semble"]]
    if with_cpu:
        seek_cpu = statistics.fmean(r["seek"]["cold_cpu_s"] for r in with_cpu)
        semble_cpu = statistics.fmean(r["semble"]["cold_cpu_s"] for r in with_cpu)
        summary.update(
            {
                "seek_mean_cold_cpu_s": seek_cpu,
                "semble_mean_cold_cpu_s": semble_cpu,
                "cpu_ratio_of_means": seek_cpu / semble_cpu,
            }
        )
    loads = [
        load
        for row in rows
        for tool in ("seek", "semble")
        if row.get(tool)
        for load in row[tool].get("loadavg_1m_runs", [])
    ]
    if loads:
        summary["max_loadavg_1m"] = max(loads)
    for row in rows:
        if row["repo"] == NOCHANGE_REPO:
            summary[f"{NOCHANGE_REPO}_nochange_s"] = {
                tool: row[tool]["nochange_s"] for tool in ("seek", "semble") if row.get(tool)
            }
    return summary


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def markdown_table(rows: list[dict], summary: dict, with_semble: bool) -> str:
    header = [
        "repo",
        "files",
        "seek cold s",
        "semble cold s",
        "ratio",
        "seek CPU s",
        "semble CPU s",
        "seek no-change s",
        "semble no-change s",
        "seek chunks/s",
        "seek peak MB",
        "semble peak MB",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        seek, semble = row.get("seek"), row.get("semble")
        files = "-"
        if seek and semble and seek["files"] != semble["files"]:
            files = f"{seek['files']} / {semble['files']}"
        elif seek or semble:
            files = str((seek or semble)["files"])
        ratio = seek["cold_s"] / semble["cold_s"] if seek and semble else None
        lines.append(
            "| "
            + " | ".join(
                [
                    row["repo"],
                    files,
                    _fmt(seek and seek["cold_s"]),
                    _fmt(semble and semble["cold_s"]),
                    _fmt(ratio),
                    _fmt(seek and seek.get("cold_cpu_s")),
                    _fmt(semble and semble.get("cold_cpu_s")),
                    _fmt(seek and seek["nochange_s"], 3),
                    _fmt(semble and semble["nochange_s"], 3),
                    _fmt(seek and seek["chunks_per_s"], 0),
                    _fmt(seek and seek["peak_rss_mb"], 0),
                    _fmt(semble and semble["peak_rss_mb"], 0),
                ]
            )
            + " |"
        )
    blank = [""] * (len(header) - 2)
    if with_semble and summary.get("repos_compared"):
        n = summary["repos_compared"]
        lines.append(
            "| "
            + " | ".join(
                [
                    f"**mean cold ({n} repos)**",
                    "",
                    _fmt(summary["seek_mean_cold_s_compared"]),
                    _fmt(summary["semble_mean_cold_s"]),
                    "",
                    _fmt(summary.get("seek_mean_cold_cpu_s")),
                    _fmt(summary.get("semble_mean_cold_cpu_s")),
                ]
                + [""] * 5
            )
            + " |"
        )
        lines.append(
            "| "
            + " | ".join(
                [
                    "**ratio of means** (wall; CPU)",
                    "",
                    "",
                    "",
                    _fmt(summary["ratio_of_means"]),
                    _fmt(summary.get("cpu_ratio_of_means")),
                    "",
                ]
                + [""] * 5
            )
            + " |"
        )
        lines.append(
            "| "
            + " | ".join(
                ["**mean of ratios**", "", "", "", _fmt(summary["mean_of_ratios"])] + [""] * 7
            )
            + " |"
        )
        lines.append(
            "| "
            + " | ".join(
                ["**geomean of ratios**", "", "", "", _fmt(summary["geomean_of_ratios"])] + [""] * 7
            )
            + " |"
        )
        lines.append(
            "| "
            + " | ".join(
                [
                    f"**max ratio** ({summary['max_ratio_repo']})",
                    "",
                    "",
                    "",
                    _fmt(summary["max_ratio"]),
                ]
                + [""] * 7
            )
            + " |"
        )
    else:
        lines.append(
            "| "
            + " | ".join(
                [
                    f"**mean cold ({summary['repos_measured']} repos)**",
                    "",
                    _fmt(summary["seek_mean_cold_s"]),
                ]
                + blank[:-1]
            )
            + " |"
        )
    nochange = summary.get(f"{NOCHANGE_REPO}_nochange_s")
    if nochange:
        lines.append(
            "| "
            + " | ".join(
                [
                    f"**{NOCHANGE_REPO} no-change**",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    _fmt(nochange.get("seek"), 3),
                    _fmt(nochange.get("semble"), 3),
                    "",
                    "",
                    "",
                ]
            )
            + " |"
        )
    return "\n".join(lines)


def seek_source_digest() -> str:
    """A digest of seek's sources, to tell which code a result file measured."""
    import hashlib

    digest = hashlib.sha256()
    src = REPO_ROOT / "src" / "seek"
    for path in sorted(src.rglob("*.py")):
        digest.update(str(path.relative_to(src)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.speed.index_speed",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_bench_dir(parser)
    parser.add_argument("--repos", help="comma-separated names (default: dev-repos.txt)")
    parser.add_argument(
        "--runs",
        type=int,
        default=1,
        help="fresh processes per repo and tool; the median is kept (default 1)",
    )
    parser.add_argument(
        "--semble-python",
        help="python with semble installed (default: $SEMBLE_PYTHON; without either, seek only)",
    )
    parser.add_argument("--no-semble", action="store_true", help="measure seek only")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="JSON results file")
    parser.add_argument(
        "--timeout",
        type=float,
        default=1800.0,
        help="seconds allowed per child process (default 1800)",
    )
    parser.add_argument("--worker", choices=["seek"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        print(json.dumps(seek_worker(args.bench_dir)))
        return 0
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    checkouts = resolve_bench_dir(parser, args.bench_dir).resolve()
    names = (
        [n.strip() for n in args.repos.split(",") if n.strip()] if args.repos else read_repo_list()
    )
    roots = read_benchmark_roots()
    model_dir = builtin_model_dir().resolve()
    semble_python, semble_note = find_semble_python(args.semble_python, args.no_semble)
    if semble_python is None:
        log(f"semble not measured ({semble_note}): seek only")
    else:
        log(f"semble {semble_note} via {semble_python}")
    tools = ["seek"] + (["semble"] if semble_python else [])
    source_before = seek_source_digest()

    rows = []
    for name in names:
        folder = repo_folder(checkouts, name, roots)
        if not folder.is_dir():
            log(f"warning: {name}: no checkout at {folder}, skipped")
            continue
        files, seconds = prewarm(folder)
        log(f"{name}: {folder} ({files} files read in {seconds:.2f} s to warm the file cache)")
        row: dict = {"repo": name, "path": shown(folder, checkouts)}
        row.update(
            measure_repo(
                folder,
                tools,
                args.runs,
                semble_python=semble_python,
                model_dir=model_dir,
                timeout=args.timeout,
            )
        )
        if any(row.get(tool) for tool in tools):
            rows.append(row)

    source_after = seek_source_digest()
    if source_after != source_before:
        log("warning: src/seek changed while the benchmark ran; seek results mix versions")
    summary = summarize(rows)
    table = markdown_table(rows, summary, bool(semble_python))
    results = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "python -m bench.speed.index_speed "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": machine_info(),
        "commit": git_commit(),
        "model": shown(model_dir),
        "runs": args.runs,
        "seek_source_digest": source_before
        if source_after == source_before
        else f"{source_before} -> {source_after} (changed during the run)",
        "semble": {"python": bool(semble_python), "note": semble_note},
        "ratio": "seek cold s / semble cold s (above 1: seek is slower)",
        "repos": rows,
        "summary": summary,
        "table": table,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    tmp.replace(out)

    if semble_python is None:
        print(f"semble not measured ({semble_note}); seek only.\n")
    print(table)
    log(f"\nresults written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
