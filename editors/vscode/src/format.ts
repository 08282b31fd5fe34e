// How seek's JSON answers read in the editor: labels, descriptions and the index's state.
// Pure functions (no `vscode` import) so node's test runner covers them.

/** The definition a hit lies in, as seek's search JSON names it (issue 28). */
export interface HitSymbol {
  name: string;
  kind: string;
  container: string | null;
  line: number;
  end_line: number;
}

export interface Hit {
  path: string;
  start_line: number;
  end_line: number;
  score: number;
  content?: string;
  symbol?: HitSymbol | null;
}

export interface Status {
  workspace?: string;
  exists?: boolean;
  files?: number;
  chunks?: number;
  model?: string;
  configured_model?: string;
  updated_at?: string | number | null;
  writer?: string | null;
  rebuild_reason?: string | null;
  interrupted?: boolean;
  skipped?: Record<string, number>;
}

export interface Progress {
  running?: boolean;
  phase?: string;
  done?: number;
  total?: number;
  chunks?: number;
  cancelling?: boolean;
  error?: string;
  summary?: string;
  cancelled?: boolean;
  source?: string;
}

/** `path:12-30` (one line: `path:12`): what a result is called everywhere. */
export function hitLabel(hit: Hit): string {
  const lines = hit.start_line === hit.end_line ? `${hit.start_line}` : `${hit.start_line}-${hit.end_line}`;
  return `${hit.path}:${lines}`;
}

/** The score with two decimals. */
export function scoreText(hit: Hit): string {
  return `score ${Number.isFinite(hit.score) ? hit.score.toFixed(2) : "?"}`;
}

/** The score, and the enclosing definition when seek names one (or `symbol`, the one the
 * hit's line was taken from): `in Router.add (method)`, as the CLI and the page say it. */
export function hitDescription(hit: Hit, symbol: Omit<HitSymbol, "container"> & { container?: string | null } | null | undefined = hit.symbol): string {
  if (!symbol) return scoreText(hit);
  const name = symbol.container ? `${symbol.container}.${symbol.name}` : symbol.name;
  return `in ${name} (${symbol.kind}) · ${scoreText(hit)}`;
}

/** A source label from the ask stream, `path (lines 3-9)`, as a path and 1-based lines. */
export function parseSourceLabel(label: string): { path: string; start: number; end: number } | undefined {
  const m = /^(.*) \(lines (\d+)-(\d+)\)$/.exec(label);
  if (!m) return undefined;
  return { path: m[1], start: Number(m[2]), end: Number(m[3]) };
}

/** Zero-based, end-inclusive line range for a 1-based hit, never negative. */
export function editorRange(start: number, end: number): [number, number] {
  const s = Math.max(0, Math.floor(start) - 1);
  return [s, Math.max(s, Math.floor(end) - 1)];
}

export function updatedText(value: Status["updated_at"], now: Date = new Date()): string {
  if (value === null || value === undefined || value === "") return "never";
  const when = typeof value === "number" ? new Date(value) : new Date(value);
  if (Number.isNaN(when.getTime())) return String(value);
  const seconds = Math.round((now.getTime() - when.getTime()) / 1000);
  if (seconds < 0) return when.toISOString().replace("T", " ").slice(0, 16);
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return when.toISOString().slice(0, 10);
}

/** `12/40 files` while a run goes, with its phase. */
export function progressText(p: Progress): string {
  const phase = p.cancelling ? "cancelling" : p.phase || "indexing";
  if (p.total) return `${phase} ${p.done ?? 0}/${p.total} files`;
  return phase;
}

/** The fraction a progress bar shows, 0..1 (0 when the total is unknown). */
export function progressFraction(p: Progress): number {
  if (!p.total || p.total <= 0) return 0;
  return Math.min(1, Math.max(0, (p.done ?? 0) / p.total));
}

export type State = "starting" | "ready" | "empty" | "indexing" | "stopped" | "missing" | "error";

/** The status bar's text for a state. */
export function statusBarText(state: State, status?: Status, progress?: Progress): string {
  switch (state) {
    case "starting":
      return "$(sync~spin) seek: starting";
    case "indexing":
      return `$(sync~spin) seek: ${progress ? progressText(progress) : "indexing"}`;
    case "ready":
      return `$(search) seek: ${status?.files ?? 0} files, ${status?.chunks ?? 0} chunks`;
    case "empty":
      return "$(search) seek: not indexed";
    case "stopped":
      return "$(debug-disconnect) seek: stopped";
    case "missing":
      return "$(warning) seek: not installed";
    case "error":
      return "$(error) seek: error";
  }
}

/** The skipped files by reason, largest first: `binary: 3`. */
export function skippedLines(skipped: Record<string, number> | undefined): string[] {
  if (!skipped) return [];
  return Object.entries(skipped)
    .filter(([, n]) => typeof n === "number" && n > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([reason, n]) => `${reason}: ${n}`);
}

/**
 * Text as Markdown that shows it as it is (issue 43, finding 9a): every character that
 * Markdown gives a meaning (links, emphasis, code, HTML, headings, lists) escaped with a
 * backslash, and line breaks made spaces, so a file name or a query written into the chat
 * view cannot forge a link, an image or a paragraph of its own.
 */
export function escapeMarkdown(text: string): string {
  // CommonMark lets every ASCII punctuation character be escaped, and GFM's bare links
  // (www.x, http://x, a@b.c) need their dots, colons and at signs unescaped to form.
  return text.replace(/[\r\n]+/g, " ").replace(/[!-/:-@[-`{-~]/g, "\\$&");
}

// Characters that change how the text around them reads without being seen: controls
// (C0, DEL, C1) and the bidirectional marks, embeddings, overrides and isolates, with
// which a name could show reversed or hide what follows it.
const UNSEEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Workspace text (a path, a name, a line of code) as one line of plain text in a tree
 * view: tabs and line breaks as spaces, the unseen characters as `\x1b` or `\u202e`
 * escapes, as seek's own `printable` writes them.
 */
export function plainText(text: string): string {
  return text.replace(/[\t\r\n]+/g, " ").replace(UNSEEN, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/**
 * Workspace text for a Quick Pick's label, description or detail: as plainText, and each
 * `$(name)` escaped with a backslash, since VS Code draws those as icons there (the
 * backslash is not shown), so a file or a definition cannot put icons in the list.
 */
export function labelText(text: string): string {
  return plainText(text).replace(/\$\([A-Za-z0-9-]+(?:~[A-Za-z]+)?\)/g, "\\$&");
}
