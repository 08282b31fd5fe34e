"""``seek search`` as a whole process, this checkout against another source tree of seek, on
the same warm indexes, interleaved (A, B, A, B, ...) so that a busy machine's load hits both
alike: median wall, CPU (the child's rusage) and peak RSS of each. The other tree runs with
``PYTHONPATH=OTHER_SRC`` in front of this checkout's install (e.g. ``git archive main src |
tar -x -C /tmp/base``). The indexes must already exist under ``--home``.

    OPENBLAS_NUM_THREADS=1 python -m bench.speed.cli_ab --home DIR --other /tmp/base/src \\
        [--runs 10] [--query TEXT] FOLDER [FOLDER ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

from bench.speed.cli_speed import DEFAULT_QUERY, run_measured


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.speed.cli_ab", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--home", required=True, help="SEEK_HOME of the indexes")
    parser.add_argument("--other", required=True, help="the other tree's src folder")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--query", default=DEFAULT_QUERY)
    args = parser.parse_args(argv)
    seek = Path(sys.executable).with_name("seek")
    base = {**os.environ, "SEEK_HOME": args.home, "XDG_CONFIG_HOME": f"{args.home}/config"}
    envs = {"this": base, "other": {**base, "PYTHONPATH": args.other}}
    for folder in args.folders:
        command = [str(seek), "-C", folder, "search", args.query, "-k", "10"]
        samples: dict[str, list[dict]] = {"this": [], "other": []}
        for i in range(args.runs):
            for name in ("this", "other") if i % 2 == 0 else ("other", "this"):
                samples[name].append(run_measured(command, envs[name], Path(folder)))
        medians = {
            name: {
                key: round(statistics.median(s[key] for s in runs), 4)
                for key in ("wall_s", "cpu_s", "peak_rss_mb")
            }  # fmt: skip
            for name, runs in samples.items()
        }
        print(Path(folder).name, json.dumps(medians), f"load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
