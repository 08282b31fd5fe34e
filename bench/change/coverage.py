"""Per-test coverage, taken with each language's own runner (issue 44, "Tests against a
dynamic oracle"): which lines of which files every test function executes.

Each collector returns a :class:`Run`: the tests it ran (id ``PATH::NAME``, see
bench/change/FORMAT.md, written by bench.change.tests_oracle) and, per test, the
executed lines of each file, paths relative to the checkout's root.

* Python: ``pytest --cov=SRC --cov-context=test`` once; coverage's per-line contexts
  (``tests/test_x.py::TestA::test_b[p]|run``) name the test; setup, call and teardown all
  count (a fixture's code runs for the test), parametrized cases fold into one test.
* Go: per package with tests, one test binary built with ``go test -c -cover
  -coverpkg=./...``, then run once per top-level test function with ``-test.run '^TestX$'
  -test.coverprofile``; subtests fold into their parent. The module's requirements must
  resolve offline (GOFLAGS=-mod=mod GOPROXY=off and a ``-modfile`` with local ``replace``
  lines: see bench.change.tests_oracle).
* TypeScript (vitest): see bench.change.vitest_coverage.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Run:
    """Tests run (id -> {path, name, line, end_line}) and the lines each one executed."""

    tests: dict[str, dict] = field(default_factory=dict)
    lines: dict[str, dict[str, set[int]]] = field(default_factory=lambda: defaultdict(dict))

    def add(self, test_id: str, path: str, lines: set[int]) -> None:
        self.lines[test_id].setdefault(path, set()).update(lines)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- Python ---------------------------------------------------------------------------------

_DUMP = """
import json, coverage
data = coverage.CoverageData(".coverage")
data.read()
out = {}
for f in data.measured_files():
    out[f] = {str(n): sorted(c) for n, c in (data.contexts_by_lineno(f) or {}).items()}
print(json.dumps(out))
"""


def _python_tests(path: Path) -> dict[str, tuple[int, int]]:
    """Qualified test names in one file (``TestA.test_b``, ``test_c``) -> (line, end_line)."""
    out: dict[str, tuple[int, int]] = {}

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                walk(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                out[prefix + node.name] = (node.lineno, node.end_lineno or node.lineno)

    walk(ast.parse(path.read_bytes()).body, "")
    return out


def python_coverage(root: Path, python: str, source: str, tests: str = "tests") -> Run:
    """Run the suite once under coverage's per-test contexts and read them back."""
    (root / ".coverage").unlink(missing_ok=True)
    cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    cmd += ["-o", "addopts=", f"--cov={source}", "--cov-context=test", "--cov-report=", tests]
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=3600)
    _log(f"  pytest rc={done.returncode}: {done.stdout.strip().splitlines()[-1:]}")
    dump = subprocess.run([python, "-c", _DUMP], cwd=root, capture_output=True, check=True)
    run = Run()
    defined: dict[str, dict[str, tuple[int, int]]] = {}
    for abs_file, by_line in json.loads(dump.stdout).items():
        rel = Path(abs_file).resolve().relative_to(root.resolve()).as_posix()
        for number, contexts in by_line.items():
            for context in contexts:
                node = context.rpartition("|")[0] or context
                file, _, rest = node.partition("::")
                if not rest:
                    continue  # import time: no test
                name = ".".join(re.sub(r"\[.*$", "", part) for part in rest.split("::"))
                if file not in defined:
                    defined[file] = _python_tests(root / file)
                line, end = defined[file].get(name, (0, 0))
                test_id = f"{file}::{name}"
                run.tests.setdefault(
                    test_id, {"path": file, "name": name, "line": line, "end_line": end}
                )
                run.add(test_id, rel, {int(number)})
    # Tests that ran no measured line are tests too: a selection that names them is wrong.
    listed = subprocess.run(
        [python, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider", "-o", "addopts=",
         tests], cwd=root, capture_output=True, text=True, timeout=600,
    ).stdout  # fmt: skip
    for node in listed.splitlines():
        file, _, rest = node.strip().partition("::")
        if not rest or not file.endswith(".py"):
            continue
        name = ".".join(re.sub(r"\[.*$", "", part) for part in rest.split("::"))
        if file not in defined:
            defined[file] = _python_tests(root / file)
        line, end = defined[file].get(name, (0, 0))
        test_id = f"{file}::{name}"
        run.tests.setdefault(test_id, {"path": file, "name": name, "line": line, "end_line": end})
    return run


# -- Go -------------------------------------------------------------------------------------

_GO_TEST = re.compile(r"^func (Test\w*)\(\s*\w+ \*testing\.T\s*\)", re.M)


def _go_module(root: Path) -> str:
    match = re.search(r"^module\s+(\S+)", (root / "go.mod").read_text(), re.M)
    return match.group(1) if match else ""


def go_coverage(root: Path, per_test_timeout: int = 120, max_tests: int | None = None) -> Run:
    """One coverprofile per top-level test function of every package with tests."""
    module = _go_module(root)
    run = Run()
    scratch = Path(tempfile.mkdtemp(prefix="tests-oracle-go-"))
    folders = sorted(
        {
            p.parent
            for p in root.rglob("*_test.go")
            if not {"testdata", "vendor", "_examples"} & set(p.relative_to(root).parts)
        }
    )
    for folder in folders:
        rel_pkg = folder.relative_to(root).as_posix()
        binary = scratch / (rel_pkg.replace("/", "_") + ".test")
        build = ["go", "test", "-c", "-cover", "-covermode=set", "-coverpkg=./..."]
        made = subprocess.run(
            [*build, "-o", str(binary), "./" + rel_pkg if rel_pkg != "." else "."],
            cwd=root,
            capture_output=True,
            text=True,
        )
        if made.returncode != 0 or not binary.exists():
            _log(f"  go: {rel_pkg} does not build: {made.stderr.strip()[:300]}")
            continue
        where: dict[str, tuple[str, int, int]] = {}
        for test_file in sorted(folder.glob("*_test.go")):
            text = test_file.read_text(errors="replace")
            for match in _GO_TEST.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                end = line + _block_lines(text[match.end() :])
                where[match.group(1)] = (test_file.relative_to(root).as_posix(), line, end)
        listed = subprocess.run(
            [str(binary), "-test.list", "^Test"], cwd=folder, capture_output=True, text=True
        ).stdout.split()
        names = [n for n in listed if n in where][:max_tests]
        _log(f"  go: {rel_pkg or '.'}: {len(names)} tests")
        for name in names:
            profile = scratch / "cover.out"
            profile.unlink(missing_ok=True)
            try:
                subprocess.run(
                    [str(binary), "-test.run", f"^{name}$", "-test.count=1"]
                    + [f"-test.coverprofile={profile}", f"-test.timeout={per_test_timeout}s"],
                    cwd=folder,
                    capture_output=True,
                    timeout=per_test_timeout + 30,
                )
            except subprocess.TimeoutExpired:
                _log(f"  go: {name} timed out")
            path, line, end = where[name]
            test_id = f"{path}::{name}"
            run.tests[test_id] = {"path": path, "name": name, "line": line, "end_line": end}
            if profile.exists():
                for file, lines in _read_profile(profile.read_text(), module).items():
                    run.add(test_id, file, lines)
    shutil.rmtree(scratch, ignore_errors=True)
    return run


def _block_lines(rest: str) -> int:
    """Lines from a function's signature to its closing brace (braces in strings aside)."""
    depth, lines = 0, 0
    for ch in rest:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return lines
        elif ch == "\n":
            lines += 1
    return lines


def _read_profile(text: str, module: str) -> dict[str, set[int]]:
    """Executed lines per module-relative file of one coverprofile (``set`` mode)."""
    out: dict[str, set[int]] = defaultdict(set)
    for row in text.splitlines()[1:]:
        match = re.match(r"(.+):(\d+)\.\d+,(\d+)\.\d+ (\d+) (\d+)$", row)
        if not match or match.group(5) == "0" or match.group(4) == "0":
            continue
        name = match.group(1)
        if not name.startswith(module + "/"):
            continue
        out[name[len(module) + 1 :]].update(range(int(match.group(2)), int(match.group(3)) + 1))
    return out
