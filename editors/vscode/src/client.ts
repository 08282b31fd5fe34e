// The HTTP client for a seek server: loopback only, the session's token on every call,
// JSON errors turned into one-line messages, newline-delimited JSON streams read as they
// come. Pure node (no `vscode` import) so node's test runner covers it.
import * as http from "node:http";
import { randomBytes } from "node:crypto";

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** A fresh per-session token: 32 random bytes, hex. */
export function newToken(): string {
  return randomBytes(32).toString("hex");
}

/**
 * The server's base URL if it is plain http on a loopback address, else an error: the
 * extension never sends the token (or the code) anywhere but this machine.
 */
export function loopbackBase(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`not a URL: ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== "http:") throw new Error(`seek's server must be http on loopback, not ${parsed.protocol}`);
  if (!LOOPBACK_HOSTS.has(parsed.hostname)) {
    throw new Error(`seek's server must be on this machine (127.0.0.1, localhost or [::1]), not ${parsed.hostname}`);
  }
  if (parsed.username || parsed.password) throw new Error("the server address must not hold a user name or password");
  parsed.pathname = "/";
  parsed.search = "";
  parsed.hash = "";
  return parsed;
}

/**
 * The page address in `seek ui`'s own line on its stderr (issue 43, finding 9b):
 * `seek: the page for ROOTS is at http://127.0.0.1:PORT/#token=TOKEN`, a whole line (one
 * still being written is not read), carrying the token this session gave seek. Any other
 * line is not seek's, even one that says the same: a warning that quotes repository text
 * could, but it cannot know the token, so the extension never talks to a server of its
 * choosing. The first such line wins.
 */
export function parseServeAddress(stderr: string, token: string): string | undefined {
  if (!token) return undefined;
  const lines = stderr.split("\n");
  lines.pop(); // not ended yet
  const suffix = `/#token=${encodeURIComponent(token)}`;
  for (const raw of lines) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    const m = /^seek: the page for .+ is at (http:\/\/127\.0\.0\.1:(\d{1,5}))(\/#token=\S+)$/.exec(line);
    if (m && m[3] === suffix && Number(m[2]) > 0 && Number(m[2]) < 65536) return `${m[1]}/`;
  }
  return undefined;
}

export class SeekHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The message of seek's JSON error body, else the start of the text. */
export function errorMessage(status: number, body: string): SeekHttpError {
  try {
    const data = JSON.parse(body);
    if (data && data.error && typeof data.error.message === "string") {
      return new SeekHttpError(status, String(data.error.code ?? "error"), data.error.message);
    }
  } catch {
    // not JSON: fall through
  }
  const text = body.trim().split("\n")[0].slice(0, 200);
  return new SeekHttpError(status, "http", `HTTP ${status}${text ? `: ${text}` : ""}`);
}

/** Splits a byte stream into JSON lines; a partial line waits for the rest. */
export class LineSplitter {
  private rest = "";
  push(chunk: string): unknown[] {
    this.rest += chunk;
    const lines = this.rest.split("\n");
    this.rest = lines.pop() ?? "";
    return lines.filter((l) => l.trim()).map((l) => JSON.parse(l));
  }
  end(): unknown[] {
    const last = this.rest.trim();
    this.rest = "";
    return last ? [JSON.parse(last)] : [];
  }
}

export interface Stream {
  /** Resolves when the server ends the stream. */
  done: Promise<void>;
  cancel(): void;
}

export class SeekClient {
  readonly base: URL;
  constructor(
    base: string,
    private readonly token: string,
    private readonly timeoutMs = 35_000,
  ) {
    this.base = loopbackBase(base);
  }

  private request(method: string, path: string, body?: unknown): http.ClientRequest {
    const url = new URL(path, this.base);
    const headers: Record<string, string> = { Accept: "application/json" };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    return http.request(url, { method, headers });
  }

  /** One JSON call; a non-2xx answer rejects with seek's own message. */
  call<T = any>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    return new Promise((resolve, reject) => {
      const req = this.request(method, path, body);
      req.setTimeout(this.timeoutMs, () => req.destroy(new Error(`seek did not answer within ${this.timeoutMs / 1000} s`)));
      req.on("error", (err: NodeJS.ErrnoException) => reject(connectionError(err, this.base)));
      req.on("response", (res) => {
        const parts: Buffer[] = [];
        res.on("data", (d: Buffer) => parts.push(d));
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(parts).toString("utf8");
          const status = res.statusCode ?? 0;
          if (status < 200 || status >= 300) return reject(errorMessage(status, text));
          try {
            resolve(JSON.parse(text) as T);
          } catch {
            reject(new Error("seek answered with something that is not JSON"));
          }
        });
      });
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  }

  /** A newline-delimited JSON stream (progress, ask): each object goes to `onItem`. */
  stream(method: "GET" | "POST", path: string, body: unknown, onItem: (item: any) => void): Stream {
    let req: http.ClientRequest | undefined;
    let cancelled = false;
    const done = new Promise<void>((resolve, reject) => {
      req = this.request(method, path, body);
      req.on("error", (err: NodeJS.ErrnoException) => (cancelled ? resolve() : reject(connectionError(err, this.base))));
      req.on("response", (res) => {
        const status = res.statusCode ?? 0;
        const split = new LineSplitter();
        const parts: string[] = [];
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          if (status < 200 || status >= 300) return void parts.push(chunk);
          try {
            for (const item of split.push(chunk)) onItem(item);
          } catch (err) {
            req?.destroy(err as Error);
          }
        });
        res.on("error", (err) => (cancelled ? resolve() : reject(err)));
        res.on("end", () => {
          if (status < 200 || status >= 300) return reject(errorMessage(status, parts.join("")));
          try {
            for (const item of split.end()) onItem(item);
          } catch (err) {
            return reject(err);
          }
          resolve();
        });
        res.on("close", () => (cancelled ? resolve() : undefined));
      });
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
    return {
      done,
      cancel() {
        cancelled = true;
        req?.destroy();
      },
    };
  }
}

function connectionError(err: NodeJS.ErrnoException, base: URL): Error {
  if (err.code === "ECONNREFUSED" || err.code === "ECONNRESET") {
    return new SeekHttpError(0, "down", `seek's server at ${base.host} is not answering (${err.code})`);
  }
  return err;
}
