"""Keeping current: no-change update of a 10,000-file workspace, and save-to-searchable
latency under `seek watch` on a 1,000-file workspace (built-in model, generated files).

    python -m bench.speed.keep_current [--files 10000] [--watch-files 1000] [--saves 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from seek import index_workspace, load_settings
from seek.index.watch import Watcher
from seek.retrieve import Searcher


def generate(root: Path, count: int) -> None:
    for i in range(count):
        folder = root / f"pkg{i // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{i:05d}.py").write_text(
            f"def handler_{i}(request):\n    value = request.get('k{i}')\n    return value\n"
        )


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def no_change(files: int, home: Path) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        generate(root, files)
        settings = load_settings(overrides={"home": str(home)})
        started = time.perf_counter()
        index_workspace(root, settings)
        cold = time.perf_counter() - started
        in_process = []
        for _ in range(5):
            report = index_workspace(root, settings)
            assert not report.changed
            in_process.append(report.seconds)
        env = {**os.environ, "SEEK_HOME": str(home)}
        cli = []
        for _ in range(5):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "seek", "index", "-q", str(root)], env=env,
                           check=True, capture_output=True)  # fmt: skip
            cli.append(time.perf_counter() - started)
    return {"files": files, "cold_s": cold, "nochange_s": statistics.median(in_process),
            "nochange_cli_s": statistics.median(cli)}  # fmt: skip


def save_latency(files: int, saves: int, home: Path) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        generate(root, files)
        settings = load_settings(overrides={"home": str(home)})
        watcher = Watcher(root, settings, echo=lambda line: None)
        stop, ready = threading.Event(), threading.Event()
        thread = threading.Thread(target=watcher.run, args=(stop, ready), daemon=True)
        thread.start()
        ready.wait(600)
        latencies = []
        for n in range(saves):
            target = root / f"pkg{n % 10:03d}" / f"mod{n:05d}.py"
            token = f"savedtoken{n}x"
            target.write_text(f"def {token}(request):\n    return request\n")
            started = time.perf_counter()
            while True:
                hits = Searcher.open(root, settings).keywords.candidates(token, 1)
                if hits:
                    break
                time.sleep(0.05)
            latencies.append(time.perf_counter() - started)
        stop.set()
        thread.join(30)
    return {"files": files, "saves": saves, "debounce_s": settings.watch_debounce_s,
            "p50_s": percentile(latencies, 0.5), "p95_s": percentile(latencies, 0.95)}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.speed.keep_current", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--watch-files", type=int, default=1_000)
    parser.add_argument("--saves", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        result = no_change(args.files, Path(home) / "a")
        print(f"no-change update, {result['files']} files: {result['nochange_s']:.3f} s in "
              f"process, {result['nochange_cli_s']:.2f} s for the `seek index` command "
              f"(cold index {result['cold_s']:.1f} s)")  # fmt: skip
        watch = save_latency(args.watch_files, args.saves, Path(home) / "b")
        print(f"save-to-searchable under seek watch, {watch['files']} files, {watch['saves']} "
              f"saves: p50 {watch['p50_s']:.2f} s, p95 {watch['p95_s']:.2f} s "
              f"(debounce {watch['debounce_s']} s included)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
