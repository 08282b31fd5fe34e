// The Quick Pick of "Impact and Tests of Definition at Cursor" (issue 44, deliver 7): seek's
// `POST /v1/impact` and `POST /v1/tests` answers as the list's entries, the uses under one
// separator and the tests under another, each naming its definition, depth and place (and
// a test its runner id). Pure (no `vscode` import) so node's test runner covers it; every
// text from the workspace goes through labelText, as the Quick Pick draws `$(icons)`.
import { labelText } from "./format";

/** A definition reached (an impact or tests row), as seek's graph tools write it. */
export interface GraphRow {
  path: string;
  line: number;
  column?: number;
  kind?: string;
  name: string;
  container?: string | null;
  depth?: number;
  /** impact: whether the definition is a test. */
  test?: boolean;
  /** impact: the use that reaches it. */
  via?: { line: number; column?: number; kind?: string; text?: string };
  /** impact: the definition it uses, qualified. */
  through?: string;
  /** tests: what a test runner takes (a pytest node id, `go test -run ...`). */
  id?: string;
  framework?: string | null;
}

export interface GraphAnswer {
  tool?: string;
  query?: string;
  rows: GraphRow[];
  notes?: string[];
  truncated?: boolean;
  subject?: GraphRow | null;
}

/** One call's outcome: its answer, an older seek without the route, or an error. */
export type Part = { answer: GraphAnswer } | { unavailable: true } | { error: string };

export interface Entry {
  separator?: boolean;
  label: string;
  description?: string;
  detail?: string;
  /** Where picking it goes (none: a message). */
  target?: { path: string; line: number; column: number };
}

export const USES = "Uses (impact)";
export const TESTS = "Tests";
export const TESTS_UNAVAILABLE = "Tests are not available from this seek";

/** `Container.name`, or for a file's top level its path and "(file level)". */
export function qualifiedName(row: GraphRow): string {
  if (row.kind === "file") return `${row.path} (file level)`;
  return row.container ? `${row.container}.${row.name}` : row.name;
}

function where(row: GraphRow): string {
  const depth = typeof row.depth === "number" ? `depth ${row.depth} · ` : "";
  return `${depth}${row.path}:${row.line}`;
}

function target(row: GraphRow): Entry["target"] {
  const column = row.kind === "file" ? 1 : (row.column ?? 1);
  return { path: row.path, line: row.line, column: Math.max(1, column) };
}

/** A definition that uses the subject: how it does, on its own line. */
function useEntry(row: GraphRow): Entry {
  const via = row.via;
  const how = via ? `${via.kind === "call" ? "calls" : "uses"} ${row.through ?? ""} at line ${via.line}: ${via.text ?? ""}` : undefined;
  return {
    label: labelText(qualifiedName(row)),
    description: labelText(where(row)),
    detail: how === undefined ? undefined : labelText(how.replace(/\s+/g, " ").trim()),
    target: target(row),
  };
}

/** A test that reaches the subject, with the id its runner takes. */
function testEntry(row: GraphRow): Entry {
  const runner = row.id ? (row.framework ? `${row.framework}: ${row.id}` : row.id) : undefined;
  return {
    label: labelText(qualifiedName(row)),
    description: labelText(where(row)),
    detail: runner === undefined ? undefined : labelText(runner),
    target: target(row),
  };
}

const message = (label: string, detail?: string): Entry => ({ label: labelText(label), detail: detail === undefined ? undefined : labelText(detail) });

/** What ends a part: that rows were left out, and seek's notes (a graph being built, a
 * language whose tests it cannot tell). */
function more(answer: GraphAnswer, what: string): Entry[] {
  const notes = (Array.isArray(answer.notes) ? answer.notes : []).map((note) => message(`Note: ${note}`));
  return [...(answer.truncated ? [message(`Only the first ${answer.rows.length} ${what} are shown`)] : []), ...notes];
}

/**
 * The entries: "Uses (impact)" with the definitions that use the subject (directly, then
 * through their users), then "Tests" with the tests that reach it. When this seek has no
 * tests route, the Tests part says so and lists the tests impact reached (without runner
 * ids); when a call failed, its part says why.
 */
export function impactEntries(impact: Part, tests: Part): Entry[] {
  const entries: Entry[] = [{ separator: true, label: USES }];
  const reached = "answer" in impact ? impact.answer.rows : [];
  if ("error" in impact) entries.push(message(`Impact failed: ${impact.error}`));
  else if ("unavailable" in impact) entries.push(message("Impact is not available from this seek", "Its server has no /v1/impact: update seek."));
  else {
    const uses = reached.filter((r) => !r.test);
    entries.push(...uses.map(useEntry));
    if (!uses.length) entries.push(message("Nothing uses it"));
    entries.push(...more(impact.answer, "uses"));
  }
  entries.push({ separator: true, label: TESTS });
  if ("answer" in tests) {
    entries.push(...tests.answer.rows.map(testEntry));
    if (!tests.answer.rows.length) entries.push(message("No test reaches it"));
    entries.push(...more(tests.answer, "tests"));
  } else if ("unavailable" in tests) {
    entries.push(message(TESTS_UNAVAILABLE, "Its server has no /v1/tests; the tests below are those impact reached."));
    entries.push(...reached.filter((r) => r.test).map(useEntry));
  } else {
    entries.push(message(`Tests failed: ${tests.error}`));
  }
  return entries;
}

/** The Quick Pick's title: what the cursor's line was taken to mean. */
export function impactTitle(subject: GraphRow | null | undefined): string {
  if (!subject) return "Impact and tests";
  return labelText(`Impact and tests of ${qualifiedName(subject)} (${subject.path}:${subject.line})`);
}
