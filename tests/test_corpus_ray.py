"""A corpus indexed on a local Ray instance (``ray.init(num_cpus=2)``): the same rows as the
in-process run, and a worker killed in the middle of its task loses nothing and writes
nothing twice (issue 17, "Fan-out on Ray")."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray
from corpus_helpers import add_repos, assert_same_corpus, index, many_files

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
