import { test } from "node:test";
import * as assert from "node:assert/strict";
import { ExtensionSettings, installCommand, launchFor } from "../../src/settings";

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
  assert.equal(launch.command, "/opt/seek/bin/seek");
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

test("untrusted: local model, no team or chat server, and the folder cannot pick the program", () => {
  const launch = launchFor(base, ["/w/a"], false, "tok");
  assert.equal(launch.command, "seek");
  assert.ok(!launch.args.some((a) => a.includes("ollama") || a.includes("gpt-x") || a.includes("8000")));
  assert.deepEqual(launch.args.slice(0, 6), ["--set", "provider=local", "--set", "team_url=", "--set", "chat_url=http://127.0.0.1:9"]);
  assert.deepEqual(launch.args.slice(6), ["ui", "/w/a", "--no-open", "--port", "0"]);
});

test("a blank program setting falls back to seek on PATH", () => {
  assert.equal(launchFor({ ...base, path: "  " }, ["/w"], true, "t").command, "seek");
});

test("the install command names the free distribution", () => {
  assert.equal(installCommand(true, true), "pipx install seek-code");
  assert.equal(installCommand(false, true), "uv tool install seek-code");
});
