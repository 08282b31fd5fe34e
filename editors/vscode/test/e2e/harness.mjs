// The end-to-end harness: a real VS Code (code-server) with the packaged extension, a small
// workspace, a fake Ollama chat server on 127.0.0.1, driven in Debian's Chromium through
// puppeteer-core. Everything listens on loopback; nothing is downloaded at run time.
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import puppeteer from "puppeteer-core";

const here = path.dirname(fileURLToPath(import.meta.url));
export const extensionRoot = path.resolve(here, "..", "..");
export const repoRoot = path.resolve(extensionRoot, "..", "..");

/** The answer the fake chat server streams, in pieces. */
export const ANSWER = ["Retries are configured ", "in src/retry.py ", "by configure_retries."];

export const WORKSPACE_FILES = {
  "src/retry.py": [
    "import time",
    "",
    "",
    // A long first function: the next one becomes a chunk of its own (seek merges small
    // neighbours up to a size), so the search must open it at its own lines.
    "def palette():",
    '    """The colours of the status page."""',
    "    return {",
    ...Array.from({ length: 60 }, (_, i) => `        "colour_${String(i).padStart(2, "0")}": "#${(i * 4099).toString(16).padStart(6, "0").slice(-6)}",`),
    "    }",
    "",
    "",
    "def configure_retries(policy, attempts=3):",
    '    """Retry a failing call with exponential backoff."""',
    "    delay = policy.initial_delay",
    "    for attempt in range(attempts):",
    "        time.sleep(delay)",
    "        delay *= policy.backoff",
    "    return delay",
    "",
  ].join("\n"),
  "src/backoff.py": [
    "def backoff_delays(initial, factor, attempts):",
    '    """The waits between retries: exponential backoff."""',
    "    delay = initial",
    "    for attempt in range(attempts):",
    "        yield delay",
    "        delay *= factor",
    "",
  ].join("\n"),
  "src/router.py": [
    "class Router:",
    "    def __init__(self):",
    "        self.routes = {}",
    "",
    "    def add_route(self, path, handler):",
    "        self.routes[path] = handler",
    "",
  ].join("\n"),
  "README.md": "# demo\n\nA tiny workspace for seek's editor tests.\n",
};

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** A small deterministic embedding: words hashed into 64 dimensions, normalised (texts
 * that share words point the same way, so a search still finds its words). */
export function fakeVector(text) {
  const v = new Array(64).fill(0);
  for (const word of String(text).toLowerCase().match(/[a-z0-9_]+/g) ?? []) {
    let h = 2166136261;
    for (const c of word) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
    v[h % 64] += 1;
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

/**
 * A fake Ollama on 127.0.0.1: `/api/chat` streams ANSWER as NDJSON (it records the prompts
 * and each request's messages), `/api/embed` answers with fakeVector. Every request is
 * recorded in `seen` ("METHOD /path"). While the embedding gate is closed
 * (`holdEmbeddings()`), embedding requests wait, counted in `held()`, until `release()`.
 */
export function fakeOllama() {
  const prompts = [];
  const requests = [];
  const seen = [];
  let gate = null; // { promise, open }
  let held = 0;
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", async () => {
      seen.push(`${req.method} ${req.url}`);
      if (req.method === "POST" && req.url.endsWith("/api/embed")) {
        if (gate) {
          held++;
          await gate.promise;
          held--;
        }
        const data = JSON.parse(body);
        const inputs = Array.isArray(data.input) ? data.input : [data.input];
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ model: data.model, embeddings: inputs.map(fakeVector) }));
        return;
      }
      if (req.method !== "POST" || !req.url.endsWith("/api/chat")) {
        res.writeHead(404).end("{}");
        return;
      }
      const data = JSON.parse(body);
      prompts.push(data.messages[data.messages.length - 1].content);
      requests.push(data.messages);
      res.writeHead(200, { "Content-Type": "application/x-ndjson" });
      for (const piece of ANSWER) {
        res.write(JSON.stringify({ model: data.model, message: { role: "assistant", content: piece }, done: false }) + "\n");
        await new Promise((r) => setTimeout(r, 150));
      }
      res.end(JSON.stringify({ model: data.model, message: { role: "assistant", content: "" }, done: true }) + "\n");
    });
  });
  const holdEmbeddings = () => {
    let open;
    gate = { promise: new Promise((r) => (open = r)), open: () => open() };
  };
  const release = () => {
    gate?.open();
    gate = null;
  };
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        prompts,
        requests,
        seen,
        holdEmbeddings,
        release,
        held: () => held,
        close: () => {
          release();
          server.closeAllConnections();
          server.close();
        },
      }),
    );
  });
}

function writeTree(root, files) {
  for (const [name, text] of Object.entries(files)) {
    const file = path.join(root, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  }
}

async function waitForHttp(url, deadlineMs, isAlive) {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    if (!isAlive()) throw new Error("code-server exited before it listened");
    const ok = await new Promise((resolve) => {
      http.get(url, (res) => {
        res.resume();
        resolve(res.statusCode !== undefined);
      }).on("error", () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer within ${deadlineMs / 1000} s`);
}

/**
 * The commands the tests run, each bound to its own key chord in the test user's
 * keybindings.json. A chord is one key event that VS Code dispatches wherever the focus
 * is (a webview forwards it): unlike typing a title into the command palette, no key can
 * land in an editor that takes the focus late, so nothing has to wait for the focus to
 * settle before a command runs.
 */
export const COMMANDS = [
  "seek.update",
  "seek.rebuild",
  "seek.cancel",
  "seek.restart",
  "seek.search",
  "seek.ask.focus",
  "workbench.view.extension.seek",
  "workbench.action.closeAllEditors",
  "workbench.action.focusActiveEditorGroup",
  "notifications.showList",
];
const chordKey = (i) => `Key${String.fromCharCode(65 + i)}`; // KeyA, KeyB, ...

/**
 * Starts everything: returns { page, browser, workspace, chat, log, stop, ... }. `vsix` is
 * the packaged extension; `seek` the seek program the extension runs (also put on PATH,
 * where an untrusted folder's seek is looked up). `trusted: false` opens the folder in
 * VS Code's Restricted Mode; `folderSettings` is written to its .vscode/settings.json,
 * `folderFiles` added to it (executable), `userSettings` added to the user's; `seekConfig`
 * is seek's own user config.toml. `emptyPathEntry` puts an empty entry (the working
 * folder, to the operating system's lookup) first on PATH, as a careless profile does.
 *
 * seek's program and server settings are `machine` settings (issue 43): a web or remote
 * window such as code-server's takes them from the remote's own settings file
 * (`Machine/settings.json` under the user data folder), not the browser's user settings;
 * they are written there, the editor's own settings to `User/settings.json`.
 */
export async function launch(options) {
  const { vsix, seek, chromium = "/usr/bin/chromium", trusted = true, seekConfig, emptyPathEntry = false } = options;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "seek-vscode-e2e-"));
  const workspace = path.join(work, "demo");
  const userData = path.join(work, "user-data");
  const extensions = path.join(work, "extensions");
  const chat = await fakeOllama();
  // userSettings, folderSettings and folderFiles may be functions of { chat, workspace }.
  const given = (name, fallback) => (typeof options[name] === "function" ? options[name]({ chat, workspace }) : (options[name] ?? fallback));
  const userSettings = given("userSettings", {});
  const folderSettings = given("folderSettings", undefined);
  const folderFiles = given("folderFiles", {});
  writeTree(workspace, WORKSPACE_FILES);
  if (folderSettings) writeTree(workspace, { ".vscode/settings.json": JSON.stringify(folderSettings, null, 2) });
  writeTree(workspace, folderFiles);
  for (const name of Object.keys(folderFiles)) fs.chmodSync(path.join(workspace, name), 0o755);
  fs.mkdirSync(path.join(userData, "User"), { recursive: true });
  fs.mkdirSync(path.join(userData, "Machine"), { recursive: true });
  const settingsFile = path.join(userData, "User", "settings.json");
  const machineSettingsFile = path.join(userData, "Machine", "settings.json");
  const settings = {
    "seek.path": seek,
    "seek.chat.provider": "ollama",
    "seek.chat.model": "fake-llm",
    "seek.chat.url": chat.url,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.enableExperiments": false,
    // The view's title bar actions (Update / Rebuild / Cancel) shown without a hover.
    "workbench.view.alwaysShowHeaderActions": true,
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "telemetry.telemetryLevel": "off",
    "chat.commandCenter.enabled": false,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "window.commandCenter": false,
    "security.workspace.trust.enabled": !trusted,
    "security.workspace.trust.startupPrompt": "never",
    "files.autoSave": "off",
    "remote.autoForwardPorts": false,
    ...userSettings,
  };
  const isSeek = ([key]) => key.startsWith("seek.");
  fs.writeFileSync(settingsFile, JSON.stringify(Object.fromEntries(Object.entries(settings).filter((e) => !isSeek(e))), null, 2));
  fs.writeFileSync(machineSettingsFile, JSON.stringify(Object.fromEntries(Object.entries(settings).filter(isSeek)), null, 2));
  fs.writeFileSync(
    path.join(userData, "User", "keybindings.json"),
    JSON.stringify(COMMANDS.map((command, i) => ({ key: `ctrl+alt+shift+${chordKey(i).slice(3).toLowerCase()}`, command }))),
  );
  const env = {
    ...process.env,
    PATH: `${emptyPathEntry ? path.delimiter : ""}${path.dirname(seek)}${path.delimiter}${process.env.PATH ?? ""}`,
    HOME: path.join(work, "home"),
    XDG_CONFIG_HOME: path.join(work, "config"),
    XDG_CACHE_HOME: path.join(work, "cache"),
    XDG_DATA_HOME: path.join(work, "data"),
    SEEK_HOME: path.join(work, "seek-home"),
  };
  delete env.SEEK_TOKEN;
  fs.mkdirSync(env.HOME, { recursive: true });
  // VS Code takes its environment from a login shell, which resets PATH: seek on PATH is
  // set where a user sets it (pipx's ~/.local/bin is added the same way).
  fs.writeFileSync(path.join(env.HOME, ".profile"), `PATH=${emptyPathEntry ? ":" : ""}${JSON.stringify(path.dirname(seek))}:"$PATH"\n`);
  if (seekConfig) writeTree(env.XDG_CONFIG_HOME, { "seek/config.toml": seekConfig });
  const codeServer = path.join(here, "node_modules", ".bin", "code-server");
  const common = ["--user-data-dir", userData, "--extensions-dir", extensions];
  const installed = spawnSync(codeServer, [...common, "--install-extension", vsix], { env, encoding: "utf8", timeout: 120_000 });
  if (installed.status !== 0) throw new Error(`installing the extension failed: ${installed.stderr || installed.stdout}`);
  const port = await freePort();
  const log = [];
  const server = spawn(
    codeServer,
    [
      ...common,
      "--auth", "none",
      "--bind-addr", `127.0.0.1:${port}`,
      "--disable-telemetry",
      "--disable-update-check",
      ...(trusted ? ["--disable-workspace-trust"] : []),
      "--disable-getting-started-override",
      workspace,
    ],
    { env, stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  server.stdout.on("data", (d) => log.push(String(d)));
  server.stderr.on("data", (d) => log.push(String(d)));
  let alive = true;
  server.on("exit", () => (alive = false));
  const url = `http://127.0.0.1:${port}/`;
  await waitForHttp(`${url}healthz`, 90_000, () => alive);
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--window-size=1280,800",
      "--no-first-run",
      // Nothing but loopback: no background requests to the browser's own services.
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    defaultViewport: { width: 1280, height: 800 },
    protocolTimeout: 120_000,
  });
  const page = await browser.newPage();
  await page.goto(`${url}?folder=${encodeURIComponent(workspace)}`, { waitUntil: "domcontentloaded", timeout: 90_000 });
  const stop = async () => {
    await browser.close().catch(() => undefined);
    if (alive) {
      const exited = new Promise((r) => server.once("exit", r));
      try {
        process.kill(-server.pid, "SIGTERM"); // the group: code-server, its extension host, seek
      } catch {
        // already gone
      }
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      try {
        process.kill(-server.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    chat.close();
    fs.rmSync(work, { recursive: true, force: true });
  };
  return { page, browser, workspace, chat, log, stop, env, settingsFile, machineSettingsFile };
}

// -- driving the editor -----------------------------------------------------------------

export async function waitFor(fn, { timeout = 60_000, what = "a condition" } = {}) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out after ${timeout / 1000} s waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
}

/** Runs a command by its key chord (see COMMANDS). */
export async function runCommand(page, command) {
  const i = COMMANDS.indexOf(command);
  if (i < 0) throw new Error(`no key chord for ${command}: add it to COMMANDS`);
  for (const key of ["Control", "Alt", "Shift"]) await page.keyboard.down(key);
  await page.keyboard.press(chordKey(i));
  for (const key of ["Shift", "Alt", "Control"]) await page.keyboard.up(key);
}

/** Opens seek's views in the side bar and waits for the keyboard focus to reach the Index
 * view's list, where VS Code puts it once the view is drawn: a quick pick opened before
 * that would lose the focus to it, and close. */
export async function showSeek(page) {
  await runCommand(page, "workbench.view.extension.seek");
  await waitFor(
    () =>
      page.evaluate(() => {
        const pane = document.activeElement?.closest(".pane");
        return !!pane && pane.querySelector(".pane-header .title")?.textContent?.trim().toLowerCase() === "index" && !!document.activeElement.closest(".pane-body");
      }),
    { what: "the Index view focused" },
  );
}

/** The texts of the rows of a view pane, by its title ("Index", "Results"). */
export function viewRows(page, title) {
  return page.evaluate((t) => {
    const panes = [...document.querySelectorAll(".pane")];
    const pane = panes.find((p) => p.querySelector(".pane-header .title")?.textContent?.trim().toLowerCase() === t.toLowerCase());
    if (!pane) return null;
    // A row's label and description, a space between them.
    return [...pane.querySelectorAll(".pane-body .monaco-list-row")].map((r) =>
      [...r.querySelectorAll(".label-name, .label-description")].map((e) => e.textContent.trim()).filter(Boolean).join(" "),
    );
  }, title);
}

/** The title bar actions a view pane shows now, by their labels ("Update Index", ...). */
export function viewActions(page, title) {
  return page.evaluate((t) => {
    const pane = [...document.querySelectorAll(".pane")].find((p) => p.querySelector(".pane-header .title")?.textContent?.trim().toLowerCase() === t.toLowerCase());
    if (!pane) return null;
    // A label may end with its key chord: "Update Index (Ctrl+Alt+Shift+A)".
    return [...pane.querySelectorAll(".pane-header .actions .action-label")].filter((a) => a.offsetParent !== null).map((a) => (a.getAttribute("aria-label") ?? "").replace(/ \(.*\)$/, ""));
  }, title);
}

/** Clicks a view pane's title bar action by its label, once it shows. The toolbar redraws
 * its buttons when a context key its menu names changes; a button replaced between the
 * mouse's press and release gets no click (the browser sends it to what both share), so
 * the page notes where the click went, and only a click that did not reach the button is
 * made again: never twice, never lost. */
export async function clickViewAction(page, title, label) {
  for (let attempt = 0; attempt < 3; attempt++) {
    const box = await waitFor(
      () =>
        page.evaluate(
          (t, l) => {
            const pane = [...document.querySelectorAll(".pane")].find((p) => p.querySelector(".pane-header .title")?.textContent?.trim().toLowerCase() === t.toLowerCase());
            const action = [...(pane?.querySelectorAll(".pane-header .actions .action-label") ?? [])].find(
              (a) => a.offsetParent !== null && (a.getAttribute("aria-label") ?? "").replace(/ \(.*\)$/, "") === l,
            );
            if (!action) return null;
            window.__seekClicked = null;
            document.addEventListener("click", (e) => (window.__seekClicked = e.target.closest?.(".action-label")?.getAttribute("aria-label") ?? ""), { capture: true, once: true });
            const r = action.getBoundingClientRect();
            return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
          },
          title,
          label,
        ),
      { timeout: 30_000, what: `"${label}" on the ${title} view's title bar` },
    );
    await page.mouse.click(box.x, box.y);
    const clicked = await page.evaluate(() => window.__seekClicked);
    if (clicked !== null && clicked.replace(/ \(.*\)$/, "") === label) return;
  }
  throw new Error(`three clicks on "${label}" of the ${title} view's title bar did not reach it`);
}

/** Folds or unfolds a view pane by a click on its header ("Index", "Results") and waits
 * until it is so: folded means drawn at its header's height (the fold is animated, and
 * the headers below move while it goes). */
export async function foldPane(page, title, folded) {
  const state = () =>
    page.evaluate((t) => {
      const pane = [...document.querySelectorAll(".pane")].find((p) => p.querySelector(".pane-header .title")?.textContent?.trim().toLowerCase() === t.toLowerCase());
      if (!pane) return null;
      const header = pane.querySelector(".pane-header").getBoundingClientRect();
      const expanded = pane.classList.contains("expanded");
      return { expanded, settled: expanded || pane.getBoundingClientRect().height <= header.height + 1, x: header.x + header.width / 2, y: header.y + header.height / 2 };
    }, title);
  const now = await state();
  if (!now) throw new Error(`no view named ${title}`);
  if (now.expanded === folded) await page.mouse.click(now.x, now.y);
  await waitFor(async () => {
    const s = await state();
    return s && s.expanded === !folded && s.settled;
  }, { what: `the ${title} view ${folded ? "folded" : "unfolded"}` });
}

export function statusBarText(page) {
  return page.evaluate(() => [...document.querySelectorAll(".statusbar-item")].map((e) => e.textContent.trim()).filter((t) => t.includes("seek")).join(" | "));
}

/** The messages of the notifications showing now. */
export function notifications(page) {
  return page.evaluate(() => [...document.querySelectorAll(".notification-list-item-message")].map((e) => e.textContent));
}

/** The active editor's tab title, the cursor/selection the status bar shows, and whether
 * the keyboard focus is in that editor's text. */
export function editorState(page) {
  return page.evaluate(() => {
    const tab = document.querySelector(".tab.active .label-name")?.textContent?.trim() ?? "";
    const cursor = [...document.querySelectorAll(".statusbar-item")].map((e) => e.textContent.trim()).find((t) => /^Ln \d+, Col \d+/.test(t)) ?? "";
    const active = document.activeElement;
    const focused = !!active?.closest(".editor-instance .monaco-editor") && active.closest(".editor-group-container.active") !== null;
    return { tab, cursor, focused };
  });
}

/** Waits until `tab` is the active editor and holds the keyboard focus: opening an editor
 * focuses it a moment after its tab shows, and whatever comes next must not race that. */
export function editorFocused(page, tab) {
  return waitFor(
    async () => {
      const s = await editorState(page);
      return s.tab === tab && s.focused ? s : null;
    },
    { what: `${tab} open and focused` },
  );
}

/** Opens the focused editor's context menu at the cursor (Shift+F10, the keyboard's way)
 * and picks `label` from it (VS Code draws menus in a shadow root). */
export async function editorContextMenu(page, label) {
  if (!(await editorState(page)).focused) throw new Error("no editor holds the focus for its context menu");
  await page.keyboard.down("Shift");
  await page.keyboard.press("F10");
  await page.keyboard.up("Shift");
  const item = await waitFor(
    async () => {
      for (const handle of await page.$$("pierce/.action-label")) {
        if ((await handle.evaluate((e) => e.textContent.trim())) === label) return handle;
      }
      return null;
    },
    { timeout: 10_000, what: `"${label}" in the editor's context menu` },
  );
  await item.click();
}

/** Waits for the quick pick with this placeholder to hold the focus, then enters `text`
 * at once (one input event, as a paste or an input method does): it lands whole in the
 * quick pick or, if something took the focus, the check after it says so. */
export async function typeInQuickPick(page, placeholder, text) {
  await waitFor(
    () =>
      page.evaluate((p) => {
        const input = document.querySelector(".quick-input-widget input");
        return !!input && input.offsetParent !== null && document.activeElement === input && (input.getAttribute("placeholder") ?? "").startsWith(p);
      }, placeholder),
    { timeout: 30_000, what: `the quick pick "${placeholder}" focused` },
  );
  await page.keyboard.sendCharacter(text);
  const typed = await page.evaluate(() => document.querySelector(".quick-input-widget input")?.value ?? "");
  if (typed !== text) throw new Error(`the quick pick lost the text entered into it (it holds ${JSON.stringify(typed)})`);
}

/** The Ask view's inner frame (the webview's content), once its script has run: a form
 * sent before the script listens for it would be sent as a page load instead. */
export async function askFrame(page) {
  return waitFor(
    async () => {
      for (const frame of page.frames()) {
        try {
          if ((await frame.$("#question")) && (await frame.evaluate(() => document.readyState === "complete"))) return frame;
        } catch {
          // a frame being replaced
        }
      }
      return null;
    },
    { timeout: 60_000, what: "the Ask view's page" },
  );
}

/** Asks in the Ask view: the question set in its box and the form sent (the page's own
 * submit path; no keys that a late focus change could take elsewhere). */
export async function ask(frame, question) {
  await frame.$eval("#question", (q, text) => (q.value = text), question);
  await frame.$eval("#form", (f) => f.requestSubmit());
}

/** Clicks the button of the modal dialog showing now, by its label. */
export async function dialogButton(page, label) {
  const button = await waitFor(
    async () => {
      for (const b of await page.$$(".monaco-dialog-box .dialog-buttons .monaco-button")) {
        if ((await b.evaluate((e) => e.textContent.trim())) === label) return b;
      }
      return null;
    },
    { timeout: 30_000, what: `the dialog's "${label}" button` },
  );
  await button.click();
}
