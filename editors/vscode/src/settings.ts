// VS Code's settings (seek.*) mapped to `seek` command-line options and environment, and
// the Workspace Trust rule. Pure (no `vscode` import) so node's test runner covers it.

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

/** The seek setting each extension setting sets (empty values leave seek's own). */
export const SETTING_NAMES: ReadonlyArray<[keyof ExtensionSettings, string]> = [
  ["provider", "provider"],
  ["model", "model"],
  ["baseUrl", "base_url"],
  ["chatProvider", "chat_provider"],
  ["chatModel", "chat_model"],
  ["chatUrl", "chat_url"],
];

export interface Launch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * The `seek ui` command line for the folders. Untrusted: the built-in local model only, no
 * team server, and the folder's settings choose nothing (the program included): nothing
 * read from an untrusted folder can make seek send its code anywhere.
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
  const command = trusted && settings.path.trim() ? settings.path.trim() : "seek";
  return { command, args, env: { SEEK_TOKEN: token } };
}

/** The distribution to install when seek is missing (the `seek` name on PyPI is taken). */
export const DISTRIBUTION = "seek-code";

/** The one command that installs seek, for the "seek is missing" message. */
export function installCommand(hasPipx: boolean, hasUv: boolean): string {
  if (hasUv && !hasPipx) return `uv tool install ${DISTRIBUTION}`;
  return `pipx install ${DISTRIBUTION}`;
}
