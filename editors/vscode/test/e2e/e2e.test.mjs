// seek's extension in a real VS Code (code-server 4.100 in Chromium): the Index view, the
// search quick pick, Ask, Find Related Code and a stopped server; a missing seek; Rebuild
// and Cancel on the Index view; an untrusted folder; a trusted folder whose own settings
// try to choose seek's servers and program. Run by run-e2e.sh.
import { after, afterEach, before, describe, test } from "node:test";
import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { ANSWER, fakeOllama, launch } from "./harness.mjs";
import {
  ask,
  askFrame,
  clickViewAction,
  dialogButton,
  editorContextMenu,
  editorFocused,
  editorState,
  foldPane,
  notifications,
  runCommand,
  showSeek,
  statusBarText,
  typeInQuickPick,
  viewActions,
  viewRows,
  waitFor,
} from "./driver.mjs";

const vsix = process.env.SEEK_E2E_VSIX;
const seek = process.env.SEEK_E2E_SEEK;
const shots = process.env.SEEK_E2E_SCREENSHOTS; // a folder: the README's screenshots
const failures = process.env.SEEK_E2E_FAILURES; // a folder: a screenshot of each failed test

/** One editor for a describe block: started before its tests, stopped after them, a
 * screenshot of each failed test kept. Returns a getter for the running editor. */
function editor(options) {
  let env;
  before(async () => {
    assert.ok(vsix && fs.existsSync(vsix), "SEEK_E2E_VSIX names the packaged extension");
    assert.ok(seek && fs.existsSync(seek), "SEEK_E2E_SEEK names the seek program");
    env = await launch({ vsix, seek, ...options });
  });
  after(async () => {
    if (env) await env.stop();
  });
  afterEach(async (t) => {
    if (failures && env && t.passed === false) {
      fs.mkdirSync(failures, { recursive: true });
      const name = t.name.replace(/[^a-z0-9]+/gi, "-").slice(0, 60);
      await env.page.screenshot({ path: path.join(failures, `${name}.png`) }).catch(() => undefined);
      fs.writeFileSync(path.join(failures, `${name}.code-server.log`), env.log.join(""));
    }
  });
  return () => env;
}

/** The `seek ui` processes serving this workspace. */
function seekProcesses(workspace) {
  const found = spawnSync("pgrep", ["-f", `ui ${workspace} --no-open`], { encoding: "utf8" });
  return found.stdout.split("\n").filter(Boolean).map(Number);
}

const waitStatus = (page, pattern, what, timeout = 90_000) => waitFor(async () => pattern.test(await statusBarText(page)), { timeout, what });

/** Update Index, wait for the folder to be indexed, and read the Index view once it names its model. */
async function indexAndShow(page) {
  await runCommand(page, "seek.update");
  await waitStatus(page, /seek: [1-9]\d* files/, "the folder indexed", 120_000);
  await showSeek(page);
  return waitFor(async () => {
    const r = await viewRows(page, "Index");
    return r && r.some((t) => t.startsWith("Model ")) ? r : null;
  }, { what: "the Index view" });
}

/** The quick pick's title and rows (separators' labels included), as shown now. */
function quickPickShown(page) {
  return page.evaluate(() => ({
    title: document.querySelector(".quick-input-widget .quick-input-title")?.textContent ?? "",
    rows: [...document.querySelectorAll(".quick-input-list .monaco-list-row")].map((r) => r.textContent),
    icons: document.querySelectorAll(".quick-input-list .monaco-list-row .codicon-flame").length,
  }));
}

/** A Results row ("line path:lines · score 0.53") as its path and lines. */
const resultPlace = (row) => / (\S+):(\d+)-(\d+) · score \d/.exec(row)?.slice(1) ?? [];

// A caller of configure_retries and a test that reaches it through the caller, for Impact
// and Tests; the call's comment would draw an icon if a quick pick took it as a label's.
const JOBS_FILES = {
  "src/jobs.py": [
    "from retry import configure_retries",
    "",
    "",
    "def run_job(policy):",
    '    """Run the nightly job under its policy."""',
    "    return configure_retries(policy, attempts=5)  # $(flame) the hot path",
    "",
  ].join("\n"),
  "tests/test_jobs.py": [
    "from jobs import run_job",
    "",
    "",
    "class Policy:",
    "    initial_delay = 0",
    "    factor = 2",
    "",
    "",
    "def test_run_job_waits():",
    "    assert run_job(Policy()) == 0",
    "",
  ].join("\n"),
};

describe("seek in VS Code", { timeout: 360_000 }, () => {
  const env = editor({ folderFiles: JOBS_FILES });
  const page = () => env().page;

  test("the Index view shows the counts after Update Index", async () => {
    // The status bar item appears once the extension host runs and seek answers.
    await waitStatus(page(), /seek: not indexed/, "seek's status bar item saying not indexed", 120_000);
    await runCommand(page(), "seek.update");
    await showSeek(page());
    const rows = await waitFor(
      async () => {
        const r = await viewRows(page(), "Index");
        return r && r.some((t) => t === "Files 6") && r.some((t) => /^Chunks [1-9]/.test(t)) ? r : null;
      },
      { timeout: 120_000, what: "Files 6 and the chunks in the Index view" },
    );
    assert.ok(rows.some((t) => t.startsWith("Model ")), rows.join(" / "));
    assert.ok(rows.some((t) => t.startsWith("Last update just now")), rows.join(" / "));
    // The view's counts come from the status the run saved; the status bar turns from
    // "finishing" when the run's last progress event arrives, which can be a moment later.
    await waitStatus(page(), /seek: 6 files, \d+ chunks/, "the counts in the status bar", 30_000);
  });

  test("a search opens the right file at the right lines", async () => {
    await runCommand(page(), "seek.search");
    await typeInQuickPick(page(), "Search the workspace", "retry with exponential backoff");
    const first = await waitFor(
      () => page().evaluate(() => document.querySelector(".quick-input-list .monaco-list-row")?.textContent ?? ""),
      { what: "search results in the quick pick" },
    );
    // configure_retries sits after a long function: its chunk starts well below line 1.
    const [, start, end] = /^src\/retry\.py:(\d+)-(\d+)/.exec(first) ?? assert.fail(`first result: ${first}`);
    assert.ok(Number(start) > 50 && Number(end) >= Number(start), first);
    assert.match(first, /score \d\.\d\d/);
    // The hit shows its definition's signature (issue 46), not its chunk's first line,
    // which is a line of palette's colours above it.
    const signature = "def configure_retries(policy, attempts=3):";
    const text = fs.readFileSync(path.join(env().workspace, "src/retry.py"), "utf8").split("\n");
    assert.match(text[Number(start) - 1], /"colour_\d+"/, "the chunk begins in the function before");
    assert.ok(first.includes(`in configure_retries (function)`), first);
    assert.ok(first.endsWith(signature), first);
    assert.ok(!first.includes("colour_"), first);
    // The focused result is previewed while the quick pick stays open (and keeps the focus).
    await waitFor(async () => (await editorState(page())).tab === "retry.py", { what: "retry.py previewed" });
    assert.ok(await page().evaluate(() => document.activeElement === document.querySelector(".quick-input-widget input")), "the quick pick is still open and focused");
    if (shots) await page().screenshot({ path: path.join(shots, "vscode-search.png") });
    await page().keyboard.press("Enter");
    const state = await waitFor(async () => {
      const s = await editorState(page());
      return s.tab === "retry.py" && s.focused && s.cursor.startsWith(`Ln ${end},`) ? s : null;
    }, { what: `retry.py open and focused with lines ${start}-${end} selected` });
    const selected = Number(/\((\d+) selected\)/.exec(state.cursor)?.[1]);
    const expected = text.slice(Number(start) - 1, Number(end)).join("\n").length;
    assert.equal(selected, expected, `the selection is exactly lines ${start}-${end}`);
    // The Results view: the signature, then where it is.
    const results = await viewRows(page(), "Results");
    assert.ok(results && results.some((t) => t.startsWith(`${signature} src/retry.py:${start}-${end} · score `)), String(results));
  });

  test("Impact and Tests of Definition at Cursor lists the uses and the tests, each opening at its line", async () => {
    // retry.py is open at the search's hit (the last test left it so): the cursor goes to
    // the start of its lines, then down to configure_retries' own line.
    await editorFocused(page(), "retry.py");
    await page().keyboard.press("ArrowLeft");
    const at = await waitFor(async () => Number(/^Ln (\d+), Col 1$/.exec((await editorState(page())).cursor)?.[1]), { what: "the cursor at the hit's start" });
    const line = fs.readFileSync(path.join(env().workspace, "src/retry.py"), "utf8").split("\n").indexOf("def configure_retries(policy, attempts=3):") + 1;
    for (let i = at; i < line; i++) await page().keyboard.press("ArrowDown");
    await waitFor(async () => (await editorState(page())).cursor.startsWith(`Ln ${line}, Col 1`), { what: "the cursor on configure_retries' line" });
    await runCommand(page(), "seek.impactAtCursor");
    const shown = await waitFor(async () => {
      const s = await quickPickShown(page());
      return s.rows.some((r) => r.includes("run_job")) && s.rows.some((r) => r.includes("test_run_job_waits")) ? s : null;
    }, { what: "the uses and the tests in the quick pick" });
    assert.equal(shown.title, `Impact and tests of configure_retries (src/retry.py:${line})`);
    const rows = shown.rows.join(" / ");
    const uses = shown.rows.findIndex((r) => r.includes("Uses (impact)"));
    const tests = shown.rows.findIndex((r) => r.includes("Tests") && !r.includes("Uses"));
    const caller = shown.rows.findIndex((r) => r.includes("run_job") && !r.includes("test_run_job"));
    const test = shown.rows.findIndex((r) => r.includes("test_run_job_waits"));
    assert.ok(uses >= 0 && uses <= caller && caller < test && tests >= 0 && tests <= test, rows);
    assert.match(shown.rows[caller], /run_job.*depth 1 · src\/jobs\.py:4.*calls configure_retries at line 6: return configure_retries\(policy, attempts=5\) # \$\(flame\) the hot path/, rows);
    assert.equal(shown.icons, 0, "the code's $(flame) is text, not an icon");
    assert.match(shown.rows[test], /test_run_job_waits.*depth 2 · tests\/test_jobs\.py:9.*pytest: tests\/test_jobs\.py::test_run_job_waits/, rows);
    assert.ok(!rows.includes("not available"), rows);
    if (shots) await page().screenshot({ path: path.join(shots, "vscode-impact.png") });
    // The test picked: its file opens at the test's name.
    await page().keyboard.sendCharacter("test_run_job");
    await waitFor(async () => (await quickPickShown(page())).rows.filter((r) => r.includes("test_run_job_waits")).length === 1, { what: "the test alone in the quick pick" });
    await page().keyboard.press("Enter");
    await waitFor(async () => {
      const s = await editorState(page());
      return s.tab === "test_jobs.py" && s.focused && s.cursor.startsWith("Ln 9, Col 5") ? s : null;
    }, { what: "test_jobs.py open and focused at line 9, column 5" });
  });

  test("Ask streams the answer from the chat server with its sources", async () => {
    const { chat } = env();
    await runCommand(page(), "seek.ask.focus");
    const frame = await askFrame(page());
    await ask(frame, "where are retries configured?");
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
    assert.equal(chat.prompts.length, 1);
    assert.match(chat.prompts[0], /configure_retries/);
    if (shots) {
      // Room for the conversation: the other two views folded for the picture (top down,
      // as each fold moves the headers below it; unfolded bottom up).
      await foldPane(page(), "Index", true);
      await foldPane(page(), "Results", true);
      await page().evaluate(() => document.activeElement?.blur()); // no focus ring in the picture
      await page().screenshot({ path: path.join(shots, "vscode-ask.png") });
      await foldPane(page(), "Results", false);
      await foldPane(page(), "Index", false);
    }
    // A follow-up continues the session: the chat model gets the first turn as history.
    await ask(frame, "and how long is the first wait?");
    await waitFor(() => frame.evaluate(() => document.querySelectorAll(".answer:not(.streaming)").length === 2), {
      timeout: 90_000,
      what: "the follow-up's answer",
    });
    const history = chat.requests[1].map((m) => m.content).join("\n");
    assert.match(history, /where are retries configured\?/);
    assert.ok(history.includes(ANSWER.join("")), "the first answer is in the history");
    // A source opens at its lines.
    await runCommand(page(), "workbench.action.closeAllEditors");
    await waitFor(async () => (await editorState(page())).tab === "", { what: "no editor open" });
    await frame.$$eval(".source", (links) => links.find((l) => l.textContent.startsWith("src/retry.py"))?.click());
    await editorFocused(page(), "retry.py");
  });

  test("Find Related Code from the editor's context menu lists the other file", async () => {
    await runCommand(page(), "workbench.action.closeAllEditors");
    await waitFor(async () => (await editorState(page())).tab === "", { what: "no editor open" });
    await runCommand(page(), "seek.search");
    await typeInQuickPick(page(), "Search the workspace", "exponential backoff retry");
    await waitFor(() => page().evaluate(() => /retry\.py/.test(document.querySelector(".quick-input-list .monaco-list-row")?.textContent ?? "")), {
      what: "retry.py in the quick pick",
    });
    await page().keyboard.press("Enter");
    await editorFocused(page(), "retry.py");
    await editorContextMenu(page(), "Find Related Code");
    const rows = await waitFor(
      async () => {
        const r = await viewRows(page(), "Results");
        return r && r.length && resultPlace(r[0])[0] === "src/backoff.py" ? r : null;
      },
      { what: "src/backoff.py first in the Results view" },
    );
    assert.ok(rows[0].startsWith("def backoff_delays(initial, factor, attempts): src/backoff.py:1-"), rows[0]);
    assert.ok(!rows.some((t) => resultPlace(t)[0] === "src/retry.py"), rows.join(" / "));
  });

  test("a stopped server is reported, then recovered", async () => {
    const pids = seekProcesses(env().workspace);
    assert.ok(pids.length >= 1, "the extension's seek process is running");
    for (const pid of pids) process.kill(pid, "SIGKILL");
    await waitStatus(page(), /seek: stopped/, "the status bar saying stopped");
    const message = await waitFor(async () => (await notifications(page())).find((t) => t.includes("seek")), {
      what: "a notification about the stopped server",
    });
    assert.match(message, /stopped/);
    await runCommand(page(), "seek.restart");
    await waitStatus(page(), /seek: 6 files/, "seek back with its 6 files");
    const again = seekProcesses(env().workspace);
    assert.ok(again.length >= 1 && again.every((pid) => !pids.includes(pid)), `a new seek process runs (${again} after ${pids})`);
  });

});

describe("a missing seek program", { timeout: 180_000 }, () => {
  // Its own window, started with the setting: a settings file changed behind VS Code's
  // back is seen late or not at all (a reloaded window may start from cached settings).
  const env = editor({ userSettings: { "seek.path": "/nonexistent/seek" } });
  const page = () => env().page;

  test("is said with the command that installs it", async () => {
    await waitStatus(page(), /seek: not installed/, "the status bar saying not installed", 120_000);
    const message = await waitFor(async () => (await notifications(page())).find((t) => t.includes("not installed")), {
      what: "the notification about the missing program",
    });
    assert.match(message, /pipx install seek-code/);
    const buttons = await page().evaluate(() => [...document.querySelectorAll(".notification-list-item-buttons-container .monaco-button")].map((b) => b.textContent));
    assert.ok(buttons.includes("Install in Terminal") && buttons.includes("Copy Command"), buttons.join(", "));
    await showSeek(page());
    await waitFor(async () => (await viewRows(page(), "Index"))?.some((t) => t.startsWith("seek is not installed")), {
      what: "the Index view saying seek is not installed",
    });
  });
});

describe("Rebuild and Cancel on the Index view", { timeout: 240_000 }, () => {
  // Embeddings from the fake Ollama, whose answers the test holds back while it cancels;
  // one file per embedding step, so the run looks at the cancel switch between requests.
  const env = editor({
    userSettings: ({ chat }) => ({ "seek.provider": "ollama", "seek.model": "fake-embed", "seek.baseUrl": chat.url }),
    seekConfig: "flush_every_files = 1\n",
  });
  const page = () => env().page;
  const indexRows = async (pattern) => {
    const r = await viewRows(page(), "Index");
    return r && r.some((t) => pattern.test(t)) ? r : null;
  };

  test("Rebuild asks first; Cancel stops it and the index stays whole", async () => {
    const { chat } = env();
    await waitStatus(page(), /seek: not indexed/, "seek's status bar item saying not indexed", 120_000);
    await showSeek(page());
    await clickViewAction(page(), "Index", "Update Index");
    await waitFor(() => indexRows(/^Files 4$/), { timeout: 120_000, what: "Files 4 in the Index view" });
    assert.ok(chat.seen.some((r) => r === "POST /api/embed"), "the index was embedded by the configured server");
    await waitFor(async () => !(await viewActions(page(), "Index")).includes("Cancel Indexing"), { what: "no Cancel while nothing runs" });

    chat.holdEmbeddings();
    await clickViewAction(page(), "Index", "Rebuild Index");
    await dialogButton(page(), "Rebuild");
    await waitFor(() => chat.held() > 0, { what: "the rebuild's first embedding request" });
    await waitFor(() => indexRows(/^Indexing /), { what: "the run in the Index view" });
    await clickViewAction(page(), "Index", "Cancel Indexing");
    await waitFor(() => indexRows(/^Indexing cancelling/), { what: "the Index view saying cancelling" });
    chat.release();
    const rows = await waitFor(() => indexRows(/^Last run cancelled$/), { what: "the Index view saying the run was cancelled" });
    // A cancelled rebuild leaves the last complete index in place.
    assert.ok(rows.includes("Files 4"), rows.join(" / "));
    await waitStatus(page(), /seek: 4 files/, "the status bar with the 4 files");
    await waitFor(async () => !(await viewActions(page(), "Index")).includes("Cancel Indexing"), { what: "Cancel gone once the run ended" });

    // Rebuild again, to its end.
    const before = chat.seen.length;
    await clickViewAction(page(), "Index", "Rebuild Index");
    await dialogButton(page(), "Rebuild");
    await waitFor(() => chat.seen.length > before, { what: "the second rebuild's embedding requests" });
    await waitFor(async () => {
      const r = await viewRows(page(), "Index");
      return r && !r.some((t) => /^(Indexing |Last run cancelled)/.test(t)) && r.includes("Files 4") ? r : null;
    }, { timeout: 120_000, what: "the rebuild done with Files 4" });
  });
});

describe("an untrusted folder (Restricted Mode)", { timeout: 240_000 }, () => {
  // The user's settings name an embedding server and a chat server (the fake Ollama); the
  // folder's own settings name another server (`folderServer`) and a program of its own.
  let folderServer;
  before(async () => {
    folderServer = await fakeOllama();
  });
  after(() => folderServer?.close());
  const env = editor({
    trusted: false,
    userSettings: ({ chat }) => ({ "seek.provider": "ollama", "seek.model": "fake-embed", "seek.baseUrl": chat.url }),
    folderSettings: ({ workspace }) => ({
      "seek.path": path.join(workspace, "evil-seek"),
      "seek.provider": "ollama",
      "seek.model": "fake-embed",
      "seek.baseUrl": folderServer.url,
      "seek.chat.provider": "ollama",
      "seek.chat.url": folderServer.url,
    }),
    folderFiles: ({ workspace }) => ({
      // Would leave a mark, then run seek: a folder's program must never be run untrusted.
      "evil-seek": `#!/bin/sh\ntouch ${JSON.stringify(path.join(workspace, "evil-seek-ran"))}\nexec ${JSON.stringify(seek)} "$@"\n`,
    }),
  });
  const page = () => env().page;

  test("indexes and searches with the local model, asks nothing, sends nothing anywhere", async () => {
    const { chat, workspace } = env();
    await waitStatus(page(), /seek: not indexed/, "seek's status bar item saying not indexed", 120_000);
    const rows = await indexAndShow(page());
    assert.ok(!rows.some((t) => t.includes("fake-embed")), `the built-in model, not the configured server's: ${rows.join(" / ")}`);

    await runCommand(page(), "seek.search");
    await typeInQuickPick(page(), "Search the workspace", "retry with exponential backoff");
    await waitFor(() => page().evaluate(() => /^src\/retry\.py:/.test(document.querySelector(".quick-input-list .monaco-list-row")?.textContent ?? "")), {
      what: "retry.py first in the quick pick",
    });
    await page().keyboard.press("Escape");

    await runCommand(page(), "seek.ask.focus");
    const frame = await askFrame(page());
    await ask(frame, "where are retries configured?");
    const error = await waitFor(() => frame.evaluate(() => document.querySelector(".error")?.textContent), { what: "the Ask view's answer" });
    assert.match(error, /Ask is off in an untrusted folder/);

    assert.deepEqual(chat.seen, [], "the user's embedding and chat server got nothing");
    assert.deepEqual(folderServer.seen, [], "the folder's server got nothing");
    assert.ok(!fs.existsSync(path.join(workspace, "evil-seek-ran")), "the folder's program was never run");
  });
});

describe("a trusted folder whose own settings name servers and a program (issue 43)", { timeout: 300_000 }, () => {
  // VS Code trusts the folder; its .vscode/settings.json names another embedding, chat
  // and seek server (`folderServer`, listening on 127.0.0.1) and a program of its own,
  // and a `seek` at its root waits for an empty PATH entry. The user's own settings name
  // the user's chat server (the fake Ollama) and the real seek.
  let folderServer;
  before(async () => {
    folderServer = await fakeOllama();
  });
  after(() => folderServer?.close());
  const planted = (workspace, mark) =>
    `#!/bin/sh\ntouch ${JSON.stringify(path.join(workspace, mark))}\nexec ${JSON.stringify(seek)} "$@"\n`;
  const env = editor({
    emptyPathEntry: true,
    folderSettings: ({ workspace }) => ({
      "seek.path": path.join(workspace, "evil-seek"),
      "seek.server.url": folderServer.url,
      "seek.server.tokenEnv": "HOME",
      "seek.provider": "ollama",
      "seek.model": "folder-embed",
      "seek.baseUrl": folderServer.url,
      "seek.chat.provider": "ollama",
      "seek.chat.model": "folder-llm",
      "seek.chat.url": folderServer.url,
    }),
    folderFiles: ({ workspace }) => ({
      "evil-seek": planted(workspace, "evil-seek-ran"),
      seek: planted(workspace, "seek-on-path-ran"),
    }),
  });
  const page = () => env().page;

  test("none of them takes effect, the user is told, and nothing reaches the folder's server", async () => {
    const { chat, workspace } = env();
    await waitStatus(page(), /seek: not indexed/, "seek's status bar item saying not indexed", 120_000);
    const marked = () => ["evil-seek-ran", "seek-on-path-ran"].filter((mark) => fs.existsSync(path.join(workspace, mark)));
    assert.deepEqual(marked(), [], "the folder's programs never ran");
    // seek runs outside the workspace: its working folder is the extension's own.
    const pids = seekProcesses(workspace);
    assert.ok(pids.length >= 1, "the extension's seek process is running");
    for (const pid of pids) {
      const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
      assert.ok(path.relative(workspace, cwd).startsWith(".."), `seek runs in ${cwd}, outside ${workspace}`);
      // Its options are the user's: the chat server's, none of the folder's.
      const args = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      assert.ok(args.includes(`chat_url=${chat.url}`) && !args.some((a) => a.includes(folderServer.url) || a.includes("folder-")), args.join(" "));
    }

    await runCommand(page(), "notifications.showList");
    const warning = await waitFor(async () => (await notifications(page())).find((t) => t.startsWith("seek ignored")), {
      what: "the warning about the folder's settings",
    });
    for (const name of ["seek.path", "seek.server.url", "seek.server.tokenEnv", "seek.provider", "seek.model", "seek.baseUrl", "seek.chat.provider", "seek.chat.model", "seek.chat.url"]) {
      assert.ok(warning.includes(name), `${name} in: ${warning}`);
    }
    await page().keyboard.press("Escape");

    const rows = await indexAndShow(page());
    assert.ok(!rows.some((t) => t.includes("folder-embed")), `not the folder's model: ${rows.join(" / ")}`);

    // Ask goes to the user's chat server, not the folder's.
    await runCommand(page(), "seek.ask.focus");
    const frame = await askFrame(page());
    await ask(frame, "where are retries configured?");
    const answer = await waitFor(
      () => frame.evaluate(() => document.querySelector(".answer:not(.streaming), .error")?.textContent ?? null),
      { timeout: 90_000, what: "the streamed answer" },
    );
    assert.equal(answer, ANSWER.join(""));
    assert.equal(chat.prompts.length, 1, "the user's chat server answered");

    assert.deepEqual(folderServer.seen, [], "the folder's server got nothing");
    assert.deepEqual(marked(), [], "the folder's programs never ran");
  });
});
