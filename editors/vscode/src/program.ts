// Which `seek` program the extension runs (issue 43, finding 2): an absolute path, never a
// name the operating system looks up from the working folder. Pure node (no `vscode`
// import) so node's test runner covers it.
import * as fs from "node:fs";
import * as path from "node:path";

export interface Lookup {
  /** The PATH the program is looked up on. */
  pathEnv: string;
  /** The open workspace folders: a program inside one of them is the repository's. */
  folders: string[];
  platform: NodeJS.Platform;
}

export type Program = { command: string } | { error: string; missing: boolean };

function pathApi(platform: NodeJS.Platform): path.PlatformPath {
  return platform === "win32" ? path.win32 : path.posix;
}

function real(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

/** Whether `child` is `parent` or beneath it (case-insensitive on Windows). */
export function isInside(child: string, parent: string, platform: NodeJS.Platform): boolean {
  const api = pathApi(platform);
  const fold = (p: string) => (platform === "win32" ? p.toLowerCase() : p);
  const rel = api.relative(fold(parent), fold(child));
  return rel === "" || (!rel.startsWith("..") && !api.isAbsolute(rel));
}

function insideAny(file: string, folders: string[], platform: NodeJS.Platform): boolean {
  const candidates = [file, real(file)];
  return folders.some((f) => [f, real(f)].some((folder) => candidates.some((c) => isInside(c, folder, platform))));
}

function runnable(file: string, platform: NodeJS.Platform): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    if (platform !== "win32") fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * `name` on PATH as an absolute path: relative entries ("", ".", "bin"), which stand for
 * the working folder, are skipped, and so is anything inside an open workspace folder, so
 * a repository cannot put a program of its own in the editor's way. On Windows the name
 * gets `.exe` (spawn runs nothing else without a shell).
 */
export function findOnPath(name: string, lookup: Lookup): string | undefined {
  const api = pathApi(lookup.platform);
  const file = lookup.platform === "win32" && !api.extname(name) ? `${name}.exe` : name;
  for (const dir of lookup.pathEnv.split(api.delimiter)) {
    if (!dir || !api.isAbsolute(dir)) continue;
    const candidate = api.join(dir, file);
    if (insideAny(candidate, lookup.folders, lookup.platform)) continue;
    if (runnable(candidate, lookup.platform)) return candidate;
  }
  return undefined;
}

/**
 * The program to start: the user's `seek.path`, which must be absolute, else `seek` found
 * on PATH by `findOnPath`.
 */
export function resolveProgram(configured: string, lookup: Lookup): Program {
  const given = configured.trim();
  if (given) {
    if (!pathApi(lookup.platform).isAbsolute(given)) {
      return {
        error: `seek.path must be an absolute path, not ${JSON.stringify(given)} (empty: seek on PATH)`,
        missing: false,
      };
    }
    return { command: given };
  }
  const found = findOnPath("seek", lookup);
  return found ? { command: found } : { error: "no `seek` on PATH (outside the workspace)", missing: true };
}

/** PATH from an environment (Windows spells the name in any case). */
export function pathFrom(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string {
  if (platform !== "win32") return env.PATH ?? "";
  const key = Object.keys(env).find((k) => k.toUpperCase() === "PATH");
  return key ? (env[key] ?? "") : "";
}
