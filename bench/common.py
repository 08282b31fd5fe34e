"""What every harness shares (bench/README.md, "Layout"): where the benchmark data and the
checkouts live, which repositories a set names, a bench home's settings, logging, this
process's peak RSS and CPU, a loopback port.

Nothing here names a machine's folders: the checkouts come from ``BENCH_DIR`` (an argument or
the environment variable), semble from ``SEMBLE_PYTHON`` / ``SEMBLE``, and the shared
benchmark sets from ``../shared/bench`` next to the checkout (or ``SEEK_BENCH_DATA``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import secrets
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS = REPO_ROOT / "bench" / "results"
"""The results of record (bench/README.md cites each)."""


def _shared_bench() -> Path:
    """The shared benchmark sets: ``$SEEK_BENCH_DATA``, else the first ``shared/bench`` found
    beside this checkout or one of its parents (a worktree sits a level or two deeper)."""
    if os.environ.get("SEEK_BENCH_DATA"):
        return Path(os.environ["SEEK_BENCH_DATA"]).expanduser()
    return next(
        (d / "shared" / "bench" for d in REPO_ROOT.parents if (d / "shared" / "bench").is_dir()),
        REPO_ROOT.parent / "shared" / "bench",
    )


SHARED_BENCH = _shared_bench()
SHARED = SHARED_BENCH / "semble"
DEV_REPOS = SHARED / "dev-repos.txt"
REPOS_JSON = SHARED / "repos.json"
ANNOTATIONS = SHARED / "annotations"
BUILTIN_MODEL = "minilm-code"
"""seek's default model (``seek.embed.local.BUILTIN_MODEL_NAME``); semble is run with it too."""

SPANS = SHARED_BENCH / "spans"
"""The hand-written dev set with line-level targets (issue 13)."""
SPANS_OWN = REPO_ROOT / "bench" / "spans-own"
"""This project's own hand-written line-level set (validation only, never fitted on)."""

DEFAULT_HOME = Path("~/.cache/seek-bench").expanduser()
"""seek's index home for the quality harness; the trainers reuse its indexes."""


@dataclass(frozen=True)
class BenchSet:
    """A benchmark folder: ``repos.json`` (name, language, url, revision, benchmark_root),
    ``annotations/<name>.json`` and, optionally, ``dev-repos.txt`` naming its default repos
    (without one, every repository of ``repos.json`` is the default)."""

    folder: Path

    @property
    def repos_json(self) -> Path:
        return self.folder / "repos.json"

    @property
    def annotations(self) -> Path:
        return self.folder / "annotations"

    @property
    def name(self) -> str:
        return self.folder.name

    def specs(self) -> dict[str, dict]:
        return {entry["name"]: entry for entry in json.loads(self.repos_json.read_text())}

    def default_names(self) -> list[str]:
        dev = self.folder / "dev-repos.txt"
        return read_repo_list(dev) if dev.is_file() else list(self.specs())


SEMBLE_SET = BenchSet(SHARED)


def read_repo_list(path: Path = DEV_REPOS) -> list[str]:
    """Repository names, one a line; ``#`` starts a comment."""
    names = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line)
    return names


def read_benchmark_roots(path: Path = REPOS_JSON) -> dict[str, str | None]:
    """Each repository's ``benchmark_root`` (the folder the benchmark indexes) by name."""
    if not path.is_file():
        log(f"warning: {path} not found; indexing every checkout whole")
        return {}
    return {entry["name"]: entry.get("benchmark_root") for entry in json.loads(path.read_text())}


def repo_folder(bench_dir: Path, name: str, roots: dict[str, str | None]) -> Path:
    """``BENCH_DIR/<name>/<benchmark_root>`` (the whole checkout without a root)."""
    root = roots.get(name)
    return bench_dir / name / root if root else bench_dir / name


def builtin_model_dir() -> Path:
    """The built-in Model2Vec folder, found without importing seek (the harness's parent
    process stays light): the checkout's copy, else the installed package's."""
    folder = REPO_ROOT / "src" / "seek" / "models" / BUILTIN_MODEL
    if folder.is_dir():
        return folder
    from seek.embed.local import BUILTIN_MODELS_DIR

    return BUILTIN_MODELS_DIR / BUILTIN_MODEL


# -- where the checkouts and semble are: arguments or the environment, never a default path ----
BENCH_DIR_HELP = "folder holding one checkout per benchmark repository (default: $BENCH_DIR)"


def add_bench_dir(parser: argparse.ArgumentParser) -> None:
    """The optional positional ``BENCH_DIR`` every harness over the checkouts takes."""
    parser.add_argument("bench_dir", nargs="?", metavar="BENCH_DIR", help=BENCH_DIR_HELP)


def resolve_bench_dir(parser: argparse.ArgumentParser, value: str | Path | None) -> Path:
    """The checkouts' folder from the argument or ``$BENCH_DIR``; a one-line usage error when
    neither names a folder."""
    value = value or os.environ.get("BENCH_DIR")
    if not value:
        parser.error("no benchmark checkouts: pass BENCH_DIR or set the BENCH_DIR variable")
    folder = Path(value).expanduser()
    if not folder.is_dir():
        parser.error(f"BENCH_DIR {folder} is not a folder")
    return folder


def semble_python_path(value: str | Path | None) -> Path | None:
    """semble's python (``--semble-python`` or ``$SEMBLE_PYTHON``); None when neither is set.
    semble is not a dependency of seek: it lives in a virtual environment of its own."""
    value = value or os.environ.get("SEMBLE_PYTHON")
    return Path(value).expanduser() if value else None


def semble_cli_path(value: str | Path | None) -> Path | None:
    """semble's command (``--semble`` or ``$SEMBLE``); None when neither is set."""
    value = value or os.environ.get("SEMBLE")
    return Path(value).expanduser() if value else None


# -- the process ---------------------------------------------------------------------------
def log(message: str, stamp: bool = False) -> None:
    """Progress on stderr (stdout carries the results), flushed; ``stamp`` adds the time."""
    prefix = f"[{time.strftime('%H:%M:%S')}] " if stamp else ""
    print(prefix + message, file=sys.stderr, flush=True)


def peak_rss_kb() -> int:
    """This process's peak RSS (KiB) since it started its program: ``VmHWM`` (``ru_maxrss``
    keeps the peak of the parent it was forked from across ``exec``: a query process started
    by a phase that had built indexes reported the builder's 761 MB before opening anything)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # Linux: KiB


def process_tree(pid: int) -> list[int]:
    """``pid`` and every process below it (Linux: ``/proc/PID/task/TID/children``)."""
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                children = Path(f"/proc/{current}/task/{task}/children").read_text().split()
            except OSError:
                continue
            queue.extend(int(child) for child in children)
    return found


def tree_pss_kb(pid: int) -> int:
    """The proportional set size (KiB) of ``pid`` and its descendants together: a page shared
    by n of them counts 1/n to each, so a forked worker's pages shared with the process it
    was forked from count once (a sum of RSS would count them twice)."""
    total = 0
    for member in process_tree(pid):
        try:
            for line in Path(f"/proc/{member}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
                    break
        except OSError:
            pass  # it ended between the listing and the read
    return total


def run_sampling_memory(
    command: list[str], env: dict[str, str], cwd: Path, timeout: float, every_s: float = 0.01
) -> tuple[str, float]:
    """Run ``command``; its stdout and the peak of :func:`tree_pss_kb` over its life, in MiB,
    sampled every ``every_s`` from this process (the measured one does not pay for it)."""
    import subprocess
    import tempfile

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=err, text=True)
        peak, deadline = 0, time.monotonic() + timeout
        while proc.poll() is None:
            if time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                raise RuntimeError(f"timed out after {timeout:.0f} s")
            peak = max(peak, tree_pss_kb(proc.pid))
            time.sleep(every_s)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            tail = (err.read() or out.read()).strip().splitlines()[-15:]
            raise RuntimeError(f"exit {proc.returncode}: " + "\n".join(tail))
        return out.read(), peak / 1024


def peak_rss_mb() -> float:
    """:func:`peak_rss_kb` in MiB."""
    return peak_rss_kb() / 1024


def cpu_s() -> float:
    """User + system CPU seconds of this process (every thread) and its waited-for children:
    less sensitive than wall time to what else runs on the machine."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def loadavg() -> list[float] | None:
    """The 1, 5 and 15 minute load averages, rounded; None where the system has none."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def bench_settings(home: Path, **overrides: object):
    """seek's settings for an index home of the benchmark's own, ignoring the user's config
    file (a benchmark must not depend on who runs it)."""
    from seek.settings import load_settings

    return load_settings(
        overrides={"home": str(home), **overrides}, user_config=home / "no-user-config.toml"
    )


SERVE_TOKEN = secrets.token_urlsafe(32)
"""The token the harnesses give `seek serve` (as ``SEEK_TOKEN``, as a script would) and send
on every request: a loopback server needs one too (issue 43, finding 7)."""
SERVE_AUTH = {"Authorization": f"Bearer {SERVE_TOKEN}"}


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (the servers measured listen on loopback only)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def shown(path: Path, checkouts: Path | None = None) -> str:
    """A path as a results file records it: under the checkouts ``$BENCH_DIR/...``, in this
    repository relative to it, else its name only (results name no machine's folders)."""
    path = Path(path).resolve()
    for base, prefix in ((checkouts, "$BENCH_DIR/"), (REPO_ROOT, "")):
        if base is not None and path.is_relative_to(Path(base).resolve()):
            return prefix + str(path.relative_to(Path(base).resolve()))
    return path.name


def machine_info() -> dict:
    """CPU, memory and Python of this machine, for a results file."""
    import platform

    info = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                info["mem_gb"] = round(int(line.split()[1]) / 1024 / 1024, 1)
                break
    except OSError:
        pass
    return info


def git_commit() -> str:
    """This checkout's commit (short), ``+dirty(src)`` when ``src/`` has edits; "?" outside git."""
    import subprocess

    try:
        git = ["git", "-C", str(REPO_ROOT)]
        head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()  # fmt: skip
        dirty = subprocess.run([*git, "status", "--porcelain", "--", "src"], capture_output=True,
                               text=True, check=True).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return head + ("+dirty(src)" if dirty else "")


def run_record() -> dict:
    """When, on which code and on what machine a run of record ran: the three fields every
    results file a doc's table is generated from carries (``bench.report``, issue 46)."""
    from datetime import UTC, datetime

    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": git_commit(),
        "machine": machine_info(),
    }
