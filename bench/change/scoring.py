"""Scoring test selection against a per-test coverage oracle (issue 44; the oracle's format
is bench/change/FORMAT.md, the command bench.change.tests_oracle).

For each sampled function, each method selects tests; rows are mapped onto the oracle's
tests (by ``PATH::NAME``, else by the test whose lines hold the row's line) and scored at
two levels: test functions and test files. Selections outside the oracle's universe (tests
that were not collected) are left out, not counted wrong. Counts are summed over the functions
(micro averages): precision TP / (TP + FP), recall TP / (TP + FN).

Methods:

* ``seek``: `seek tests` (:func:`seek.change.tests.select_tests`, its default depth);
* ``grep``: the test files in which ``grep -rlw NAME`` finds the function's name, and at
  function level the tests among them whose own lines name it;
* ``module``: the tests of the file named after the function's module (``test_app.py``,
  ``app_test.go``, ``app.test.ts``, ``app.spec.ts``);
* ``walk``: where issue 44 started, the breadth-first walk over `refs` (the graph's bound
  uses, :func:`seek.change.impact.impact` at depth 3) up to test code.

The ceiling check walks the uses without a depth limit: an oracle pair (test, function) the
walk cannot reach has no static path in the graph. Each such pair is put down to a cause
from what the graph knows of the function (:func:`_cause`).
"""

from __future__ import annotations

import bisect
import inspect
import json
import posixpath
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

from bench.graph.oracle import workspace_files
from seek.change.impact import _imports_at
from seek.graph import CodeGraph, Definition, build_graph
from seek.graph.lookup import TEST_PATH

WALK_DEPTH = 3
CEILING_DEPTH = 64
LEVELS = ("function", "file")
METHODS = ("seek", "grep", "module", "walk", "walk_unbounded")
_MODULE_TESTS = ("test_{}.py", "{}_test.py", "{}_test.go", "{}.test.ts", "{}.spec.ts",
                 "{}.test.js", "{}.spec.js", "{}.test.tsx")  # fmt: skip


def micro(pairs: Iterable[tuple[set[str], set[str]]]) -> dict[str, float | int]:
    """Micro precision, recall and F1 of (selected, truth) pairs, and the selections' mean
    length."""
    tp = fp = fn = selected = n = 0
    for chosen, truth in pairs:
        tp += len(chosen & truth)
        fp += len(chosen - truth)
        fn += len(truth - chosen)
        selected += len(chosen)
        n += 1
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "precision": round(precision, 3),
        "recall": round(recall, 3),
        "f1": round(f1, 3),
        "mean_selected": round(selected / n, 1) if n else 0.0,
        "tp": tp,
        "fp": fp,
        "fn": fn,
    }


class Universe:
    """The oracle's tests, looked up by id or by a line inside one."""

    def __init__(self, tests: dict[str, dict]) -> None:
        self.tests = tests
        self.files = {t["path"] for t in tests.values()}
        self._starts: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
        for test_id, t in tests.items():
            self._starts[t["path"]].append((t["line"], t.get("end_line") or t["line"], test_id))
        for spans in self._starts.values():
            spans.sort()

    def at(self, path: str, line: int, name: str | None = None) -> str | None:
        if name is not None and f"{path}::{name}" in self.tests:
            return f"{path}::{name}"
        spans = self._starts.get(path, [])
        i = bisect.bisect_right(spans, (line, 1 << 30, "")) - 1
        while i >= 0:
            start, end, test_id = spans[i]
            if start <= line <= end:
                return test_id
            i -= 1
        return None

    def in_files(self, paths: Iterable[str]) -> set[str]:
        wanted = set(paths)
        return {i for i, t in self.tests.items() if t["path"] in wanted}


def _select_seek(graph: CodeGraph, read: Callable[[str], bytes | None]):
    """`seek tests` when the library has it, else None (the column is then left out)."""
    try:
        from seek.change.tests import select_tests
    except ImportError:
        return None
    takes_read = "read" in inspect.signature(select_tests).parameters

    def select(subject: Definition, universe: Universe) -> tuple[set[str], set[str]]:
        rows = (
            select_tests(graph, [subject], read=read)
            if takes_read
            else select_tests(graph, [subject])
        )
        tests = {universe.at(r.path, r.line, r.name) for r in rows} - {None}
        return tests, {r.path for r in rows} & universe.files  # type: ignore[return-value]

    return select


class Walk:
    """The breadth-first walk over the graph's bound uses that `seek impact` makes
    (:func:`seek.change.impact.impact`: a use's enclosing definition is next, a file-level
    use other than an import line reaches its file), without its ranking, and with each
    definition's users kept: the unbounded walk of hundreds of functions meets the same
    definitions over and over (zod: minutes -> seconds)."""

    def __init__(self, graph: CodeGraph, universe: Universe) -> None:
        self.graph = graph
        self.universe = universe
        self._users: dict[Definition, list[tuple[str, Definition | None, int]]] = {}

    def users(self, target: Definition) -> list[tuple[str, Definition | None, int]]:
        if target not in self._users:
            out = []
            for use in self.graph.uses(target):
                user = self.graph.by_key.get((use.path, use.enclosing)) if use.enclosing else None
                if user is None and _imports_at(self.graph, use):
                    continue  # the import itself, as impact skips it
                out.append((use.path, user, use.line))
            self._users[target] = out
        return self._users[target]

    def run(
        self, subject: Definition, depth: int, into: list | None = None
    ) -> tuple[set[str], set[str]]:
        """The tests and test files reached within ``depth`` (every definition reached is
        appended to ``into``)."""
        tests: set[str] = set()
        files: set[str] = set()
        seen: set[object] = {subject}
        frontier = [subject]
        for _ in range(depth):
            following = []
            for target in frontier:
                for path, user, line in self.users(target):
                    key: object = user if user is not None else ("file", path, line)
                    if key in seen:
                        continue
                    seen.add(key)
                    if user is not None:
                        following.append(user)
                        if into is not None:
                            into.append(user)
                    if TEST_PATH.search(path) and path in self.universe.files:
                        files.add(path)
                        found = self.universe.at(path, user.line if user else line)
                        if found:
                            tests.add(found)
            if not following:
                break
            frontier = following
        return tests, files


_CAUSES = (
    "the test file's import of the workspace's own package is unresolved (package exports)",
    "protocol method (called by the language or a framework: __call__, __init__, with, ...)",
    "name never written elsewhere (registration, getattr/strings, generated code)",
    "method on a receiver of unknown type (dynamic dispatch, interface)",
    "name written but not bound to it (binding gap)",
    "no root found (a cycle of uses)",
)


class Ceiling:
    """Which oracle pairs no chain of uses connects, and why. The chain can break anywhere
    between the test and the function, so each lost pair is put down to the *roots* of the
    function's users (itself and every definition that reaches it upward, with no bound
    use of their own): the first of :data:`_CAUSES` that one of them shows."""

    def __init__(
        self, graph: CodeGraph, words: Counter, universe: Universe, packages: set[str]
    ) -> None:
        self.graph = graph
        self.words = words
        self.universe = universe
        self.packages = packages
        self.lost: Counter[str] = Counter()
        self.pairs = 0
        self._root_cause: dict[Definition, int | None] = {}

    def _cause_of(self, d: Definition) -> int | None:
        if d not in self._root_cause:
            cause = None
            if d.name.startswith("__") and d.name.endswith("__"):
                cause = 1
            elif not self.graph.uses(d):
                if self.words.get(d.name.encode(), 0) <= 1:
                    cause = 2
                else:
                    cause = 3 if d.container else 4
            self._root_cause[d] = cause
        return self._root_cause[d]

    def add(self, subject: Definition, reached: list, truth: set[str], found: set[str]) -> None:
        self.pairs += len(truth)
        lost = truth - found
        if not lost:
            return
        chain = [subject, *reached]
        causes = [c for c in map(self._cause_of, chain) if c is not None]
        cause = _CAUSES[min(causes) if causes else len(_CAUSES) - 1]
        for test_id in lost:
            self.lost[_CAUSES[0] if self._self_import(test_id) else cause] += 1

    def _self_import(self, test_id: str) -> bool:
        """Whether the test's file imports one of the workspace's own packages by name
        (``zod/v4``) and the graph resolved that import to no file."""
        path = self.universe.tests[test_id]["path"]
        facts = self.graph.files.get(path)
        return facts is not None and any(
            not i.files and self._package_of(i.target) in self.packages for i in facts.imports
        )

    @staticmethod
    def _package_of(target: str) -> str:
        parts = target.split("/")
        return "/".join(parts[:2]) if target.startswith("@") else parts[0]

    def result(self) -> dict:
        lost = sum(self.lost.values())
        return {
            "pairs": self.pairs,
            "unreachable": lost,
            "unreachable_share": round(lost / self.pairs, 3) if self.pairs else 0.0,
            "by_cause": dict(self.lost.most_common()),
        }


def score_repository(oracle: dict) -> dict:
    root = Path(oracle["root"])
    files = dict(workspace_files(root))
    graph = build_graph(files)
    universe = Universe(oracle["tests"])
    test_text = {p: files[p].decode("utf-8", "replace") for p in universe.files if p in files}
    words = Counter(w for data in files.values() for w in re.findall(rb"\w+", data))
    seek = _select_seek(graph, files.get)
    pairs: dict[str, dict[str, list]] = {m: {lv: [] for lv in LEVELS} for m in METHODS}
    missing = 0
    ceiling = Ceiling(graph, words, universe, _packages(root))
    walk = Walk(graph, universe)
    misses: list[dict] = []
    for fn in oracle["functions"]:
        subject = next((d for d in graph.files[fn["path"]].definitions
                        if d.line == fn["line"] and d.name == fn["name"]), None)  # fmt: skip
        if subject is None:
            missing += 1
            continue
        truth = set(fn["tests"])
        truth_files = {universe.tests[t]["path"] for t in truth}
        chosen = {"walk": walk.run(subject, WALK_DEPTH)}
        if seek is not None:
            chosen["seek"] = seek(subject, universe)
        chosen["grep"] = _grep(fn["name"], test_text, universe)
        stem = posixpath.splitext(posixpath.basename(fn["path"]))[0].split(".")[0]
        named = {f.format(stem) for f in _MODULE_TESTS}
        module_files = {p for p in universe.files if posixpath.basename(p) in named}
        chosen["module"] = (universe.in_files(module_files), module_files)
        for method, (tests, tfiles) in chosen.items():
            pairs[method]["function"].append((tests, truth))
            pairs[method]["file"].append((tfiles, truth_files))
        mine = chosen.get("seek", chosen["walk"])[0]
        misses.append({"function": f"{fn['path']}:{fn['line']} {fn['qualified']}",
                       "missed": sorted(truth - mine), "extra": len(mine - truth),
                       "found": len(mine & truth)})  # fmt: skip
        reached: list = []
        unbounded = walk.run(subject, CEILING_DEPTH, reached)
        pairs["walk_unbounded"]["function"].append((unbounded[0], truth))
        pairs["walk_unbounded"]["file"].append((unbounded[1], truth_files))
        ceiling.add(subject, reached, truth, unbounded[0])
    result = {
        "language": oracle["language"],
        "functions": len(oracle["functions"]) - missing,
        "not_in_graph": missing,
        "tests": len(universe.tests),
        "test_files": len(universe.files),
        "micro": {
            m: {lv: micro(p[lv]) for lv in LEVELS} for m, p in pairs.items() if p["function"]
        },
        "ceiling": ceiling.result(),
        "_pairs": pairs,
        "_misses": misses,
    }
    return result


def _packages(root: Path) -> set[str]:
    """The names of the workspace's own JavaScript packages (their package.json)."""
    names = set()
    for manifest in root.rglob("package.json"):
        if "node_modules" in manifest.parts:
            continue
        try:
            name = json.loads(manifest.read_text()).get("name")
        except (ValueError, OSError, AttributeError):
            continue
        if isinstance(name, str):
            names.add(name)
    return names


def _grep(name: str, test_text: dict[str, str], universe: Universe) -> tuple[set[str], set[str]]:
    word = re.compile(rf"\b{re.escape(name)}\b")
    files = {p for p, text in test_text.items() if word.search(text)}
    tests = set()
    for test_id in universe.in_files(files):
        t = universe.tests[test_id]
        lines = test_text[t["path"]].splitlines()[t["line"] - 1 : t.get("end_line") or t["line"]]
        if word.search("\n".join(lines)):
            tests.add(test_id)
    return tests, files


def total(results: Iterable[dict]) -> dict:
    """Micro totals over repositories (the pairs summed, not the ratios averaged)."""
    merged: dict[str, dict[str, list]] = {}
    pairs = unreachable = 0
    for r in results:
        r.pop("_misses", None)
        for method, levels in r.pop("_pairs").items():
            for level, items in levels.items():
                merged.setdefault(method, {lv: [] for lv in LEVELS})[level].extend(items)
        pairs += r["ceiling"]["pairs"]
        unreachable += r["ceiling"]["unreachable"]
    return {
        "micro": {
            m: {lv: micro(p[lv]) for lv in LEVELS} for m, p in merged.items() if p["function"]
        },
        "ceiling_unreachable_share": round(unreachable / pairs, 3) if pairs else 0.0,
    }
