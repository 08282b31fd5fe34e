"""`seek tests` against per-test coverage oracles (issue 44, "Tests against a dynamic oracle").

    python -m bench.change.tests_oracle checkout NAME GIT_DIR BENCH_DIR
    python -m bench.change.tests_oracle build BENCH_DIR [--repos flask,requests,cobra,zod]
        [--oracles DIR] [--python NAME=PYTHON ...] [--fresh]
    python -m bench.change.tests_oracle score [--oracles DIR] [--repos ...]
        [--out bench/results/tests_oracle.json] [--misses FILE]

``checkout`` writes the *whole* tree of a pinned revision (shared/bench/semble/repos.json),
tests included, to BENCH_DIR/NAME (materialize.py keeps only the benchmark root).

``build`` takes per-test coverage in BENCH_DIR/NAME with the language's runner
(bench.change.coverage, bench.change.vitest_coverage), keeps the raw run in
``DIR/raw/NAME.json`` (reused unless --fresh: a run is minutes), samples functions and
writes ``DIR/NAME.json`` in the format of FORMAT.md beside it (a copy is
bench/change/FORMAT.md). DIR defaults to $SEEK_TESTS_ORACLES. What each runner needs:

* Python (flask, requests): ``--python NAME=PY``, an interpreter whose environment holds
  the project's test dependencies, pytest and pytest-cov (flask: pytest<9, asgiref,
  greenlet, python-dotenv; requests: its requirements-dev.txt), and the project installed
  editable (``pip install --no-deps -e``).
* Go (cobra): ``go`` on PATH, with the module's requirements resolvable offline, e.g.
  ``GOFLAGS="-mod=mod -modfile=cobra.mod" GOPROXY=off`` and ``replace`` lines to local
  sources (Debian's golang-github-spf13-pflag-dev and go-md2man, yaml.v3 renamed).
* TypeScript (zod): ``node_modules`` in the checkout with vitest and
  @vitest/coverage-istanbul at the repository's vitest version, and ``zod`` resolvable
  (a link to packages/zod).

``score`` builds seek's graph of each checkout (bench.graph.oracle.workspace_files) and, for
every sampled function, compares the tests each method selects with the tests that executed
its body, at test-function and test-file level, micro-averaged (bench.change.scoring): `seek
tests` (seek.change.tests.select_tests), grep, the test file named after the module, and
the walk over `refs` that issue 44 started from; and the ceiling check: the share of the
oracle's (test, function) pairs that no chain of the graph's uses connects. ``--misses``
writes, per function, the oracle's tests `seek tests` missed and how many it added.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import subprocess
import sys
import tarfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.change.coverage import Run, go_coverage, python_coverage
from bench.change.scoring import score_repository, total
from bench.change.vitest_coverage import vitest_coverage
from bench.common import REPO_ROOT, REPOS_JSON
from bench.graph.oracle import workspace_files
from seek.graph import build_graph
from seek.graph.lookup import TEST_PATH

DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "tests_oracle.json"
DEFAULT_REPOS = "flask,requests,cobra,zod"
MAX_FUNCTIONS = 300
MAX_SHARE = 0.05
SEED = 0
FUNCTION_KINDS = {"function", "method"}
RUNNERS = {
    "flask": {"language": "python", "source": "src/flask"},
    "requests": {"language": "python", "source": "src/requests"},
    "cobra": {"language": "go"},
    "zod": {
        "language": "typescript",
        "config": "vitest.root.mjs",
        "include": ["packages/zod/src/**"],
        "tests": "packages/zod/src",
    },
}


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _oracles_dir(value: str | None) -> Path:
    folder = value or os.environ.get("SEEK_TESTS_ORACLES")
    if not folder:
        raise SystemExit("give --oracles DIR or set SEEK_TESTS_ORACLES")
    return Path(folder)


def checkout(name: str, git_dir: str, bench_dir: Path) -> Path:
    """The whole tree of ``name``'s pinned revision at BENCH_DIR/NAME."""
    spec = {r["name"]: r for r in json.loads(REPOS_JSON.read_text())}[name]
    tar = subprocess.run(
        ["git", "-C", git_dir, "archive", "--format=tar", spec["revision"]],
        capture_output=True,
        check=True,
    ).stdout
    target = bench_dir / name
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(target, filter="data")
    return target


def collect(name: str, root: Path, pythons: dict[str, str]) -> Run:
    """Per-test coverage of one checkout with its language's runner."""
    runner = RUNNERS[name]
    if runner["language"] == "python":
        return python_coverage(root, pythons.get(name, sys.executable), runner["source"])
    if runner["language"] == "go":
        return go_coverage(root)
    tests = sorted(
        p.relative_to(root).as_posix() for p in (root / runner["tests"]).rglob("*.test.ts")
    )
    return vitest_coverage(root, runner["config"], runner["include"], tests)


def sample_functions(root: Path, run: Run, seed: int = SEED) -> tuple[list[dict], dict]:
    """Functions of seek's graph (outside tests) whose body some tests but not most ran:
    covered by at least one test and by at most MAX_SHARE of those run (at least one);
    at most MAX_FUNCTIONS of them, drawn with ``seed``."""
    graph = build_graph(workspace_files(root))
    by_file: dict[str, list[tuple[str, set[int]]]] = {}
    for test_id, files in run.lines.items():
        for path, lines in files.items():
            by_file.setdefault(path, []).append((test_id, lines))
    limit = max(1, int(MAX_SHARE * len(run.tests)))
    eligible = []
    for path in sorted(by_file):
        facts = graph.files.get(path)
        if facts is None or TEST_PATH.search(path):
            continue
        for d in facts.definitions:
            if d.kind not in FUNCTION_KINDS or d.end_line <= d.line:
                continue
            body = range(d.line + 1, d.end_line + 1)
            tests = sorted(t for t, lines in by_file[path] if any(n in lines for n in body))
            if 1 <= len(tests) <= limit:
                eligible.append(
                    {
                        "path": path,
                        "line": d.line,
                        "end_line": d.end_line,
                        "name": d.name,
                        "qualified": d.qualified,
                        "tests": tests,
                    }
                )
    chosen = random.Random(seed).sample(eligible, min(MAX_FUNCTIONS, len(eligible)))
    chosen.sort(key=lambda f: (f["path"], f["line"]))
    sampling = {
        "seed": seed,
        "max_share": MAX_SHARE,
        "max_tests": limit,
        "eligible": len(eligible),
        "sampled": len(chosen),
        "tests_run": len(run.tests),
    }
    return chosen, sampling


def build(name: str, bench_dir: Path, oracles: Path, pythons: dict[str, str], fresh: bool) -> None:
    root = (bench_dir / name).resolve()
    raw = oracles / "raw" / f"{name}.json"
    if raw.exists() and not fresh:
        data = json.loads(raw.read_text())
        run = Run(tests=data["tests"])
        for test_id, files in data["lines"].items():
            for path, lines in files.items():
                run.add(test_id, path, set(lines))
    else:
        started = time.perf_counter()
        run = collect(name, root, pythons)
        _log(f"{name}: {len(run.tests)} tests covered in {time.perf_counter() - started:.0f} s")
        raw.parent.mkdir(parents=True, exist_ok=True)
        lines = {t: {p: sorted(s) for p, s in f.items()} for t, f in run.lines.items()}
        raw.write_text(json.dumps({"tests": run.tests, "lines": lines}))
    functions, sampling = sample_functions(root, run)
    spec = {r["name"]: r for r in json.loads(REPOS_JSON.read_text())}.get(name, {})
    oracle = {
        "repo": name,
        "language": RUNNERS[name]["language"],
        "root": str(root),
        "revision": spec.get("revision"),
        "tests": dict(sorted(run.tests.items())),
        "functions": functions,
        "sampling": sampling,
    }
    (oracles / f"{name}.json").write_text(json.dumps(oracle, indent=1))
    _log(f"{name}: {sampling}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    get = sub.add_parser("checkout")
    get.add_argument("name")
    get.add_argument("git_dir")
    get.add_argument("bench_dir", type=Path)
    make = sub.add_parser("build")
    make.add_argument("bench_dir", type=Path)
    make.add_argument("--repos", default=DEFAULT_REPOS)
    make.add_argument("--oracles")
    make.add_argument("--python", action="append", default=[], metavar="NAME=PYTHON")
    make.add_argument("--fresh", action="store_true")
    rate = sub.add_parser("score")
    rate.add_argument("--oracles")
    rate.add_argument("--repos", default=DEFAULT_REPOS)
    rate.add_argument("--out", type=Path, default=DEFAULT_OUT)
    rate.add_argument("--misses", type=Path, help="write each function's missed tests here")
    args = parser.parse_args(argv)
    if args.command == "checkout":
        print(checkout(args.name, args.git_dir, args.bench_dir))
        return 0
    oracles = _oracles_dir(args.oracles)
    names = [n for n in args.repos.split(",") if n]
    if args.command == "build":
        pythons = dict(p.split("=", 1) for p in args.python)
        for name in names:
            build(name, args.bench_dir, oracles, pythons, args.fresh)
        return 0
    results: dict[str, dict] = {}
    missed: dict[str, list] = {}
    for name in names:
        oracle = json.loads((oracles / f"{name}.json").read_text())
        results[name] = score_repository(oracle)
        missed[name] = results[name]["_misses"]
        _log(f"{name}: {json.dumps(results[name]['micro'])}")
    report = {
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "repositories": results,
        "total": total(results.values()),
    }
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    if args.misses:
        args.misses.write_text(json.dumps(missed, indent=1) + "\n")
    _log(f"total: {json.dumps(report['total'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
