"""The real ``seek`` entry point in subprocesses, with the built-in local model."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from seek.store import index_dir_for, load_manifest

pytestmark = pytest.mark.slow


def seek(home, *args, cwd=None, check=True):
    env = {**os.environ, "SEEK_HOME": str(home), "XDG_CONFIG_HOME": str(home / "config")}
    proc = subprocess.run(
        [sys.executable, "-m", "seek", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture
def project(make_tree):
    files = {
        f"pkg/mod{i}.py": f"def function_{i}(value):\n    return value + {i}\n" for i in range(8)
    }
    files["README.md"] = "# Project\n\nExplains things.\n"
    files["logo.png"] = b"\x89PNG\x00\x00"
    files["data.json"] = "x" * 600_000
    return make_tree(files)


def test_index_twice_status_and_json(project, seek_home):
    first = seek(seek_home, "index", str(project))
    assert first.stdout.startswith("Indexed: 9 files embedded (")
    assert "0 unchanged, 0 removed in" in first.stdout
    second = seek(seek_home, "index", str(project))
    assert second.stdout.startswith("Index is up to date: 9 files, nothing changed (")
    status = json.loads(seek(seek_home, "status", "--json", str(project)).stdout)
    assert status["files"] == 9 and status["chunks"] >= 9
    assert status["model"] == status["configured_model"] == "local/minilm-code"
    assert status["dimensions"] == 384
    assert status["skipped"] == {"not_allowlisted": 1, "too_big": 1}
    text = seek(seek_home, "status", str(project)).stdout
    assert "skipped     not allowlisted 1, too big 1" in text
    assert "writer      none" in text


def test_chunk_size_change_rebuilds_and_says_why(project, seek_home):
    seek(seek_home, "index", str(project))
    status = seek(seek_home, "--set", "chunk_max_chars=400", "status", str(project)).stdout
    assert "rebuild     needed: chunk settings changed (max 1000 -> 400" in status
    run = seek(seek_home, "--set", "chunk_max_chars=400", "index", str(project))
    assert "Rebuilt the index: chunk settings changed (max 1000 -> 400" in run.stderr
    assert run.stdout.startswith("Indexed: 9 files embedded")


def test_config_shows_values_and_sources(project, seek_home):
    (project / ".seek.toml").write_text("snippets = 9\n")
    out = seek(seek_home, "-C", str(project), "--set", "rrf_k=30", "config").stdout
    lines = {line.split()[0]: line for line in out.splitlines() if line and line[0] != "#"}
    assert lines["snippets"].split()[1] == "9" and lines["snippets"].endswith(
        f"({project / '.seek.toml'})"
    )
    assert lines["rrf_k"].endswith("(flag)") and lines["home"].endswith("(env SEEK_HOME)")
    assert lines["window_chars"].endswith("(default)")


def test_errors_are_one_line_with_exit_codes(tmp_path, seek_home):
    missing = seek(seek_home, "index", str(tmp_path / "nope"), check=False)
    assert missing.returncode in (1, 2) and "Traceback" not in missing.stderr
    (tmp_path / ".seek.toml").write_text("chunk_max_chars = 'x'\n")
    bad = seek(seek_home, "index", str(tmp_path), check=False)
    assert bad.returncode == 1
    assert bad.stderr.strip().splitlines() == [
        f"seek: error: chunk_max_chars in {tmp_path / '.seek.toml'} must be an integer, not 'x'"
    ]
    usage = seek(seek_home, "index", "--no-such-flag", check=False)
    assert usage.returncode == 2


def test_ctrl_c_keeps_embedded_files_and_next_run_finishes(make_tree, seek_home):
    body = "\n".join(f"    total += compute_{j}(value)" for j in range(30))
    files = {f"src/m{i:04d}.py": f"def f{i}(value):\n{body}\n" for i in range(1500)}
    root = make_tree(files)
    env = {**os.environ, "SEEK_HOME": str(seek_home), "XDG_CONFIG_HOME": str(seek_home / "c")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "seek", "index", "--json", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    index_dir = index_dir_for(root, _settings(seek_home))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(load_manifest(index_dir).files) < 50:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    report = json.loads(out)
    assert report["cancelled"] and 50 <= report["embedded"] < 1500
    kept = load_manifest(index_dir).files
    assert len(kept) == report["embedded"]
    resumed = json.loads(seek(seek_home, "index", "--json", str(root)).stdout)
    assert resumed["embedded"] == 1500 - len(kept)
    assert resumed["unchanged"] == len(kept) and resumed["files"] == 1500


def _settings(home):
    from seek.settings import load_settings

    return load_settings(overrides={"home": str(home)}, env={})


def test_search_indexes_first_and_prints_ranked_hits(project, seek_home):
    out = seek(seek_home, "search", "function_3", str(project), "-k", "2").stdout.splitlines()
    assert out[0].startswith(" 1  pkg/mod3.py:1-2  ")
    assert out[1].strip() == "def function_3(value):"
    data = json.loads(seek(seek_home, "search", "function_3", str(project), "--json").stdout)
    assert data["query"] == "function_3" and data["keyword_query"] == "function_3 function"
    top = data["hits"][0]
    assert (top["path"], top["start_line"], top["end_line"]) == ("pkg/mod3.py", 1, 2)
    stages = {"vector_ms", "keyword_ms", "rank_ms", "ranker_ms", "chunks_ms"}
    assert set(data["timings_ms"]) == stages
    assert data["notes"] == []
    assert 0.0 <= top["score"] <= 1.0 and data["calibrated"]  # the ranker's probability


def test_search_without_the_reranker_keeps_fused_scores(project, seek_home):
    args = ("search", "function_3", str(project), "--json", "--no-rerank")
    data = json.loads(seek(seek_home, *args).stdout)
    assert set(data["timings_ms"]) == {"vector_ms", "keyword_ms", "rank_ms"}
    assert data["hits"][0]["path"] == "pkg/mod3.py" and not data["calibrated"]


def test_embedding_server_errors_are_one_line(project, seek_home):
    out = seek(
        seek_home, "--provider", "ollama", "--model", "nomic-embed-text",
        "--url", "http://127.0.0.1:9", "index", str(project), check=False,
    )  # fmt: skip
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        "seek: error: cannot reach http://127.0.0.1:9 — is Ollama running? (`ollama serve`)"
    ]


def test_context_prints_blocks_and_the_report_line(project, seek_home):
    out = seek(seek_home, "context", "function_3 value", str(project), "--snippets", "1")
    heading = "pkg/mod3.py (lines 1-2) · function_3"  # the block's enclosing symbol
    assert out.stdout.startswith(f"{heading}\n```py\ndef function_3(value):")
    assert out.stderr.strip().startswith("query: 'function_3 value' · weighed ")
    # The learned ranker's probabilities: the one file that answers is far above the rest.
    assert "The reranker is unavailable" not in out.stderr
    assert re.search(r"pkg/mod3\.py:1-2 0\.[3-9]\d · closest of the rest: \S+ 0\.0\d", out.stderr)
