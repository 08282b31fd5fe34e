"""Per-test coverage under vitest (issue 44, "Tests against a dynamic oracle").

vitest reports coverage per run, not per test, and a run per test (``-t NAME``) costs 4-5 s
of startup on zod (3,000 tests: hours). So one run instead, with istanbul's instrumentation
(``coverage.provider: "istanbul"``) and a setup file, bench/change/vitest_hook.mjs, that
reads istanbul's counters before and after each test: the statements whose count grew ran in
that test. The counters are positions in the code vite produced (TypeScript stripped by
esbuild), so each statement's start is carried back to the source through the input source
map istanbul keeps beside it; a statement counts on its first line only, so a callback's
body is not counted when only the statement that defines it ran.

The run uses a config written beside the repository's own (``vitest.tests-oracle.mjs``, it
merges the setup file, the coverage settings, ``includeTaskLocation`` for each test's line,
no type checking, one worker), removed afterwards with the hook's copy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from bisect import bisect_right
from pathlib import Path

from bench.change.coverage import Run

HOOK = Path(__file__).with_name("vitest_hook.mjs")
_B64 = {
    c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
}
_CONFIG = """import base from "./{config}";
import {{ mergeConfig }} from "vitest/config";

export default mergeConfig(base, {{
  test: {{
    setupFiles: ["./tests-oracle.hook.mjs"],
    includeTaskLocation: true,
    typecheck: {{ enabled: false }},
    maxWorkers: 1,
    fileParallelism: false,
    coverage: {{
      enabled: true,
      provider: "istanbul",
      include: {include},
      reporter: ["json"],
      reportsDirectory: {reports},
    }},
  }},
}});
"""


def _vlq(segment: str) -> list[int]:
    values, shift, value = [], 0, 0
    for ch in segment:
        digit = _B64[ch]
        value += (digit & 31) << shift
        if digit & 32:
            shift += 5
            continue
        values.append(-(value >> 1) if value & 1 else value >> 1)
        shift = value = 0
    return values


class SourceMap:
    """Generated (line, column) -> (source index, original line), both lines 1-based."""

    def __init__(self, data: dict) -> None:
        self.sources = data.get("sources", [])
        self.lines: list[tuple[list[int], list[tuple[int, int]]]] = []
        src = orig_line = 0
        for text in data.get("mappings", "").split(";"):
            cols: list[int] = []
            targets: list[tuple[int, int]] = []
            col = 0
            for segment in filter(None, text.split(",")):
                fields = _vlq(segment)
                col += fields[0]
                if len(fields) >= 4:
                    src += fields[1]
                    orig_line += fields[2]
                    cols.append(col)
                    targets.append((src, orig_line + 1))
            self.lines.append((cols, targets))

    def original(self, line: int, column: int) -> tuple[int, int] | None:
        if not 0 < line <= len(self.lines):
            return None
        cols, targets = self.lines[line - 1]
        if not cols:
            return None
        return targets[max(bisect_right(cols, column) - 1, 0)]


def _call_end(lines: list[str], line: int) -> int:
    """The line that closes the call opened on ``line`` (``test("x", () => {...})``)."""
    depth = 0
    for number in range(line, len(lines) + 1):
        for ch in lines[number - 1]:
            depth += (ch == "(") - (ch == ")")
        if depth <= 0 and number > line or (depth == 0 and "(" in lines[line - 1]):
            return number
    return line


def vitest_coverage(
    root: Path, config: str, include: list[str], test_files: list[str], timeout: int = 3600
) -> Run:
    """Run ``test_files`` (relative to ``root``) once, with per-test coverage of the files
    matching the ``include`` globs."""
    scratch = Path(tempfile.mkdtemp(prefix="tests-oracle-vitest-"))
    wrapper = root / "vitest.tests-oracle.mjs"
    hook = root / "tests-oracle.hook.mjs"
    shutil.copy(HOOK, hook)
    reports = json.dumps(str(scratch / "reports"))
    wrapper.write_text(_CONFIG.format(config=config, include=json.dumps(include), reports=reports))
    try:
        done = subprocess.run(
            [str(root / "node_modules/.bin/vitest"), "run", "--config", wrapper.name, *test_files],
            cwd=root,
            env={**os.environ, "TESTS_ORACLE_OUT": str(scratch)},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    finally:
        wrapper.unlink(missing_ok=True)
        hook.unlink(missing_ok=True)
    tail = (done.stdout + done.stderr).strip().splitlines()[-4:]
    print(f"  vitest rc={done.returncode}: {tail}", file=sys.stderr, flush=True)
    try:
        return _read(root, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _read(root: Path, scratch: Path) -> Run:
    run = Run()
    statements: dict[str, dict] = {}
    maps: dict[str, SourceMap] = {}
    sources: dict[str, list[str]] = {}
    relative: dict[tuple[str, int], str | None] = {}
    for part in sorted(scratch.glob("*.jsonl")):
        for row in map(json.loads, part.read_text().splitlines()):
            if "map" in row:
                if row["map"] in maps:
                    continue  # each worker writes it again; one transform, one map
                statements[row["map"]] = row["statementMap"]
                maps[row["map"]] = SourceMap(row.get("inputSourceMap") or {})
                continue
            path = Path(row["file"]).resolve().relative_to(root.resolve()).as_posix()
            if path not in sources:
                sources[path] = (root / path).read_text(errors="replace").splitlines()
            line = row.get("line") or 0
            end = _call_end(sources[path], line) if line else 0
            test_id = f"{path}::{row['test']}"
            info = {"path": path, "name": row["test"], "line": line, "end_line": end}
            run.tests.setdefault(test_id, info)
            for file, ids in row["hits"].items():
                smap, spans = maps[file], statements[file]
                for sid in ids:
                    start = spans[str(sid)]["start"]
                    found = smap.original(start["line"], start["column"])
                    if found is None:
                        continue
                    rel = relative.get((file, found[0]), "")
                    if rel == "":
                        rel = relative[file, found[0]] = _relative(root, file, smap, found[0])
                    if rel is not None:
                        run.add(test_id, rel, {found[1]})
    return run


def _relative(root: Path, file: str, smap: SourceMap, index: int) -> str | None:
    """The checkout-relative path of a source map's ``index``-th source (None: outside)."""
    source = smap.sources[index] if index < len(smap.sources) else file
    try:
        return (Path(file).parent / source).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None
