import { test } from "node:test";
import * as assert from "node:assert/strict";
import { GraphAnswer, TESTS, TESTS_UNAVAILABLE, USES, impactEntries, impactTitle } from "../../src/impactItems";

// Rows as `seek impact --json` and `seek tests --json` write them (issue 44).
const subject = { path: "src/retry.py", line: 70, column: 5, kind: "function", name: "configure_retries", container: null };
const impact: GraphAnswer = {
  tool: "impact",
  query: "src/retry.py:70",
  subject,
  truncated: false,
  rows: [
    {
      path: "src/jobs.py", line: 4, column: 5, kind: "function", name: "run_job", container: null, depth: 1, test: false,
      via: { line: 6, column: 12, kind: "call", text: "    return configure_retries(policy, attempts=5)" }, through: "configure_retries",
    },
    {
      path: "src/jobs.py", line: 1, column: 1, kind: "file", name: "src/jobs.py", container: null, depth: 1, test: false,
      via: { line: 1, column: 18, kind: "use", text: "from retry import configure_retries" }, through: "configure_retries",
    },
    {
      path: "tests/test_jobs.py", line: 9, column: 5, kind: "function", name: "test_run_job_waits", container: "TestJobs", depth: 2, test: true,
      via: { line: 10, column: 12, kind: "call", text: "assert run_job(Policy()) == 0" }, through: "run_job",
    },
  ],
};
const tests: GraphAnswer = {
  tool: "tests",
  subject,
  truncated: true,
  rows: [
    { path: "tests/test_jobs.py", line: 9, column: 5, name: "TestJobs.test_run_job_waits", depth: 2, id: "tests/test_jobs.py::TestJobs::test_run_job_waits", framework: "pytest" },
  ],
};

const shown = (entries: ReturnType<typeof impactEntries>) =>
  entries.map((e) => (e.separator ? `-- ${e.label}` : [e.label, e.description, e.detail].filter(Boolean).join(" | ")));

test("uses under one separator, tests under the other, each with its name, depth, place and runner id", () => {
  const entries = impactEntries({ answer: impact }, { answer: tests });
  assert.deepEqual(shown(entries), [
    `-- ${USES}`,
    "run_job | depth 1 · src/jobs.py:4 | calls configure_retries at line 6: return configure_retries(policy, attempts=5)",
    "src/jobs.py (file level) | depth 1 · src/jobs.py:1 | uses configure_retries at line 1: from retry import configure_retries",
    `-- ${TESTS}`,
    "TestJobs.test_run_job_waits | depth 2 · tests/test_jobs.py:9 | pytest: tests/test_jobs.py::TestJobs::test_run_job_waits",
    "Only the first 1 tests are shown",
  ]);
  // Each definition opens at its name; a file's top level at its first column; messages nowhere.
  assert.deepEqual(entries[1].target, { path: "src/jobs.py", line: 4, column: 5 });
  assert.deepEqual(entries[2].target, { path: "src/jobs.py", line: 1, column: 1 });
  assert.deepEqual(entries[4].target, { path: "tests/test_jobs.py", line: 9, column: 5 });
  assert.equal(entries[5].target, undefined);
});

test("a seek without /v1/tests says so and lists the tests impact reached", () => {
  const entries = impactEntries({ answer: impact }, { unavailable: true });
  const lines = shown(entries);
  assert.equal(lines[3], `-- ${TESTS}`);
  assert.match(lines[4], new RegExp(`^${TESTS_UNAVAILABLE} \\| `));
  assert.equal(entries[4].target, undefined);
  assert.match(lines[5], /^TestJobs\.test_run_job_waits \| depth 2 · tests\/test_jobs\.py:9 \| calls run_job/);
  assert.equal(lines.length, 6);
});

test("empty answers and failures are said in their part", () => {
  const none = { ...impact, rows: [] };
  assert.deepEqual(shown(impactEntries({ answer: none }, { answer: { ...tests, rows: [], truncated: false } })), [
    `-- ${USES}`, "Nothing uses it", `-- ${TESTS}`, "No test reaches it",
  ]);
  // seek's notes end their part, as text.
  const noted = { ...tests, rows: [], truncated: false, notes: ["No test framework is known for $(x).zig files."] };
  assert.deepEqual(shown(impactEntries({ answer: { ...none, notes: ["The code graph is being built."] } }, { answer: noted })), [
    `-- ${USES}`, "Nothing uses it", "Note: The code graph is being built.", `-- ${TESTS}`, "No test reaches it", "Note: No test framework is known for \\$(x).zig files.",
  ]);
  const failed = shown(impactEntries({ error: "seek did not answer within 35 s" }, { error: "HTTP 500" }));
  assert.deepEqual(failed, [`-- ${USES}`, "Impact failed: seek did not answer within 35 s", `-- ${TESTS}`, "Tests failed: HTTP 500"]);
});

test("text from the workspace cannot draw icons or reorder the line", () => {
  const evil = {
    ...impact,
    rows: [{ ...impact.rows[0], name: "$(zap)run\u202e", path: "src/$(alert).py", via: { line: 6, kind: "call", text: "x = $(bug)\n  y" } }],
  };
  const [, entry] = impactEntries({ answer: evil }, { answer: tests });
  assert.equal(entry.label, "\\$(zap)run\\u202e");
  assert.equal(entry.description, "depth 1 · src/\\$(alert).py:4");
  assert.equal(entry.detail, "calls configure_retries at line 6: x = \\$(bug) y");
  assert.equal(impactTitle({ ...subject, name: "$(zap)f" }), "Impact and tests of \\$(zap)f (src/retry.py:70)");
  assert.equal(impactTitle(undefined), "Impact and tests");
});
