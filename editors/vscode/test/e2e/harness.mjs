// The end-to-end harness: a real VS Code (code-server) with the packaged extension, a small
// workspace, a fake Ollama chat server on 127.0.0.1, driven in Debian's Chromium through
// puppeteer-core (driver.mjs drives it). Everything listens on loopback; nothing is
// downloaded at run time.
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
  "seek.impactAtCursor",
  "seek.ask.focus",
  "workbench.view.extension.seek",
  "workbench.action.closeAllEditors",
  "workbench.action.focusActiveEditorGroup",
  "notifications.showList",
];
export const chordKey = (i) => `Key${String.fromCharCode(65 + i)}`; // KeyA, KeyB, ...

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
