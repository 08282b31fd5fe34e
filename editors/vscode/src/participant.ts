// The `@seek` chat participant (where VS Code's chat API exists): seek's context for the
// question (`/v1/context`) handed to the user's own chat model, its sources as references.
import * as vscode from "vscode";
import * as path from "node:path";
import { Controller } from "./controller";
import { escapeMarkdown } from "./format";

interface Block {
  path: string;
  start_line: number;
  end_line: number;
}

export function registerParticipant(controller: Controller): vscode.Disposable | undefined {
  const chat = (vscode as any).chat;
  if (!chat || typeof chat.createChatParticipant !== "function") return undefined;
  const handler = async (
    request: vscode.ChatRequest,
    _context: vscode.ChatContext,
    stream: vscode.ChatResponseStream,
    token: vscode.CancellationToken,
  ) => {
    const folder = controller.folder;
    if (!folder) {
      stream.markdown("Open a folder first: seek answers from the workspace's code.");
      return;
    }
    const found = await controller.call<{ prompt: string; blocks: Block[]; context_line: string }>("POST", "/v1/context", {
      question: request.prompt,
      path: folder,
    });
    for (const b of found.blocks) {
      const uri = vscode.Uri.file(path.join(folder, b.path));
      stream.reference(new vscode.Location(uri, new vscode.Range(b.start_line - 1, 0, b.end_line - 1, 0)));
    }
    if (!vscode.workspace.isTrusted) {
      stream.markdown(`*${escapeMarkdown(found.context_line)}*\n\nThe folder is not trusted: seek's context is not sent to a chat model.`);
      return;
    }
    const messages = [
      vscode.LanguageModelChatMessage.User(
        "Answer the question using the code below from the user's workspace; cite files as path:lines.\n\n" +
          `${found.prompt}\n\nQuestion: ${request.prompt}`,
      ),
    ];
    const answer = await request.model.sendRequest(messages, {}, token);
    for await (const piece of answer.text) stream.markdown(piece);
    // The context line quotes the question and names files: text, not Markdown (issue 43).
    stream.markdown(`\n\n*${escapeMarkdown(found.context_line)}*`);
  };
  const participant = chat.createChatParticipant("seek.workspace", handler);
  participant.iconPath = vscode.Uri.joinPath(vscode.Uri.file(__dirname), "..", "..", "media", "seek.svg");
  return participant;
}
