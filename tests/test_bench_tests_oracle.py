"""The tests oracle's scoring (issue 44, "Tests against a dynamic oracle";
bench/change/scoring.py): micro precision and recall, the mapping of a selection's rows
onto the oracle's tests, and a whole repository scored against a constructed oracle with
seek's real graph."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

_REPO_ROOT = str(Path(__file__).resolve().parent.parent)
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

from bench.change.scoring import Universe, micro, score_repository  # noqa: E402


def test_micro_sums_counts_over_functions_before_dividing():
    # 1 of 3 chosen right for the first function (c missed), 2 of 2 for the second: micro
    # sums TP/FP/FN (3, 2, 1) before dividing; the ratios' mean would give 0.667 / 0.75.
    got = micro([({"a", "b", "d"}, {"a", "c"}), ({"x", "y"}, {"x", "y"})])
    assert (got["tp"], got["fp"], got["fn"]) == (3, 2, 1)
    assert got["precision"] == 0.6
    assert got["recall"] == 0.75
    assert got["f1"] == 0.667
    assert got["mean_selected"] == 2.5


def test_micro_of_empty_selections_is_zero_not_an_error():
    got = micro([(set(), {"a"})])
    assert (got["precision"], got["recall"], got["f1"]) == (0.0, 0.0, 0.0)
    assert got["fn"] == 1


def test_universe_maps_rows_by_id_then_by_the_test_holding_the_line():
    universe = Universe(
        {
            "t.py::TestA.test_x": {
                "path": "t.py",
                "name": "TestA.test_x",
                "line": 5,
                "end_line": 8,
            },
            "t.py::test_y": {"path": "t.py", "name": "test_y", "line": 12, "end_line": 14},
        }
    )
    assert universe.at("t.py", 1, "test_y") == "t.py::test_y"  # the id wins over the line
    assert universe.at("t.py", 7) == "t.py::TestA.test_x"
    assert universe.at("t.py", 13) == "t.py::test_y"
    assert universe.at("t.py", 10) is None  # between tests
    assert universe.at("other.py", 7) is None  # a file that was not run


def _repository(root: Path) -> dict:
    (root / "pkg").mkdir()
    (root / "tests").mkdir()
    (root / "pkg" / "mod.py").write_text(
        "def direct(x):\n"
        "    return x + 1\n"
        "\n"
        "\n"
        "def via_table(x):\n"
        "    return x * 2\n"
        "\n"
        "\n"
        "TABLE = {'double': via_table}\n"
        "\n"
        "\n"
        "def dispatch(name, x):\n"
        "    return TABLE[name](x)\n"
    )
    (root / "tests" / "test_mod.py").write_text(
        "from pkg.mod import direct, dispatch\n"
        "\n"
        "\n"
        "def test_direct():\n"
        "    assert direct(1) == 2\n"
        "\n"
        "\n"
        "def test_dispatch():\n"
        "    assert dispatch('double', 2) == 4\n"
        "\n"
        "\n"
        "def test_other():\n"
        "    assert True\n"
    )
    tests = {
        f"tests/test_mod.py::{name}": {
            "path": "tests/test_mod.py",
            "name": name,
            "line": line,
            "end_line": line + 1,
        }
        for name, line in (("test_direct", 4), ("test_dispatch", 8), ("test_other", 12))
    }
    return {
        "repo": "tiny",
        "language": "python",
        "root": str(root),
        "tests": tests,
        "functions": [
            # what coverage would say: test_direct runs direct; test_dispatch runs direct
            # too (say, through a fixture) and via_table through the table
            {
                "path": "pkg/mod.py",
                "line": 1,
                "end_line": 2,
                "name": "direct",
                "qualified": "direct",
                "tests": ["tests/test_mod.py::test_direct", "tests/test_mod.py::test_dispatch"],
            },
            {
                "path": "pkg/mod.py",
                "line": 5,
                "end_line": 6,
                "name": "via_table",
                "qualified": "via_table",
                "tests": ["tests/test_mod.py::test_dispatch"],
            },
        ],
    }


def test_a_repository_is_scored_per_method_and_level_against_the_oracle(tmp_path):
    result = score_repository(_repository(tmp_path))
    assert result["functions"] == 2
    walk = result["micro"]["walk"]["function"]
    # The walk over uses reaches test_direct from direct (1 TP; test_dispatch missed) and,
    # through TABLE's use of via_table and dispatch's use of TABLE, test_dispatch.
    assert (walk["tp"], walk["fp"], walk["fn"]) == (2, 0, 1)
    grep = result["micro"]["grep"]["function"]
    # grep: "direct" is written in test_direct's body only; "via_table" in no test.
    assert (grep["tp"], grep["fp"], grep["fn"]) == (1, 0, 2)
    module = result["micro"]["module"]
    # mod.py's tests are test_mod.py's three: every truth found, and test_other for both.
    assert (module["function"]["tp"], module["function"]["fp"]) == (3, 3)
    assert (module["file"]["precision"], module["file"]["recall"]) == (1.0, 1.0)
    # file level: each function's one true file, found by the walk for both
    assert result["micro"]["walk"]["file"]["recall"] == 1.0
    ceiling = result["ceiling"]
    assert ceiling["pairs"] == 3
    assert ceiling["unreachable"] == 1  # (test_dispatch, direct): no chain of uses


@pytest.mark.parametrize("exported", [False, True])
def test_the_ceiling_names_an_unresolved_import_of_the_workspaces_own_package(tmp_path, exported):
    # The test imports the package by its own name (as zod's tests import "zod/v4"). When
    # package.json exports that subpath (a build output, mapped to its source) the graph
    # resolves it and the test reaches the function; when the subpath names no file there
    # (neither exported nor a source at that path, issue 45), the import resolves to no
    # file, no chain of uses reaches the test, and the ceiling names why.
    exports = {".": "./dist/index.js", **({"./lib": "./dist/lib.js"} if exported else {})}
    (tmp_path / "package.json").write_text(json.dumps({"name": "tinypkg", "exports": exports}))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.ts").write_text(
        "export function shout(s: string): string {\n  return s.toUpperCase();\n}\n"
    )
    (tmp_path / "src" / "lib.test.ts").write_text(
        'import { test, expect } from "vitest";\n'
        f'import {{ shout }} from "tinypkg/{"lib" if exported else "shouting"}";\n'
        "\n"
        'test("shouts", () => {\n'
        '  expect(shout("a")).toBe("A");\n'
        "});\n"
    )
    test_id = "src/lib.test.ts::shouts"
    oracle = {
        "repo": "tinypkg",
        "language": "typescript",
        "root": str(tmp_path),
        "tests": {test_id: {"path": "src/lib.test.ts", "name": "shouts", "line": 4, "end_line": 6}},
        "functions": [
            {
                "path": "src/lib.ts",
                "line": 1,
                "end_line": 3,
                "name": "shout",
                "qualified": "shout",
                "tests": [test_id],
            }
        ],
    }
    result = score_repository(oracle)
    assert result["micro"]["grep"]["function"]["recall"] == 1.0  # the text names it
    ceiling = result["ceiling"]
    if exported:
        assert (ceiling["pairs"], ceiling["unreachable"]) == (1, 0)
        assert result["micro"]["seek"]["function"]["recall"] == 1.0
        return
    assert (ceiling["pairs"], ceiling["unreachable"]) == (1, 1)
    (cause,) = ceiling["by_cause"]
    assert "workspace's own package" in cause
