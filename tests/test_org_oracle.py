"""bench/org (issue 45, deliver 4): the reduction of a checker's answer to cross-repository
references, the scoring of grep's and seek's answers against it, and its table. Fast: no
checker runs; seek's answer is the JSON `seek corpus refs --json` prints."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.org import score
from bench.org.oracles import read_go, reduce, symbol_kind
from bench.org.seek_answers import SeekAnswers
from bench.org.slices import Repo, Slice, load_all, split_path
from bench.report import TABLES, tables

SLICE = Slice(
    "t",
    "typescript",
    (
        Repo("server", "o/m", "v1", True, "packages/server"),
        Repo("server-adapters", "o/m", "v1", True, "packages/server-adapters"),
        Repo("client", "o/m", "v1", False, "packages/client"),
    ),
)


def test_a_path_names_its_repository_by_the_longest_folder():
    assert split_path(SLICE, "packages/server/src/a.ts") == ("server", "src/a.ts")
    assert split_path(SLICE, "packages/server-adapters/x.ts") == ("server-adapters", "x.ts")
    assert split_path(SLICE, "tsconfig.json") is None
    nested = Slice("n", "go", (Repo("a", "o/a", "v1", True), Repo("ab", "o/b", "v1", True, "a/b")))
    assert split_path(nested, "a/b/c.go") == ("ab", "c.go")
    assert split_path(nested, "a/c.go") == ("a", "c.go")


def test_the_slices_pin_every_repository():
    for slice_ in load_all():
        assert slice_.libraries, slice_.name
        for repo in slice_.repos:
            assert "/" in repo.github and repo.revision, (slice_.name, repo.name)


def test_symbol_kinds_leave_out_parameters_and_modules():
    assert symbol_kind("scip-python python p 0 `a.b`/f().") == "function"
    assert symbol_kind("scip-typescript npm p 1 src/`x.ts`/Router#") == "type"
    assert symbol_kind("scip-typescript npm p 1 src/`x.ts`/router.") == "term"
    assert symbol_kind("scip-python python p 0 `a.b`/f().(self)") is None
    assert symbol_kind("scip-typescript npm p 1 src/`x.ts`/f().[T]") is None
    assert symbol_kind("scip-python python p 0 a/__init__:") is None
    assert symbol_kind("12:type:Flag") == "type"
    assert symbol_kind("13:other:pflag") is None


def _symbols():
    """A checker's answer over the slice's root: `initRouter` in server, used in client (twice
    on one line, and once on the line of client's own `initRouter` declaration), in server
    itself, and in server-adapters; `helper` in server, used only in server; client's
    `main` (not a library) used by server-adapters."""
    return {
        "npm server `r.ts`/initRouter().": {
            "defs": {("packages/server/src/r.ts", 3, 16)},
            "refs": {
                ("packages/server/src/index.ts", 1, 9),
                ("packages/client/src/a.ts", 1, 9),
                ("packages/client/src/a.ts", 5, 2),
                ("packages/client/src/a.ts", 5, 20),
                ("packages/client/src/b.ts", 7, 0),
                ("packages/server-adapters/x.ts", 2, 9),
                ("tsconfig.json", 1, 0),
            },
        },
        "npm client `b.ts`/initRouter().": {"defs": {("packages/client/src/b.ts", 7, 9)},
                                            "refs": set()},  # fmt: skip
        "npm server `r.ts`/helper().": {"defs": {("packages/server/src/r.ts", 9, 9)},
                                        "refs": {("packages/server/src/r.ts", 4, 2)}},  # fmt: skip
        "npm server `r.ts`/initRouter().(opts)": {"defs": {("packages/server/src/r.ts", 3, 27)},
                                                  "refs": {("packages/client/src/a.ts", 5, 30)}},
        "npm client `a.ts`/main().": {"defs": {("packages/client/src/a.ts", 4, 9)},
                                      "refs": {("packages/server-adapters/x.ts", 8, 1)}},
    }  # fmt: skip


def test_the_oracle_keeps_other_repositories_uses_by_line_without_declarations():
    oracle = reduce(SLICE, _symbols())
    by_name = {d["name"]: d for d in oracle["definitions"]}
    assert set(by_name) == {"initRouter", "helper"}  # libraries only; no parameter
    init = by_name["initRouter"]
    assert (init["repo"], init["path"], init["line"], init["col"], init["kind"]) == (
        "server", "src/r.ts", 3, 16, "function",
    )  # fmt: skip
    # one row a line; server's own use, the workspace's file and client's declaration of
    # the same name are not cross-repository uses
    assert init["refs"] == [["client", "src/a.ts", 1], ["client", "src/a.ts", 5],
                            ["server-adapters", "x.ts", 2]]  # fmt: skip
    assert by_name["helper"]["refs"] == []
    assert oracle["dependents"] == {"server": ["client", "server-adapters"],
                                    "client": ["server-adapters"]}  # fmt: skip
    assert oracle["declarations"]["initRouter"] == [["client", "src/b.ts", 7],
                                                    ["server", "src/r.ts", 3]]  # fmt: skip


def test_the_go_oracle_lines_are_read_with_byte_columns_from_zero():
    line = {"name": "Flag", "kind": "type", "def": {"path": "pflag/flag.go", "line": 3, "col": 6},
            "uses": [{"path": "cobra/c.go", "line": 9, "col": 2}]}  # fmt: skip
    ((symbol, entry),) = read_go(json.dumps(line) + "\n").items()
    assert symbol_kind(symbol) == "type"
    assert entry == {"defs": {("pflag/flag.go", 3, 5)}, "refs": {("cobra/c.go", 9, 1)}}
    assert read_go(json.dumps({**line, "uses": None}))  # an unused object: no uses


def test_the_sample_is_seeded_and_mixes_used_and_unused_definitions():
    defs = [{"name": f"d{n}", "refs": [["b", "x", n]] if n % 3 else []} for n in range(30)]
    first = score.sample(defs, 5, 2, seed=1)
    assert first == score.sample(defs, 5, 2, seed=1)
    assert sum(bool(d["refs"]) for d in first) == 5 and len(first) == 7
    assert [defs.index(d) for d in first] == sorted(defs.index(d) for d in first)
    assert score.sample(defs, 5, 2, seed=2) != first


def test_micro_precision_and_recall_leave_declaration_lines_out_of_every_answer():
    oracle = reduce(SLICE, _symbols())
    init = next(d for d in oracle["definitions"] if d["name"] == "initRouter")
    # an answer with one of the three uses, a wrong line and client's declaration line
    answer = {("client", "src/a.ts", 5), ("client", "src/a.ts", 9), ("client", "src/b.ts", 7)}
    misses: list = []
    tally = score.score_definitions(oracle, [init], lambda d: answer, misses, "x")
    assert (tally.tp, tally.found, tally.truth) == (1, 2, 3)
    assert tally.to_json() == {"precision": 0.5, "recall": 0.3333, "tp": 1, "fp": 1, "fn": 2,
                               "by_kind": {"function": {"precision": 0.5, "recall": 0.3333,
                                                        "tp": 1, "fp": 1, "fn": 2}}}  # fmt: skip
    assert misses[0]["wrong"] == ["client:src/a.ts:9"]
    assert misses[0]["missed"] == ["client:src/a.ts:1", "server-adapters:x.ts:2"]
    assert score.Tally().to_json()["precision"] is None


def test_grep_counts_other_repositories_whole_words(tmp_path):
    if shutil.which("grep") is None:
        pytest.skip("no grep")
    root = tmp_path
    for path, text in {
        "packages/server/src/r.ts": "export function initRouter() {}\n",
        "packages/client/src/a.ts": "import { initRouter } from 's';\n\ninitRouterX();\n",
        "packages/server-adapters/x.ts": "// initRouter\n",
        "tsconfig.json": "initRouter\n",
    }.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    assert score.grep_cross(SLICE, root, "initRouter", "server") == {
        ("client", "src/a.ts", 1), ("server-adapters", "x.ts", 1),
    }  # fmt: skip


class CannedSeek(SeekAnswers):
    """seek's answers as `seek corpus refs --json` / `seek corpus dependents --json` print
    them, without a corpus."""

    def __init__(self, answers: dict) -> None:
        super().__init__("corpus")
        self.answers = answers

    def run(self, args: list[str]):
        key = " ".join(args)
        if key not in self.answers:
            raise RuntimeError(f"no such repository: {key}")
        return self.answers[key]


def test_seeks_refs_answer_is_read_by_repository_and_its_subject_checked():
    row = {"kind": "call", "name": "initRouter", "container": "main", "column": 2}
    refs = {"repo": "server", "tool": "refs", "query": "src/r.ts:3",
            "subject": {"repo": "server", "path": "src/r.ts", "line": 3, "end_line": 8},
            "rows": [{**row, "repo": "server", "path": "src/index.ts", "line": 1},
                     {**row, "repo": "client", "path": "src/a.ts", "line": 5},
                     {**row, "repo": "client", "path": "src/a.ts", "line": 5}]}  # fmt: skip
    elsewhere = {**refs, "subject": {"repo": "server", "path": "src/r.ts", "line": 20,
                                     "end_line": 30}, "rows": []}  # fmt: skip
    seek = CannedSeek({
        "corpus refs corpus src/r.ts:3 --repo server --limit 1000 --json": refs,
        "corpus refs corpus src/r.ts:9 --repo server --limit 1000 --json": elsewhere,
        "corpus dependents corpus --repo server --json": {
            "rows": [{"repo": "client", "names": {"initRouter": 2}}, {"repo": "server"}]},
        "corpus dependents corpus --repo client --json": [],
    })  # fmt: skip
    assert seek.refs({"repo": "server", "path": "src/r.ts", "line": 3}) == {
        ("client", "src/a.ts", 5)
    }
    assert seek.subjects_missed == 0
    assert seek.refs({"repo": "server", "path": "src/r.ts", "line": 9}) == set()
    assert seek.subjects_missed == 1
    assert seek.refs({"repo": "client", "path": "x.ts", "line": 1}) == set()
    assert len(seek.errors) == 1
    oracle = reduce(SLICE, _symbols())
    tally, shown = score.score_dependents(
        oracle, ["server", "client", "server-adapters"], seek.dependents
    )
    # server: client found, server-adapters missed; client: server-adapters missed
    assert (tally.tp, tally.found, tally.truth) == (1, 1, 3)
    assert shown["server"] == {"oracle": ["client", "server-adapters"], "found": ["client"]}
    assert any("server-adapters" in e for e in seek.errors)


def test_the_table_renders_each_slice_from_its_results():
    data = {"date": "2026-12-03 23:00 UTC", "commit": "abc1234", "machine": {"cpus": 2},
            "slices": [{
                "slice": "python", "language": "python",
                "repos": {"requests": {"library": False}, "urllib3": {"library": True},
                          "idna": {"library": True}},
                "oracle": {"tool": "scip-python", "cross_refs": 1109, "with_cross_refs": 38},
                "sampled": 87, "sampled_with_refs": 37,
                "grep": {"precision": 0.1424, "recall": 0.8173},
                "seek": {"precision": 0.95, "recall": 0.9123,
                         "dependents": {"precision": 1.0, "recall": 0.5}},
            }, {
                "slice": "go", "language": "go", "repos": {"cobra": {}, "pflag": {"library": True}},
                "oracle": {"tool": "go/types", "cross_refs": 7, "with_cross_refs": 2},
                "sampled": 3, "sampled_with_refs": 2,
                "grep": {"precision": 0.5, "recall": None}, "seek": None,
            }]}  # fmt: skip
    lines = tables.org_refs([("bench/results/org_refs.json", data)])
    assert lines[0].startswith("Run of record: 2026-12-03 23:00 UTC, seek `abc1234`")
    python, go = lines[-2], lines[-1]
    assert python.startswith("| Python: requests → urllib3, idna | scip-python: 1,109 uses of 38")
    assert "| 87 (37 used) | 0.950 / 0.912 | 0.142 / 0.817 | 1.000 / 0.500 |" in python
    assert go.endswith("| 3 (2 used) | not scored | 0.500 /  | not scored |")
    assert TABLES["org_refs"].results == ("bench/results/org_refs.json",)


def test_the_results_file_renders(tmp_path):
    root = Path(__file__).resolve().parents[1]
    data = json.loads((root / "bench/results/org_refs.json").read_text())
    lines = tables.org_refs([("bench/results/org_refs.json", data)])
    assert len(lines) == 4 + len(data["slices"])
