// Starts `seek ui` for the open folders on 127.0.0.1 with a per-session token (or uses an
// already running server from the settings), and stops it on deactivate. The program, its
// servers and its working folder come from the user, never from the workspace (issue 43).
import * as vscode from "vscode";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { spawn, ChildProcess } from "node:child_process";
import { SeekClient, newToken, parseServeAddress } from "./client";
import { pathFrom, resolveProgram } from "./program";
import { ExtensionSettings, USER_ONLY, ignoredWarning, installCommand, launchFor, setByWorkspace, userScoped } from "./settings";
import { userOnlyKeysInFiles } from "./workspaceSettings";

export function readSettings(): ExtensionSettings {
  const c = vscode.workspace.getConfiguration("seek");
  return userScoped((key) => c.inspect(key));
}

/** The user-only settings that the workspace, its file or a folder sets (all ignored). */
export function workspaceSetUserOnly(folders: readonly vscode.WorkspaceFolder[]): string[] {
  const found = new Set<string>(setByWorkspace((key) => vscode.workspace.getConfiguration("seek").inspect(key)));
  for (const folder of folders) {
    for (const name of setByWorkspace((key) => vscode.workspace.getConfiguration("seek", folder.uri).inspect(key))) found.add(name);
  }
  const file = vscode.workspace.workspaceFile;
  const paths = folders.filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath);
  for (const name of userOnlyKeysInFiles(paths, file?.scheme === "file" ? file.fsPath : undefined)) found.add(name);
  return USER_ONLY.map(([, key]) => `seek.${key}`).filter((name) => found.has(name));
}

/** Why the server is not there, for the views and the status bar. */
export type Failure = { kind: "missing" | "failed" | "stopped"; message: string };

const START_TIMEOUT_MS = 60_000;

export class Server implements vscode.Disposable {
  client: SeekClient | undefined;
  failure: Failure | undefined;
  private child: ChildProcess | undefined;
  private starting: Promise<SeekClient> | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;

  /** The user-only settings already warned about this session. */
  private readonly warned = new Set<string>();

  /** `workFolder`: where seek runs, the extension's own storage, never a workspace
   * folder (a name looked up there would be the repository's program). */
  constructor(
    private readonly log: vscode.OutputChannel,
    private readonly workFolder: string,
  ) {}

  /** Says (in the log each start, in a warning once a session) which user-only settings
   * the workspace tried to set. */
  private warnIgnored(): void {
    const names = workspaceSetUserOnly(vscode.workspace.workspaceFolders ?? []);
    if (names.length === 0) return;
    const message = ignoredWarning(names);
    this.log.appendLine(message);
    if (names.some((n) => !this.warned.has(n))) {
      names.forEach((n) => this.warned.add(n));
      void vscode.window.showWarningMessage(message);
    }
  }

  /** The neutral working folder, made if missing; else the file system's root (the home
   * folder could be the open workspace, and a shared temporary folder is anyone's). */
  private cwd(): string {
    try {
      fs.mkdirSync(this.workFolder, { recursive: true });
      return this.workFolder;
    } catch {
      return path.parse(os.homedir()).root;
    }
  }

  folders(): string[] {
    return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath);
  }

  /** The running server's client, starting it on first use. */
  ensure(): Promise<SeekClient> {
    if (this.client) return Promise.resolve(this.client);
    if (!this.starting) {
      this.starting = this.start().finally(() => (this.starting = undefined));
    }
    return this.starting;
  }

  private async start(): Promise<SeekClient> {
    this.failure = undefined;
    this.changed.fire();
    this.warnIgnored();
    const settings = readSettings();
    const trusted = vscode.workspace.isTrusted;
    if (trusted && settings.serverUrl.trim()) {
      const token = process.env[settings.serverTokenEnv.trim() || "SEEK_TOKEN"] ?? "";
      try {
        const client = new SeekClient(settings.serverUrl.trim(), token);
        await client.call("GET", "/ui/api/workspaces");
        this.client = client;
        this.log.appendLine(`using the running seek at ${client.base.href}`);
        this.changed.fire();
        return client;
      } catch (err) {
        return this.fail("failed", `seek at ${settings.serverUrl} does not answer: ${(err as Error).message}`);
      }
    }
    const folders = this.folders();
    if (folders.length === 0) return this.fail("failed", "open a folder to use seek");
    const token = newToken();
    const launch = launchFor(settings, folders, trusted, token);
    const program = resolveProgram(settings.path, { pathEnv: pathFrom(process.env, process.platform), folders, platform: process.platform });
    if ("error" in program) {
      const message = program.missing ? `seek is not installed (${program.error}): install it with \`${installCommand(true, false)}\`` : program.error;
      return this.fail(program.missing ? "missing" : "failed", message);
    }
    const cwd = this.cwd();
    this.log.appendLine(`starting: ${program.command} ${launch.args.join(" ")} (in ${cwd})${trusted ? "" : " (untrusted folder: local model only)"}`);
    return new Promise<SeekClient>((resolve, reject) => {
      let output = "";
      let stderr = "";
      let settled = false;
      const child = spawn(program.command, launch.args, {
        env: { ...process.env, ...launch.env },
        cwd,
        stdio: ["ignore", "pipe", "pipe"],
      });
      this.child = child;
      const settle = (fn: () => void) => {
        if (!settled) {
          settled = true;
          clearTimeout(timer);
          fn();
        }
      };
      const timer = setTimeout(() => {
        settle(() => {
          child.kill();
          this.fail("failed", `seek did not start within ${START_TIMEOUT_MS / 1000} s (see seek: Show Log)`).catch(reject);
        });
      }, START_TIMEOUT_MS);
      const onOutput = (data: Buffer, fromStderr: boolean) => {
        const text = data.toString("utf8");
        this.log.append(text);
        output += text;
        if (!fromStderr || settled) return;
        // seek prints its address on stderr: only its own line, with this session's token.
        stderr += text;
        const address = parseServeAddress(stderr, token);
        if (address) {
          settle(() => {
            this.client = new SeekClient(address, token);
            this.changed.fire();
            resolve(this.client);
          });
        }
      };
      child.stdout?.on("data", (d: Buffer) => onOutput(d, false));
      child.stderr?.on("data", (d: Buffer) => onOutput(d, true));
      child.on("error", (err: NodeJS.ErrnoException) => {
        settle(() => {
          const missing = err.code === "ENOENT";
          const message = missing
            ? `seek is not installed (no \`${program.command}\`): install it with \`${installCommand(true, false)}\``
            : `seek could not start: ${err.message}`;
          this.fail(missing ? "missing" : "failed", message).catch(reject);
        });
      });
      child.on("exit", (code, signal) => {
        const wasCurrent = this.child === child;
        if (wasCurrent) {
          this.child = undefined;
          this.client = undefined;
        }
        const last = output.trim().split("\n").filter(Boolean).pop() ?? "";
        this.log.appendLine(`seek exited (${signal ?? `code ${code}`})`);
        settle(() => this.fail("failed", `seek could not start: ${last || `exit code ${code}`}`).catch(reject));
        if (wasCurrent && !this.failure) {
          this.failure = { kind: "stopped", message: `seek's server stopped (${signal ?? `exit code ${code}`}); it restarts on the next use` };
          this.changed.fire();
        }
      });
    });
  }

  private fail(kind: Failure["kind"], message: string): Promise<never> {
    this.failure = { kind, message };
    this.log.appendLine(message);
    this.changed.fire();
    return Promise.reject(new Error(message));
  }

  /** A call failed because the server went away: forget it so the next use restarts it. */
  lost(message: string): void {
    this.client = undefined;
    this.failure = { kind: "stopped", message };
    this.changed.fire();
  }

  async restart(): Promise<SeekClient> {
    this.stop();
    return this.ensure();
  }

  stop(): void {
    const child = this.child;
    this.child = undefined;
    this.client = undefined;
    this.failure = undefined;
    if (child && child.exitCode === null) child.kill("SIGTERM");
    this.changed.fire();
  }

  /** The process id of the server this extension started (for the log and tests). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  dispose(): void {
    this.stop();
    this.changed.dispose();
  }
}
