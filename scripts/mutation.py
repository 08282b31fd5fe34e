"""Mutation testing of the modules that carry seek's promises, one module at a time, in
bounded time (mutmut 3; the habit asked for by issue 19).

Usage (from the repository root, with ``pip install -e '.[test,mutation]'``)::

    .venv/bin/python scripts/mutation.py                     # every module, 20 min each
    .venv/bin/python scripts/mutation.py text fusion --budget 600
    .venv/bin/python scripts/mutation.py --list              # modules and their tests
    .venv/bin/python scripts/mutation.py store --resume      # go on where a run stopped
    .venv/bin/python scripts/mutation.py store --resume --rejudge   # ... and after new tests

Each module is mutated in a scratch copy of the project (``--work``, default
``/tmp/seek-mutation/<module>``) whose ``pyproject.toml`` gets that module's ``only_mutate``
and test selection: only the fast, in-process test files that exercise it, so a mutant is
judged in seconds (mutants are run in forked workers; tests that drive seek in a subprocess
cannot see a mutant and are left out). mutmut maps each test to the functions it runs and
judges a mutant by those tests only, fastest first, stopping at the first failure. One
worker (``--max-children 1``, the default) keeps the machine usable. When the budget runs
out the run stops and the mutants not yet checked are reported as such, never counted as
killed; ``--resume`` goes on from there (``--rejudge``: the survivors are judged again too,
against the tests added since). Changing a module's test selection below makes mutmut judge
all its mutants again.

The score is killed / (killed + survived + no tests + timeout), where a mutant that no
selected test executes ("no tests") counts as surviving. Results go to
``bench/results/mutation.json`` (merged with earlier modules' results) and each module's
surviving mutants, as diffs, to ``bench/results/mutation/<module>.txt``. Equivalent mutants
found by reading those diffs are listed in bench/mutation-survivors.md with the reason.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "mutation.json"
SURVIVORS = ROOT / "bench" / "results" / "mutation"

# module name -> (globs of files to mutate, the test files that exercise them in-process)
MODULES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "text": (("src/seek/text.py",), ("tests/test_text.py", "tests/test_documented_values.py")),
    "fusion": (("src/seek/retrieve/fusion.py",), ("tests/test_signals.py",)),
    "signals": (("src/seek/retrieve/signals/*",), ("tests/test_signals.py",)),
    "chunk": (("src/seek/chunk/*",), ("tests/test_chunking.py",)),
    "scan": (
        ("src/seek/scan/*",),
        (
            "tests/test_scan.py",
            "tests/test_allowlist.py",
            "tests/test_read_beneath.py",
            "tests/test_context_symlinks.py",
            "tests/test_documented_values.py",
        ),
    ),
    "embed_http": (
        ("src/seek/embed/http.py",),
        # the end-to-end search through the server (3 s) would be re-run for every mutant
        (
            "tests/test_embed_http.py",
            "--deselect",
            "tests/test_embed_http.py::test_index_and_search_through_the_server",
        ),
    ),
    "store": (
        # the per-workspace index store; corpus_table.py (issue 17's corpus) is its own module
        (
            "src/seek/store/__init__.py",
            "src/seek/store/location.py",
            "src/seek/store/lock.py",
            "src/seek/store/manifest.py",
            "src/seek/store/protocol.py",
            "src/seek/store/table.py",
        ),
        (
            "tests/test_store.py",
            "tests/test_store_upkeep.py",
            "tests/test_indexer.py",
            "tests/test_indexer_rules.py",
        ),
    ),
    "indexer": (
        ("src/seek/index/indexer.py", "src/seek/index/rules.py"),
        (
            "tests/test_indexer.py",
            "tests/test_indexer_rules.py",
            "tests/test_indexer_upkeep.py",
            "tests/test_index_damage.py",
            "tests/test_store.py",
            "--deselect",
            "tests/test_index_damage.py::test_cli_status_names_the_damage_and_index_repairs_it",
        ),
    ),
    "guard": (
        # the request checks in front of every route of `seek serve` (Host, Origin, token)
        ("src/seek/serving/guard.py",),
        (
            "tests/test_server_hardening.py",
            "tests/test_server.py",
            "tests/test_serve_requests.py",
            "tests/test_serve_errors.py",
            "-k",
            "not seek_serve_with and not refuses_to_bind and not status_names",
        ),
    ),
    "connections": (
        # connection cap, header read timeout and rate-limited logs of `seek serve`
        ("src/seek/serving/connections.py",),
        (
            "tests/test_connection_limits.py",
            "tests/test_slow_clients.py",
            # runs `seek serve` in a subprocess, which cannot see a mutant
            "--deselect",
            "tests/test_slow_clients.py::test_slow_clients_do_not_starve_normal_requests",
        ),
    ),
    "server": (
        ("src/seek/web/api.py",),
        # the tests that start `seek` in a subprocess cannot see a mutant: left out
        (
            "tests/test_server.py",
            "tests/test_serve_errors.py",
            "tests/test_serve_requests.py",
            "tests/test_server_hardening.py",
            "-k",
            "not seek_serve_with and not refuses_to_bind and not status_names",
        ),
    ),
    "search_cache": (
        # the search cache's files, its key and its crash safety (temporary folders)
        ("src/seek/retrieve/search_cache.py",),
        (
            "tests/test_search_cache.py",
            # runs `seek` in a subprocess, which cannot see a mutant
            "--deselect",
            "tests/test_search_cache.py::test_cli_search_on_an_unchanged_index_stays_lean",
        ),
    ),
    "lock": (
        # the writer lock alone (also part of "store", whose run takes far longer)
        ("src/seek/store/lock.py",),
        ("tests/test_store.py", "tests/test_store_upkeep.py", "tests/test_search.py"),
    ),
    "install": (
        # the text edits behind `seek install` / `seek uninstall`
        ("src/seek/install/edit.py", "src/seek/install/jsonc.py"),
        (
            "tests/test_install.py",
            "--deselect",
            "tests/test_install.py::test_the_real_entry_point_installs_for_claude",
        ),
    ),
    "trust": (
        # which workspace settings apply before the user trusts the file (issue 27)
        ("src/seek/settings/trust.py",),
        ("tests/test_trust.py", "tests/test_settings.py"),
    ),
    "redact": (
        # credentials cut from every error and log (issue 27)
        ("src/seek/redact.py",),
        ("tests/test_redact.py",),
    ),
    "faults": (
        # what a write fault is and how it is named (issue 31; issue 47). The campaign's
        # server, watch, HTTP and MCP cases take seconds each and add no caller of faults.py.
        ("src/seek/store/faults.py",),
        (
            "tests/test_faults_causes.py",
            "tests/test_faults.py",
            "-k",
            "not server and not slow_disk and not watch and not http and not mcp",
        ),
    ),
    "room": (
        # is there room for this run: the estimate and the refusal (issue 31; issue 47).
        # Every index run calls the estimate; the runs of tests/test_room.py measure it.
        ("src/seek/index/room.py",),
        ("tests/test_room.py",),
    ),
    "graph_lookup": (
        # the code graph's queries: def, refs, callers, callees, outline, map (issue 47)
        ("src/seek/graph/lookup.py",),
        (
            "tests/test_graph.py",
            "tests/test_graph_tools.py",
            # these run `seek` in a subprocess, which cannot see a mutant
            "-k",
            "not cli_prints and not mcp_tools and not http_routes",
        ),
    ),
    "graph_binding": (
        # which definitions a use can mean: scopes, imports, members (issue 47)
        ("src/seek/graph/binding.py",),
        (
            "tests/test_graph.py",
            "tests/test_graph_tools.py",
            "-k",
            "not cli_prints and not mcp_tools and not http_routes",
        ),
    ),
    "code_graph": (
        # the graph tools behind the facade: input checks, rows, limits, the kept graph
        ("src/seek/workspace/code_graph.py",),
        (
            "tests/test_graph_tools.py",
            "tests/test_graph_damage.py",
            "tests/test_graph_index.py",
            "tests/test_corpus_graph.py",
            "-k",
            "not cli_prints and not mcp_tools and not http_routes and not cli_answers_after",
        ),
    ),
    "corpus_graph": (
        # `seek corpus def|refs|callers|callees|outline|map` and a server's kept graphs
        ("src/seek/corpus/graph.py",),
        (
            "tests/test_corpus_graph.py",
            "tests/test_corpus_serve_graph.py",
            "--deselect",
            "tests/test_corpus_serve_graph.py::test_an_unreadable_graph_is_one_line_from_the_cli_and_a_json_error_from_the_server",
        ),
    ),
}

# mutmut's exit codes (mutmut/stats.py) grouped for the score.
KILLED = {1: "killed", 3: "killed", 37: "killed", 36: "timeout", 24: "timeout", -24: "timeout",
          152: "timeout", 255: "timeout"}  # fmt: skip
SURVIVED = {0: "survived", 5: "no tests", 33: "no tests"}


def prepare(work: Path, name: str) -> None:
    """A scratch copy of the project with this module's mutmut settings."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    shutil.copytree(ROOT / "src", work / "src", ignore=shutil.ignore_patterns("__pycache__"))
    copy_tests(work, name)
    globs, tests = MODULES[name]
    config = "\n".join(
        [
            "",
            "[tool.mutmut]",
            'source_paths = ["src"]',
            f"only_mutate = {json.dumps(list(globs))}",
            f"pytest_add_cli_args_test_selection = {json.dumps(list(tests))}",
            # forkserver: LanceDB's runtime threads do not survive a fork of a process that
            # has used them; workers fork from a process that only collected the tests.
            'process_isolation = "forkserver"',
            "timeout_multiplier = 5.0",
            "timeout_constant = 5.0",
            "",
        ]
    )
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    (work / "pyproject.toml").write_text(pyproject + config, encoding="utf-8")


# Importing LanceDB takes seconds; the fork server imports it once instead of every mutant's
# process. Only imported: its runtime is reset in a forked child (lancedb warns that fork
# support is experimental; a deadlock would show as a timeout, and there were none).
PRELOAD = "\nimport lancedb  # noqa: E402,F401  (scripts/mutation.py: preloaded before forks)\n"


# mutmut's trampoline gives a mutated function a (*args, **kwargs) signature. uvicorn probes
# every app for a factory by calling it without arguments: the real RequestGuard.__call__
# raises TypeError, a mutated one returns a coroutine, which uvicorn then serves as the app
# (every request a 500). In the scratch copy only, apps reach uvicorn inside a plain ASGI
# function, which the probe cannot mistake.
PLAIN_ASGI = """
import uvicorn.config as _uvicorn_config  # noqa: E402  (scripts/mutation.py)

_uvicorn_init = _uvicorn_config.Config.__init__


def _init_with_a_plain_app(self, app, *args, **kwargs):
    if not isinstance(app, str):
        inner = app

        async def app(scope, receive, send):
            await inner(scope, receive, send)

    _uvicorn_init(self, app, *args, **kwargs)


_uvicorn_config.Config.__init__ = _init_with_a_plain_app
"""
CONFTEST_EXTRA = {"guard": PLAIN_ASGI}


def copy_tests(work: Path, name: str) -> None:
    if (work / "tests").exists():
        shutil.rmtree(work / "tests")
    shutil.copytree(ROOT / "tests", work / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    with (work / "tests" / "conftest.py").open("a", encoding="utf-8") as conftest:
        conftest.write(PRELOAD + CONFTEST_EXTRA.get(name, ""))


def refresh_tests(work: Path, name: str, rejudge: bool) -> int:
    """Copy the current tests into an earlier run's scratch copy; with ``rejudge``, mark its
    survivors for judging again (killed verdicts stand: tests are added, not taken away).
    Returns how many were marked."""
    copy_tests(work, name)
    if not rejudge:
        return 0
    again = 0
    for meta in (work / "mutants").rglob("*.py.meta"):
        data = json.loads(meta.read_text(encoding="utf-8"))
        codes = data.get("exit_code_by_key", {})
        for mutant, code in codes.items():
            if code in SURVIVED:
                codes[mutant] = None
                again += 1
        meta.write_text(json.dumps(data), encoding="utf-8")
    return again


def run_mutmut(work: Path, budget_s: float, children: int = 1) -> tuple[bool, float]:
    """Run mutmut with ``children`` workers until done or out of budget; (finished, seconds)."""
    mutmut = Path(sys.executable).with_name("mutmut")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.monotonic()
    log = (work / "mutmut.log").open("a")
    proc = subprocess.Popen(
        [str(mutmut), "run", "--max-children", str(children)],
        cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        proc.wait(timeout=budget_s)
        finished = proc.returncode == 0
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        finished = False
    finally:
        log.close()
    return finished, time.monotonic() - started


def collect(work: Path, name: str) -> tuple[Counter[str], list[str]]:
    """Counts by status and the surviving mutants' names, from mutmut's .meta files."""
    counts: Counter[str] = Counter()
    survivors: list[str] = []
    for meta in sorted((work / "mutants").rglob("*.py.meta")):
        data = json.loads(meta.read_text(encoding="utf-8"))
        for mutant, code in sorted(data.get("exit_code_by_key", {}).items()):
            status = (
                KILLED.get(code)
                or SURVIVED.get(code)
                or ("not checked" if code is None else f"exit {code}")
            )
            counts[status] += 1
            if code in SURVIVED:
                survivors.append(mutant)
    return counts, survivors


def score(counts: Counter[str]) -> float | None:
    judged = sum(v for k, v in counts.items() if k != "not checked")
    killed = counts["killed"] + counts["timeout"]
    return None if not judged else killed / judged


_SHOW = """
import sys
from mutmut.__main__ import find_mutant, get_diff_for_mutant
from mutmut.stats import status_by_exit_code
for name in sys.argv[1:]:
    m = find_mutant(name)
    print(f"# {name}: {status_by_exit_code[m.exit_code_by_key[name]]}")
    print(get_diff_for_mutant(name, path=m.path))
"""


def diffs(work: Path, survivors: list[str]) -> str:
    """The surviving mutants as diffs (``mutmut show`` for each, in one process)."""
    if not survivors:
        return ""
    shown = subprocess.run(
        [sys.executable, "-c", _SHOW, *survivors],
        cwd=work, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    return shown.stdout if shown.returncode == 0 else shown.stdout + shown.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help=f"some of: {', '.join(MODULES)}")
    parser.add_argument("--budget", type=float, default=1200, help="seconds per module")
    parser.add_argument("--work", type=Path, default=Path("/tmp/seek-mutation"))
    parser.add_argument("--max-children", type=int, default=1, help="mutmut workers")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue an earlier run in --work: its unjudged mutants are judged (against "
        "the current tests), its verdicts stand",
    )
    parser.add_argument(
        "--rejudge",
        action="store_true",
        help="with --resume: judge the earlier run's survivors again too (after new tests)",
    )
    parser.add_argument(
        "--collect",
        action="store_true",
        help="run nothing: write the results of the runs already in --work",
    )
    parser.add_argument("--list", action="store_true", help="list modules and tests, then stop")
    args = parser.parse_args()
    unknown = set(args.modules) - set(MODULES)
    if unknown:
        parser.error(f"unknown modules: {', '.join(sorted(unknown))}")
    names = args.modules or list(MODULES)
    if args.list:
        for name in names:
            globs, tests = MODULES[name]
            print(f"{name}: {' '.join(globs)}  <-  {' '.join(tests)}")
        return 0
    SURVIVORS.mkdir(parents=True, exist_ok=True)
    for name in names:
        work = args.work / name
        seconds: float | None = None
        if args.collect:
            if not (work / "mutants").is_dir():
                parser.error(f"no run of {name} in {work}")
        elif args.resume and (work / "mutants").is_dir():
            again = refresh_tests(work, name, args.rejudge)
            print(f"{name}: {again} survivors to judge again", flush=True)
        else:
            prepare(work, name)
        if not args.collect:
            _, seconds = run_mutmut(work, args.budget, args.max_children)
        counts, survivors = collect(work, name)
        value = score(counts)
        (SURVIVORS / f"{name}.txt").write_text(diffs(work, survivors), encoding="utf-8")
        # Read again just before writing: runs of other modules may have written meanwhile.
        results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        earlier = results.get(name, {})
        results[name] = {
            "files": list(MODULES[name][0]),
            "tests": list(MODULES[name][1]),
            "counts": dict(sorted(counts.items())),
            "score": None if value is None else round(value, 3),
            "finished": not counts["not checked"],
            "seconds": earlier.get("seconds") if seconds is None else round(seconds),
            "date": time.strftime("%Y-%m-%d"),
        }
        RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        seconds = seconds or 0.0
        finished = results[name]["finished"]
        shown = "-" if value is None else f"{value:.1%}"
        state = "" if finished else f" (stopped at the budget: {counts['not checked']} unchecked)"
        print(f"{name:<11} {shown:>6}  {dict(counts)}  {seconds:.0f} s{state}", flush=True)
        tail = (work / "mutmut.log").read_text(errors="replace")[-600:]
        if not counts:
            print(re.sub(r"\s+", " ", tail), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
