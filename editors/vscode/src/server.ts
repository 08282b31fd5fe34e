// Starts `seek ui` for the open folders on 127.0.0.1 with a per-session token (or uses an
// already running server from the settings), and stops it on deactivate.
import * as vscode from "vscode";
import { spawn, ChildProcess } from "node:child_process";
import { SeekClient, newToken, parseServeAddress } from "./client";
import { ExtensionSettings, installCommand, launchFor } from "./settings";

export function readSettings(): ExtensionSettings {
  const c = vscode.workspace.getConfiguration("seek");
  return {
    path: c.get<string>("path", "seek"),
    serverUrl: c.get<string>("server.url", ""),
    serverTokenEnv: c.get<string>("server.tokenEnv", "SEEK_TOKEN"),
    provider: c.get<string>("provider", ""),
    model: c.get<string>("model", ""),
    baseUrl: c.get<string>("baseUrl", ""),
    chatProvider: c.get<string>("chat.provider", ""),
    chatModel: c.get<string>("chat.model", ""),
    chatUrl: c.get<string>("chat.url", ""),
  };
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

  constructor(private readonly log: vscode.OutputChannel) {}

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
    this.log.appendLine(`starting: ${launch.command} ${launch.args.join(" ")}${trusted ? "" : " (untrusted folder: local model only)"}`);
    return new Promise<SeekClient>((resolve, reject) => {
      let output = "";
      let settled = false;
      const child = spawn(launch.command, launch.args, {
        env: { ...process.env, ...launch.env },
        cwd: folders[0],
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
      const onOutput = (data: Buffer) => {
        const text = data.toString("utf8");
        this.log.append(text);
        output += text;
        const address = parseServeAddress(output);
        if (address) {
          settle(() => {
            this.client = new SeekClient(address, token);
            this.changed.fire();
            resolve(this.client);
          });
        }
      };
      child.stdout?.on("data", onOutput);
      child.stderr?.on("data", onOutput);
      child.on("error", (err: NodeJS.ErrnoException) => {
        settle(() => {
          const missing = err.code === "ENOENT";
          const message = missing
            ? `seek is not installed (no \`${launch.command}\` on PATH): install it with \`${installCommand(true, false)}\``
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
