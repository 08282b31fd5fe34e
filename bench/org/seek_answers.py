"""seek's answers for the cross-repository benchmark (issue 45, deliver 4): a slice indexed as
a corpus, and ``seek corpus refs/dependents --json`` asked per definition.

The commands run in this process by default (the CLI's own parsing and JSON, without a
Python start per question: hundreds of questions a slice); ``cli=True`` runs a ``seek``
process per question instead, what a user's shell does.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

from bench.org.score import Row, cross_rows, dependents_rows
from bench.org.slices import Slice


class SeekAnswers:
    def __init__(self, uri: str, cli: bool = False, limit: int = 1000) -> None:
        self.uri, self.cli, self.limit = uri, cli, limit
        self.subjects_missed = 0
        """Questions whose answer was about another definition than the one asked (its
        ``subject`` did not start on or contain the asked line)."""
        self.errors: list[str] = []

    def run(self, args: list[str]) -> dict | list:
        if self.cli:
            run = subprocess.run(
                [sys.executable, "-m", "seek", *args], capture_output=True, text=True
            )
            if run.returncode != 0:
                raise RuntimeError(f"seek {' '.join(args)}: {run.stderr.strip()[-300:]}")
            return json.loads(run.stdout)
        from seek.cli import cli, load_commands

        load_commands(args)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            cli.main(args, prog_name="seek", standalone_mode=False)
        return json.loads(out.getvalue())

    def refs(self, definition: dict) -> set[Row]:
        """The rows in other repositories than the definition's of ``seek corpus refs
        PATH:LINE --repo A``; an error counts as no rows (and is kept in ``errors``)."""
        repo, path, line = definition["repo"], definition["path"], definition["line"]
        args = ["corpus", "refs", self.uri, f"{path}:{line}", "--repo", repo,
                "--limit", str(self.limit), "--json"]  # fmt: skip
        try:
            answer = self.run(args)
        except Exception as exc:  # noqa: BLE001 - a failed question scores as no answer
            self.errors.append(f"{repo}:{path}:{line}: {str(exc)[:200]}")
            return set()
        subject = answer.get("subject") if isinstance(answer, dict) else None
        if subject and subject.get("path") == path:
            start, end = subject.get("line", line), subject.get("end_line", line)
            self.subjects_missed += not start <= line <= end
        rows = answer.get("rows", []) if isinstance(answer, dict) else answer
        return cross_rows(rows, repo)

    def dependents(self, repo: str) -> set[str]:
        try:
            return dependents_rows(self.run(["corpus", "dependents", self.uri, "--repo", repo,
                                             "--json"]))  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - scores as no dependents
            self.errors.append(f"dependents {repo}: {str(exc)[:200]}")
            return set()


def index_corpus(slice_: Slice, root: Path, corpus: Path, answers: SeekAnswers) -> None:
    """Add each repository of the slice (its folder, named as the slice names it) to the
    corpus at ``corpus`` and index them all."""
    corpus.mkdir(parents=True, exist_ok=True)
    for repo in slice_.repos:
        folder = root / repo.folder
        add = subprocess.run(
            [sys.executable, "-m", "seek", "corpus", "add", answers.uri, str(folder),
             "--name", repo.name],
            capture_output=True, text=True,
        )  # fmt: skip
        if add.returncode != 0:  # already there from an earlier run: indexed again below
            print(f"seek corpus add {repo.name}: {add.stderr.strip()}", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "seek", "corpus", "index", answers.uri], check=True)
