// The Index view (twinny's Embeddings tab): files, chunks, model, last update, skipped
// files by reason, the run's progress; Update / Rebuild / Cancel sit on its title bar.
import * as vscode from "vscode";
import { progressText, skippedLines, updatedText } from "./format";
import { Controller } from "./controller";

class Item extends vscode.TreeItem {
  constructor(
    label: string,
    description?: string,
    icon?: string,
    readonly children: Item[] = [],
  ) {
    super(label, children.length ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
    this.description = description;
    if (icon) this.iconPath = new vscode.ThemeIcon(icon);
  }
}

export class IndexView implements vscode.TreeDataProvider<Item> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly controller: Controller) {
    controller.onDidChange(() => this.changed.fire());
  }

  getTreeItem(item: Item): vscode.TreeItem {
    return item;
  }

  getChildren(item?: Item): Item[] {
    if (item) return item.children;
    const c = this.controller;
    const failure = c.server.failure;
    if (failure) {
      const row = new Item(failure.kind === "missing" ? "seek is not installed" : "seek is not running", failure.message, "warning");
      row.tooltip = failure.message;
      row.command = { command: "seek.restart", title: "Restart" };
      return [row, new Item("Click to retry", undefined, "debug-restart")].map((r) => {
        r.command = { command: "seek.restart", title: "Restart" };
        return r;
      });
    }
    const s = c.status;
    if (!s) return [new Item(c.error ? "Error" : "Starting seek…", c.error, c.error ? "error" : "loading~spin")];
    const rows: Item[] = [];
    const p = c.progress;
    if (p?.running) rows.push(new Item("Indexing", progressText(p), "sync~spin"));
    else if (p?.cancelled) rows.push(new Item("Last run", "cancelled", "debug-stop"));
    else if (p?.error) rows.push(new Item("Last run failed", p.error, "error"));
    rows.push(new Item("Files", String(s.files ?? 0), "files"));
    rows.push(new Item("Chunks", String(s.chunks ?? 0), "symbol-namespace"));
    rows.push(new Item("Model", s.model || s.configured_model || "none", "hubot"));
    rows.push(new Item("Last update", updatedText(s.updated_at), "history"));
    if (s.rebuild_reason) rows.push(new Item("Needs a rebuild", s.rebuild_reason, "warning"));
    if (s.writer) rows.push(new Item("Writer", s.writer, "lock"));
    const skipped = skippedLines(s.skipped);
    const total = Object.values(s.skipped ?? {}).reduce((a, b) => a + (typeof b === "number" ? b : 0), 0);
    rows.push(
      new Item(
        "Skipped",
        String(total),
        "circle-slash",
        skipped.map((line) => new Item(line)),
      ),
    );
    for (const row of rows) row.tooltip = `${row.label}: ${row.description ?? ""}`;
    return rows;
  }
}
