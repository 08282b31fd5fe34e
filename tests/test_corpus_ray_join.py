"""``seek corpus index --ray ADDRESS`` joins a cluster that ``ray start --head`` runs (issue 17,
"Fan-out on Ray": "``--ray ADDRESS`` joins an existing cluster"). The cluster checks a token
(Ray's default for ``ray start`` since 2.5x); seek sends the one it finds, and its workers
write what an in-process run writes."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from corpus_helpers import add_repos, assert_same_corpus, many_files
from test_corpus_s3 import free_port

import seek.cli.corpus_cmd  # noqa: F401 - registers `seek corpus`
from seek.cli import cli
from seek.corpus.location import CorpusLocation

pytestmark = pytest.mark.scale


@pytest.fixture
def ray_head() -> Iterator[tuple[str, dict[str, str]]]:
    """A Ray head with 2 CPUs on this machine, its token only in the environment it was
    started with (``RAY_AUTH_TOKEN``); stopped (with its workers) by SIGTERM."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env["RAY_AUTH_TOKEN"] = secrets.token_hex(16)
    # Ray's socket paths must stay short: not under pytest's long tmp_path.
    temp = tempfile.mkdtemp(prefix="seek-ray-", dir="/tmp")
    log = Path(temp) / "start.log"
    with open(log, "w") as out:
        head = subprocess.Popen(
            # Ray's CLI under this interpreter (not the `ray` script's shebang, which may
            # name another Python): the head's workers run this Python and its seek.
            [sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--port", str(port),
             "--num-cpus", "2", "--include-dashboard=false", "--disable-usage-stats",
             "--temp-dir", temp, "--block"],
            stdout=out, stderr=subprocess.STDOUT, env=env,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while "Ray runtime started" not in log.read_text():
            if head.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"ray start failed: {log.read_text()[-2000:]}")
            time.sleep(0.2)
        yield f"127.0.0.1:{port}", env
    finally:
        head.terminate()
        head.wait(60)
        shutil.rmtree(temp, ignore_errors=True)


def test_index_joins_a_running_cluster(ray_head, tmp_path, seek_home, make_tree, monkeypatch):
    address, env = ray_head
    repos = {
        "one": make_tree(many_files("a", 12), "one"),
        "two": make_tree(many_files("b", 8), "two"),
    }
    joined, clean = (
        CorpusLocation(str(tmp_path / "joined")),
        CorpusLocation(str(tmp_path / "clean")),
    )
    add_repos(joined, repos)
    add_repos(clean, repos)
    env = env | {"SEEK_HOME": str(seek_home)}
    done = subprocess.run(
        [sys.executable, "-m", "seek", "corpus", "index", joined.uri, "--ray", address, "--json"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert (report["runner"], report["workers"]) == ("ray", 2)
    monkeypatch.setenv("SEEK_HOME", str(seek_home))
    in_process = CliRunner().invoke(cli, ["corpus", "index", clean.uri, "--in-process"])
    assert in_process.exit_code == 0, in_process.output
    assert_same_corpus(joined, clean)
