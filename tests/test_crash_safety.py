"""SIGKILL in the middle of a real `seek index` never corrupts the index: the next run opens
it, repairs it in place re-embedding only the files whose stamps were not saved (README,
"Where the index lives": "a run that is killed leaves an index that the next run repairs
without re-embedding what was saved"), and ends with exactly the rows a clean index has.

The runs embed through the test embedding server on 127.0.0.1, which counts every text it
is sent and kills the process when a chosen request arrives (or a moment after answering
it): kills are placed by the run's progress, not by wall-clock time, so every one lands
mid-run however fast or slow the machine is.
"""

import os
import random
import signal
import subprocess
import sys
import threading

import pytest
from embed_server import serve

from seek.index.indexer import index_workspace
from seek.settings import load_settings
from seek.store import ChunkTable, index_dir_for, load_manifest
from seek.store.graph_table import GraphTable, graph_table_name

pytestmark = pytest.mark.slow

KILLS = 6
FILES = 30


def index_dir(home, root):
    return index_dir_for(root, load_settings(overrides={"home": str(home)}, env={}))


def rows(home, root):
    data = ChunkTable(index_dir(home, root)).load_all()
    columns = ("path", "chunk", "start_line", "end_line", "part", "content")
    return sorted(zip(*(data[c] for c in columns), strict=True))


def run_settings(url):
    return {
        "provider": "ollama", "model": "test-embed", "base_url": url,
        "embed_batch_size": 4, "embed_concurrency": 1, "flush_every_files": 5,
    }  # fmt: skip


def seek_index(home, root, url):
    """A real `seek index` in its own process, to be killed."""
    env = {**os.environ, "SEEK_HOME": str(home), "XDG_CONFIG_HOME": str(home / "cfg")}
    sets = [
        arg for name, value in run_settings(url).items() for arg in ("--set", f"{name}={value}")
    ]
    args = [sys.executable, "-m", "seek", *sets, "index", "--json", str(root)]
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip


def next_run(home, root, url):
    """The next run, in this process (what `seek index` calls; a process start per repair
    would double the test's time and check nothing more)."""
    settings = load_settings(
        root, overrides={"home": str(home), **run_settings(url)}, env={},
        user_config=home / "no-user-config.toml",
    )  # fmt: skip
    return index_workspace(root, settings)


def graph_rows(home, root):
    """The code graph's stored rows (issue 28): one per source file, replaced with its chunks."""
    folder = index_dir(home, root)
    return sorted(GraphTable(folder, graph_table_name(load_manifest(folder).table)).load_all())


def embedded_paths(requests):
    """The files whose texts (``<path>\\n<window>``) the server was sent."""
    paths = set()
    for request in requests:
        texts = request["body"]["input"]
        for text in texts if isinstance(texts, list) else [texts]:
            paths.add(text.split("\n", 1)[0])
    return paths


def unstamped(home, root):
    """Files whose current size and mtime have no stamp in the manifest: what a repair must
    embed again, and all it may embed."""
    stamps = load_manifest(index_dir(home, root)).files
    out = set()
    for i in range(FILES):
        rel = f"pkg/mod{i:03d}.py"
        st = (root / rel).stat()
        stamp = stamps.get(rel)
        if stamp is None or (stamp.size, stamp.mtime_ns) != (st.st_size, st.st_mtime_ns):
            out.add(rel)
    return out


def test_kills_mid_run_are_repaired_without_re_embedding_what_was_saved(make_tree, tmp_path):
    body = "\n".join(f"    total += step_{j}(value)" for j in range(40))
    root = make_tree({f"pkg/mod{i:03d}.py": f"def f{i}(value):\n{body}\n" for i in range(FILES)})
    home = tmp_path / "home"
    rng = random.Random(20261130)
    saved_by_killed_runs = 0
    with serve() as (url, server):
        for attempt in range(KILLS):
            if attempt:  # the first run indexes everything; later ones have 15 changed files
                for i in rng.sample(range(FILES), 15):
                    (root / f"pkg/mod{i:03d}.py").write_text(f"def g{i}_{attempt}(v):\n{body}\n")
            # A run of 15 files sends about 12 requests (48 texts, 4 per request): killing at
            # request 1-8 is always mid-run. A delay of 0 kills before the answer; a short
            # one lets the answer through, so the kill lands in the write that follows, and
            # the next request is held until the kill has landed.
            target, delay = rng.randint(1, 8), rng.choice([0.0, rng.uniform(0.0, 0.05)])
            before = unstamped(home, root)
            proc = seek_index(home, root, url)

            killed = threading.Event()

            def fire(proc=proc, killed=killed):
                proc.send_signal(signal.SIGKILL)
                killed.set()

            def kill(number, target=target, delay=delay, killed=killed, fire=fire):
                if number == target:
                    threading.Timer(delay, fire).start()
                elif number > target:  # however fast the machine, the run waits for its kill
                    killed.wait(timeout=30)

            server.requests.clear()
            server.on_request = kill
            proc.communicate(timeout=60)
            server.on_request = None
            assert proc.returncode == -signal.SIGKILL, "the run ended before its kill"
            # The index must open and be readable right after the kill.
            missing = unstamped(home, root)
            assert missing <= before
            saved_by_killed_runs += len(before - missing)

            server.requests.clear()
            report = next_run(home, root, url)
            assert report.rebuild_reason == ""  # repaired in place, never rebuilt from scratch
            # Exactly the files without a stamp were embedded again: not one saved file more.
            assert embedded_paths(server.requests) == missing, attempt
            assert not unstamped(home, root)
        # Some killed runs had saved files that their repair then did not embed again.
        assert saved_by_killed_runs > 0
        clean_home = tmp_path / "clean"
        next_run(clean_home, root, url)
    assert rows(home, root) == rows(clean_home, root)
    assert graph_rows(home, root) == graph_rows(clean_home, root)
