// Search: a quick pick with results as you type (preview on focus, open at the lines),
// "Find Related Code" from the editor, and the last results as a tree. Each hit shows the
// line that matters (issue 46): its definition's signature or the query's best line.
import * as vscode from "vscode";
import * as path from "node:path";
import { Hit, editorRange, hitDescription, hitLabel, labelText, plainText, scoreText } from "./format";
import { Definition, namesItsDefinition, shownLine } from "./hitText";
import { Controller } from "./controller";

const DEBOUNCE_MS = 200;
/** The most files whose outline one search asks for (its first hits' files). */
const OUTLINED_FILES = 5;

/** The definitions of each file, by path, for the lines its hits show. */
type Outlines = ReadonlyMap<string, readonly Definition[]>;

/** A hit's line, description (with the definition that line is of) and place, as text. */
function hitTexts(hit: Hit, query: string, outlines: Outlines) {
  const shown = shownLine(hit, query, outlines.get(hit.path));
  return { line: shown?.text ?? "", description: hitDescription(hit, shown?.definition ?? hit.symbol) };
}

/**
 * The active editor's file, relative to `folder` and `/`-separated, and the cursor's
 * 1-based line; undefined (after a warning) when no editor shows a file of the folder.
 */
export function cursorLocation(folder: string | undefined): { file: string; line: number; column: number } | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor || !folder) return void vscode.window.showWarningMessage("seek: open a file of the workspace first");
  const file = path.relative(folder, editor.document.uri.fsPath).split(path.sep).join("/");
  if (editor.document.uri.scheme !== "file" || file.startsWith("..") || path.isAbsolute(file)) {
    return void vscode.window.showWarningMessage("seek: this file is not in the workspace's folder");
  }
  const { line, character } = editor.selection.active;
  return { file, line: line + 1, column: character + 1 };
}

/** Opens `hit` in the folder, its lines selected and revealed. */
export async function openAt(folder: string, file: string, start: number, end: number, preview = false): Promise<vscode.TextEditor> {
  const uri = vscode.Uri.file(path.join(folder, file));
  const [s, e] = editorRange(start, end);
  const editor = await vscode.window.showTextDocument(uri, {
    preview,
    preserveFocus: preview,
    selection: new vscode.Range(s, 0, e, Number.MAX_SAFE_INTEGER),
  });
  editor.revealRange(new vscode.Range(s, 0, e, 0), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  return editor;
}

interface HitPick extends vscode.QuickPickItem {
  hit: Hit;
}

/** A result in the tree: the hit's line (its definition's signature or the query's best
 * line) as the label, where it is and its score beside it, all of it on hover. */
class ResultItem extends vscode.TreeItem {
  constructor(folder: string, hit: Hit, query: string, outlines: Outlines) {
    const shown = hitTexts(hit, query, outlines);
    super(plainText(shown.line || hitLabel(hit)), vscode.TreeItemCollapsibleState.None);
    this.description = plainText(`${hitLabel(hit)} · ${scoreText(hit)}`);
    this.tooltip = plainText(`${hitLabel(hit)} ${shown.description}`);
    this.resourceUri = vscode.Uri.file(path.join(folder, hit.path));
    this.command = { command: "seek.openResult", title: "Open", arguments: [hit.path, hit.start_line, hit.end_line] };
  }
}

export class ResultsView implements vscode.TreeDataProvider<ResultItem> {
  private hits: Hit[] = [];
  private folder = "";
  private query = "";
  private outlines: Outlines = new Map();
  title = "";
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  /** `query` (the search's words) and `outlines` choose each hit's line. */
  show(folder: string, title: string, hits: Hit[], query: string, outlines: Outlines): void {
    this.folder = folder;
    this.title = title;
    this.hits = hits;
    this.query = query;
    this.outlines = outlines;
    this.changed.fire();
  }

  getTreeItem(item: ResultItem): vscode.TreeItem {
    return item;
  }

  getChildren(): ResultItem[] {
    return this.hits.map((h) => new ResultItem(this.folder, h, this.query, this.outlines));
  }
}

export class Search {
  constructor(
    private readonly controller: Controller,
    private readonly results: ResultsView,
    private readonly tree: vscode.TreeView<unknown>,
  ) {}

  private k(): number {
    return vscode.workspace.getConfiguration("seek").get<number>("searchResults", 10);
  }

  /**
   * The outlines of the files of the first hits that seek's symbol does not name by their
   * own definition (a chunk holding the tail of one function and the next): the lines they
   * show are taken from them. A file whose outline fails (an older seek) has none.
   */
  private async outlines(folder: string, hits: Hit[]): Promise<Outlines> {
    const files = [...new Set(hits.filter((h) => !namesItsDefinition(h)).map((h) => h.path))].slice(0, OUTLINED_FILES);
    const found = await Promise.all(
      files.map((file) =>
        this.controller.call<{ rows: Definition[] }>("POST", "/v1/outline", { path: folder, file }).then(
          (answer): [string, Definition[]] => [file, Array.isArray(answer.rows) ? answer.rows : []],
          (): [string, Definition[]] => [file, []],
        ),
      ),
    );
    return new Map(found);
  }

  private publish(title: string, hits: Hit[], query: string, outlines: Outlines): void {
    const folder = this.controller.folder ?? "";
    this.results.show(folder, title, hits, query, outlines);
    this.tree.message = `${hits.length} result${hits.length === 1 ? "" : "s"} for ${title}`;
  }

  /** The quick pick: results as you type, a preview on focus, the lines opened on accept. */
  async quickPick(initial = ""): Promise<void> {
    const folder = this.controller.folder;
    if (!folder) return void vscode.window.showWarningMessage("seek: open a folder first");
    const pick = vscode.window.createQuickPick<HitPick>();
    pick.placeholder = "Search the workspace's code by meaning (seek)";
    pick.matchOnDescription = true;
    pick.matchOnDetail = true;
    pick.value = initial;
    let timer: NodeJS.Timeout | undefined;
    let generation = 0;
    let accepted = false;
    const run = async (query: string) => {
      const mine = ++generation;
      if (!query.trim()) {
        pick.items = [];
        pick.busy = false;
        return;
      }
      pick.busy = true;
      try {
        const found = await this.controller.call<{ hits: Hit[] }>("POST", "/v1/search", { query, path: folder, k: this.k() });
        if (mine !== generation) return;
        const outlines = await this.outlines(folder, found.hits);
        if (mine !== generation) return;
        // The items' labels hold the path and lines, so VS Code's own filter keeps them all.
        pick.items = found.hits.map((hit) => {
          const shown = hitTexts(hit, query, outlines);
          return { label: labelText(hitLabel(hit)), description: labelText(shown.description), detail: labelText(shown.line), alwaysShow: true, hit };
        });
        this.publish(plainText(JSON.stringify(query)), found.hits, query, outlines);
      } catch (err) {
        if (mine !== generation) return;
        pick.items = [];
        void vscode.window.showErrorMessage(`seek: ${(err as Error).message}`);
      } finally {
        if (mine === generation) pick.busy = false;
      }
    };
    pick.onDidChangeValue((value) => {
      clearTimeout(timer);
      timer = setTimeout(() => void run(value), DEBOUNCE_MS);
    });
    pick.onDidChangeActive((active) => {
      const item = active[0];
      if (item) void openAt(folder, item.hit.path, item.hit.start_line, item.hit.end_line, true);
    });
    pick.onDidAccept(() => {
      const item = pick.activeItems[0];
      if (!item) return;
      accepted = true;
      pick.hide();
      void openAt(folder, item.hit.path, item.hit.start_line, item.hit.end_line);
    });
    pick.onDidHide(() => {
      clearTimeout(timer);
      pick.dispose();
      void accepted;
    });
    pick.show();
    if (initial) void run(initial);
  }

  /** "Find Related Code": the chunks of other files most like the one under the cursor. */
  async related(): Promise<void> {
    const folder = this.controller.folder;
    const at = cursorLocation(folder);
    if (!folder || !at) return;
    const { file, line } = at;
    try {
      const [found, outlines] = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: "seek: finding related code" },
        async () => {
          const answer = await this.controller.call<{ hits: Hit[] }>("POST", "/v1/related", { path: folder, file, line, k: this.k() });
          return [answer, await this.outlines(folder, answer.hits)] as const;
        },
      );
      this.publish(plainText(`code related to ${file}:${line}`), found.hits, "", outlines);
      await vscode.commands.executeCommand("seek.results.focus");
      // The file's name stays out of the notification, which would draw a `[x](command:...)`
      // in it as a link.
      if (!found.hits.length) void vscode.window.showInformationMessage(`seek: nothing related to line ${line} of this file`);
    } catch (err) {
      void vscode.window.showErrorMessage(`seek: ${(err as Error).message}`);
    }
  }
}
