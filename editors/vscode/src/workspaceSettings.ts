// The user-only settings a workspace's own settings files try to set (issue 43): read from
// the files themselves, because VS Code drops a `machine` setting from a workspace's
// settings without a word, so `inspect()` does not show it, and the user should hear that
// the repository tried. Only for the warning: nothing here is ever applied. Pure node (no
// `vscode` import) so node's test runner covers it.
import * as fs from "node:fs";
import * as path from "node:path";
import { USER_ONLY } from "./settings";

const MAX_BYTES = 1 << 20; // a settings file larger than this is not read for the warning

/** JSON with comments and trailing commas (VS Code's settings files) as a value. */
export function parseJsonc(text: string): unknown {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      const start = i++;
      while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
      out += text.slice(start, ++i);
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 2;
    } else {
      out += c;
      i++;
    }
  }
  return JSON.parse(out.replace(/,(\s*[}\]])/g, "$1"));
}

/** Every setting a settings object names, dotted (`{"seek": {"path": 1}}` is `seek.path`);
 * language blocks (`"[python]": {...}`) are looked into too. */
function flatten(value: unknown, prefix: string, into: Set<string>): void {
  if (!value || typeof value !== "object" || Array.isArray(value)) return;
  for (const [key, inner] of Object.entries(value)) {
    const name = /^\[.*\]$/.test(key) ? prefix : `${prefix}${key}`;
    into.add(name);
    flatten(inner, name === prefix ? prefix : `${name}.`, into);
  }
}

/** The user-only settings (`seek.…`) a settings object sets, in USER_ONLY's order. */
export function userOnlyKeysIn(settings: unknown): string[] {
  const names = new Set<string>();
  flatten(settings, "", names);
  return USER_ONLY.map(([, key]) => `seek.${key}`).filter((name) => names.has(name));
}

function readJsonc(file: string): unknown {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile() || stat.size > MAX_BYTES) return undefined;
    return parseJsonc(fs.readFileSync(file, "utf8"));
  } catch {
    return undefined; // absent or not JSON: VS Code applies nothing from it either
  }
}

/** The user-only settings that the folders' `.vscode/settings.json` and the workspace
 * file's `settings` set. */
export function userOnlyKeysInFiles(folders: string[], workspaceFile?: string): string[] {
  const found = new Set<string>();
  for (const folder of folders) {
    for (const name of userOnlyKeysIn(readJsonc(path.join(folder, ".vscode", "settings.json")))) found.add(name);
  }
  if (workspaceFile) {
    const data = readJsonc(workspaceFile) as { settings?: unknown } | undefined;
    for (const name of userOnlyKeysIn(data?.settings)) found.add(name);
  }
  return [...found];
}
