"""The change tools from a cold CLI process (issue 44, "Done when": one-shot ``seek impact``,
``seek tests``, ``seek changed`` answer in <= 1 s on a 2,000-file repository).

Each command is one whole ``seek -C FOLDER ...`` process on an index already built (run
``seek index`` first), timed as :func:`bench.speed.cli_speed.run_measured` times it: wall,
CPU (the child's rusage) and peak RSS. The commands take turns, run after run, so that a
busy machine's load hits them alike; ``--help`` is the floor every process pays (Python,
click, seek's command table) and ``def`` the lookup the change tools are measured against.

    OPENBLAS_NUM_THREADS=1 python -m bench.change.cold_cli --home DIR FOLDER \\
        --name NAME [--name NAME ...] [--ref REF ...] [--runs 7] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

from bench.speed.cli_speed import run_measured


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.change.cold_cli", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("folder", type=Path)
    parser.add_argument("--home", required=True, help="SEEK_HOME of the index")
    parser.add_argument(
        "--name",
        action="append",
        required=True,
        help="a definition's name to ask about (repeatable)",
    )
    parser.add_argument(
        "--ref",
        action="append",
        help="what `seek changed REF` compares with the working tree (repeatable; default HEAD)",
    )
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    seek = Path(sys.executable).with_name("seek")
    env = {**os.environ, "SEEK_HOME": args.home, "XDG_CONFIG_HOME": f"{args.home}/config"}
    base = [str(seek), "-C", str(args.folder)]
    commands = {
        "--help": [str(seek), "--help"],
    }
    for name in args.name:
        for tool in ("def", "impact", "tests"):
            commands[f"{tool} {name}"] = [*base, tool, name]
    for ref in args.ref or ["HEAD"]:
        commands[f"changed {ref}"] = [*base, "changed", ref]
        commands[f"tests --changed {ref}"] = [*base, "tests", "--changed", ref]
    samples: dict[str, list[dict]] = {name: [] for name in commands}
    for i in range(args.runs):
        order = list(commands) if i % 2 == 0 else list(reversed(commands))
        for name in order:
            samples[name].append(run_measured(commands[name], env, args.folder))
    result = {
        "folder": args.folder.name,
        "names": args.name,
        "refs": args.ref or ["HEAD"],
        "runs": args.runs,
        "load": round(os.getloadavg()[0], 1),
        "median": {
            name: {
                key: round(statistics.median(s[key] for s in runs), 3)
                for key in ("wall_s", "cpu_s", "peak_rss_mb")
            }  # fmt: skip
            for name, runs in samples.items()
        },
    }
    text = json.dumps(result, indent=1)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
