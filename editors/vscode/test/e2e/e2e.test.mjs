// seek's extension in a real VS Code (code-server 4.100 in Chromium): the Index view, the
// search quick pick, Ask, Find Related Code and a stopped server. Run by run-e2e.sh.
import { after, afterEach, before, describe, test } from "node:test";
import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  ANSWER,
  askFrame,
  editorContextMenu,
  editorState,
  launch,
  runCommand,
  statusBarText,
  togglePane,
  typeInQuickPick,
  viewRows,
  waitFor,
} from "./harness.mjs";

const vsix = process.env.SEEK_E2E_VSIX;
const seek = process.env.SEEK_E2E_SEEK;
const shots = process.env.SEEK_E2E_SCREENSHOTS; // a folder: the README's screenshots
const failures = process.env.SEEK_E2E_FAILURES; // a folder: a screenshot of each failed test

describe("seek in VS Code", { timeout: 300_000 }, () => {
  let env;

  before(async () => {
    assert.ok(vsix && fs.existsSync(vsix), "SEEK_E2E_VSIX names the packaged extension");
    assert.ok(seek && fs.existsSync(seek), "SEEK_E2E_SEEK names the seek program");
    env = await launch({ vsix, seek });
  });

  after(async () => {
    if (env) await env.stop();
  });

  const page = () => env.page;

  afterEach(async (t) => {
    if (failures && env && t.passed === false) {
      fs.mkdirSync(failures, { recursive: true });
      const name = t.name.replace(/[^a-z0-9]+/gi, "-").slice(0, 60);
      await env.page.screenshot({ path: path.join(failures, `${name}.png`) }).catch(() => undefined);
    }
  });

  test("the Index view shows the counts after Update Index", async () => {
    // The status bar item appears once the extension host runs and seek answers.
    await waitFor(async () => /seek: (not indexed|\d+ files)/.test(await statusBarText(page())), {
      timeout: 120_000,
      what: "seek's status bar item",
    });
    await runCommand(page(), "seek: Update Index");
    await runCommand(page(), "View: Show seek");
    const rows = await waitFor(
      async () => {
        const r = await viewRows(page(), "Index");
        return r && r.some((t) => t === "Files 4") && r.some((t) => /^Chunks [1-9]/.test(t)) ? r : null;
      },
      { timeout: 120_000, what: "Files 4 and the chunks in the Index view" },
    );
    assert.ok(rows.some((t) => t.startsWith("Model ")), rows.join(" / "));
    assert.ok(rows.some((t) => t.startsWith("Last update just now")), rows.join(" / "));
    assert.match(await statusBarText(page()), /seek: 4 files, \d+ chunks/);
  });

  test("a search opens the right file at the right lines", async () => {
    await runCommand(page(), "seek: Search Code");
    await typeInQuickPick(page(), "Search the workspace", "retry with exponential backoff");
    const first = await waitFor(
      () => page().evaluate(() => document.querySelector(".quick-input-list .monaco-list-row")?.textContent ?? ""),
      { what: "search results in the quick pick" },
    );
    // configure_retries sits after a long function: its chunk starts well below line 1.
    const [, start, end] = /^src\/retry\.py:(\d+)-(\d+)/.exec(first) ?? assert.fail(`first result: ${first}`);
    assert.ok(Number(start) > 50 && Number(end) >= Number(start), first);
    assert.match(first, /score \d\.\d\d/);
    // The focused result is previewed while the quick pick stays open.
    await waitFor(async () => (await editorState(page())).tab === "retry.py", { what: "retry.py previewed" });
    assert.ok(await page().evaluate(() => !!document.querySelector(".quick-input-widget input")?.offsetParent), "the quick pick is still open");
    if (shots) await page().screenshot({ path: path.join(shots, "vscode-search.png") });
    await page().keyboard.press("Enter");
    const state = await waitFor(async () => {
      const s = await editorState(page());
      return s.tab === "retry.py" && s.cursor.startsWith(`Ln ${end},`) ? s : null;
    }, { what: `retry.py open with lines ${start}-${end} selected` });
    const selected = Number(/\((\d+) selected\)/.exec(state.cursor)?.[1]);
    const text = fs.readFileSync(path.join(env.workspace, "src/retry.py"), "utf8").split("\n");
    const expected = text.slice(Number(start) - 1, Number(end)).join("\n").length;
    assert.equal(selected, expected, `the selection is exactly lines ${start}-${end}`);
    const results = await viewRows(page(), "Results");
    assert.ok(results && results.some((t) => t.startsWith(`src/retry.py:${start}-${end}`)), String(results));
  });

  test("Ask streams the answer from the chat server with its sources", async () => {
    await runCommand(page(), "seek: Focus on Ask View");
    const frame = await askFrame(page());
    await frame.type("#question", "where are retries configured?");
    await frame.$eval("#form", (f) => f.requestSubmit());
    const answer = await waitFor(
      () => frame.evaluate(() => {
        const a = document.querySelector(".answer:not(.streaming)");
        return a ? a.textContent : null;
      }),
      { timeout: 90_000, what: "the streamed answer" },
    );
    assert.equal(answer, ANSWER.join(""));
    const sources = await frame.$$eval(".source", (links) => links.map((l) => l.textContent));
    assert.ok(sources.some((s) => s.startsWith("src/retry.py (lines ")), sources.join(", "));
    const contextLine = await frame.$eval(".context-line", (e) => e.textContent);
    assert.match(contextLine, /query: 'where are retries configured\?'/);
    assert.equal(env.chat.prompts.length, 1);
    assert.match(env.chat.prompts[0], /configure_retries/);
    if (shots) {
      // Room for the conversation: the other two views folded for the picture.
      await togglePane(page(), "Index");
      await togglePane(page(), "Results");
      await new Promise((r) => setTimeout(r, 500));
      await page().screenshot({ path: path.join(shots, "vscode-ask.png") });
      await togglePane(page(), "Index");
      await togglePane(page(), "Results");
    }
    // A follow-up continues the session: the chat model gets the first turn as history.
    await frame.type("#question", "and how long is the first wait?");
    await frame.$eval("#form", (f) => f.requestSubmit());
    await waitFor(() => frame.evaluate(() => document.querySelectorAll(".answer:not(.streaming)").length === 2), {
      timeout: 90_000,
      what: "the follow-up's answer",
    });
    const history = env.chat.requests[1].map((m) => m.content).join("\n");
    assert.match(history, /where are retries configured\?/);
    assert.ok(history.includes(ANSWER.join("")), "the first answer is in the history");
    // Last, as it moves the focus to the editor: a source opens at its lines.
    await frame.$$eval(".source", (links) => links.find((l) => l.textContent.startsWith("src/retry.py"))?.click());
    await waitFor(async () => (await editorState(page())).tab === "retry.py", { what: "the source opened" });
  });

  test("Find Related Code from the editor's context menu lists the other file", async () => {
    await runCommand(page(), "View: Close All Editors");
    await runCommand(page(), "seek: Search Code");
    await typeInQuickPick(page(), "Search the workspace", "exponential backoff retry");
    await waitFor(() => page().evaluate(() => /retry\.py/.test(document.querySelector(".quick-input-list .monaco-list-row")?.textContent ?? "")), {
      what: "retry.py in the quick pick",
    });
    await page().keyboard.press("Enter");
    await waitFor(async () => (await editorState(page())).tab === "retry.py", { what: "retry.py open" });
    await editorContextMenu(page(), "Find Related Code");
    const rows = await waitFor(
      async () => {
        const r = await viewRows(page(), "Results");
        return r && r.length && r[0].startsWith("src/backoff.py") ? r : null;
      },
      { what: "src/backoff.py first in the Results view" },
    );
    assert.ok(!rows.some((t) => t.startsWith("src/retry.py")), rows.join(" / "));
  });

  test("a stopped server is reported, then recovered", async () => {
    const found = spawnSync("pgrep", ["-f", `ui ${env.workspace} --no-open`], { encoding: "utf8" });
    const pids = found.stdout.split("\n").filter(Boolean).map(Number);
    assert.ok(pids.length >= 1, "the extension's seek process is running");
    for (const pid of pids) process.kill(pid, "SIGKILL");
    await waitFor(async () => /seek: stopped/.test(await statusBarText(page())), { what: "the status bar saying stopped" });
    const message = await waitFor(
      () => page().evaluate(() => [...document.querySelectorAll(".notification-list-item-message")].map((e) => e.textContent).find((t) => t.includes("seek")) ?? null),
      { what: "a notification about the stopped server" },
    );
    assert.match(message, /stopped/);
    await runCommand(page(), "seek: Restart Server");
    await waitFor(async () => /seek: 4 files/.test(await statusBarText(page())), { timeout: 90_000, what: "seek back with its 4 files" });
    const again = spawnSync("pgrep", ["-f", `ui ${env.workspace} --no-open`], { encoding: "utf8" });
    assert.ok(again.stdout.trim(), "a new seek process runs");
  });

  test("a missing seek is said with the command that installs it", async () => {
    const original = fs.readFileSync(env.settingsFile, "utf8");
    const settings = JSON.parse(original);
    fs.writeFileSync(env.settingsFile, JSON.stringify({ ...settings, "seek.path": "/nonexistent/seek" }, null, 2));
    try {
      // The window reloads with the setting (code-server does not watch the file here).
      await runCommand(page(), "Developer: Reload Window");
      await waitFor(async () => /seek: not installed/.test(await statusBarText(page())), { timeout: 90_000, what: "the status bar saying not installed" });
      const message = await waitFor(
        () => page().evaluate(() => [...document.querySelectorAll(".notification-list-item-message")].map((e) => e.textContent).find((t) => t.includes("not installed")) ?? null),
        { what: "the notification about the missing program" },
      );
      assert.match(message, /pipx install seek-code/);
      const buttons = await page().evaluate(() => [...document.querySelectorAll(".notification-list-item-buttons-container .monaco-button")].map((b) => b.textContent));
      assert.ok(buttons.includes("Install in Terminal") && buttons.includes("Copy Command"), buttons.join(", "));
    } finally {
      fs.writeFileSync(env.settingsFile, original);
    }
    await runCommand(page(), "Developer: Reload Window");
    await waitFor(async () => /seek: 4 files/.test(await statusBarText(page())), { timeout: 90_000, what: "seek back once the setting is restored" });
  });
});
