// VS Code's settings (seek.*) mapped to `seek` command-line options and environment, and
// the trust rules around them. Pure (no `vscode` import) so node's test runner covers it.

/** What the extension reads from its configuration section. */
export interface ExtensionSettings {
  path: string;
  serverUrl: string;
  serverTokenEnv: string;
  provider: string;
  model: string;
  baseUrl: string;
  chatProvider: string;
  chatModel: string;
  chatUrl: string;
}

/**
 * Each field, its setting under `seek.` and its default. Every one of them can choose a
 * server, a model that a server runs, an environment variable whose value is sent, or the
 * program that runs: they are read from the user's own settings only (issue 43), never
 * from a workspace's or a folder's, whatever VS Code's trust says of the folder.
 */
export const USER_ONLY: ReadonlyArray<[keyof ExtensionSettings, string, string]> = [
  ["path", "path", ""],
  ["serverUrl", "server.url", ""],
  ["serverTokenEnv", "server.tokenEnv", "SEEK_TOKEN"],
  ["provider", "provider", ""],
  ["model", "model", ""],
  ["baseUrl", "baseUrl", ""],
  ["chatProvider", "chat.provider", ""],
  ["chatModel", "chat.model", ""],
  ["chatUrl", "chat.url", ""],
];

/** The seek setting each extension setting sets (empty values leave seek's own). */
export const SETTING_NAMES: ReadonlyArray<[keyof ExtensionSettings, string]> = [
  ["provider", "provider"],
  ["model", "model"],
  ["baseUrl", "base_url"],
  ["chatProvider", "chat_provider"],
  ["chatModel", "chat_model"],
  ["chatUrl", "chat_url"],
];

/** The shape of `WorkspaceConfiguration.inspect()`'s answer that matters here. */
export interface Inspected {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
  workspaceLanguageValue?: unknown;
  workspaceFolderLanguageValue?: unknown;
}

export type Inspect = (key: string) => Inspected | undefined;

/**
 * The settings from the user's scope alone: `globalValue` (user or remote settings), else
 * the default. Not `get()`, which lets a workspace or folder value win, and which some
 * VS Code versions answer with a workspace value even for a `machine` setting.
 */
export function userScoped(inspect: Inspect): ExtensionSettings {
  const settings = {} as ExtensionSettings;
  for (const [field, key, fallback] of USER_ONLY) {
    const seen = inspect(key);
    const value = typeof seen?.globalValue === "string" ? seen.globalValue : seen?.defaultValue;
    settings[field] = typeof value === "string" ? value : fallback;
  }
  return settings;
}

/** The user-only settings (`seek.…`) that a workspace or folder scope sets: ignored. */
export function setByWorkspace(inspect: Inspect): string[] {
  const found: string[] = [];
  for (const [, key] of USER_ONLY) {
    const seen = inspect(key);
    const scoped = [seen?.workspaceValue, seen?.workspaceFolderValue, seen?.workspaceLanguageValue, seen?.workspaceFolderLanguageValue];
    if (scoped.some((v) => v !== undefined)) found.push(`seek.${key}`);
  }
  return found;
}

/** The warning for settings a workspace tried to set, naming them. */
export function ignoredWarning(names: string[]): string {
  return (
    `seek ignored ${names.join(", ")} from this workspace's settings: seek's server, model, ` +
    "chat and program settings take effect only from your user settings, so that a " +
    "repository cannot choose where your code is sent or what program runs."
  );
}

export interface Launch {
  args: string[];
  env: Record<string, string>;
}

/**
 * The `seek ui` command line for the folders, from the user's settings (`userScoped`).
 * Untrusted: the built-in local model only, no team or chat server, whatever the settings
 * say: nothing about an untrusted folder makes seek send its code anywhere.
 */
export function launchFor(settings: ExtensionSettings, folders: string[], trusted: boolean, token: string): Launch {
  const args: string[] = [];
  if (trusted) {
    for (const [key, name] of SETTING_NAMES) {
      const value = String(settings[key] ?? "").trim();
      if (value) args.push("--set", `${name}=${value}`);
    }
  } else {
    args.push("--set", "provider=local", "--set", "team_url=", "--set", "chat_url=http://127.0.0.1:9");
  }
  args.push("ui", ...folders, "--no-open", "--port", "0");
  return { args, env: { SEEK_TOKEN: token } };
}

/** The distribution to install when seek is missing (the `seek` name on PyPI is taken). */
export const DISTRIBUTION = "seek-code";

/** The one command that installs seek, for the "seek is missing" message. */
export function installCommand(hasPipx: boolean, hasUv: boolean): string {
  if (hasUv && !hasPipx) return `uv tool install ${DISTRIBUTION}`;
  return `pipx install ${DISTRIBUTION}`;
}
