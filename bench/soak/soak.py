"""Soak: does a long-running `seek serve` / `seek mcp` keep its memory, files and threads?

    python -m bench.soak [--bench-dir BENCH_DIR] [--repos flask,gin,express]
                         [--requests 100000] [--mcp-calls 20000] [--every 1000]

Each workspace is copied into a temporary folder (the soak edits files; the checkouts stay
untouched) and indexed with `seek index`. Then, on loopback only:

1. **serve**: one `seek serve` process serving every workspace; ``--clients`` threads send
   distinct questions (bench/soak/soak_questions.py) as 15 searches : 4 contexts : 1 status in
   every 20 requests, spread over the workspaces, with ``k`` and ``focus`` varied.
2. **mcp**: one `seek mcp` process driven through the MCP SDK's own stdio client with the
   same mix of ``search`` / ``context`` / ``status`` tool calls.

Every ``--edit-every`` requests one file of one workspace is edited (a small function with a
fresh name replaces the previous one, so the corpus keeps its size) and the soak searches
that name until the server finds it: the index really updates under load. Every ``--every``
requests it samples the server's resident memory (VmRSS), open file descriptors and threads
from /proc. Results go to ``--out`` (JSON per run, a PNG plot) and a verdict against the
targets (bench/soak/soak_report.py) is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import anyio
import httpx

from bench.common import (
    BENCH_DIR_HELP,
    REPOS_JSON,
    RESULTS,
    SERVE_AUTH,
    SERVE_TOKEN,
    free_port,
    resolve_bench_dir,
)
from bench.soak.soak_questions import QuestionSource
from bench.soak.soak_report import report, table, write_plot

MIX = ("search",) * 15 + ("context",) * 4 + ("status",)
EDIT_SEEN_S = 60
HIT_HEAD = re.compile(r"^\d+\. (.+?):(\d+)-(\d+) \(score", re.MULTILINE)
# The servers run as a user starts them: Python's -P keeps the working directory (a workspace,
# for `seek mcp`) off sys.path, where flask's own logging.py and typing.py would shadow the
# standard library's, as the `seek` console script does.
SEEK = [sys.executable, "-P", "-m", "seek"]


def proc_sample(pid: int) -> dict[str, float]:
    """Resident memory (MiB), open file descriptors and threads of a process, from /proc."""
    fields = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "RssAnon", "RssFile", "Threads"):
                fields[name] = int(value.split()[0])
    return {
        "rss_mib": fields["VmRSS"] / 1024,
        "anon_mib": fields.get("RssAnon", 0) / 1024,
        "file_mib": fields.get("RssFile", 0) / 1024,
        "threads": fields["Threads"],
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "lance_threads": lance_threads(pid),
    }


def lance_threads(pid: int) -> int:
    """Threads of LanceDB's tokio runtime (``lancedb-tokio-worker``, 15 characters in
    ``comm``): where every thread the servers added came from (issue 20)."""
    count = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm", encoding="utf-8") as comm:
                count += comm.read().startswith("lancedb-tokio")
        except OSError:  # the thread ended while the list was read
            continue
    return count


PROBES = {
    ".py": "\n\ndef {snake}():\n    return {n}\n",
    ".rb": "\n\ndef {snake}\n  {n}\nend\n",
    ".go": "\n\nfunc {camel}() int {{\n\treturn {n}\n}}\n",
    ".js": "\n\nfunction {camel}() {{\n  return {n};\n}}\n",
    ".ts": "\n\nexport function {camel}(): number {{\n  return {n};\n}}\n",
}


class Editor:
    """Edits one source file per workspace in turn: a small function with a fresh name each
    time replaces the previous one, so the index changes but does not grow."""

    def __init__(self, roots: list[Path]) -> None:
        from seek.retrieve.signals.penalties import is_non_code, path_penalty

        self.targets = []
        for root in roots:
            files = sorted(
                p for p in root.rglob("*")
                if p.suffix in PROBES and p.is_file()
                and path_penalty(p.relative_to(root).as_posix()) == 1.0  # not a test
                and not is_non_code(p.name)
            )  # fmt: skip
            if not files:
                sys.exit(f"{root} has no source file to edit ({', '.join(PROBES)})")
            files.sort(key=lambda p: p.stat().st_size)
            target = files[len(files) // 2]  # a middle-sized file
            self.targets.append((root, target, target.read_text(encoding="utf-8")))
        self.count = 0

    def edit(self) -> Probe:
        """Rewrite the next workspace's file with a new probe function."""
        root, target, original = self.targets[self.count % len(self.targets)]
        self.count += 1
        n = self.count
        snake, camel = f"soak_probe_{n}_marker", f"soakProbe{n}Marker"
        probe = PROBES[target.suffix].format(snake=snake, camel=camel, n=n)
        target.write_text(original + probe, encoding="utf-8")
        line = len((original + probe).splitlines()) - probe.count("\n") + 3  # 1-based
        name = snake if target.suffix in (".py", ".rb") else camel
        return Probe(root, name, target.relative_to(root).as_posix(), line)

    def restore(self) -> None:
        for _, target, original in self.targets:
            target.write_text(original, encoding="utf-8")


@dataclass(frozen=True)
class Probe:
    root: Path
    name: str
    path: str
    """Workspace-relative."""
    line: int
    """A 1-based line of the probe's definition."""

    def in_hits(self, hits: list[tuple[str, int, int]]) -> bool:
        """True when a hit ``(path, first line, last line)`` holds the probe."""
        return any(p == self.path and a <= self.line <= b for p, a, b in hits)


def wait_until(check: Callable[[], bool], seconds: float) -> float:
    """Seconds until ``check()`` held; TimeoutError after ``seconds``."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if check():
            return time.monotonic() - started
        time.sleep(0.25)
    raise TimeoutError


class Soak:
    """What the serve and mcp runs share: the request plan, the edits and the samples."""

    def __init__(self, args: argparse.Namespace, roots: list[Path], total: int) -> None:
        self.args, self.roots, self.total = args, roots, total
        self.source = QuestionSource(roots, seed=args.seed)
        self.editor = Editor(roots)  # each run starts from the files as they were copied
        self.samples: list[dict] = []
        self.errors: list[str] = []
        self.latencies: list[float] = []
        self.edits: list[float] = []
        self.lock = threading.Lock()
        self.next_edit = args.edit_every
        self.done = 0
        self.started = time.monotonic()

    def plan(self, n: int) -> tuple[str, Path, dict]:
        """The n-th request: kind, workspace and arguments."""
        root = self.roots[n % len(self.roots)]
        kind = MIX[n % len(MIX)]
        if kind == "status":
            return kind, root, {}
        with self.lock:
            text = self.source.question(root)
        arguments: dict = {"k": 5 + n % 16} if kind == "search" else {}
        if kind == "search" and n % 7 == 0:
            arguments["focus"] = [str(self.editor.targets[0][1].relative_to(self.roots[0]))]
        return kind, root, {"text": text, **arguments}

    def edit_due(self, n: int) -> bool:
        """True for the one caller whose request ``n`` reaches the next edit."""
        with self.lock:
            if n < self.next_edit:
                return False
            self.next_edit += self.args.edit_every
            return True

    def record(self, pid: int, elapsed: float, error: str | None) -> None:
        with self.lock:
            self.done += 1
            self.latencies.append(elapsed)
            if error:
                self.errors.append(error)
            if self.done % self.args.every == 0:
                window = sorted(self.latencies)
                sample = {
                    "requests": self.done,
                    "seconds": round(time.monotonic() - self.started, 1),
                    "p50_ms": round(window[len(window) // 2] * 1000, 2),
                    "p99_ms": round(window[int(len(window) * 0.99)] * 1000, 2),
                    "errors": len(self.errors),
                    "edits": len(self.edits),
                    **proc_sample(pid),
                }
                self.latencies.clear()
                self.samples.append(sample)
                print(json.dumps(sample), flush=True)


# -- seek serve --------------------------------------------------------------------------


def soak_serve(args: argparse.Namespace, roots: list[Path], env: dict) -> dict:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [*SEEK, "serve", "--port", str(port)]
    for root in roots:
        command += ["--workspace", str(root)]
    log = open(f"{args.out}_serve.log", "w")  # closed below
    server = subprocess.Popen(command, env={**env, "SEEK_TOKEN": SERVE_TOKEN}, stderr=log)
    soak = Soak(args, roots, args.requests)
    try:
        with httpx.Client(timeout=60, headers=SERVE_AUTH) as probe:
            wait_until(lambda: _ready(probe, url), 120)
        soak.samples.append({"requests": 0, "seconds": 0.0, **proc_sample(server.pid)})
        counter = iter(range(args.requests))

        def send(http: httpx.Client, n: int) -> str | None:
            kind, root, arguments = soak.plan(n)
            if kind == "status":
                answer = http.get(f"{url}/v1/status", params={"path": str(root)})
            elif kind == "search":
                body = {"query": arguments.pop("text"), "path": str(root), **arguments}
                answer = http.post(f"{url}/v1/search", json=body)
            else:
                body = {"question": arguments["text"], "path": str(root)}
                answer = http.post(f"{url}/v1/context", json=body)
            if answer.status_code != 200:
                return f"{kind} {answer.status_code}: {answer.text[:200]}"
            return None

        def found(http: httpx.Client, probe: Probe) -> bool:
            body = {"query": probe.name, "path": str(probe.root), "k": 10}
            hits = http.post(f"{url}/v1/search", json=body).json().get("hits", [])
            return probe.in_hits([(h["path"], h["start_line"], h["end_line"]) for h in hits])

        def client() -> None:
            with httpx.Client(timeout=60, headers=SERVE_AUTH) as http:
                for n in counter:
                    if soak.edit_due(n):
                        probe = soak.editor.edit()
                        try:
                            soak.edits.append(wait_until(partial(found, http, probe), EDIT_SEEN_S))
                        except TimeoutError:
                            soak.errors.append(f"{probe} not found {EDIT_SEEN_S} s after the edit")
                    started = time.perf_counter()
                    try:
                        error = send(http, n)
                    except httpx.HTTPError as exc:
                        error = f"{type(exc).__name__}: {exc}"
                    soak.record(server.pid, time.perf_counter() - started, error)

        threads = [threading.Thread(target=client) for _ in range(args.clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        server.terminate()
        server.wait(30)
        log.close()
        soak.editor.restore()
    return summary(soak, "serve", roots, clients=args.clients)


def _ready(http: httpx.Client, url: str) -> bool:
    try:
        return http.get(f"{url}/v1/status").status_code == 200
    except httpx.TransportError:
        return False


# -- seek mcp ----------------------------------------------------------------------------


def child_pid(marker: str) -> int:
    """The pid of this process's child whose command line holds ``marker``."""
    me = str(os.getpid())
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == me and marker in cmdline:
            return int(entry)
    raise RuntimeError(f"no child process runs {marker!r}")


async def _mcp_run(args: argparse.Namespace, roots: list[Path], env: dict, soak: Soak) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=SEEK[0], args=[*SEEK[1:], "mcp"], cwd=str(roots[0]), env=env
    )
    errlog = open(f"{args.out}_mcp.log", "w")  # closed below
    try:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                pid = child_pid("seek mcp")
                soak.samples.append({"requests": 0, "seconds": 0.0, **proc_sample(pid)})

                async def found(probe: Probe) -> bool:
                    answer = await session.call_tool(
                        "search", {"query": probe.name, "path": str(probe.root), "k": 10}
                    )
                    text = "".join(part.text for part in answer.content)
                    heads = HIT_HEAD.findall(text)  # "3. path:12-40 (score ..."
                    return probe.in_hits([(p, int(a), int(b)) for p, a, b in heads])

                for n in range(args.mcp_calls):
                    if soak.edit_due(n):
                        probe = soak.editor.edit()
                        started = time.monotonic()
                        while not await found(probe):
                            if time.monotonic() - started > EDIT_SEEN_S:
                                soak.errors.append(f"{probe} not found {EDIT_SEEN_S} s after it")
                                break
                            await anyio.sleep(0.25)
                        else:
                            soak.edits.append(time.monotonic() - started)
                    kind, root, arguments = soak.plan(n)
                    if kind == "search":
                        call = {"query": arguments.pop("text"), "path": str(root), **arguments}
                    elif kind == "context":
                        call = {"question": arguments["text"], "path": str(root)}
                    else:
                        call = {"path": str(root)}
                    started = time.perf_counter()
                    answer = await session.call_tool(kind, call)
                    error = None
                    if answer.is_error:
                        error = f"{kind}: " + "".join(p.text for p in answer.content)[:200]
                    soak.record(pid, time.perf_counter() - started, error)
    finally:
        errlog.close()


def soak_mcp(args: argparse.Namespace, roots: list[Path], env: dict) -> dict:
    soak = Soak(args, roots, args.mcp_calls)
    try:
        anyio.run(_mcp_run, args, roots, env, soak)
    finally:
        soak.editor.restore()
    return summary(soak, "mcp", roots)


# -- the run -----------------------------------------------------------------------------


def summary(soak: Soak, name: str, roots: list[Path], **extra: object) -> dict:
    edits = sorted(soak.edits)
    return {
        "server": name,
        "requests": soak.done,
        "planned": soak.total,
        "workspaces": [root.name for root in roots],
        "errors": len(soak.errors),
        "first_errors": soak.errors[:5],
        "edits": len(edits),
        "edit_seen_median_s": round(edits[len(edits) // 2], 2) if edits else None,
        "samples": soak.samples,
        **extra,
    }


def prepare(args: argparse.Namespace, tmp: Path) -> tuple[list[Path], dict]:
    """Copies of the workspaces in ``tmp``, indexed, and the environment for the servers."""
    sources = [Path(p) for p in args.workspace]
    if not sources:
        specs = {r["name"]: r for r in json.loads(REPOS_JSON.read_text())}
    for name in args.repos.split(",") if not sources else []:
        sources.append(args.bench_dir / name / (specs[name].get("benchmark_root") or ""))
    missing = [str(s) for s in sources if not s.is_dir()]
    if missing:
        sys.exit(f"missing workspaces: {', '.join(missing)} (pass --workspace DIR)")
    roots = []
    for source in sources:
        name = source.name if source.name not in ("lib", "src") else source.parent.name
        root = tmp / "ws" / name
        shutil.copytree(source, root, ignore=shutil.ignore_patterns(".git", "node_modules"))
        roots.append(root)
    home = tmp / "home"
    (home / "seek").mkdir(parents=True)
    # `seek mcp` answers only inside the folder it started in and the user's `mcp_roots`.
    listed = ", ".join(json.dumps(str(root)) for root in roots)
    (home / "seek" / "config.toml").write_text(f"mcp_roots = [{listed}]\n", encoding="utf-8")
    env = {**os.environ, "SEEK_HOME": str(home), "XDG_CONFIG_HOME": str(home)}
    for root in roots:
        subprocess.run([*SEEK, "index", "-q", str(root)], env=env, check=True)
    return roots, env


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.soak", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--bench-dir", type=Path, help=BENCH_DIR_HELP + "; or --workspace")
    parser.add_argument("--repos", default="flask,gin,express")
    parser.add_argument("--workspace", action="append", default=[], help="instead of --repos")
    parser.add_argument("--requests", type=int, default=100_000, help="serve requests")
    parser.add_argument("--mcp-calls", type=int, default=20_000, help="0: skip mcp")
    parser.add_argument("--skip-serve", action="store_true")
    parser.add_argument("--clients", type=int, default=4, help="concurrent HTTP clients")
    parser.add_argument("--every", type=int, default=1000, help="sample every N requests")
    parser.add_argument("--edit-every", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--out", type=Path, default=RESULTS / "soak", help="file stem")
    args = parser.parse_args()
    if not args.workspace:
        args.bench_dir = resolve_bench_dir(parser, args.bench_dir)
    runs = []
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="seek-soak-") as tmp:
        roots, env = prepare(args, Path(tmp))
        if not args.skip_serve and args.requests:
            runs.append(soak_serve(args, roots, env))
        if args.mcp_calls:
            runs.append(soak_mcp(args, roots, env))
    ok = True
    for run in runs:
        run["verdict"] = verdict = report(run)
        ok = ok and verdict["pass"]
        Path(f"{args.out}_{run['server']}.json").write_text(json.dumps(run, indent=1) + "\n")
    write_plot(runs, Path(f"{args.out}.png"))
    print(table(runs))
    for run in runs:
        print(run["server"], json.dumps(run["verdict"]))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
