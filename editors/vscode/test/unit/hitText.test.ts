import { test } from "node:test";
import * as assert from "node:assert/strict";
import { namesItsDefinition, shownLine, symbolName, words } from "../../src/hitText";
import type { Hit } from "../../src/format";

// A chunk that starts in the tail of one function and holds the next one (issue 46: the
// README's screenshot showed `"colour_56": "#0380a8",` for the function 7 lines below).
const content = [
  '        "colour_56": "#0380a8",',
  '        "colour_57": "#0390a9",',
  "    }",
  "",
  "",
  "def configure_retries(policy, attempts=3):",
  '    """Retry a failing call with exponential backoff."""',
  "    delay = policy.initial_delay",
  "    return delay",
].join("\n");
const symbol = { name: "configure_retries", kind: "function", container: null, line: 70, end_line: 73 };
const hit: Hit = { path: "src/retry.py", start_line: 65, end_line: 73, score: 0.5, content, symbol };

test("a hit holding its definition's line shows that line, its signature", () => {
  const shown = shownLine(hit, "retry with exponential backoff");
  assert.deepEqual(shown, { line: 70, text: "def configure_retries(policy, attempts=3):", definition: symbol });
  assert.ok(namesItsDefinition(hit));
  // Whatever the query: the definition says what the code is.
  assert.equal(shownLine(hit, "colour")?.line, 70);
  assert.equal(shownLine(hit)?.line, 70);
});

test("a hit inside a longer definition shows the query's best line", () => {
  const inside = { ...hit, symbol: { ...symbol, line: 40 } }; // the definition starts above the chunk
  assert.deepEqual(shownLine(inside, "retry with exponential backoff"), {
    line: 71,
    text: '"""Retry a failing call with exponential backoff."""',
  });
  assert.ok(!namesItsDefinition(inside));
  // Identifiers split into words; `retries` matches `retry`; the first of equals wins.
  assert.equal(shownLine(inside, "initialDelay")?.line, 72);
  assert.equal(shownLine(inside, "configure retries")?.line, 70);
  // No symbol at all: the same rule.
  assert.equal(shownLine({ ...hit, symbol: null }, "policy delay")?.line, 72);
});

test("without a matching word the first non-blank line shows; no text, nothing", () => {
  const inside = { ...hit, symbol: null };
  assert.equal(shownLine(inside, "zebra")?.text, '"colour_56": "#0380a8",');
  assert.equal(shownLine(inside)?.line, 65);
  assert.equal(shownLine({ ...inside, content: "\n  \n" }, "x"), undefined);
  assert.equal(shownLine({ path: "a", start_line: 1, end_line: 1, score: 1 }), undefined);
});

test("a long line is cut; a symbol line outside the content falls back", () => {
  const long = { ...hit, start_line: 10, end_line: 10, content: `def f(${"a, ".repeat(100)}z):`, symbol: { ...symbol, line: 10, end_line: 10 } };
  const shown = shownLine(long);
  assert.equal(shown?.text.length, 160);
  assert.ok(shown?.text.endsWith("…"));
  const beyond = { ...hit, end_line: 80, symbol: { ...symbol, line: 79 } }; // content shorter than the lines say
  assert.equal(shownLine(beyond, "backoff")?.line, 71);
});

test("names and words", () => {
  assert.equal(symbolName(symbol), "configure_retries");
  assert.equal(symbolName({ ...symbol, container: "Retrier" }), "Retrier.configure_retries");
  assert.deepEqual(words("configureRetries(max_wait, HTTPServer)"), ["configure", "retries", "max", "wait", "httpserver"]);
});

// seek's symbol is the definition holding most of the hit's lines: none for this chunk, 7
// lines of palette's tail and 7 of configure_retries. The file's outline names both.
const palette = { name: "palette", kind: "function", container: null, line: 4, end_line: 67 };
const outline = [palette, { ...symbol, end_line: 76 }];
const split: Hit = { ...hit, start_line: 63, end_line: 76, symbol: null, content: ["x", "y", ...content.split("\n"), "", "", ""].join("\n") };

test("a chunk split between definitions shows the one holding the query's best line", () => {
  assert.ok(!namesItsDefinition(split));
  // Without the outline: the best line.
  assert.equal(shownLine(split, "retry with exponential backoff")?.line, 71);
  // With it: the signature of the definition that line is in.
  assert.deepEqual(shownLine(split, "retry with exponential backoff", outline), {
    line: 70,
    text: "def configure_retries(policy, attempts=3):",
    definition: outline[1],
  });
  // A best line in a definition that begins above the chunk: that line (no signature shown).
  assert.deepEqual(shownLine(split, "colour", outline), { line: 65, text: '"colour_56": "#0380a8",' });
  // No query: the first definition beginning in the chunk.
  assert.equal(shownLine(split, "", outline)?.definition, outline[1]);
  // Nested: the innermost holder.
  const method = { name: "retry_once", kind: "method", container: "configure_retries", line: 72, end_line: 73 };
  assert.equal(shownLine(split, "policy delay", [...outline, method])?.definition, method);
  // Definitions of lines the chunk does not hold (an outline newer than the chunk) are skipped.
  assert.equal(shownLine(split, "backoff", [{ ...symbol, line: 90, end_line: 95 }])?.line, 71);
});
