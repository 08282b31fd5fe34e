"""``seek search`` as a whole process, this checkout against another source tree of seek, on
the same warm indexes, interleaved (A, B, A, B, ...) so that a busy machine's load hits both
alike: median wall, CPU (the child's rusage) and peak RSS of each. The other tree runs with
``PYTHONPATH=OTHER_SRC`` in front of this checkout's install (e.g. ``git archive main src |
tar -x -C /tmp/base``). The indexes must already exist under ``--home``. With ``--cold-index``
it times ``seek index`` instead, each run in a fresh home of its own (made under ``--home``
and removed after): a cold index, as ``bench.speed.cli_speed`` times it against semble.

    OPENBLAS_NUM_THREADS=1 python -m bench.speed.cli_ab --home DIR --other /tmp/base/src \\
        [--runs 10] [--query TEXT | --cold-index] FOLDER [FOLDER ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
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
    parser.add_argument("--cold-index", action="store_true", help="time a cold `seek index`")
    args = parser.parse_args(argv)
    seek = Path(sys.executable).with_name("seek")
    base = {**os.environ, "SEEK_HOME": args.home, "XDG_CONFIG_HOME": f"{args.home}/config"}
    envs = {"this": base, "other": {**base, "PYTHONPATH": args.other}}
    for folder in args.folders:
        command = [str(seek), "-C", folder, "search", args.query, "-k", "10"]
        if args.cold_index:
            command = [str(seek), "-C", folder, "index"]
        samples: dict[str, list[dict]] = {"this": [], "other": []}
        for i in range(args.runs):
            for name in ("this", "other") if i % 2 == 0 else ("other", "this"):
                env = envs[name]
                if args.cold_index:
                    home = tempfile.mkdtemp(prefix="cold-", dir=args.home)
                    env = {**env, "SEEK_HOME": home, "XDG_CONFIG_HOME": f"{home}/config"}
                try:
                    samples[name].append(run_measured(command, env, Path(folder)))
                finally:
                    if args.cold_index:
                        shutil.rmtree(home, ignore_errors=True)
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
