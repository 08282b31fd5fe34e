import { test } from "node:test";
import * as assert from "node:assert/strict";
import {
  editorRange,
  escapeMarkdown,
  hitDescription,
  hitLabel,
  labelText,
  parseSourceLabel,
  plainText,
  progressFraction,
  progressText,
  skippedLines,
  statusBarText,
  updatedText,
} from "../../src/format";

test("a hit reads path:lines, one line without a range", () => {
  assert.equal(hitLabel({ path: "src/a.py", start_line: 3, end_line: 9, score: 0.5 }), "src/a.py:3-9");
  assert.equal(hitLabel({ path: "b.ts", start_line: 7, end_line: 7, score: 1 }), "b.ts:7");
});

test("the description holds the score, and the symbol when there is one", () => {
  assert.equal(hitDescription({ path: "a", start_line: 1, end_line: 1, score: 0.12345 }), "score 0.12");
  // The symbol as seek's search JSON sends it: an object (issue 28), named as the CLI does.
  const add = { name: "add", kind: "method", container: "Router", line: 1, end_line: 2 };
  assert.equal(hitDescription({ path: "a", start_line: 1, end_line: 1, score: 2, symbol: add }), "in Router.add (method) · score 2.00");
  const top = { name: "main", kind: "function", container: null, line: 1, end_line: 2 };
  assert.equal(hitDescription({ path: "a", start_line: 1, end_line: 1, score: 2, symbol: top }), "in main (function) · score 2.00");
  assert.equal(hitDescription({ path: "a", start_line: 1, end_line: 1, score: NaN, symbol: null }), "score ?");
});

test("workspace text shows as one line of plain text, unseen characters escaped", () => {
  assert.equal(plainText("a\tb\r\nc"), "a b c");
  assert.equal(plainText("evil\u202egnp.py"), "evil\\u202egnp.py");
  assert.equal(plainText("bell\u0007 esc\u001b[31m del\u007f"), "bell\\x07 esc\\x1b[31m del\\x7f");
  assert.equal(plainText("naïve λ 名前"), "naïve λ 名前");
});

test("a quick pick's text cannot draw icons: $(name) is escaped, other dollars are not", () => {
  assert.equal(labelText("$(zap) fast"), "\\$(zap) fast");
  assert.equal(labelText("a $(sync~spin) b $(x-y)"), "a \\$(sync~spin) b \\$(x-y)");
  assert.equal(labelText("cost = $(a b) + $5"), "cost = $(a b) + $5");
  assert.equal(labelText("two\nlines \u202e$(zap)"), "two lines \\u202e\\$(zap)");
});

test("an ask source label parses back to a path and lines, spaces in names included", () => {
  assert.deepEqual(parseSourceLabel("src/my file.py (lines 4-12)"), { path: "src/my file.py", start: 4, end: 12 });
  assert.equal(parseSourceLabel("src/a.py"), undefined);
  assert.equal(parseSourceLabel("src/a.py (lines x-2)"), undefined);
});

test("editor ranges are zero-based and never negative or inverted", () => {
  assert.deepEqual(editorRange(1, 3), [0, 2]);
  assert.deepEqual(editorRange(0, 0), [0, 0]);
  assert.deepEqual(editorRange(5, 2), [4, 4]);
});

test("last update: never, minutes, hours, then the date", () => {
  const now = new Date("2026-12-01T12:00:00Z");
  assert.equal(updatedText(null, now), "never");
  assert.equal(updatedText(now.getTime() - 10_000, now), "just now");
  assert.equal(updatedText(now.getTime() - 5 * 60_000, now), "5 min ago");
  assert.equal(updatedText(now.getTime() - 3 * 3600_000, now), "3 h ago");
  assert.equal(updatedText(Date.parse("2026-10-02T00:00:00Z"), now), "2026-10-02");
});

test("progress: phase and counts, a bounded fraction", () => {
  assert.equal(progressText({ running: true, phase: "embedding", done: 3, total: 10 }), "embedding 3/10 files");
  assert.equal(progressText({ running: true, cancelling: true, phase: "embedding", done: 3, total: 10 }), "cancelling 3/10 files");
  assert.equal(progressText({ running: true }), "indexing");
  assert.equal(progressFraction({ done: 3, total: 10 }), 0.3);
  assert.equal(progressFraction({ done: 30, total: 10 }), 1);
  assert.equal(progressFraction({ done: 3, total: 0 }), 0);
});

test("the status bar names each state", () => {
  assert.equal(statusBarText("ready", { files: 4, chunks: 9 }), "$(search) seek: 4 files, 9 chunks");
  assert.match(statusBarText("indexing", undefined, { phase: "scanning", done: 1, total: 2 }), /scanning 1\/2 files/);
  assert.match(statusBarText("stopped"), /stopped/);
  assert.match(statusBarText("missing"), /not installed/);
});

test("skipped files by reason, largest first, zeros left out", () => {
  assert.deepEqual(skippedLines({ binary: 2, too_large: 5, ignored: 0 }), ["too_large: 5", "binary: 2"]);
  assert.deepEqual(skippedLines(undefined), []);
});

// A real Markdown renderer (markdown-it, which @vscode/vsce brings), with bare links on as
// in VS Code's chat view: what the participant writes must render as its own text.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const MarkdownIt = require("markdown-it");

test("file names and queries written into the chat view render as text: no links, images or markup", () => {
  const md = new MarkdownIt({ html: true, linkify: true });
  const hostile = [
    "[click](https://evil.example/steal)",
    "![x](http://127.0.0.1:6666/pixel.png)",
    "<a href='https://evil.example'>docs</a> <img src=x onerror=alert(1)>",
    "src/[a](b).py:1-9 0.91",
    "query: 'see https://evil.example and www.evil.example or mail a@evil.example'",
    "**bold** _it_ `code` ~~gone~~ # heading",
    "two\n\n# lines\r\n- item",
    "\\[escaped\\](x) &amp; &lt;b&gt;",
    "[ref]: https://evil.example\n[ref]",
  ];
  for (const text of hostile) {
    const html: string = md.renderInline(`*${escapeMarkdown(text)}*`);
    assert.ok(!/<(?!\/?em>)/.test(html), `${text} -> ${html}`);
    const shown = html
      .replace(/<\/?em>/g, "")
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&quot;/g, '"')
      .replace(/&amp;/g, "&");
    assert.equal(shown, text.replace(/[\r\n]+/g, " "), html);
  }
});
