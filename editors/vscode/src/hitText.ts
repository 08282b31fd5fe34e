// What a search hit shows of its code (issue 46, deliver 4): the enclosing definition's
// line (its signature) when the hit holds it, else the line that best matches the query,
// never just the chunk's first line, which is often the tail of the definition before.
// Pure (no `vscode` import) so node's test runner covers it.
import type { Hit, HitSymbol } from "./format";

/** A definition of the hit's file, as seek's `/v1/outline` rows (and a hit's symbol) name it. */
export interface Definition {
  name: string;
  kind: string;
  container?: string | null;
  line: number;
  end_line: number;
}

export interface ShownLine {
  /** 1-based line in the file. */
  line: number;
  /** The line's text, trimmed and cut to MAX_CHARS. */
  text: string;
  /** The definition whose own line (its signature) this is; undefined for another line. */
  definition?: Definition;
}

const MAX_CHARS = 160;

/** `Container.name`: the symbol as the CLI and the page name it. */
export function symbolName(symbol: HitSymbol): string {
  return symbol.container ? `${symbol.container}.${symbol.name}` : symbol.name;
}

/** The words of a text, lower-case: identifiers split at `_` and lower-to-upper case
 * changes, so `configureRetries` and `configure_retries` read as `configure retries`. */
export function words(text: string): string[] {
  const spaced = text.replace(/([a-z0-9])([A-Z])/g, "$1 $2");
  return spaced.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Two words match when one begins the other, both 3+ characters long (`retry` and
 * `retries` share `retr`: a common stem of at least 4 for longer words). */
function wordsMatch(a: string, b: string): boolean {
  if (a === b) return true;
  if (a.length < 3 || b.length < 3) return false;
  if (a.startsWith(b) || b.startsWith(a)) return true;
  let common = 0;
  while (common < a.length && common < b.length && a[common] === b[common]) common++;
  return common >= 4 && common >= Math.min(a.length, b.length) - 1;
}

/** How many of the query's words the line holds. */
function lineScore(line: string, query: string[]): number {
  const mine = words(line);
  return query.filter((q) => mine.some((w) => wordsMatch(w, q))).length;
}

function cut(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > MAX_CHARS ? `${trimmed.slice(0, MAX_CHARS - 1)}…` : trimmed;
}

/** Whether the hit's text holds `definition`'s own line (its signature). */
function holdsLine(hit: Hit, lines: string[], definition: Definition | null | undefined): definition is Definition {
  if (!definition || definition.line < hit.start_line || definition.line > hit.end_line) return false;
  return !!lines[definition.line - hit.start_line]?.trim();
}

/** Whether the hit's own symbol names its definition's line: then no outline is needed. */
export function namesItsDefinition(hit: Hit): boolean {
  return holdsLine(hit, (hit.content ?? "").split("\n"), hit.symbol);
}

/**
 * The line a hit shows (issue 46):
 * 1. the line of the definition seek names the hit by (its symbol), when the hit holds it;
 * 2. else, of the file's `definitions` (its outline) that begin in the hit, the innermost
 *    one holding the line with most of the query's words, or with no such line the first;
 * 3. else that best line (the first of equals), else the first non-blank line.
 * Undefined for a hit without text.
 */
export function shownLine(hit: Hit, query = "", definitions: readonly Definition[] = []): ShownLine | undefined {
  const lines = (hit.content ?? "").split("\n");
  const at = (definition: Definition): ShownLine => ({
    line: definition.line,
    text: cut(lines[definition.line - hit.start_line]),
    definition,
  });
  if (holdsLine(hit, lines, hit.symbol)) return at(hit.symbol);
  const wanted = [...new Set(words(query).filter((w) => w.length >= 3))];
  let best = -1;
  let bestScore = 0;
  lines.forEach((text, i) => {
    if (!text.trim() || !wanted.length) return;
    const score = lineScore(text, wanted);
    if (score > bestScore) [best, bestScore] = [i, score];
  });
  const inside = definitions.filter((d) => holdsLine(hit, lines, d)).sort((a, b) => a.line - b.line);
  if (best >= 0) {
    const line = hit.start_line + best;
    const holder = inside.filter((d) => d.line <= line && line <= d.end_line).pop();
    if (holder) return at(holder);
  } else if (inside.length) {
    return at(inside[0]);
  }
  if (best < 0) best = lines.findIndex((l) => l.trim());
  if (best < 0) return undefined;
  return { line: hit.start_line + best, text: cut(lines[best]) };
}
