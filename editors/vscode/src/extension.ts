// seek inside VS Code (issue 30): starts `seek ui` for the open folders on 127.0.0.1 with a
// per-session token and talks to it only there; the Index, Results and Ask views, the
// search quick pick, "Find Related Code", "Impact and Tests of Definition at Cursor" and
// the `@seek` chat participant.
import * as vscode from "vscode";
import { Server } from "./server";
import { Controller } from "./controller";
import { IndexView } from "./indexView";
import { ResultsView, Search, openAt } from "./search";
import { AskView } from "./askView";
import { impactAtCursor } from "./impact";
import { registerParticipant } from "./participant";

let server: Server | undefined;

/** What the extension exposes (for the end-to-end tests: the server's process id). */
export interface Api {
  serverPid(): number | undefined;
  state(): string;
}

export function activate(context: vscode.ExtensionContext): Api {
  // The Index view's title bar (Cancel shows while seek.indexing) is drawn once with the
  // key defined, not redrawn when the first progress report defines it.
  void vscode.commands.executeCommand("setContext", "seek.indexing", false);
  const log = vscode.window.createOutputChannel("seek");
  // seek runs in the extension's own storage folder, never in the workspace (issue 43).
  server = new Server(log, context.globalStorageUri.fsPath);
  const controller = new Controller(server);
  const results = new ResultsView();
  const resultsTree = vscode.window.createTreeView("seek.results", { treeDataProvider: results });
  const search = new Search(controller, results, resultsTree as vscode.TreeView<unknown>);
  const ask = new AskView(controller, context.extensionUri);
  let reported = "";
  context.subscriptions.push(
    log,
    server,
    controller,
    resultsTree,
    vscode.window.registerTreeDataProvider("seek.index", new IndexView(controller)),
    vscode.window.registerWebviewViewProvider("seek.ask", ask, { webviewOptions: { retainContextWhenHidden: true } }),
    vscode.commands.registerCommand("seek.search", (query?: string) => search.quickPick(typeof query === "string" ? query : "")),
    vscode.commands.registerCommand("seek.findRelated", () => search.related()),
    vscode.commands.registerCommand("seek.impactAtCursor", () => impactAtCursor(controller)),
    vscode.commands.registerCommand("seek.update", () => controller.index(false)),
    vscode.commands.registerCommand("seek.rebuild", async () => {
      const ok = await vscode.window.showWarningMessage("Rebuild seek's index from scratch?", { modal: true }, "Rebuild");
      if (ok === "Rebuild") await controller.index(true);
    }),
    vscode.commands.registerCommand("seek.cancel", () => controller.cancel()),
    vscode.commands.registerCommand("seek.restart", async () => {
      server?.stop();
      await controller.refresh();
    }),
    vscode.commands.registerCommand("seek.ask", (question?: string) => ask.askFromCommand(typeof question === "string" ? question : undefined)),
    vscode.commands.registerCommand("seek.showLog", () => log.show()),
    vscode.commands.registerCommand("seek.openResult", (file: string, start: number, end: number) => {
      const folder = controller.folder;
      if (folder) return openAt(folder, file, start, end);
    }),
    server.onDidChange(() => {
      // Each new failure is reported once (with the install command when seek is missing).
      const failure = server?.failure;
      const key = failure ? `${failure.kind}:${failure.message}` : "";
      if (key && key !== reported) void controller.reportFailure();
      reported = key;
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("seek") && !e.affectsConfiguration("seek.searchResults")) {
        server?.stop();
        void controller.refresh();
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      server?.stop();
      void controller.refresh();
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => {
      server?.stop();
      void controller.refresh();
    }),
  );
  const participant = registerParticipant(controller);
  if (participant) context.subscriptions.push(participant);
  void controller.refresh();
  return {
    serverPid: () => server?.pid,
    state: () => controller.state(),
  };
}

export function deactivate(): void {
  server?.stop();
  server = undefined;
}
