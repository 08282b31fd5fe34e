"""Where ``bench.report`` writes and what it checks (issue 46): the marked blocks of the docs,
and how far each results file's commit lies behind the code it measures."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path

from bench.report import Table

BLOCK = re.compile(
    r"(?P<open><!-- bench\.report:(?P<name>[\w.-]+) -->\n)(?P<body>.*?)"
    r"(?P<close><!-- /bench\.report:(?P=name) -->)",
    re.S,
)


def render(root: Path, table: Table) -> str:
    """The block's text as the table's results generate it."""
    loaded = [
        (path, json.loads((root / path).read_text(encoding="utf-8"))) for path in table.results
    ]
    return "\n".join(table.render(loaded)) + "\n\n"  # a blank line ends the table


def rewritten(text: str, bodies: Mapping[str, str]) -> str:
    """``text`` with the body of every marked block named in ``bodies`` replaced."""
    return BLOCK.sub(
        lambda m: m["open"] + bodies[m["name"]] + m["close"] if m["name"] in bodies else m[0],
        text,
    )


def problems(root: Path, tables: Mapping[str, Table]) -> list[str]:
    """Every way the docs under ``root`` differ from what ``tables`` generate: a block
    missing from a doc, a block whose text differs, a marker naming no table."""
    found = []
    docs: dict[str, list[str]] = {}
    for name, table in tables.items():
        for doc in table.docs:
            docs.setdefault(doc, []).append(name)
    for doc in sorted(set(docs) | {"README.md", "bench/README.md"}):
        path = root / doc
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        blocks = {m["name"]: m["body"] for m in BLOCK.finditer(text)}
        for name in docs.get(doc, []):
            if name not in blocks:
                found.append(f"{doc}: no block for table {name!r}")
            elif blocks[name] != render(root, tables[name]):
                found.append(
                    f"{doc}: table {name!r} differs from what {', '.join(tables[name].results)} "
                    "generates (run python -m bench.report)"
                )
        for name in sorted(set(blocks) - set(docs.get(doc, []))):
            found.append(f"{doc}: block {name!r} is no table of bench.report.TABLES for it")
    return found


def write(root: Path, tables: Mapping[str, Table]) -> list[str]:
    """Rewrite every doc's blocks from the results; returns the docs that changed."""
    changed = []
    for doc in sorted({doc for table in tables.values() for doc in table.docs}):
        path = root / doc
        text = path.read_text(encoding="utf-8")
        bodies = {n: render(root, t) for n, t in tables.items() if doc in t.docs}
        new = rewritten(text, bodies)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(doc)
    return changed


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)


def commits_since(root: Path, commit: str, paths: tuple[str, ...]) -> int | None:
    """Commits after ``commit`` up to HEAD that touch ``paths`` (None: not in the history)."""
    if _git(root, "cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
        return None
    done = _git(root, "rev-list", "--count", f"{commit}..HEAD", "--", *paths)
    return int(done.stdout) if done.returncode == 0 else None


def staleness(root: Path, tables: Mapping[str, Table]) -> list[str]:
    """Results files older than their bound, or recording no commit of this history."""
    found = []
    for name, table in tables.items():
        for path in table.results:
            data = json.loads((root / path).read_text(encoding="utf-8"))
            commit = str(data.get("commit") or "?").split("+", 1)[0]
            if commit == "?":
                found.append(f"{path} (table {name!r}) records no commit")
                continue
            behind = commits_since(root, commit, table.measures)
            if behind is None:
                found.append(f"{path} (table {name!r}): commit {commit} is not in this history")
            elif behind > table.max_commits:
                found.append(
                    f"{path} (table {name!r}) is {behind} commits behind the code it measures "
                    f"(at most {table.max_commits}): run its harness again"
                )
    return found
