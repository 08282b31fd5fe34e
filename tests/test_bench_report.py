"""The docs' benchmark tables are generated, not typed (issue 46): each equals what its results
file generates (``python -m bench.report``), and no results file is older than the code it
measures by more than its table's bound of commits."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from bench.report import TABLES, Table, blocks

ROOT = Path(__file__).resolve().parents[1]


def copy_of_the_docs(tmp_path: Path) -> Path:
    """The docs and results files the registry names, copied under ``tmp_path``."""
    for table in TABLES.values():
        for name in (*table.results, *table.docs):
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / name, tmp_path / name)
    return tmp_path


def test_every_table_in_the_docs_is_what_its_results_generate():
    assert blocks.problems(ROOT, TABLES) == []


def test_the_check_sees_a_hand_edited_number(tmp_path):
    root = copy_of_the_docs(tmp_path)
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    body = next(m for m in blocks.BLOCK.finditer(text) if m["name"] == "headline")["body"]
    row = next(line for line in body.splitlines() if line.startswith("| NDCG@10, chunk"))
    edited = row.replace("0.", "0.9", 1)  # the kind of edit a hand makes: one number
    readme.write_text(text.replace(row, edited), encoding="utf-8")
    assert blocks.problems(root, TABLES) == [
        "README.md: table 'headline' differs from what " + ", ".join(TABLES["headline"].results)
        + " generates (run python -m bench.report)"
    ]  # fmt: skip
    assert blocks.write(root, TABLES) == ["README.md"]  # and writing puts it right
    assert readme.read_text(encoding="utf-8") == text
    assert blocks.problems(root, TABLES) == []


def test_the_check_sees_a_missing_block_and_a_stray_one(tmp_path):
    root = copy_of_the_docs(tmp_path)
    doc = root / "bench" / "README.md"
    text = doc.read_text(encoding="utf-8")
    text = text.replace("<!-- bench.report:quality -->", "<!-- bench.report:qualiti -->")
    text = text.replace("<!-- /bench.report:quality -->", "<!-- /bench.report:qualiti -->")
    doc.write_text(text, encoding="utf-8")
    assert blocks.problems(root, TABLES) == [
        "bench/README.md: no block for table 'quality'",
        "bench/README.md: block 'qualiti' is no table of bench.report.TABLES for it",
    ]


def test_a_results_file_records_its_run():
    """Every results file a table is generated from says when, on which commit and on what
    machine it ran."""
    for table in TABLES.values():
        for name in table.results:
            data = json.loads((ROOT / name).read_text(encoding="utf-8"))
            assert {"date", "commit", "machine"} <= data.keys(), name


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_no_results_file_is_older_than_its_bound():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no history to count commits in")
    if git(ROOT, "rev-parse", "--is-shallow-repository") == "true":
        pytest.skip("a shallow clone lacks the commits the results were made at")
    assert blocks.staleness(ROOT, TABLES) == []


def test_the_staleness_check_counts_commits_to_the_measured_paths(tmp_path):
    """A results file made at the first commit: commits to other paths do not count, one
    past the bound to a measured path makes it stale, and an unknown commit is named."""
    root = tmp_path
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.invalid")
    git(root, "config", "user.name", "t")

    def commit(path: str, text: str) -> str:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
        git(root, "add", path)
        git(root, "commit", "-q", "-m", path)
        return git(root, "rev-parse", "--short", "HEAD")

    made_at = commit("src/rank.py", "0")
    (root / "r.json").write_text(json.dumps({"commit": made_at + "+dirty(src)"}))
    tables = {"t": Table(("r.json",), lambda r: [], ("README.md",), ("src/rank.py",), 2)}
    for n in range(5):
        commit("docs/other.md", str(n))
    commit("src/rank.py", "1")
    commit("src/rank.py", "2")
    assert blocks.staleness(root, tables) == []  # two commits: at the bound
    commit("src/rank.py", "3")
    assert blocks.staleness(root, tables) == [
        "r.json (table 't') is 3 commits behind the code it measures (at most 2): "
        "run its harness again"
    ]
    (root / "r.json").write_text(json.dumps({"commit": "0123456789abc"}))
    assert blocks.staleness(root, tables) == [
        "r.json (table 't'): commit 0123456789abc is not in this history"
    ]
    (root / "r.json").write_text(json.dumps({"date": "today"}))
    assert blocks.staleness(root, tables) == ["r.json (table 't') records no commit"]
