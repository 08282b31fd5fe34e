"""``seek impact`` against real history (issue 44, "Measured": impact against real history).

In each repository's history (a full-history git dir), the commits that change a
definition's signature together with other source files: at the parent commit, does
``seek impact`` on that definition list the definitions the commit had to edit elsewhere?

- **Cases.** Walking back from ``HEAD`` (no merges), a commit that changes 2 to
  ``--max-files`` source files (files the graph reads; more is a mass edit: a reformat, a
  rename across the tree) is compared with its parent by :func:`seek.change.definitions.
  compare`; each definition outside tests that is *modified* or *renamed* with its
  signature changed is a subject (at most ``--per-commit`` a commit), when some other file
  of the commit has a changed definition that existed at the parent.
- **Truth, two sets**, both of definitions in the commit's *other* files that existed at
  the parent (modified, removed, renamed or moved; an added one cannot be listed at the
  parent): ``all`` every such definition; ``users`` those whose own removed lines (a nested
  definition's lines are its own) held a use of the subject's name as the graph extracts
  uses (a call, a reference; not a comment or a string; a use the commit added was none
  at the parent), but not a definition of that name (an override
  or a namesake is not a use): the edits the subject's change forced, as far as names
  show. grep finds every such line by construction, so on ``users`` grep's recall is its
  ceiling and what matters is the length of its list.
- **seek impact** at the parent: the graph of the parent's tree, read as a one-shot CLI
  call reads it (each file's stored row, :func:`seek.index.graph_rows.file_facts`, decoded
  lazily by :func:`seek.index.graph_rows.read_graph`; rows cached by blob), then
  :func:`seek.change.impact.impact` on the subject at depth 3 (the CLI's default). Rows
  at depth 1 are the same whatever the depth, so depth 1 is the prefix; ``shown`` is what
  the CLI prints by default (tests after code, the first 50 rows). Its characters are the
  CLI's text (:func:`seek.workspace.change_rows.impact_text`).
- **grep**: ``grep -rnw NAME`` over the same files at the parent (``git grep``): the
  definitions enclosing its hits (a hit at file level counts as one row per file), and
  the characters of its output.

Recall is the share of a case's truth listed, averaged over cases (micro: pooled); the
list length is the number of rows (definitions, or a file's top level) a method lists, and
``edited_share`` the share of all methods' rows that the commit edited (pooled over cases:
a precision against ``all``).

    python -m bench.change.impact_history [--commits 40] [--out FILE] NAME=GIT_DIR ...
"""

from __future__ import annotations

import argparse
import json
import posixpath
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bench.common import RESULTS
from seek.change.definitions import VALUE_KINDS, Change, FileSide, compare
from seek.change.impact import Reached, impact, importers
from seek.chunk import MAX_PARSE_LINE_CHARS
from seek.chunk.languages import grammar_for_path
from seek.graph import CodeGraph, Definition, extract
from seek.graph.extract import extract_rows
from seek.graph.lookup import TEST_PATH
from seek.index.graph_rows import Encoded, encode, read_graph
from seek.workspace.change_rows import impact_text, reached_rows
from seek.workspace.code_graph import GraphResult

MAX_FILE_BYTES = 524_288  # seek's default max_file_bytes
SHOWN_ROWS = 50  # the CLI's default limit
_SKIP = re.compile(r"(^|/)(node_modules|vendor|dist|build)/|\.min\.js$")
_GO_MODULE = re.compile(rb"^\s*module\s+(\S+)", re.MULTILINE)
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class Blobs:
    """One repository's blobs by one long-running ``git cat-file --batch``."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self._proc = subprocess.Popen(
            ["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )  # fmt: skip

    def get(self, name: str) -> bytes | None:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
        self._proc.stdin.flush()
        header = self._proc.stdout.readline().split()
        if len(header) != 3:
            return None
        data = self._proc.stdout.read(int(header[2]) + 1)[:-1]
        return data if header[1] == b"blob" else None

    def git(self, *args: str) -> str:
        done = subprocess.run(["git", f"--git-dir={self.git_dir}", *args], capture_output=True)
        return done.stdout.decode("utf-8", "surrogateescape")

    def close(self) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        self._proc.wait()


def graph_file(path: str) -> bool:
    return grammar_for_path(path) is not None and not _SKIP.search(path)


class Trees:
    """Parent trees as the index would store them: each file's row, cached by blob."""

    def __init__(self, blobs: Blobs) -> None:
        self.blobs = blobs
        self._rows: dict[tuple[str, str, tuple[str, str] | None], Encoded | None] = {}

    def files(self, commit: str) -> dict[str, str]:
        """path -> blob id of the graph's files (and go.mod files) in ``commit``."""
        out = {}
        for entry in self.blobs.git("ls-tree", "-r", "-z", "-l", commit).split("\0"):
            meta, _, path = entry.partition("\t")
            parts = meta.split()
            if len(parts) != 4 or parts[1] != "blob" or not parts[3].isdigit():  # "BAD": absent
                continue
            if int(parts[3]) <= MAX_FILE_BYTES and (graph_file(path) or path.endswith("go.mod")):
                out[path] = parts[2]
        return out

    def graph(self, tree: dict[str, str]) -> CodeGraph:
        modules = {}
        for path, blob in tree.items():
            if posixpath.basename(path) == "go.mod":
                found = _GO_MODULE.search(self.blobs.get(blob) or b"")
                if found:
                    modules[posixpath.dirname(path)] = found.group(1).decode("utf-8", "replace")
        rows = []
        for path, blob in tree.items():
            if path.endswith("go.mod"):
                continue
            module = _module_of(path, modules) if path.endswith(".go") else None
            key = (path, blob, module)
            if key not in self._rows:
                self._rows[key] = _row(path, self.blobs.get(blob) or b"", module)
            row = self._rows[key]
            if row is not None:
                rows.append((path, *row))
        return read_graph(rows)


def _module_of(path: str, modules: dict[str, str]) -> tuple[str, str] | None:
    folder = posixpath.dirname(path)
    while True:
        if folder in modules:
            return (folder, modules[folder])
        if not folder:
            return None
        folder = posixpath.dirname(folder)


def _row(path: str, data: bytes, module: tuple[str, str] | None) -> Encoded | None:
    """:func:`seek.index.graph_rows.file_facts` with the Go module read from the tree."""
    text = data.decode("utf-8", errors="replace")
    if max(map(len, text.split("\n")), default=0) > MAX_PARSE_LINE_CHARS:
        return None
    try:
        found = extract_rows(path, data)
    except Exception:  # noqa: BLE001 - as the indexer, a parser failure skips the file
        return None
    return None if found is None else encode(found[0], module, found[1])


@dataclass
class Case:
    repo: str
    commit: str
    subject: Definition
    change: str
    truth_all: set[tuple[str, str]]
    truth_users: set[tuple[str, str]]


def changed_lines(blobs: Blobs, parent: str, commit: str) -> dict[str, tuple[dict, dict]]:
    """For each file of the diff: (old line -> removed text, new line -> added text), keyed
    by both its old and its new path."""
    out: dict[str, tuple[dict, dict]] = {}
    text = blobs.git("diff", "-U0", "--no-color", "--no-ext-diff", "-M", parent, commit)
    old_path = new_path = None
    removed: dict[int, str] = {}
    added: dict[int, str] = {}
    o = n = 0
    for line in text.split("\n"):
        if line.startswith("diff --git"):
            removed, added = {}, {}
            old_path = new_path = None
        elif line.startswith("--- "):
            old_path = line[6:] if line.startswith("--- a/") else None
        elif line.startswith("+++ "):
            new_path = line[6:] if line.startswith("+++ b/") else None
            for p in (old_path, new_path):
                if p:
                    out[p] = (removed, added)
        elif (m := _HUNK.match(line)) is not None:
            o, n = int(m.group(1)), int(m.group(3))
        elif line.startswith("-"):
            removed[o] = line[1:]
            o += 1
        elif line.startswith("+"):
            added[n] = line[1:]
            n += 1
    return out


def find_cases(blobs: Blobs, repo: str, commits: int, per_commit: int, max_files: int,
               scan: int) -> list[tuple[str, str, list[Case]]]:  # fmt: skip
    """(parent, commit, cases) for up to ``commits`` commits that have cases."""
    found = []
    log = blobs.git("log", "--no-merges", f"-n{scan}", "--format=%H %P", "HEAD").split("\n")
    for entry in log:
        parts = entry.split()
        if len(parts) != 2:
            continue
        commit, parent = parts
        status = blobs.git("diff", "--name-status", "-z", "-M", parent, commit).split("\0")
        pairs, i = [], 0
        while i < len(status) - 1:
            kind = status[i]
            if kind[:1] in ("R", "C"):
                old, new = status[i + 1], status[i + 2]
                pairs.append((old if kind[0] == "R" else None, new))
                i += 3
                continue
            path = status[i + 1]
            pairs.append((None if kind == "A" else path, None if kind == "D" else path))
            i += 2
        pairs = [(o, n) for o, n in pairs if graph_file(n or o or "")]
        if not 2 <= len(pairs) <= max_files:
            continue
        sides = []
        for old, new in pairs:
            before = blobs.get(f"{parent}:{old}") if old else None
            after = blobs.get(f"{commit}:{new}") if new else None
            sides.append((FileSide(old, before) if old and before is not None else None,
                          FileSide(new, after) if new and after is not None else None))  # fmt: skip
        changes = compare(sides)
        subjects = [
            c for c in changes
            if c.change in ("modified", "renamed") and c.signature_changed
            and c.old is not None and c.old.kind not in VALUE_KINDS
            and not TEST_PATH.search(c.old.path)
        ][:per_commit]  # fmt: skip
        if not subjects:
            continue
        lines = changed_lines(blobs, parent, commit)
        refs = {
            (index, side.path, r.line, r.name)
            for pair in sides for index, side in enumerate(pair) if side is not None
            for r in getattr(extract(side.path, side.data), "references", ())
        }  # fmt: skip
        cases = []
        for subject in subjects:
            case = _case(repo, commit, subject, changes, lines, refs)
            if case is not None:
                cases.append(case)
        if cases:
            found.append((parent, commit, cases))
            if len(found) >= commits:
                break
    return found


def _case(repo: str, commit: str, subject: Change, changes: list[Change], lines,
          refs: set[tuple[int, str, int, str]]) -> Case | None:  # fmt: skip
    old = subject.old
    assert old is not None
    names = {old.name, subject.current.name}
    # a use at the parent that the commit edited (a use it added was no use to find then)
    uses = {(0, path, line) for side, path, line, name in refs if side == 0 and name in names}
    others = [
        c for c in changes
        if c.old is not None and c.old.path != old.path and not (c.new and c.new.path == old.path)
    ]  # fmt: skip
    truth_all = {(c.old.path, c.old.qualified) for c in others if c.old is not None}
    truth_users = set()
    for c in others:
        assert c.old is not None
        if c.old.name in names:
            continue  # an override or a namesake is not a use (its header names itself)
        if any(key in uses for key in _own_changed(c, others, lines)):
            truth_users.add((c.old.path, c.old.qualified))
    if not truth_all:
        return None
    return Case(repo, commit, old, subject.change, truth_all, truth_users)


def _own_changed(change: Change, others: list[Change], lines) -> list[tuple[int, str, int]]:
    """(side, path, line) of each changed line of ``change``'s definition (side 0: a removed
    line of its old text, 1: an added line of its new text) that no changed definition
    nested in it holds (a method's edit is the method's, not its class's)."""
    found = []
    for side, index in (("old", 0), ("new", 1)):
        mine = getattr(change, side)
        if mine is None:
            continue
        spans = [(d.end_line - d.line, d) for c in others if (d := getattr(c, side)) is not None
                 and d.path == mine.path]  # fmt: skip
        for number in lines.get(mine.path, ({}, {}))[index]:
            inside = [(size, d) for size, d in spans if d.line <= number <= d.end_line]
            if inside and min(inside, key=lambda x: x[0])[1] is mine:
                found.append((index, mine.path, number))
    return found


class BlobLines:
    """:class:`seek.workspace.code_graph.Lines` over the parent's blobs."""

    def __init__(self, blobs: Blobs, parent: str) -> None:
        self.blobs, self.parent = blobs, parent
        self._files: dict[str, list[str]] = {}

    def get(self, root: Path, path: str, line: int) -> str:
        if path not in self._files:
            data = self.blobs.get(f"{self.parent}:{path}") or b""
            self._files[path] = data.decode("utf-8", "replace").split("\n")
        rows = self._files[path]
        return rows[line - 1].strip()[:200] if 0 < line <= len(rows) else ""


def _rows(reached: list[Reached], lines: BlobLines) -> list[dict]:
    """:func:`seek.workspace.change_rows.reached_rows`, the use's line read from the blob."""
    return reached_rows(Path("."), reached, lines)  # type: ignore[arg-type]


def _key(row: dict) -> tuple[str, str]:
    if row["kind"] == "file":
        return (row["path"], "")
    return (row["path"], f"{row['container']}.{row['name']}" if row["container"] else row["name"])


def measure(blobs: Blobs, trees: Trees, parent: str, cases: list[Case]) -> list[dict]:
    tree = trees.files(parent)
    graph = trees.graph(tree)
    files = set(tree)
    out = []
    for case in cases:
        s = case.subject
        subject = next((d for d in graph.outline(s.path)
                        if (d.line, d.name, d.kind) == (s.line, s.name, s.kind)), None)  # fmt: skip
        if subject is None:
            continue
        started = time.perf_counter()
        reached = impact(graph, subject, 3)
        imported = importers(graph, subject)
        seconds = time.perf_counter() - started
        rows = _rows(reached, BlobLines(blobs, parent))
        shown = rows[:SHOWN_ROWS]
        text = "\n".join(impact_text(GraphResult("impact", s.name, shown, importers=imported)))
        lists = {
            "depth1": {_key(r) for r in rows if r["depth"] == 1},
            "depth3": {_key(r) for r in rows},
            "shown": {_key(r) for r in shown},
            "grep": set(),
        }
        hits = blobs.git("grep", "-nw", "-I", "-e", s.name, parent)
        prefix = f"{parent}:"
        grep_chars = 0
        for line in hits.split("\n"):
            if not line.startswith(prefix):
                continue
            path, _, rest = line[len(prefix) :].partition(":")
            if path not in files or path.endswith("go.mod"):
                continue
            grep_chars += len(line) - len(prefix) + 1
            number = int(rest.partition(":")[0])
            inner = graph.enclosing(path, number)
            if inner == subject:
                continue
            lists["grep"].add((path, inner.qualified) if inner is not None else (path, ""))
        row = {"repo": case.repo, "commit": case.commit, "subject": f"{s.path}:{s.line}",
               "name": s.qualified, "kind": s.kind, "change": case.change,
               "truth_all": len(case.truth_all), "truth_users": len(case.truth_users),
               "impact_s": round(seconds, 4), "impact_chars": len(text),
               "grep_chars": grep_chars}  # fmt: skip
        for method, listed in lists.items():
            row[f"{method}_rows"] = len(listed)
            row[f"{method}_hit_all"] = len(case.truth_all & listed)
            row[f"{method}_hit_users"] = len(case.truth_users & listed)
        row["missed_users"] = sorted(f"{k[0]} {k[1]}" for k in case.truth_users - lists["depth3"])
        out.append(row)
    return out


METHODS = ("depth1", "depth3", "shown", "grep")


def summary(rows: list[dict]) -> dict:
    out: dict = {"cases": len(rows)}
    for truth in ("all", "users"):
        with_truth = [r for r in rows if r[f"truth_{truth}"]]
        part: dict = {"cases": len(with_truth)}
        for method in METHODS:
            hits = [r[f"{method}_hit_{truth}"] for r in with_truth]
            sizes = [r[f"truth_{truth}"] for r in with_truth]
            part[method] = {
                "recall": round(statistics.mean(h / n for h, n in zip(hits, sizes, strict=True)), 3)
                if with_truth else None,
                "recall_micro": round(sum(hits) / sum(sizes), 3) if with_truth else None,
            }  # fmt: skip
        out[truth] = part
    for method in METHODS:
        sizes = [r[f"{method}_rows"] for r in rows]
        hits = sum(r[f"{method}_hit_all"] for r in rows)
        # of the rows listed, the share the commit edited (pooled over cases)
        out[f"{method}_edited_share"] = round(hits / sum(sizes), 3) if sum(sizes) else None
        out[f"{method}_rows_median"] = statistics.median(sizes) if sizes else None
        out[f"{method}_rows_mean"] = round(statistics.mean(sizes), 1) if sizes else None
    for chars in ("impact_chars", "grep_chars"):
        out[f"{chars}_median"] = statistics.median(r[chars] for r in rows) if rows else None
    out["impact_s_median"] = statistics.median(r["impact_s"] for r in rows) if rows else None
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.change.impact_history", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("repos", nargs="+", help="NAME=GIT_DIR (a full-history git dir)")
    parser.add_argument("--commits", type=int, default=40, help="commits with cases per repo")
    parser.add_argument("--per-commit", type=int, default=3, help="subjects per commit")
    parser.add_argument("--max-files", type=int, default=20, help="source files per commit")
    parser.add_argument("--scan", type=int, default=3000, help="commits looked at per repo")
    parser.add_argument("--out", type=Path, default=RESULTS / "impact_history.json")
    args = parser.parse_args(argv)
    results: dict = {"settings": {k: v for k, v in vars(args).items() if k not in ("repos", "out")},
                     "repos": {}, "cases": []}  # fmt: skip
    for spec in args.repos:
        name, _, git_dir = spec.partition("=")
        blobs = Blobs(Path(git_dir))
        trees = Trees(blobs)
        started = time.perf_counter()
        rows: list[dict] = []
        try:
            for parent, _, cases in find_cases(blobs, name, args.commits, args.per_commit,
                                               args.max_files, args.scan):  # fmt: skip
                rows.extend(measure(blobs, trees, parent, cases))
        finally:
            blobs.close()
        results["repos"][name] = {**summary(rows), "seconds": round(time.perf_counter() - started)}
        results["cases"].extend(rows)
        results["all"] = summary(results["cases"])
        args.out.write_text(json.dumps(results, indent=1) + "\n")  # after each repository
        print(name, json.dumps(results["repos"][name]), file=sys.stderr, flush=True)
    print(json.dumps(results["all"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
