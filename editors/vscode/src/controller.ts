// The index's state for the open folder: status, the progress stream, Update / Rebuild /
// Cancel, and the status bar item. The Index view and the status bar both read it.
import * as vscode from "vscode";
import { Progress, State, Status, progressFraction, progressText, statusBarText } from "./format";
import { SeekClient, SeekHttpError, Stream } from "./client";
import { Server } from "./server";
import { installCommand } from "./settings";

const POLL_MS = 2_000;

export class Controller implements vscode.Disposable {
  status: Status | undefined;
  progress: Progress | undefined;
  error: string | undefined;
  private stream: Stream | undefined;
  private streamClient: SeekClient | undefined;
  private readonly bar: vscode.StatusBarItem;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private poll: NodeJS.Timeout | undefined;
  private viewProgress: { resolve: () => void; report: (p: Progress) => void } | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(readonly server: Server) {
    this.bar = vscode.window.createStatusBarItem("seek.status", vscode.StatusBarAlignment.Left, 50);
    this.bar.name = "seek";
    this.bar.command = "seek.search";
    this.bar.show();
    this.subscriptions.push(server.onDidChange(() => this.render()));
    this.render();
  }

  /** The folder the index view shows (the first one; the API's default). */
  get folder(): string | undefined {
    return this.server.folders()[0];
  }

  state(): State {
    const failure = this.server.failure;
    if (failure) return failure.kind === "missing" ? "missing" : failure.kind === "stopped" ? "stopped" : "error";
    if (!this.server.client) return "starting";
    if (this.progress?.running) return "indexing";
    if (this.status && !this.status.exists) return "empty";
    return this.status ? "ready" : "starting";
  }

  /** Calls the server; a refused connection means it went away (reported, restarted on the next use). */
  async call<T = any>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    const client = await this.server.ensure();
    try {
      return await client.call<T>(method, path, body);
    } catch (err) {
      if (err instanceof SeekHttpError && err.code === "down") this.server.lost(err.message);
      throw err;
    }
  }

  async refresh(): Promise<void> {
    clearTimeout(this.poll);
    this.poll = undefined;
    try {
      const client = await this.server.ensure();
      const q = this.folder ? `?path=${encodeURIComponent(this.folder)}` : "";
      this.status = await this.call<Status>("GET", `/ui/api/status${q}`);
      this.error = undefined;
      // No writer but a run still shown as going: the stream may have stalled; a new one
      // starts with the current state.
      const stale = !this.status?.writer && this.progress?.running;
      if (this.streamClient !== client || stale) this.follow(client);
    } catch (err) {
      this.error = (err as Error).message;
    }
    // While a writer holds the index, the status is polled too: the counts end right even
    // if the progress stream missed the run's end (a slow start, a reconnect).
    if (!this.server.failure && (this.status?.writer || this.progress?.running)) {
      this.poll = setTimeout(() => void this.refresh(), POLL_MS);
    }
    this.render();
  }

  /** Follows the progress stream of the current server (restarted with the server). */
  private follow(client: SeekClient): void {
    this.stream?.cancel();
    this.streamClient = client;
    const q = this.folder ? `?path=${encodeURIComponent(this.folder)}` : "";
    const stream = client.stream("GET", `/ui/api/progress${q}`, undefined, (item: Progress) => this.onProgress(item));
    this.stream = stream;
    stream.done.then(
      () => this.streamEnded(stream, client),
      () => this.streamEnded(stream, client),
    );
  }

  private streamEnded(stream: Stream, client: SeekClient): void {
    if (this.stream !== stream) return; // replaced by a newer stream: nothing went away
    this.streamClient = undefined;
    this.stream = undefined;
    this.endViewProgress();
    if (this.server.client === client) this.server.lost("seek's server stopped answering; it restarts on the next use");
    this.render();
  }

  private onProgress(item: Progress): void {
    const was = this.progress?.running;
    this.progress = item;
    void vscode.commands.executeCommand("setContext", "seek.indexing", !!item.running);
    if (item.running) this.showViewProgress();
    else this.endViewProgress();
    if (was && !item.running) {
      if (item.error) void vscode.window.showErrorMessage(`seek: indexing failed: ${item.error}`);
      void this.refresh();
    }
    this.viewProgress?.report(item);
    this.render();
  }

  /** The progress bar on the Index view while a run goes. */
  private showViewProgress(): void {
    if (this.viewProgress) return;
    let last = 0;
    vscode.window.withProgress({ location: { viewId: "seek.index" }, title: "Indexing" }, (bar) => {
      return new Promise<void>((resolve) => {
        this.viewProgress = {
          resolve,
          report: (p) => {
            const now = Math.round(progressFraction(p) * 100);
            bar.report({ increment: Math.max(0, now - last), message: progressText(p) });
            last = Math.max(last, now);
          },
        };
      });
    });
  }

  private endViewProgress(): void {
    this.viewProgress?.resolve();
    this.viewProgress = undefined;
  }

  async index(rebuild: boolean): Promise<void> {
    try {
      const run = await this.call<Progress>("POST", "/ui/api/index", { path: this.folder, rebuild });
      this.onProgress({ source: "page", ...run });
      await this.refresh();
    } catch (err) {
      void vscode.window.showErrorMessage(`seek: ${(err as Error).message}`);
    }
  }

  async cancel(): Promise<void> {
    try {
      await this.call("POST", "/ui/api/cancel", { path: this.folder });
    } catch (err) {
      void vscode.window.showWarningMessage(`seek: ${(err as Error).message}`);
    }
  }

  render(): void {
    const state = this.state();
    this.bar.text = statusBarText(state, this.status, this.progress);
    const failure = this.server.failure;
    this.bar.tooltip = failure?.message ?? this.error ?? (state === "ready" ? `model ${this.status?.model ?? "?"}` : undefined);
    this.bar.command = state === "missing" || state === "stopped" || state === "error" ? "seek.restart" : "seek.search";
    this.changed.fire();
  }

  /** The "seek is missing" message with the command that installs it. */
  async reportFailure(): Promise<void> {
    const failure = this.server.failure;
    if (!failure) return;
    if (failure.kind === "missing") {
      const command = installCommand(true, false);
      const pick = await vscode.window.showErrorMessage(failure.message, "Install in Terminal", "Copy Command", "Set Path");
      if (pick === "Install in Terminal") {
        const terminal = vscode.window.createTerminal("Install seek");
        terminal.show();
        terminal.sendText(command, false);
      } else if (pick === "Copy Command") {
        await vscode.env.clipboard.writeText(command);
      } else if (pick === "Set Path") {
        await vscode.commands.executeCommand("workbench.action.openSettings", "seek.path");
      }
    } else {
      const pick = await vscode.window.showErrorMessage(failure.message, "Restart", "Show Log");
      if (pick === "Restart") await vscode.commands.executeCommand("seek.restart");
      if (pick === "Show Log") await vscode.commands.executeCommand("seek.showLog");
    }
  }

  dispose(): void {
    clearTimeout(this.poll);
    this.stream?.cancel();
    this.endViewProgress();
    this.bar.dispose();
    this.changed.dispose();
    this.subscriptions.forEach((s) => s.dispose());
  }
}
