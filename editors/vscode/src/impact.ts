// "seek: Impact and Tests of Definition at Cursor" (issue 44, deliver 7): the definition at
// the cursor's line (`POST /v1/impact` and `POST /v1/tests` with its file and line), what
// uses it and the tests that reach it in one Quick Pick; the focused entry is previewed,
// the picked one opened at its line.
import * as vscode from "vscode";
import * as path from "node:path";
import { SeekHttpError } from "./client";
import { Controller } from "./controller";
import { labelText } from "./format";
import { Entry, GraphAnswer, Part, impactEntries, impactTitle } from "./impactItems";
import { cursorLocation } from "./search";

interface EntryPick extends vscode.QuickPickItem {
  entry: Entry;
}

/** Opens `file` of `folder` with the cursor at `line` and `column` (1-based), revealed. */
async function openAtLine(folder: string, target: NonNullable<Entry["target"]>, preview: boolean): Promise<void> {
  const position = new vscode.Position(Math.max(0, target.line - 1), Math.max(0, target.column - 1));
  const editor = await vscode.window.showTextDocument(vscode.Uri.file(path.join(folder, target.path)), {
    preview,
    preserveFocus: preview,
    selection: new vscode.Range(position, position),
  });
  editor.revealRange(new vscode.Range(position, position), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

/** One call as a Part: a 404 `not_found` is a seek whose server has no such route. */
async function part(controller: Controller, route: string, body: unknown): Promise<Part> {
  try {
    return { answer: await controller.call<GraphAnswer>("POST", route, body) };
  } catch (err) {
    if (err instanceof SeekHttpError && err.status === 404 && err.code === "not_found") return { unavailable: true };
    return { error: (err as Error).message };
  }
}

export async function impactAtCursor(controller: Controller): Promise<void> {
  const folder = controller.folder;
  const at = cursorLocation(folder);
  if (!folder || !at) return;
  const pick = vscode.window.createQuickPick<EntryPick>();
  pick.title = "Impact and tests";
  pick.placeholder = "Definitions that use the one at the cursor, and the tests that reach it";
  pick.matchOnDescription = true;
  pick.matchOnDetail = true;
  pick.busy = true;
  let accepted = false;
  pick.onDidChangeActive((active) => {
    const target = active[0]?.entry.target;
    if (target && !accepted) void openAtLine(folder, target, true);
  });
  pick.onDidAccept(() => {
    const target = pick.activeItems[0]?.entry.target;
    if (!target) return;
    accepted = true;
    pick.hide();
    void openAtLine(folder, target, false);
  });
  pick.onDidHide(() => pick.dispose());
  pick.show();

  const body = { path: folder, file: at.file, line: at.line };
  const [impact, tests] = await Promise.all([part(controller, "/v1/impact", body), part(controller, "/v1/tests", body)]);
  const subject = "answer" in impact ? impact.answer.subject : undefined;
  let entries: Entry[];
  if ("answer" in impact && !subject) {
    // Nothing to answer about: seek's notes say why (no graph yet, a line outside any
    // definition), in the list rather than a notification, which would draw links.
    pick.title = `No definition at line ${at.line}`;
    const notes = impact.answer.notes ?? [];
    entries = (notes.length ? notes : ["seek's code graph knows no definition at this line"]).map((n) => ({ label: labelText(n) }));
  } else {
    pick.title = impactTitle(subject);
    entries = impactEntries(impact, tests);
  }
  pick.items = entries.map((entry) =>
    entry.separator
      ? { kind: vscode.QuickPickItemKind.Separator, label: entry.label, entry }
      : { label: entry.label, description: entry.description, detail: entry.detail, entry },
  );
  pick.busy = false;
}
