// The Ask view: a chat that streams seek's answer (`/ui/api/ask`) with its sources (click
// to open), the context line and follow-ups in one session. The webview never sees the
// server's address or token: the extension host makes every call.
import * as vscode from "vscode";
import { randomBytes } from "node:crypto";
import { parseSourceLabel } from "./format";
import { Controller } from "./controller";
import { Stream } from "./client";
import { openAt } from "./search";

interface Source {
  label: string;
  path: string;
  score: number;
}

export class AskView implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;
  private session = newSession();
  private current: Stream | undefined;
  private pending: string | undefined;

  constructor(
    private readonly controller: Controller,
    private readonly extensionUri: vscode.Uri,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, "media")] };
    view.webview.html = this.html(view.webview);
    view.webview.onDidReceiveMessage((msg) => this.onMessage(msg));
    view.onDidDispose(() => (this.view = undefined));
    if (this.pending) {
      const q = this.pending;
      this.pending = undefined;
      setTimeout(() => void this.ask(q), 300);
    }
  }

  /** `seek: Ask` from the palette: focus the view and ask there. */
  async askFromCommand(question?: string): Promise<void> {
    const q = question ?? (await vscode.window.showInputBox({ prompt: "Ask about this workspace's code" }));
    if (!q) return;
    if (!this.view) {
      this.pending = q;
      await vscode.commands.executeCommand("seek.ask.focus");
      return;
    }
    this.view.show(true);
    await this.ask(q);
  }

  private post(message: unknown): void {
    void this.view?.webview.postMessage(message);
  }

  private async onMessage(msg: any): Promise<void> {
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "ask" && typeof msg.question === "string") await this.ask(msg.question);
    else if (msg.type === "new") {
      this.current?.cancel();
      this.session = newSession();
    } else if (msg.type === "stop") this.current?.cancel();
    else if (msg.type === "open" && typeof msg.label === "string") {
      const where = parseSourceLabel(msg.label);
      const folder = this.controller.folder;
      if (where && folder) await openAt(folder, where.path, where.start, where.end);
    }
  }

  async ask(question: string): Promise<void> {
    question = question.trim();
    if (!question) return;
    this.post({ type: "start", question });
    if (!vscode.workspace.isTrusted) {
      this.post({ type: "error", message: "Ask is off in an untrusted folder (it would send the folder's code to a chat server): trust the folder to use it." });
      return;
    }
    const folder = this.controller.folder;
    this.current?.cancel();
    try {
      const client = await this.controller.server.ensure();
      let failed = false;
      const stream = client.stream("POST", "/ui/api/ask", { question, path: folder, session: this.session }, (item: any) => {
        if (typeof item.piece === "string") this.post({ type: "piece", text: item.piece });
        else if (Array.isArray(item.sources)) {
          const sources = (item.sources as Source[]).map((s) => ({ label: s.label, score: s.score }));
          this.post({ type: "sources", sources, contextLine: item.context_line ?? "" });
        } else if (typeof item.error === "string") {
          failed = true;
          this.post({ type: "error", message: chatErrorText(item.error) });
        } else if (item.done) this.post({ type: "done" });
      });
      this.current = stream;
      await stream.done;
      if (!failed) this.post({ type: "done" });
    } catch (err) {
      this.post({ type: "error", message: (err as Error).message });
    }
  }

  private html(webview: vscode.Webview): string {
    const nonce = randomBytes(16).toString("hex");
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, "media", "ask.js"));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, "media", "ask.css"));
    return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<link rel="stylesheet" href="${style}">
</head><body>
<div id="log" role="log" aria-live="polite"></div>
<form id="form"><textarea id="question" rows="2" placeholder="Ask about this workspace's code (Enter to send)"></textarea>
<div class="row"><button id="send" type="submit">Ask</button><button id="new" type="button" class="secondary">New chat</button></div></form>
<script nonce="${nonce}" src="${script}"></script>
</body></html>`;
  }
}

function newSession(): string {
  return `vscode-${randomBytes(6).toString("hex")}`;
}

/** seek's chat error, with what to do when the chat server is down. */
export function chatErrorText(error: string): string {
  if (/connect|refused|unreachable|not answering|timed out/i.test(error)) {
    return `The chat server is not answering: ${error}. Start it (e.g. \`ollama serve\`) or set seek.chat.url / seek.chat.model in Settings.`;
  }
  return error;
}
