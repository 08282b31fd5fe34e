"""Cross-repository references at organisation scale (issue 45, deliver 5): the links table
and the cross-repository edges of 10,000 repositories, the time to bring them current after
one repository changes, and the latency of ``seek corpus refs`` across every repository at
1M and 10M chunks, cold from the CLI and served.

    python -m bench.org.scale [--work /tmp/org-scale] [--phases base,build,links,index,refs,serve]
        [--sizes 1m,10m] [--dependents 100,10] [--out bench/results/org_scale.json]

The corpora are synthetic, built from real rows (:mod:`bench.org.scale_base`: urllib3,
requests, idna and charset_normalizer indexed by seek) by :mod:`bench.org.scale_synth`: the
library urllib3, ``D`` copies of requests importing it, and filler repositories of ~1,000
chunks that import nothing of it, until the corpus holds the size's chunks. Phases:

- **base**: the real corpus (seek's corpus run, in process).
- **build**: each size's corpus, with the first of ``--dependents`` dependents.
- **links**: the links table's rows and bytes on disk, the cross-repository edges (import
  rows whose name another repository provides), and ``keep_current`` of one repository
  whose files changed (its marker removed, as a run does), median of 5.
- **index**: a real ``seek corpus index URI requests-0000 --folder F --in-process`` after one
  file of that repository changed, in corpora of 10 and 100 repositories (and more with
  ``--index-repos``), cold processes, median of 3; then the changed line is found by
  ``corpus refs`` (the edges are current).
- **refs**: ``seek corpus refs URI src/urllib3/util/retry.py:LINE --repo urllib3 --json -n
  1000`` (class Retry) in a fresh process per ask, wall time, median of 5; then, in process,
  where the time goes.
- **serve**: the same through ``seek serve --corpus URI`` on 127.0.0.1 (HTTP POST
  ``/v1/refs``): the first answer (the joint graph assembled) and p50/p95 of 30 more.

``refs`` and ``serve`` run for each ``--dependents`` count: the corpus's dependents past
the count are turned into repositories importing nothing of the library (their graph and
link rows replaced) between counts.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import REPO_ROOT, RESULTS, loadavg, run_record
from bench.org.scale_base import LIBRARY, build_base, read_real
from bench.org.scale_synth import Plan, dependent_name, set_dependents, write_corpus

DEFAULT_OUT = RESULTS / "org_scale.json"
DEFAULT_WORK = Path("/tmp/org-scale")
SIZES = {"1m": (1_000_000, 0), "10m": (10_000_000, 10_000)}
"""Chunks, and repositories at least: the 10M corpus holds 10,000 repositories, the links
table's size of record."""
SUBJECT = "src/urllib3/util/retry.py"
FLOOR = "import seek.cli.corpus_cmd; from seek.store.lance import package; package()"
"""What any cold corpus command imports before it reads a row."""
SUBJECT_LINE = re.compile(r"^class Retry\b")


def log(message: str) -> None:
    print(time.strftime("%H:%M:%S"), message, file=sys.stderr, flush=True)


def seek_env() -> dict[str, str]:
    src = str(REPO_ROOT / "src")
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": src + (os.pathsep + path if path else ""),
            "OPENBLAS_NUM_THREADS": "1"}  # fmt: skip


def seek_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "seek", *args]


def plan_for(real: dict, chunks: int, dependents: int, filler_chunks: int = 1000) -> Plan:
    """Fillers enough for ``chunks`` chunks with the library and ``dependents`` copies."""
    from bench.org.scale_synth import templates

    kinds = templates(real, Plan(0, 0, filler_chunks))
    fill = [kinds[k].chunk_count for k in kinds if k.startswith("fill-")]
    held = kinds[LIBRARY].chunk_count + dependents * kinds["requests"].chunk_count
    return Plan(dependents, max(0, math.ceil((chunks - held) / statistics.fmean(fill))),
                filler_chunks)  # fmt: skip


def subject_line(corpus: Path) -> int:
    """The line of ``class Retry`` in the library, from its stored chunks."""
    from seek.corpus.graph import load_repo_graph
    from seek.corpus.location import CorpusLocation

    graph = load_repo_graph(CorpusLocation(str(corpus)), LIBRARY)
    assert graph is not None
    for d in graph.files[SUBJECT].definitions:
        if d.name == "Retry" and d.kind == "class":
            return d.line
    raise SystemExit(f"no class Retry in {SUBJECT}")


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


CPU: list[float] = []
"""The CPU seconds (user + system) of each process :func:`timed` ran, in order: a loaded
machine inflates them less than wall time."""


def timed(command: list[str], cwd: Path | None = None) -> tuple[float, str]:
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=seek_env(), cwd=cwd)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    if done.returncode:
        raise RuntimeError(f"{command} failed: {done.stderr[-2000:]}")
    return seconds, done.stdout


# -- phases ------------------------------------------------------------------------------
def build(work: Path, real: dict, size: str, dependents: int) -> dict[str, Any]:
    folder = work / size
    shutil.rmtree(folder, ignore_errors=True)
    chunks, at_least = SIZES[size]
    plan = plan_for(real, chunks, dependents)
    plan.fillers = max(plan.fillers, at_least - 1 - dependents)
    log(f"{size}: {plan}")
    out = write_corpus(folder, real, plan, real[LIBRARY].manifest["model"])
    out["plan"] = {"dependents": plan.dependents, "fillers": plan.fillers,
                   "filler_chunks": plan.filler_chunks}  # fmt: skip
    out["bytes_on_disk"] = {p.name: du(p) for p in folder.rglob("*.lance") if p.is_dir()}
    (folder / "plan.json").write_text(json.dumps(out["plan"]))
    log(f"{size}: {out}")
    return out


def links_phase(work: Path, size: str) -> dict[str, Any]:
    """Rows, bytes and edges of the links table; keep_current of one changed repository."""
    import pyarrow.compute as pc

    from seek.corpus.location import CorpusLocation
    from seek.corpus.provides import Provided
    from seek.store.corpus_graph import CorpusGraph
    from seek.store.corpus_links import IMPORTS, LINKS_TABLE, PROVIDES, CorpusLinks
    from seek.store.corpus_table import CorpusTable

    folder = work / size
    table = CorpusTable(CorpusLocation(str(folder)))
    links, graph = CorpusLinks(table), CorpusGraph(table)
    data = links.open().to_arrow()
    kinds = data.column("kind")
    provided = data.filter(pc.equal(kinds, PROVIDES))
    imports = data.filter(pc.equal(kinds, IMPORTS))
    # an edge: a file's import of a name another repository provides (found by name when
    # a question is asked; nothing stores it)
    owner: dict[tuple[str, str], set[str]] = {}
    for eco, name, repo in zip(*(provided.column(c).to_pylist()
                                 for c in ("ecosystem", "name", "repo")), strict=True):  # fmt: skip
        owner.setdefault((eco, name), set()).add(repo)
    edges = repo_edges = 0
    pairs = set()
    for eco, name, repo in zip(*(imports.column(c).to_pylist()
                                 for c in ("ecosystem", "name", "repo")), strict=True):  # fmt: skip
        others = owner.get((eco, name), set()) - {repo}
        if others:
            edges += 1
            pairs.update((repo, o) for o in others)
    repo_edges = len(pairs)
    lance = next(p for p in folder.rglob(f"{LINKS_TABLE}.lance") if p.is_dir())
    out: dict[str, Any] = {
        "repos": len(set(data.column("repo").to_pylist())),
        "rows": data.num_rows, "provides_rows": provided.num_rows,
        "imports_rows": imports.num_rows, "bytes_on_disk": du(lance),
        "cross_repo_edges_file_to_repo": edges, "cross_repo_edges_repo_to_repo": repo_edges,
    }  # fmt: skip
    # one repository's files changed: its marker goes (CorpusIndexer._prepare_repo), and at
    # the end of the run keep_current writes its rows again from its graph rows
    repo = dependent_name(0)
    stored = links.of_repo(repo, PROVIDES)
    now = [Provided(r[2], r[3], r[5], r[4]) for r in stored]
    times = []
    for _ in range(5):
        links.unmark(repo)
        started = time.perf_counter()
        from seek.corpus.links import keep_current

        assert keep_current(links, graph, repo, now)
        times.append(time.perf_counter() - started)
    out["keep_current_one_repo_s"] = {"median": round(statistics.median(times), 3),
                                      "all": [round(t, 3) for t in times]}  # fmt: skip
    started = time.perf_counter()
    links.finish()
    out["links_finish_s"] = round(time.perf_counter() - started, 3)
    # the one step of a corpus run that reads the whole corpus: each table read whole before
    # writing (CorpusIndexer._check_tables), one column of every row
    for name, store in (("chunks", table), ("graph", graph), ("links", links)):
        started = time.perf_counter()
        assert not store.problem()
        out.setdefault("run_table_checks_s", {})[name] = round(time.perf_counter() - started, 2)
    log(f"links {size}: {out}")
    return out


def index_phase(work: Path, real: dict, sizes: list[int], runs: int = 3) -> dict[str, Any]:
    """A real corpus run of one changed repository, in corpora of ``sizes`` repositories."""
    from bench.org.scale_base import as_repository
    from seek.corpus.location import CorpusLocation
    from seek.corpus.org import cross_lookup

    out: dict[str, Any] = {}
    line = 0
    for n in sizes:
        folder = work / f"index-{n}"
        shutil.rmtree(folder, ignore_errors=True)
        dependents = max(1, (n - 1) // 2)
        plan = Plan(dependents, n - 1 - dependents, filler_chunks=300, full=True)
        repo = dependent_name(0)
        checkout = work / "checkouts" / f"{repo}-{n}"
        shutil.rmtree(checkout, ignore_errors=True)
        # the base's checkout copied with its files' times, so the copied manifest's stamps
        # hold for every file but the one changed below
        shutil.copytree(work / "checkouts" / "requests", checkout)
        built = write_corpus(folder, real, plan, real[LIBRARY].manifest["model"],
                             sources={repo: str(checkout)})  # fmt: skip
        assert as_repository  # the base's checkouts are laid out by it
        walls, found, cpus = [], [], []
        for run in range(runs):
            adapters = checkout / "src" / "requests" / "adapters.py"
            text = adapters.read_text()
            line = text.count("\n") + 3
            adapters.write_text(text + f"\n\ndef org_scale_probe_{run}():\n"
                                f"    return Retry(total={run})\n")  # fmt: skip
            seconds, stdout = timed(seek_command("corpus", "index", str(folder), repo,
                                                 "--folder", str(checkout), "--in-process",
                                                 "--json"))  # fmt: skip
            walls.append(seconds)
            cpus.append(CPU[-1])
            report = json.loads(stdout)
            result = cross_lookup(CorpusLocation(str(folder)), LIBRARY, "refs",
                                  f"{SUBJECT}:{subject_line(folder)}", 1000)  # fmt: skip
            found.append(any(r["repo"] == repo and r["line"] == line + 1 for r in result.rows))
            log(
                f"index {n}: {seconds:.2f} s, embedded {report['repos'][0]['embedded']}, "
                f"new use found: {found[-1]}"
            )
        out[str(n)] = {"repos": built["repos"], "chunks": built["chunks"],
                       "chunk_rows": built["chunk_rows"], "dependents": dependents,
                       "cold_cli_s": {"median": round(statistics.median(walls), 2),
                                      "all": [round(w, 2) for w in walls]},
                       "cold_cli_cpu_s": round(statistics.median(cpus), 2),
                       "new_use_found_after_run": found, "loadavg": loadavg()}  # fmt: skip
        out[str(n)]["where"] = index_where(folder, repo, checkout)
    return out


def index_where(folder: Path, repo: str, checkout: Path) -> dict[str, float]:
    """One more run of the changed repository in this process, timed by step."""
    adapters = checkout / "src" / "requests" / "adapters.py"
    adapters.write_text(adapters.read_text() + "\n\ndef org_scale_where():\n    return Retry()\n")
    done = subprocess.run([sys.executable, "-m", "bench.org.scale", "--index-where",
                           str(folder), repo, str(checkout)], capture_output=True, text=True,
                          env=seek_env(), cwd=REPO_ROOT)  # fmt: skip
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def refs_phase(work: Path, size: str, runs: int = 5) -> dict[str, Any]:
    """``seek corpus refs`` across every repository from cold processes, then where the
    time of one goes."""
    folder = work / size
    target = f"{SUBJECT}:{subject_line(folder)}"
    walls, rows, floor, cpu, floor_cpu = [], set(), [], [], []
    for _ in range(runs):
        # what any cold corpus command pays before it reads anything
        floor.append(timed([sys.executable, "-c", FLOOR])[0])
        floor_cpu.append(CPU[-1])
        seconds, stdout = timed(seek_command("corpus", "refs", str(folder), target, "--repo",
                                             LIBRARY, "--json", "-n", "1000"))  # fmt: skip
        walls.append(seconds)
        cpu.append(CPU[-1])
        answer = json.loads(stdout)
        rows.add((len(answer["rows"]), len({r["repo"] for r in answer["rows"]}),
                  sum(1 for r in answer["rows"] if r.get("text"))))  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "bench.org.scale", "--refs-where", str(folder),
                           target], capture_output=True, text=True, env=seek_env(),
                          cwd=REPO_ROOT)  # fmt: skip
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    ((count, repos, texts),) = rows
    out = {"target": target, "rows": count, "repos_in_answer": repos, "rows_with_text": texts,
           "cold_cli_s": {"median": round(statistics.median(walls), 2),
                          "all": [round(w, 2) for w in walls]},
           "cold_cli_cpu_s": round(statistics.median(cpu), 2),
           "cold_imports_only_s": round(statistics.median(floor), 2),
           "cold_imports_only_cpu_s": round(statistics.median(floor_cpu), 2),
           "where": json.loads(done.stdout.strip().splitlines()[-1]),
           "loadavg": loadavg()}  # fmt: skip
    log(f"refs {size}: {out}")
    return out


def serve_phase(work: Path, size: str, asks: int = 50) -> dict[str, Any]:
    """``seek serve --corpus`` on 127.0.0.1: the first refs answer, then ``asks`` more."""
    import urllib.request

    folder = work / size
    file, line = SUBJECT, subject_line(folder)
    errors = work / f"serve-{size}.log"
    env = {**seek_env(), "SEEK_HOME": str(work / "home-serve")}
    started = time.perf_counter()
    with errors.open("w") as sink:
        server = subprocess.Popen(seek_command("serve", "--corpus", str(folder), "--port", "0",
                                               "--no-token"), stdout=subprocess.DEVNULL,
                                  stderr=sink, env=env, cwd=work)  # fmt: skip
    try:
        port = None
        while port is None:
            if server.poll() is not None:
                raise RuntimeError(errors.read_text()[-2000:])
            found = re.search(r"http://127\.0\.0\.1:(\d+)", errors.read_text())
            port = int(found.group(1)) if found else None
            time.sleep(0.1)
        ready = time.perf_counter() - started
        body = json.dumps({"repo": LIBRARY, "file": file, "line": line, "limit": 1000}).encode()

        def ask() -> tuple[float, int]:
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/v1/refs", data=body,
                headers={"Content-Type": "application/json"})  # fmt: skip
            began = time.perf_counter()
            with urllib.request.urlopen(request, timeout=120) as response:
                answer = json.loads(response.read())
            return (time.perf_counter() - began) * 1000, len(answer["rows"])

        first, rows = ask()
        times = sorted(ask()[0] for _ in range(asks))
    finally:
        server.terminate()
        server.wait(timeout=30)
    out = {"server_start_s": round(ready, 2), "first_ms": round(first, 1), "rows": rows,
           "asks": asks, "p50_ms": round(statistics.median(times), 1),
           "p95_ms": round(times[int(0.95 * (len(times) - 1))], 1),
           "max_ms": round(times[-1], 1), "loadavg": loadavg()}  # fmt: skip
    log(f"serve {size}: {out}")
    return out


def manifests_read_s(work: Path, size: str) -> float:
    """What a server's snapshot of the repositories costs (every manifest read: the stamps
    its kept graphs are checked against, at most every few seconds)."""
    from seek.corpus.serve import CorpusService

    service = CorpusService.__new__(CorpusService)
    from seek.corpus.location import CorpusLocation

    service.location = CorpusLocation(str(work / size))
    started = time.perf_counter()
    service._read_repos()
    return round(time.perf_counter() - started, 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.org.scale",
                                     description=__doc__.split("\n")[0])  # fmt: skip
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    parser.add_argument("--phases", default="base,build,links,index,refs,serve")
    parser.add_argument("--sizes", default="1m,10m")
    parser.add_argument("--dependents", default="100,10")
    parser.add_argument("--index-repos", default="10,100")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--refs-where", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--index-where", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.refs_where or args.index_where:
        from bench.org.scale_where import index_where_process, refs_where_process

        where = refs_where_process(*args.refs_where) if args.refs_where else None
        print(json.dumps(where or index_where_process(*args.index_where)))
        return 0
    os.environ["SEEK_HOME"] = str(args.work / "home")  # the base's, for every seek process
    phases = [p for p in args.phases.split(",") if p]
    sizes = [s for s in args.sizes.split(",") if s]
    counts = [int(d) for d in args.dependents.split(",") if d]
    results = json.loads(args.out.read_text()) if args.out.is_file() else {}
    results.update(run_record())  # date, commit, machine
    results["loadavg_start"] = loadavg()  # the machine is shared: each entry has its own
    results["command"] = "python -m bench.org.scale " + " ".join(argv or sys.argv[1:])
    real = read_real(build_base(args.work))
    base = {n: {"chunks": r.chunk_count, "chunk_rows": r.chunks.num_rows, "files": len(r.graph),
                "link_rows": len(r.links)} for n, r in real.items()}  # fmt: skip
    results["base"] = base

    def save() -> None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1) + "\n")

    for size in sizes:
        entry = results.setdefault("sizes", {}).setdefault(size, {})
        if "build" in phases:
            entry["build"] = build(args.work, real, size, counts[0])
            save()
        plan = json.loads((args.work / size / "plan.json").read_text())
        if "links" in phases:
            entry["links"] = links_phase(args.work, size)
            save()
        current = plan.get("current", plan["dependents"])
        for count in counts:
            if count > current:
                parser.error(f"{size} has {current} dependents now: build it again")
            if count < current:
                seconds = set_dependents(args.work / size, real,
                                         Plan(current, plan["fillers"]), count)  # fmt: skip
                log(f"{size}: dependents {current} -> {count} in {seconds:.1f} s")
                current = plan["current"] = count
                (args.work / size / "plan.json").write_text(json.dumps(plan))
            per = entry.setdefault(f"dependents_{count}", {})
            if "refs" in phases:
                per["refs"] = refs_phase(args.work, size, args.runs)
                save()
            if "serve" in phases:
                per["serve"] = serve_phase(args.work, size)
                per["serve"]["manifests_read_s"] = manifests_read_s(args.work, size)
                save()
    if "index" in phases:
        sizes_n = [int(n) for n in args.index_repos.split(",") if n]
        results["index"] = index_phase(args.work, real, sizes_n, min(args.runs, 3))
        save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
