// Per-test coverage for vitest (issue 44; bench/change/vitest_coverage.py copies this file into
// the checkout and names it in setupFiles). Istanbul's counters live in the worker's
// globalThis.__VITEST_COVERAGE__; each test's statements are those whose count grew between
// its beforeEach and its afterEach. Written as JSON lines to $TESTS_ORACLE_OUT/<pid>.jsonl:
// a file's statement map and input source map once, then one line per test with its hits.
import { appendFileSync } from "node:fs";
import { afterEach, beforeEach } from "vitest";

const out = `${process.env.TESTS_ORACLE_OUT}/${process.pid}.jsonl`;
const described = new Set();
let before = {};

function counts() {
  const snap = {};
  for (const [file, data] of Object.entries(globalThis.__VITEST_COVERAGE__ || {})) {
    snap[file] = { ...data.s };
  }
  return snap;
}

beforeEach(() => {
  before = counts();
});

afterEach((ctx) => {
  const hits = {};
  for (const [file, data] of Object.entries(globalThis.__VITEST_COVERAGE__ || {})) {
    const prev = before[file] || {};
    const ids = Object.keys(data.s).filter((k) => data.s[k] > (prev[k] || 0));
    if (!ids.length) continue;
    hits[file] = ids.map(Number);
    if (!described.has(file)) {
      described.add(file);
      const map = { statementMap: data.statementMap, inputSourceMap: data.inputSourceMap };
      appendFileSync(out, `${JSON.stringify({ map: file, ...map })}\n`);
    }
  }
  const names = [ctx.task.name];
  for (let s = ctx.task.suite; s && !s.filepath; s = s.suite) names.unshift(s.name);
  const test = { test: names.join(" "), file: ctx.task.file.filepath, line: ctx.task.location?.line };
  appendFileSync(out, `${JSON.stringify({ ...test, hits })}\n`);
});
