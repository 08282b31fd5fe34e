// Driving the editor in the browser (issue 30's end-to-end tests): waiting for a state,
// running a command by its key chord, reading the views, the notifications, the editor
// and the Ask view's page. The editor itself is started by harness.mjs.
import { COMMANDS, chordKey } from "./harness.mjs";

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
  // A click while the menu still lays itself out can land on nothing (the menu then stays
  // open, seen once under load): click until the item is gone with its menu.
  for (let attempt = 0; ; attempt++) {
    await item.click().catch(() => {});
    const closed = await waitFor(() => item.evaluate((e) => !e.isConnected || e.offsetParent === null).catch(() => true), {
      timeout: 3_000,
      what: `the context menu closed after "${label}"`,
    }).catch((err) => (attempt < 4 ? false : Promise.reject(err)));
    if (closed) return;
  }
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
