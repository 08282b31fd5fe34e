import { test } from "node:test";
import * as assert from "node:assert/strict";
import { ExtensionSettings, Inspected, USER_ONLY, ignoredWarning, installCommand, launchFor, setByWorkspace, userScoped } from "../../src/settings";

const base: ExtensionSettings = {
  path: "/opt/seek/bin/seek",
  serverUrl: "",
  serverTokenEnv: "SEEK_TOKEN",
  provider: "ollama",
  model: "nomic-embed-text",
  baseUrl: "",
  chatProvider: "openai",
  chatModel: "gpt-x",
  chatUrl: "http://127.0.0.1:8000",
};

test("trusted: the settings that are set become --set options, empty ones are left to seek", () => {
  const launch = launchFor(base, ["/w/a", "/w/b"], true, "tok");
  assert.deepEqual(launch.args, [
    "--set", "provider=ollama",
    "--set", "model=nomic-embed-text",
    "--set", "chat_provider=openai",
    "--set", "chat_model=gpt-x",
    "--set", "chat_url=http://127.0.0.1:8000",
    "ui", "/w/a", "/w/b", "--no-open", "--port", "0",
  ]);
  assert.deepEqual(launch.env, { SEEK_TOKEN: "tok" });
});

test("untrusted: local model, no team or chat server", () => {
  const launch = launchFor(base, ["/w/a"], false, "tok");
  assert.ok(!launch.args.some((a) => a.includes("ollama") || a.includes("gpt-x") || a.includes("8000")));
  assert.deepEqual(launch.args.slice(0, 6), ["--set", "provider=local", "--set", "team_url=", "--set", "chat_url=http://127.0.0.1:9"]);
  assert.deepEqual(launch.args.slice(6), ["ui", "/w/a", "--no-open", "--port", "0"]);
});

/** What `inspect()` answers for a workspace that sets every user-only setting: a user
 * value for some, the default for the rest. */
function hostile(user: Record<string, string>): (key: string) => Inspected {
  return (key) => ({
    defaultValue: key === "server.tokenEnv" ? "SEEK_TOKEN" : "",
    globalValue: user[key],
    workspaceValue: key === "path" ? "./x.sh" : `http://127.0.0.1:9999/${key}`,
    workspaceFolderValue: key === "path" ? "/repo/x.sh" : `folder-${key}`,
  });
}

test("only the user's values are read: a workspace or folder value never reaches --set or the program", () => {
  const settings = userScoped(hostile({ provider: "ollama", "chat.url": "http://127.0.0.1:8000" }));
  assert.deepEqual(settings, {
    path: "",
    serverUrl: "",
    serverTokenEnv: "SEEK_TOKEN",
    provider: "ollama",
    model: "",
    baseUrl: "",
    chatProvider: "",
    chatModel: "",
    chatUrl: "http://127.0.0.1:8000",
  });
  const args = launchFor(settings, ["/w"], true, "t").args.join(" ");
  assert.ok(!/9999|folder-|x\.sh/.test(args), args);
  assert.equal(args, "--set provider=ollama --set chat_url=http://127.0.0.1:8000 ui /w --no-open --port 0");
});

test("a value that is not a string is ignored; nothing set gives the defaults", () => {
  const odd = userScoped((key) => ({ defaultValue: key === "server.tokenEnv" ? "SEEK_TOKEN" : "", globalValue: key === "path" ? 42 : undefined }));
  assert.equal(odd.path, "");
  assert.equal(userScoped(() => undefined).serverTokenEnv, "SEEK_TOKEN");
});

test("every user-only setting that a workspace or folder sets is named, none else", () => {
  assert.deepEqual(
    setByWorkspace(hostile({})),
    USER_ONLY.map(([, key]) => `seek.${key}`),
  );
  assert.deepEqual(setByWorkspace((key) => (key === "chat.url" ? { workspaceFolderValue: "x" } : { globalValue: "y" })), ["seek.chat.url"]);
  assert.deepEqual(setByWorkspace(() => ({ globalValue: "x", defaultValue: "" })), []);
});

test("the warning names the settings and says why", () => {
  const text = ignoredWarning(["seek.path", "seek.baseUrl"]);
  assert.match(text, /^seek ignored seek\.path, seek\.baseUrl from this workspace's settings/);
  assert.match(text, /only from your user settings/);
});

test("the install command names the free distribution", () => {
  assert.equal(installCommand(true, true), "pipx install seek-code");
  assert.equal(installCommand(false, true), "uv tool install seek-code");
});
