"""A corpus indexed on a local Ray instance (``ray.init(num_cpus=2)``): the same rows as the
in-process run, a worker killed in the middle of its task loses nothing and writes nothing
twice (issue 17, "Fan-out on Ray"), and workers with another seek stop a run in one line
before it writes anything."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray
from corpus_helpers import add_repos, assert_same_corpus, index, many_files

import seek
from seek.corpus.fanout import RayRunner
from seek.corpus.location import CorpusLocation
from seek.corpus.work import prepare_batch

pytestmark = pytest.mark.scale
MARKER_ENV = "SEEK_TEST_KILL_MARKER"


def dying_batch(*args):
    """Runs on a Ray worker: the first task to find the marker removes it and kills its
    worker process mid-task (as the OOM killer or a lost node would); every attempt is
    logged with its worker's pid."""
    marker = Path(os.environ[MARKER_ENV])
    with open(marker.with_suffix(".log"), "a") as log:
        log.write(f"{os.getpid()} {args[2][0][0].rel}\n")
    try:
        marker.unlink()
    except FileNotFoundError:
        return prepare_batch(*args)
    os._exit(1)


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory) -> Iterator[Path]:
    marker = tmp_path_factory.mktemp("ray") / "kill-one-worker"
    os.environ[MARKER_ENV] = str(marker)  # workers inherit the driver's environment
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        yield marker
    finally:
        ray.shutdown()
        os.environ.pop(MARKER_ENV, None)


def test_ray_writes_what_the_in_process_run_writes(local_ray, tmp_path, settings_for, make_tree):
    repos = {
        "one": make_tree(many_files("a", 30), "one"),
        "two": make_tree(many_files("b", 20), "two"),
    }
    on_ray = CorpusLocation(str(tmp_path / "ray"))
    add_repos(on_ray, repos)
    runner = RayRunner()
    report = index(on_ray, settings_for(), runner, files_per_task=8, commit_rows=40)
    assert (report.runner, report.workers, report.tasks) == ("ray", 2, 7)
    clean = CorpusLocation(str(tmp_path / "clean"))
    add_repos(clean, repos)
    index(clean, settings_for())
    assert_same_corpus(on_ray, clean)


def test_a_killed_worker_loses_nothing(local_ray, tmp_path, settings_for, make_tree):
    marker = local_ray
    marker.write_text("kill")
    repos = {"big": make_tree(many_files("pkg", 60), "big")}
    location = CorpusLocation(str(tmp_path / "ray"))
    add_repos(location, repos)
    report = index(location, settings_for(), RayRunner(), files_per_task=6, commit_rows=30,
                   task=dying_batch)  # fmt: skip
    assert not marker.exists(), "no worker was killed"
    attempts = marker.with_suffix(".log").read_text().splitlines()
    assert len(attempts) == report.tasks + 1  # the killed task ran again, once
    assert len({line.split()[0] for line in attempts}) >= 2  # on a new worker process
    clean = CorpusLocation(str(tmp_path / "clean"))
    add_repos(clean, repos)
    index(clean, settings_for())
    assert_same_corpus(location, clean)


def corpus_files(location: CorpusLocation) -> dict[str, bytes]:
    """Every file of a corpus folder (catalog, manifests, locks, LanceDB's tables) and its
    bytes."""
    root = Path(location.uri)
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


# What each cluster's workers find as `seek` (one package on their PYTHONPATH, shadowing the
# installed one there only), and the one line the run must end with: an older release, a
# build of this release with other source (as a cluster installed before the graph), and a
# seek that cannot be imported.
OTHER_SEEKS = {
    "older": ('__version__ = "0.1.0"\n', r"run seek 0\.1\.0, this is seek {ours}"),
    "other-build": ('__version__ = "{ours}"\n',
                    r"run another build of seek {ours} \(other source\)"),
    "unimportable": ("from seek.index import graph_rows  # not in this package\n",
                     r"cannot import seek \(ModuleNotFoundError: No module named 'seek\.index'"),
}  # fmt: skip


@pytest.mark.parametrize("other", sorted(OTHER_SEEKS))
def test_workers_with_another_seek_fail_the_run_in_one_line(
    local_ray, other, tmp_path, seek_home, settings_for, make_tree
):
    """``seek corpus index URI --ray ADDRESS`` started as ``ray job submit
    --runtime-env-json`` starts it (Ray's job manager hands the job's runtime env to its
    driver in ``RAY_JOB_CONFIG_JSON_ENV_VAR``): the job's workers, and only they, see
    another ``seek``. The run ends with one line naming both seeks, before it writes
    anything: the corpus (rows, manifests, catalog) is byte for byte as it was."""
    init, expected = (s.replace("{ours}", seek.__version__) for s in OTHER_SEEKS[other])
    package = tmp_path / "workers" / "seek"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(init)
    repo = make_tree(many_files("a", 4), "one")
    location = CorpusLocation(str(tmp_path / "corpus"))
    add_repos(location, {"one": repo})
    index(location, settings_for())  # rows and a manifest to keep
    (repo / "a" / "mod_000.py").write_text("def changed():\n    return 1\n")  # work to do
    before = corpus_files(location)
    job = {"runtime_env": {"env_vars": {"PYTHONPATH": str(package.parent)}}}
    env = os.environ | {"SEEK_HOME": str(seek_home),
                        "RAY_JOB_CONFIG_JSON_ENV_VAR": json.dumps(job)}  # fmt: skip
    address = ray.get_runtime_context().gcs_address
    done = subprocess.run(
        [sys.executable, "-m", "seek", "corpus", "index", location.uri, "--ray", address],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and 'File "' not in done.stderr, done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("seek: error: the Ray workers "), done.stderr[-3000:]
    assert re.search(expected, last), last
    assert f"{address}" in last and "install the same seek" in last, last
    assert corpus_files(location) == before


@pytest.mark.parametrize("other", sorted(OTHER_SEEKS))
def test_a_worker_with_another_seek_that_joined_late_fails_its_task_in_one_line(
    local_ray, other, tmp_path, seek_home, settings_for, make_tree
):
    """A node that joins the cluster after the run's check of every node (simulated: the
    check skipped) runs no task with its seek: the task stops before it reads a file, the
    run ends in one line naming both seeks, and no row of another seek is written (the next
    run gives the corpus a clean run gives)."""
    init, expected = (s.replace("{ours}", seek.__version__) for s in OTHER_SEEKS[other])
    package = tmp_path / "workers" / "seek"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(init)
    files = many_files("a", 4)
    repo = make_tree(files, "one")
    location = CorpusLocation(str(tmp_path / "corpus"))
    add_repos(location, {"one": repo})
    job = {"runtime_env": {"env_vars": {"PYTHONPATH": str(package.parent)}}}
    env = os.environ | {"SEEK_HOME": str(seek_home),
                        "RAY_JOB_CONFIG_JSON_ENV_VAR": json.dumps(job)}  # fmt: skip
    address = ray.get_runtime_context().gcs_address
    late = (
        "import runpy, sys\n"
        "import seek.corpus.fanout\n"
        "seek.corpus.fanout._check_workers = lambda ray, address: None\n"
        f"sys.argv = ['seek', 'corpus', 'index', {location.uri!r}, '--ray', {address!r}]\n"
        "runpy.run_module('seek', run_name='__main__')\n"
    )
    done = subprocess.run([sys.executable, "-c", late], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and 'File "' not in done.stderr, done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("seek: error: the Ray workers on node "), done.stderr[-3000:]
    assert re.search(expected, last) and "install the same seek" in last, last
    index(location, settings_for())
    clean = CorpusLocation(str(tmp_path / "clean"))
    add_repos(clean, {"one": repo})
    index(clean, settings_for())
    assert_same_corpus(location, clean)
