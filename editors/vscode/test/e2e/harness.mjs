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

/** A fake Ollama: `/api/chat` streams ANSWER as NDJSON; it records the prompts it got and
 * each request's messages. */
export function fakeChatServer() {
  const prompts = [];
  const requests = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", async () => {
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
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve({ url: `http://127.0.0.1:${server.address().port}`, prompts, requests, close: () => server.close() }));
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
 * Starts everything: returns { page, browser, workspace, chat, log, stop }. `vsix` is the
 * packaged extension; `seek` the seek program the extension runs.
 */
export async function launch({ vsix, seek, chromium = "/usr/bin/chromium" }) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "seek-vscode-e2e-"));
  const workspace = path.join(work, "demo");
  writeTree(workspace, WORKSPACE_FILES);
  const userData = path.join(work, "user-data");
  const extensions = path.join(work, "extensions");
  const chat = await fakeChatServer();
  fs.mkdirSync(path.join(userData, "User"), { recursive: true });
  fs.writeFileSync(
    path.join(userData, "User", "settings.json"),
    JSON.stringify(
      {
        "seek.path": seek,
        "seek.chat.provider": "ollama",
        "seek.chat.model": "fake-llm",
        "seek.chat.url": chat.url,
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": false,
        "workbench.enableExperiments": false,
        "extensions.autoCheckUpdates": false,
        "extensions.autoUpdate": false,
        "telemetry.telemetryLevel": "off",
        "chat.commandCenter.enabled": false,
        "workbench.secondarySideBar.defaultVisibility": "hidden",
        "window.commandCenter": false,
        "security.workspace.trust.enabled": false,
        "files.autoSave": "off",
        "remote.autoForwardPorts": false,
      },
      null,
      2,
    ),
  );
  const env = {
    ...process.env,
    HOME: path.join(work, "home"),
    XDG_CONFIG_HOME: path.join(work, "config"),
    XDG_CACHE_HOME: path.join(work, "cache"),
    XDG_DATA_HOME: path.join(work, "data"),
    SEEK_HOME: path.join(work, "seek-home"),
  };
  delete env.SEEK_TOKEN;
  fs.mkdirSync(env.HOME, { recursive: true });
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
      "--disable-workspace-trust",
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
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,800", "--no-first-run"],
    defaultViewport: { width: 1280, height: 800 },
    protocolTimeout: 120_000,
  });
  const page = await browser.newPage();
  await page.goto(`${url}?folder=${encodeURIComponent(workspace)}`, { waitUntil: "domcontentloaded", timeout: 90_000 });
  const stop = async () => {
    await browser.close().catch(() => undefined);
    if (alive) {
      try {
        process.kill(-server.pid, "SIGTERM"); // the group: code-server, its extension host, seek
      } catch {
        // already gone
      }
      await new Promise((r) => setTimeout(r, 500));
      try {
        process.kill(-server.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    chat.close();
    fs.rmSync(work, { recursive: true, force: true });
  };
  const settingsFile = path.join(userData, "User", "settings.json");
  return { page, browser, workspace, chat, log, stop, env, settingsFile };
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
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out after ${timeout / 1000} s waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
}

/** Opens the command palette (F1), retrying after a click on the title bar when the key
 * went to a frame that kept it. */
async function openPalette(page) {
  for (let attempt = 0; attempt < 4; attempt++) {
    await page.keyboard.press("Escape");
    await page.keyboard.press("F1");
    // Open means focused and showing the palette's ">" (a closing quick pick is visible
    // for a moment too, and keys typed then would land in the editor).
    const open = await waitFor(
      () => page.evaluate(() => {
        const input = document.querySelector(".quick-input-widget input");
        return !!input && document.activeElement === input && input.value.startsWith(">") && input.offsetParent !== null;
      }),
      { timeout: 5_000, what: "the command palette" },
    ).catch(() => false);
    // Still open a moment later: an editor that takes the focus late (after a quick pick
    // was accepted) closes the palette, and what is typed next would land in the editor.
    await new Promise((r) => setTimeout(r, 700));
    const still = await page.evaluate(() => {
      const input = document.querySelector(".quick-input-widget input");
      return !!input && document.activeElement === input && input.value.startsWith(">") && input.offsetParent !== null;
    });
    if (open && still) return;
    const bar = await page.$(".part.titlebar, .part.statusbar");
    const box = bar && (await bar.boundingBox());
    if (box) await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  }
  throw new Error("the command palette did not open");
}

/** Runs a command by its palette title (F1, type, Enter). */
export async function runCommand(page, title) {
  await openPalette(page);
  await page.evaluate(() => {
    const input = document.querySelector(".quick-input-widget input");
    input.focus();
    input.select();
  });
  await page.keyboard.type(`>${title}`);
  const typed = await page.evaluate(() => document.querySelector(".quick-input-widget input")?.value ?? "");
  if (typed !== `>${title}`) throw new Error(`the palette lost the keys typed into it (it holds ${JSON.stringify(typed)})`);
  await waitFor(
    () => page.evaluate((t) => [...document.querySelectorAll(".quick-input-list .monaco-list-row")].some((r) => r.textContent.includes(t)), title),
    { timeout: 20_000, what: `the command "${title}" in the palette` },
  );
  await page.keyboard.press("Enter");
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

/** Collapses or expands a view pane by clicking its header ("Index", "Results"). */
export async function togglePane(page, title) {
  const headers = await page.$$(".pane-header");
  for (const header of headers) {
    const text = await header.evaluate((h) => h.querySelector(".title")?.textContent?.trim().toLowerCase());
    if (text === title.toLowerCase()) return header.click();
  }
  throw new Error(`no view named ${title}`);
}

export function statusBarText(page) {
  return page.evaluate(() => [...document.querySelectorAll(".statusbar-item")].map((e) => e.textContent.trim()).filter((t) => t.includes("seek")).join(" | "));
}

/** The active editor's tab title and the cursor/selection the status bar shows. */
export function editorState(page) {
  return page.evaluate(() => {
    const tab = document.querySelector(".tab.active .label-name")?.textContent?.trim() ?? "";
    const cursor = [...document.querySelectorAll(".statusbar-item")].map((e) => e.textContent.trim()).find((t) => /^Ln \d+, Col \d+/.test(t)) ?? "";
    return { tab, cursor };
  });
}

/** Right-clicks the visible editor's text and picks `label` from its context menu (VS
 * Code draws menus in a shadow root); the right-click is retried if no menu shows. */
export async function editorContextMenu(page, label) {
  for (let attempt = 0; attempt < 4; attempt++) {
    let target = null;
    for (const lines of await page.$$(".editor-instance .monaco-editor .view-lines")) {
      const box = await lines.boundingBox();
      if (box && box.width > 200 && box.height > 100) target = box;
    }
    if (!target) throw new Error("no visible editor to right-click");
    if (attempt % 2 === 0) {
      await page.mouse.click(target.x + 80, target.y + 60);
      await page.mouse.click(target.x + 80, target.y + 60, { button: "right" });
    } else {
      // The keyboard's way to the same menu, when a frame kept the mouse's focus.
      await runCommand(page, "View: Focus Active Editor Group");
      await page.keyboard.down("Shift");
      await page.keyboard.press("F10");
      await page.keyboard.up("Shift");
    }
    const end = Date.now() + 5_000;
    while (Date.now() < end) {
      for (const handle of await page.$$("pierce/.action-label")) {
        if ((await handle.evaluate((e) => e.textContent.trim())) === label) {
          await handle.click();
          return;
        }
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    await page.keyboard.press("Escape");
  }
  throw new Error(`"${label}" did not show in the editor's context menu`);
}

/** Waits for the quick pick with this placeholder, then types `text` into it. */
export async function typeInQuickPick(page, placeholder, text) {
  await waitFor(
    () => page.evaluate((p) => document.querySelector(".quick-input-widget input")?.getAttribute("placeholder")?.startsWith(p) ?? false, placeholder),
    { timeout: 30_000, what: `the quick pick "${placeholder}"` },
  );
  await page.keyboard.type(text);
}

/** The Ask view's inner frame (the webview's content). */
export async function askFrame(page) {
  return waitFor(
    async () => {
      for (const frame of page.frames()) {
        try {
          if (await frame.$("#question")) return frame;
        } catch {
          // a frame being replaced
        }
      }
      return null;
    },
    { timeout: 60_000, what: "the Ask view's page" },
  );
}
