"""SIGKILL at random moments of a real `seek index` never corrupts the index: the next run
opens it, repairs it without a full rebuild, and ends with exactly the chunks a clean
rebuild produces."""

import os
import random
import signal
import subprocess
import sys
import time

import pytest

from seek.settings import load_settings
from seek.store import ChunkTable, index_dir_for, load_manifest

pytestmark = pytest.mark.slow

KILLS = 20


def rows(home, root):
    settings = load_settings(overrides={"home": str(home)}, env={})
    data = ChunkTable(index_dir_for(root, settings)).load_all()
    columns = ("path", "chunk", "start_line", "end_line", "part", "content")
    return sorted(zip(*(data[c] for c in columns), strict=True))


def seek_index(home, root, *extra):
    env = {**os.environ, "SEEK_HOME": str(home), "XDG_CONFIG_HOME": str(home / "cfg")}
    args = [sys.executable, "-m", "seek", "--set", "flush_every_files=5", "index", "--json"]
    return subprocess.Popen([*args, *extra, str(root)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip


def test_kill_at_random_moments_then_repair(make_tree, tmp_path):
    body = "\n".join(f"    total += step_{j}(value)" for j in range(40))
    files = {f"pkg/mod{i:03d}.py": f"def f{i}(value):\n{body}\n" for i in range(120)}
    root = make_tree(files)
    home = tmp_path / "home"
    rng = random.Random(20261129)
    kills_mid_run = 0
    for attempt in range(KILLS):
        # Change a few files between attempts so runs have work to do.
        for i in rng.sample(range(120), 8):
            (root / f"pkg/mod{i:03d}.py").write_text(f"def g{i}_{attempt}(value):\n{body}\n")
        proc = seek_index(home, root)
        time.sleep(rng.uniform(0.2, 2.0))
        if proc.poll() is None:
            kills_mid_run += 1
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        # The index must still open and be readable right after the kill.
        load_manifest(index_dir_for(root, load_settings(overrides={"home": str(home)}, env={})))
        repair = seek_index(home, root)
        out, err = repair.communicate(timeout=300)
        assert repair.returncode == 0, err
        assert '"rebuild_reason": ""' in out  # repaired in place, never rebuilt from scratch
    assert kills_mid_run >= KILLS // 2  # most kills really interrupted a run
    clean_home = tmp_path / "clean"
    clean = seek_index(clean_home, root)
    clean.communicate(timeout=300)
    assert clean.returncode == 0
    assert rows(home, root) == rows(clean_home, root)
