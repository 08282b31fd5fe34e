import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parseJsonc, userOnlyKeysIn, userOnlyKeysInFiles } from "../../src/workspaceSettings";

test("settings files are read with comments and trailing commas, strings kept whole", () => {
  const text = `{
    // a comment with "quotes"
    "seek.path": "/x//y", /* block */
    "url": "http://a/*b*/c",
    "esc": "a\\"//b",
  }`;
  assert.deepEqual(parseJsonc(text), { "seek.path": "/x//y", url: "http://a/*b*/c", esc: 'a"//b' });
});

test("every way a settings file names a user-only setting is found", () => {
  assert.deepEqual(
    userOnlyKeysIn({
      "seek.baseUrl": "http://127.0.0.1:1",
      seek: { chat: { url: "x" }, path: "./x.sh" },
      "seek.chat": { model: "m" },
      "[python]": { "seek.provider": "ollama" },
      "seek.searchResults": 5,
      "editor.fontSize": 3,
    }),
    ["seek.path", "seek.provider", "seek.baseUrl", "seek.chat.model", "seek.chat.url"],
  );
  assert.deepEqual(userOnlyKeysIn(undefined), []);
  assert.deepEqual(userOnlyKeysIn(["seek.path"]), []);
});

test("the folders' .vscode/settings.json and the workspace file are read; broken ones are not", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "seek-wss-"));
  try {
    const a = path.join(root, "a");
    const b = path.join(root, "b");
    const c = path.join(root, "c");
    for (const [dir, text] of [[a, '{"seek.model": "x", // set\n}'], [b, "{not json"], [c, '{"seek.path": "y"}']]) {
      fs.mkdirSync(path.join(dir, ".vscode"), { recursive: true });
      fs.writeFileSync(path.join(dir, ".vscode", "settings.json"), text);
    }
    fs.rmSync(path.join(c, ".vscode", "settings.json"));
    fs.mkdirSync(path.join(c, ".vscode", "settings.json")); // a folder: not read
    const file = path.join(root, "w.code-workspace");
    fs.writeFileSync(file, '{"folders": [], "settings": {"seek.server.url": "http://127.0.0.1:2"}}');
    assert.deepEqual(userOnlyKeysInFiles([a, b, c], file).sort(), ["seek.model", "seek.server.url"]);
    assert.deepEqual(userOnlyKeysInFiles([path.join(root, "none")]), []);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
