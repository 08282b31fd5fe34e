"""Review context against real commits (issue 44, "Measured": review context): given one
file's part of a real commit, the share of the commit's other changed files that `seek
context --diff` shows, and its characters, against `git diff` plus grep.

For each repository (a git directory with full history), commits that are not merges and
change 2-8 files the code graph reads, at least one of them outside tests, are sampled
(seeded, ``--per-repo`` of them). One file of the commit outside tests whose part changes a
definition is chosen (seeded); its part is applied to the parent's tree, in memory: the
tree's files are read from git, the file replaced by the commit's version, and the graph
built from them (:func:`seek.graph.build_graph`, as an index would build it), so no index,
model or checkout is needed. The change is what `seek changed` would report for that
working tree (:func:`seek.change.definitions.compare` over the file's two sides), and the
review context is :func:`seek.change.review.review` on it, as `seek context --diff` runs it.

The truth is the commit's *other* changed files that the graph reads (sources and tests):
what a reviewer of the one file would have needed to look at as well. A file counts as
shown when a block shows it: a changed definition's code, a use line, a test row or a
callee's signature (:attr:`seek.change.review.ReviewBlock.files`).

- **seek**: at the default budget (12,000 characters) and without a budget (every block
  whole: the ranking's ceiling); characters are the prompt's (headings and fences too).
- **baseline**: `git diff` of the file, then `grep -rlw NAME` over the whole tree (every
  file, as grep reads them) for each changed definition's name (renamed: both names); the
  files it lists are shown. Characters: the diff, plus the listed files read whole (what a
  reader opens), and, as the cheapest way to read grep, the diff plus every matching line
  as `grep -rnw` prints it (``path:line:text``).

Run from the repository root: ``python -m bench.change.review_context NAME=GIT_DIR ...``.
"""

from __future__ import annotations

import argparse
import copy
import difflib
import json
import random
import re
import subprocess
import sys
import time
from pathlib import Path

from seek.change.definitions import FileSide, compare
from seek.change.review import review
from seek.chunk.languages import grammar_for_path
from seek.graph import extract, link_graph
from seek.graph.lookup import TEST_PATH
from seek.settings import Settings

MAX_FILES, MIN_FILES = 8, 2
MAX_FILE_BYTES = Settings().max_file_bytes
_GO_MODULE = re.compile(rb"^\s*module\s+(\S+)", re.MULTILINE)


def git(git_dir: str, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", "--git-dir", git_dir, *args], input=data, check=True,
                          capture_output=True).stdout  # fmt: skip


def candidates(git_dir: str, scan: int) -> list[tuple[str, str, list[str]]]:
    """(commit, parent, changed graph files) of the last ``scan`` non-merge commits that
    change 2-8 files the graph reads, one at least outside tests (renames and copies off)."""
    out = git(git_dir, "log", "--no-merges", "--no-renames", f"-n{scan}", "--format=@%H %P",
              "--name-only", "HEAD").decode("utf-8", "replace")  # fmt: skip
    found = []
    for record in out.split("@")[1:]:
        head, *names = record.strip().split("\n")
        hashes = head.split()
        if len(hashes) != 2:
            continue
        files = [n for n in names if n and grammar_for_path(n)]
        if MIN_FILES <= len(files) <= MAX_FILES and any(not TEST_PATH.search(f) for f in files):
            found.append((hashes[0], hashes[1], files))
    return found


class Trees:
    """Blobs and extracted facts, cached by blob id across commits."""

    def __init__(self, git_dir: str) -> None:
        self.git_dir = git_dir
        self.blobs: dict[str, bytes] = {}
        self.facts: dict[tuple[str, str], object] = {}

    def tree(self, commit: str) -> dict[str, str]:
        """path -> blob id of every file of ``commit``."""
        out = git(self.git_dir, "ls-tree", "-r", "-z", "--full-tree", commit)
        tree = {}
        for entry in out.split(b"\0"):
            if not entry:
                continue
            meta, _, path = entry.partition(b"\t")
            mode, kind, blob = meta.split()
            if kind == b"blob" and mode != b"120000":
                tree[path.decode("utf-8", "surrogateescape")] = blob.decode()
        return tree

    def read(self, blobs: list[str]) -> None:
        wanted = [b for b in dict.fromkeys(blobs) if b not in self.blobs]
        if not wanted:
            return
        names = "".join(f"{b}\n" for b in wanted).encode()
        out = git(self.git_dir, "cat-file", "--batch", data=names)
        at = 0
        for blob in wanted:
            end = out.index(b"\n", at)
            header = out[at:end].split()
            at = end + 1
            size = int(header[2])
            self.blobs[blob] = out[at : at + size]
            at += size + 1

    def graph(self, files: dict[str, tuple[str, bytes]]):
        """The graph of ``files`` (path -> (blob id, bytes)), each file extracted once."""
        facts, go_modules = {}, {}
        for path, (blob, data) in files.items():
            if path.rsplit("/", 1)[-1] == "go.mod":
                match = _GO_MODULE.search(data)
                if match:
                    folder = path.rpartition("/")[0]
                    go_modules[folder] = match.group(1).decode("utf-8", "replace")
                continue
            if not grammar_for_path(path) or len(data) > MAX_FILE_BYTES:
                continue
            key = (path, blob)
            if key not in self.facts:
                self.facts[key] = extract(path, data)
            if self.facts[key] is not None:
                facts[path] = copy.copy(self.facts[key])  # the resolver sets its imports
        return link_graph(facts, go_modules)


def measure(trees: Trees, commit: str, parent: str, changed: list[str], rng: random.Random):
    """One sample's numbers, or None when no file outside tests changes a definition."""
    before_tree, after_tree = trees.tree(parent), trees.tree(commit)
    order = [f for f in changed if not TEST_PATH.search(f)]
    rng.shuffle(order)
    trees.read([before_tree[f] for f in order if f in before_tree]
               + [after_tree[f] for f in order if f in after_tree])  # fmt: skip
    for applied in order:
        old = trees.blobs.get(before_tree.get(applied, ""))
        new = trees.blobs.get(after_tree.get(applied, ""))
        before = FileSide(applied, old) if old is not None else None
        after = FileSide(applied, new) if new is not None else None
        changes = compare([(before, after)])
        if changes:
            break
    else:
        return None
    trees.read(list(before_tree.values()))
    files = {p: (b, trees.blobs[b]) for p, b in before_tree.items()}
    if new is None:
        files.pop(applied, None)
    else:
        files[applied] = (after_tree[applied], new)
    others = sorted(set(changed) - {applied})
    started = time.perf_counter()
    graph = trees.graph(files)
    built = time.perf_counter()
    lines = {p: d.decode("utf-8", "replace").split("\n") for p, (_, d) in files.items()
             if grammar_for_path(p)}  # fmt: skip

    def line_text(path: str, line: int) -> str:
        rows = lines.get(path, [])
        return rows[line - 1].strip()[:200] if 0 < line <= len(rows) else ""

    def read(path: str) -> bytes | None:
        return files[path][1] if path in files else None

    sides = ({applied: old} if old else {}, {applied: new} if new else {})
    arms = {}
    for arm, budget in (("seek", 12_000), ("seek_unbounded", 10_000_000)):
        found = review("HEAD", graph, changes, sides, line_text, budget, read)
        shown = {f for b in found.blocks for f in b.files}
        arms[arm] = {"shown": sorted(set(others) & shown), "chars": len(found.prompt()),
                     "blocks": len(found.blocks)}  # fmt: skip
    reviewed = time.perf_counter()
    # the baseline: git diff of the file, grep -rlw / -rnw of each changed name
    diff = "".join(difflib.unified_diff(
        (old or b"").decode("utf-8", "replace").splitlines(True),
        (new or b"").decode("utf-8", "replace").splitlines(True),
        f"a/{applied}", f"b/{applied}", n=3,
    ))  # fmt: skip
    names = {c.current.name for c in changes} | {c.old.name for c in changes if c.old}
    word = re.compile(rb"(?<![A-Za-z0-9_])(" + b"|".join(re.escape(n.encode()) for n in names)
                      + rb")(?![A-Za-z0-9_])")  # fmt: skip
    listed, line_chars, file_chars = set(), 0, 0
    for path, (_, data) in files.items():
        if b"\0" in data[:8000]:
            continue  # grep -I: binary files are not read
        hits = [ln for ln in data.split(b"\n") if word.search(ln)]
        if hits:
            listed.add(path)
            file_chars += len(data)
            line_chars += sum(len(path) + 2 + len(str(i)) + len(ln) + 1 for i, ln in
                              enumerate(hits))  # fmt: skip
    return {
        "commit": commit, "applied": applied, "others": others,
        "changes": len(changes), "names": sorted(names),
        **{arm: value for arm, value in arms.items()},
        "grep": {"shown": sorted(set(others) & listed), "listed": len(listed),
                 "chars_files": len(diff) + file_chars, "chars_lines": len(diff) + line_chars},
        "diff_chars": len(diff),
        "graph_s": round(built - started, 3), "review_s": round(reviewed - built, 3),
    }  # fmt: skip


def summary(samples: list[dict]) -> dict:
    """Recall as the share of all other changed files shown (micro) and the mean of each
    sample's share (macro); characters as medians."""

    def med(values):
        values = sorted(values)
        return values[len(values) // 2] if values else 0

    total = sum(len(s["others"]) for s in samples)
    out = {"n": len(samples), "other_files": total}
    for arm in ("seek", "seek_unbounded", "grep"):
        hit = sum(len(s[arm]["shown"]) for s in samples)
        out[arm] = {
            "recall": round(hit / total, 3) if total else None,
            "recall_macro": round(sum(len(s[arm]["shown"]) / len(s["others"]) for s in samples)
                                  / len(samples), 3) if samples else None,
        }  # fmt: skip
    out["seek"]["chars_median"] = med(s["seek"]["chars"] for s in samples)
    out["seek_unbounded"]["chars_median"] = med(s["seek_unbounded"]["chars"] for s in samples)
    out["grep"]["chars_files_median"] = med(s["grep"]["chars_files"] for s in samples)
    out["grep"]["chars_lines_median"] = med(s["grep"]["chars_lines"] for s in samples)
    out["grep"]["listed_median"] = med(s["grep"]["listed"] for s in samples)
    out["diff_chars_median"] = med(s["diff_chars"] for s in samples)
    out["graph_s_median"] = med(s["graph_s"] for s in samples)
    out["review_s_median"] = med(s["review_s"] for s in samples)  # both arms
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+", help="NAME=GIT_DIR")
    parser.add_argument("--per-repo", type=int, default=30)
    parser.add_argument("--scan", type=int, default=1500, help="commits scanned per repo")
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--out", default="bench/results/review_context.json")
    args = parser.parse_args(argv)
    report: dict = {"per_repo": args.per_repo, "seed": args.seed, "repos": {}}
    for spec in args.repos:
        name, _, git_dir = spec.partition("=")
        rng = random.Random(f"{args.seed}:{name}")
        pool = candidates(git_dir, args.scan)
        rng.shuffle(pool)
        trees, samples = Trees(git_dir), []
        for commit, parent, changed in pool:
            if len(samples) >= args.per_repo:
                break
            found = measure(trees, commit, parent, changed, rng)
            if found is not None:
                samples.append(found)
                print(name, len(samples), commit[:10], found["seek"]["shown"], found["others"],
                      file=sys.stderr, flush=True)  # fmt: skip
        head = git(git_dir, "rev-parse", "HEAD").decode().strip()
        report["repos"][name] = {"head": head, "pool": len(pool), **summary(samples),
                                 "samples": samples}  # fmt: skip
    everything = [s for r in report["repos"].values() for s in r["samples"]]
    report["all"] = summary(everything)
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    brief = {n: {k: v for k, v in r.items() if k != "samples"} for n, r in report["repos"].items()}
    print(json.dumps(brief | {"all": report["all"]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
