// seek ui: plain JavaScript, no build step, no request beyond this server (issue 16).
// Model and file text is only ever set as textContent; the one innerHTML is Pygments'
// output, produced on the server with every character of the code escaped.
"use strict";

const $ = (id) => document.getElementById(id);
const token = new URLSearchParams(location.hash.slice(1)).get("token") || "";
let workspace = "";
let session = newSession();
let progressAbort = null;
let wasRunning = false;
const UNREACHABLE = "cannot reach seek ui (is it still running?)";

function newSession() {
  return "ui-" + Date.now().toString(36) + "-" + Math.random().toString(36).slice(2, 8);
}

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props || {});
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

function showError(message, where) {
  const box = where || $("error");
  box.textContent = message;
  box.hidden = !message;
}

function headers(json) {
  const h = {};
  if (json) h["Content-Type"] = "application/json";
  if (token) h["Authorization"] = "Bearer " + token;
  return h;
}

async function errorOf(response) {
  try {
    const data = await response.json();
    const message = data.error ? data.error.message : response.statusText;
    // seek ui makes a token per run: an old tab or a typed address lacks it.
    return new Error(response.status === 401
      ? message + " (open the address seek ui printed: it holds this run's token)" : message);
  } catch (e) {
    return new Error("the server answered " + response.status + " " + response.statusText);
  }
}

async function api(path, body) {
  let response;
  try {
    response = await fetch(path, body === undefined
      ? { headers: headers(false) }
      : { method: "POST", headers: headers(true), body: JSON.stringify(body) });
  } catch (e) {
    throw new Error(UNREACHABLE);
  }
  if (!response.ok) throw await errorOf(response);
  return response.json();
}

// Newline-delimited JSON, one object per line, as the server sends it.
async function stream(path, body, onItem, signal) {
  let response;
  try {
    response = await fetch(path, body === undefined
      ? { headers: headers(false), signal }
      : { method: "POST", headers: headers(true), body: JSON.stringify(body), signal });
  } catch (e) {
    if (signal && signal.aborted) throw e;
    throw new Error(UNREACHABLE);
  }
  if (!response.ok) throw await errorOf(response);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch (e) {
      if (signal && signal.aborted) throw e;
      throw new Error("the connection to seek ui broke (is it still running?)");
    }
    const { value, done } = chunk;
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 1);
      if (line.trim()) onItem(JSON.parse(line));
    }
  }
}

const q = (path) => path + (path.includes("?") ? "&" : "?") + "path=" + encodeURIComponent(workspace);

// -- tabs -------------------------------------------------------------------------------

function showPanel(id) {
  for (const tab of document.querySelectorAll(".tab")) {
    const on = tab.dataset.panel === id;
    tab.setAttribute("aria-pressed", String(on));
    $(tab.dataset.panel).hidden = !on;
  }
  if (id === "settings-panel") loadSettings();
  const focus = { "search-panel": "query", "ask-panel": "question" }[id];
  if (focus) $(focus).focus();
}

// -- index panel ------------------------------------------------------------------------

function when(epochMs) {
  return epochMs ? new Date(epochMs).toLocaleString() : "never";
}

function size(bytes) {
  const units = ["B", "KB", "MB", "GB"];
  let i = 0;
  while (bytes >= 1024 && i < units.length - 1) { bytes /= 1024; i++; }
  return bytes.toFixed(i ? 1 : 0) + " " + units[i];
}

// The index cannot be updated (a full disk, a read-only folder: issue 31): answers come from
// the last complete index, and one banner above every panel says so and why. The status's
// `stale` (with `update_fault`'s next try) or a search's stale note sets it; a status or a
// search without one clears it.
const STALE_NOTE = "The index is stale";

function showStale(message) {
  const box = $("stale");
  box.textContent = message;
  box.hidden = !message;
}

function staleFromStatus(s) {
  if (!s.stale) return "";
  const fault = s.update_fault;
  const retry = fault && fault.retry_in_s > 0
    ? " Next try in " + Math.ceil(fault.retry_in_s) + " s." : "";
  return "The index is stale: it cannot be updated (" + s.stale +
    "); answers come from the last complete index." + retry;
}

async function loadStatus() {
  try {
    const s = await api(q("/ui/api/status"));
    const model = s.model && s.model !== s.configured_model
      ? s.model + " (configured: " + s.configured_model + ")" : (s.model || s.configured_model);
    const rows = [
      ["Workspace", s.workspace], ["Files", String(s.files)], ["Chunks", String(s.chunks)],
      ["Model", model], ["Last update", when(s.updated_at)], ["Index size", size(s.size_bytes)],
      ["Writer", s.writer || "none"], ["Index folder", s.index],
    ];
    showStale(staleFromStatus(s));
    const dl = $("status-fields");
    dl.replaceChildren();
    for (const [k, v] of rows) dl.append(el("dt", { textContent: k }), el("dd", { textContent: v }));
    const warn = $("mismatch");
    if (s.rebuild_reason) {
      warn.textContent = "Needs a rebuild: " + s.rebuild_reason +
        ". Searches use the old index and saved files are not indexed until you rebuild.";
      if (s.model && s.model !== s.configured_model) {
        warn.textContent = "This index was built with " + s.model + " but the configured model is " +
          s.configured_model + ". Searches use the old index and saved files are not indexed until you Rebuild.";
      }
      warn.hidden = false;
    } else if (!s.exists) {
      warn.textContent = "No index yet: press Update to index this workspace.";
      warn.hidden = false;
    } else {
      warn.hidden = true;
    }
    // The workspace's own .seek.toml / [tool.seek] sets what needs the user's trust (an
    // address, a secret's name, a model): say which settings are ignored until it is trusted.
    const trust = $("workspace-config");
    const wc = s.workspace_config;
    if (wc && wc.ignored && wc.ignored.length) {
      trust.textContent = wc.path + " is " + wc.state + ": seek ignores its " + wc.ignored.join(", ") +
        " until you review it and run `seek trust` in the workspace.";
      trust.hidden = false;
    } else {
      trust.hidden = true;
    }
    const skipped = $("skipped");
    skipped.replaceChildren();
    const reasons = Object.keys(s.skipped || {});
    if (reasons.length) skipped.append(el("h3", { textContent: "Skipped files" }));
    for (const reason of reasons) {
      const names = (s.skipped_examples || {})[reason] || [];
      const list = el("ul");
      for (const n of names) list.append(el("li", { textContent: n }));
      skipped.append(el("details", {},
        el("summary", { textContent: reason + ": " + s.skipped[reason] }),
        names.length ? list : el("p", { textContent: "(no names recorded)" })));
    }
    showError("");
  } catch (e) {
    $("status-fields").replaceChildren(el("dd", { textContent: "Status unavailable: " + e.message }));
    showError("Status: " + e.message);
  }
}

// "embedding: 12 / 60 files · m12.py · 24 chunks · 3.1 s", from this page's run or from
// what another writer publishes beside the lock.
function progressLine(p) {
  if (!p.total) return p.phase + "… · " + p.elapsed + " s";
  const current = p.current && p.current.length ? " · " + p.current[p.current.length - 1] : "";
  const chunks = p.chunks ? " · " + p.chunks + " chunks" : "";
  return p.phase + ": " + p.done + " / " + p.total + " files" + current + chunks + " · " + p.elapsed + " s";
}

function showProgress(p) {
  const bar = $("bar"), text = $("progress-text");
  const running = !!p.running;
  $("update").disabled = running;
  $("rebuild").disabled = running;
  $("settings-rebuild").disabled = running;
  $("cancel").disabled = !(running && p.source === "page") || p.cancelling;
  bar.hidden = !running;
  if (running && p.total) {
    bar.max = Math.max(1, p.total);
    bar.value = p.done;
  } else {
    bar.removeAttribute("value"); // indeterminate until the run knows its total
  }
  if (p.source === "other") {
    text.textContent = "Indexing by " + p.writer + " — " + (p.phase ? progressLine(p)
      : p.files + " files, " + p.indexed_chunks + " chunks saved so far") +
      " (cancel it where it runs).";
  } else if (running) {
    text.textContent = (p.cancelling ? "Cancelling… " : "") + progressLine(p);
    $("run-result").textContent = "";
  } else {
    text.textContent = "";
  }
  if (!running && p.source === "page") {
    if (p.error) {
      $("run-result").textContent = "";
      showError("Index run failed: " + p.error);
    } else if (p.summary) {
      let line = p.summary;
      if (p.cancelled && p.kept_files !== null) line = "Cancelled: kept " + p.kept_files + " files. " + p.summary;
      $("run-result").textContent = line;
    }
  }
  if (wasRunning && !running) loadStatus();
  wasRunning = running;
}

function watchProgress(retrying) {
  if (progressAbort) progressAbort.abort();
  const abort = new AbortController();
  progressAbort = abort;
  const shown = (p) => { // back after a break: the errors it caused are over
    if (retrying) {
      retrying = false;
      showError("");
      showError("", $("search-error"));
      loadStatus();
    }
    showProgress(p);
  };
  stream(q("/ui/api/progress"), undefined, shown, abort.signal).then(() => {
    throw new Error("the connection to seek ui ended (is it still running?)");
  }).catch((e) => {
    if (abort.signal.aborted) return;
    // A retry that fails again leaves what the outage already said (another panel's error).
    if (!retrying || $("error").hidden) showError("Progress: " + e.message + " (retrying every 2 s)");
    setTimeout(() => { if (progressAbort === abort) watchProgress(true); }, 2000);
  });
}

async function startIndex(rebuild) {
  try {
    showError("");
    $("run-result").textContent = "";
    showProgress(Object.assign({ source: "page", running: true, phase: "starting", done: 0,
      total: 0, elapsed: 0 }, await api("/ui/api/index", { path: workspace, rebuild })));
  } catch (e) {
    showError((rebuild ? "Rebuild: " : "Update: ") + e.message);
  }
}

// -- settings ---------------------------------------------------------------------------

const LABELS = {
  rerank_threshold: "Threshold", snippets: "Snippets", prompt_budget_chars: "Budget (characters)",
  ignored_globs: "Ignored globs (one per line)", chat_provider: "Chat provider",
  chat_model: "Chat model", chat_url: "Chat server address",
};

async function loadSettings(data) {
  try {
    data = data || await api(q("/ui/api/settings"));
    $("config-file").textContent = data.config_file;
    const fields = $("settings-fields"), fixed = $("rebuild-fields");
    fields.replaceChildren();
    fixed.replaceChildren();
    for (const s of data.settings) {
      if (!s.editable) {
        fixed.append(el("dt", { textContent: s.name }),
          el("dd", { textContent: (s.value === "" ? '""' : String(s.value)) + " (" + s.source + ") · needs a rebuild" }));
        continue;
      }
      const id = "set-" + s.name;
      let input;
      if (s.name === "ignored_globs") {
        input = el("textarea", { id, rows: 3, value: s.value.join("\n") });
      } else if (s.name === "chat_provider") {
        input = el("select", { id });
        for (const p of ["ollama", "openai"]) input.append(el("option", { value: p, textContent: p }));
        input.value = s.value;
      } else {
        const number = typeof s.value === "number";
        input = el("input", { id, type: number ? "number" : "text", value: String(s.value) });
        if (number) input.step = s.name === "rerank_threshold" ? "0.001" : "1";
      }
      input.dataset.name = s.name;
      input.dataset.kind = typeof s.value === "number" ? (Number.isInteger(s.value) && s.name !== "rerank_threshold" ? "int" : "float") : (Array.isArray(s.value) ? "list" : "text");
      input.dataset.initial = input.value;
      fields.append(el("div", { className: "field" },
        el("label", { htmlFor: id, textContent: LABELS[s.name] || s.name }), input,
        el("span", { className: "source-of", textContent: "from " + s.source })));
    }
    $("settings-notes").textContent = (data.notes || []).join("; ");
  } catch (e) {
    showError("Settings: " + e.message);
  }
}

async function saveSettings(event) {
  event.preventDefault();
  const changes = {};
  for (const input of $("settings-fields").querySelectorAll("[data-name]")) {
    if (input.value === input.dataset.initial) continue;
    const kind = input.dataset.kind;
    changes[input.dataset.name] = kind === "int" ? parseInt(input.value, 10)
      : kind === "float" ? parseFloat(input.value)
      : kind === "list" ? input.value.split("\n").map((s) => s.trim()).filter(Boolean)
      : input.value;
  }
  if (!Object.keys(changes).length) {
    $("settings-notes").textContent = "Nothing changed.";
    return;
  }
  try {
    const data = await api("/ui/api/settings", { path: workspace, changes });
    await loadSettings(data);
    $("settings-notes").textContent = "Saved " + Object.keys(changes).join(", ") + "." +
      (data.notes.length ? " " + data.notes.join("; ") : "");
    showError("");
  } catch (e) {
    showError("Settings: " + e.message);
  }
}

// -- search -----------------------------------------------------------------------------

function codeBlock(html) {
  const pre = el("pre");
  const code = el("code");
  code.innerHTML = html; // Pygments output: the code's characters are all escaped
  pre.append(code);
  return pre;
}

// The clipboard API exists only in secure contexts (https, localhost); elsewhere a
// selected hidden textarea and the copy command do the same.
async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  const area = el("textarea", { value: text, className: "visually-hidden", readOnly: true });
  document.body.append(area);
  area.select();
  const copied = document.execCommand("copy");
  area.remove();
  if (!copied) throw new Error("the copy command was refused");
}

function copyButton(text) {
  const button = el("button", { type: "button", textContent: "Copy path" });
  button.setAttribute("aria-label", "Copy " + text);
  button.addEventListener("click", async () => {
    const focus = document.activeElement;
    try {
      await copyText(text);
      button.textContent = "Copied";
      setTimeout(() => { button.textContent = "Copy path"; }, 2000);
    } catch (e) {
      showError("Copy: the browser refused the clipboard (" + e.message + "); the path is " + text);
    } finally {
      if (focus) focus.focus(); // the hidden textarea took the focus: give it back
    }
  });
  return button;
}

// "in Context.JSON (method)": the definition a hit lies in, qualified as the CLI prints it
// (issue 28); null (file-level code, no grammar, an older index) shows nothing. The name
// is the workspace's text, or a team server's (a Kotlin `<img ...>` method is valid):
// textContent only, each part in a <bdi> so a direction override in it cannot reorder the rest.
function symbolOf(symbol) {
  if (!symbol) return null;
  const name = symbol.container ? symbol.container + "." + symbol.name : symbol.name;
  return el("span", { className: "symbol" }, "in ", el("bdi", { textContent: name }),
    " (", el("bdi", { textContent: symbol.kind }), ")");
}

// The line that matters (issue 46): the enclosing definition's signature, else the line
// sharing the most words with the question (seek.web.hit_line); null shows nothing. Workspace
// text: textContent only, in a <bdi>.
function lineOf(line) {
  if (!line) return null;
  return el("span", { className: "hit-line", title: line.why === "definition" ? "its definition" : "best-matching line" },
    el("span", { className: "line-no", textContent: "L" + line.line }), " ",
    el("code", {}, el("bdi", { textContent: line.text })));
}

async function runSearch(event) {
  event.preventDefault();
  const query = $("query").value;
  const results = $("results");
  showError("", $("search-error"));
  results.replaceChildren(el("li", { textContent: "Searching…" }));
  $("context-line").textContent = "";
  $("near-misses").replaceChildren();
  try {
    const data = await api("/ui/api/search", { path: workspace, query });
    showStale((data.notes || []).find((n) => n.startsWith(STALE_NOTE)) || "");
    results.replaceChildren();
    for (const h of data.hits) {
      const label = h.path + ":" + h.start_line + "-" + h.end_line;
      const item = el("li", { className: "hit" },
        el("div", { className: "hit-head" }, el("code", { textContent: label }),
          el("span", { className: "score", textContent: "score " + h.score }), symbolOf(h.symbol),
          copyButton(label)),
        lineOf(h.line),
        codeBlock(h.html));
      if (h.widened) {
        item.append(el("details", {},
          el("summary", { textContent: "Widened block, lines " + h.widened.start_line + "-" + h.widened.end_line }),
          codeBlock(h.widened.html)));
      }
      results.append(item);
    }
    if (!data.hits.length) results.append(el("li", { textContent: "No results." }));
    $("context-line").textContent = data.context_line;
    if (data.near_misses.length) {
      const list = el("ul");
      for (const n of data.near_misses) {
        list.append(el("li", { textContent: n.path + ":" + n.start_line + "-" + n.end_line + " (score " + n.score + ")" }));
      }
      $("near-misses").append(el("h3", { textContent: "Near misses" }), list);
    }
  } catch (e) {
    results.replaceChildren();
    showError("Search: " + e.message, $("search-error"));
  }
}

// -- ask --------------------------------------------------------------------------------

// Markdown to DOM nodes: fences, headings, lists, paragraphs, `code`, **bold**, *em*.
// Never HTML: whatever the model writes ends up as text.
function inline(text) {
  const out = [];
  const pattern = /(`[^`]+`|\*\*[^*]+\*\*|\*[^*\s][^*]*\*)/g;
  let last = 0, m;
  while ((m = pattern.exec(text))) {
    if (m.index > last) out.push(document.createTextNode(text.slice(last, m.index)));
    const t = m[0];
    if (t.startsWith("`")) out.push(el("code", { textContent: t.slice(1, -1) }));
    else if (t.startsWith("**")) out.push(el("strong", { textContent: t.slice(2, -2) }));
    else out.push(el("em", { textContent: t.slice(1, -1) }));
    last = m.index + t.length;
  }
  if (last < text.length) out.push(document.createTextNode(text.slice(last)));
  return out;
}

function markdown(text) {
  const root = el("div", { className: "answer" });
  const lines = text.split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (line.startsWith("```")) {
      const body = [];
      i++;
      while (i < lines.length && !lines[i].startsWith("```")) body.push(lines[i++]);
      i++;
      root.append(el("pre", {}, el("code", { textContent: body.join("\n") })));
    } else if (/^#{1,6} /.test(line)) {
      const level = Math.min(6, line.indexOf(" ") + 2);
      root.append(el("h" + level, {}, ...inline(line.replace(/^#+ /, ""))));
      i++;
    } else if (/^\s*([-*]|\d+\.) /.test(line)) {
      const ordered = /^\s*\d+\. /.test(line);
      const list = el(ordered ? "ol" : "ul");
      while (i < lines.length && /^\s*([-*]|\d+\.) /.test(lines[i])) {
        list.append(el("li", {}, ...inline(lines[i].replace(/^\s*([-*]|\d+\.) /, ""))));
        i++;
      }
      root.append(list);
    } else if (!line.trim()) {
      i++;
    } else {
      const para = [];
      while (i < lines.length && lines[i].trim() && !/^(```|#{1,6} |\s*([-*]|\d+\.) )/.test(lines[i])) para.push(lines[i++]);
      root.append(el("p", {}, ...inline(para.join("\n"))));
    }
  }
  return root;
}

async function ask(event) {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question) return;
  const answerBox = el("div", { className: "answer-box" });
  const turn = el("article", { className: "turn" },
    el("p", { className: "question", textContent: question }), answerBox);
  $("chat").append(turn);
  $("ask").disabled = true;
  let text = "";
  const hint = (message) => answerBox.replaceChildren(el("p", { className: "hint", textContent: message }));
  hint("Searching the code…");
  try {
    await stream("/ui/api/ask", { path: workspace, question, session }, (item) => {
      if (item.piece !== undefined) {
        text += item.piece;
        answerBox.replaceChildren(markdown(text));
      } else if (item.sources !== undefined) {
        // The sources come before the answer's first word: shown while it streams.
        const sources = el("div", { className: "sources" }, el("h3", { textContent: "Sources" }));
        for (const s of item.sources) {
          sources.append(el("details", {}, el("summary", { textContent: s.label + " · score " + s.score }),
            codeBlock(s.html)));
        }
        if (!item.sources.length) sources.append(el("p", { className: "hint", textContent: "No code matched the question." }));
        turn.append(sources, el("p", { className: "context-line", textContent: item.context_line }));
        if (!text) hint("Asking the chat model…");
      } else if (item.error) {
        turn.append(el("p", { className: "error", role: "alert", textContent: item.error }));
        if (!text) answerBox.replaceChildren();
      }
      if (item.done || item.error) turn.dataset.state = item.error ? "error" : "done";
      if (item.done && !text) hint("The chat model returned an empty answer.");
    });
    if (!turn.dataset.state) throw new Error("the answer stopped before its end (is seek ui still running?)");
    $("question").value = "";
  } catch (e) {
    turn.dataset.state = "error";
    turn.append(el("p", { className: "error", role: "alert", textContent: "Ask: " + e.message }));
  } finally {
    $("ask").disabled = false;
  }
}

// -- start ------------------------------------------------------------------------------

function selectWorkspace(path) {
  workspace = path;
  session = newSession();
  $("chat").replaceChildren();
  $("results").replaceChildren();
  wasRunning = false;
  loadStatus();
  watchProgress();
  if (!$("settings-panel").hidden) loadSettings();
}

async function start() {
  for (const tab of document.querySelectorAll(".tab")) {
    tab.addEventListener("click", () => showPanel(tab.dataset.panel));
  }
  $("update").addEventListener("click", () => startIndex(false));
  $("rebuild").addEventListener("click", () => startIndex(true));
  $("settings-rebuild").addEventListener("click", () => { showPanel("index-panel"); startIndex(true); });
  $("cancel").addEventListener("click", async () => {
    try {
      await api("/ui/api/cancel", { path: workspace });
      $("cancel").disabled = true;
    } catch (e) {
      showError("Cancel: " + e.message);
    }
  });
  $("search-form").addEventListener("submit", runSearch);
  $("ask-form").addEventListener("submit", ask);
  $("question").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) ask(e);
  });
  $("new-chat").addEventListener("click", () => { session = newSession(); $("chat").replaceChildren(); $("question").focus(); });
  $("settings-form").addEventListener("submit", saveSettings);
  $("workspace").addEventListener("change", (e) => selectWorkspace(e.target.value));
  try {
    const data = await api("/ui/api/workspaces");
    for (const w of data.workspaces) $("workspace").append(el("option", { value: w.path, textContent: w.name + " — " + w.path }));
    selectWorkspace(data.workspaces[0].path);
  } catch (e) {
    showError("Cannot load the workspaces: " + e.message);
  }
}

// Whatever slips through is still shown, never a silent or blank panel.
window.addEventListener("error", (e) => showError("Page error: " + e.message));
window.addEventListener("unhandledrejection", (e) => showError("Page error: " + (e.reason && e.reason.message || e.reason)));
document.addEventListener("DOMContentLoaded", start);
