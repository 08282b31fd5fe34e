import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { findOnPath, isInside, pathFrom, resolveProgram } from "../../src/program";

/** A temporary tree: `bin/seek` (the real one), `repo/seek`, `repo/bin/seek` (planted). */
function tree(): { root: string; bin: string; repo: string; cleanup: () => void } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "seek-program-"));
  const bin = path.join(root, "bin");
  const repo = path.join(root, "repo");
  for (const file of [path.join(bin, "seek"), path.join(repo, "seek"), path.join(repo, "bin", "seek")]) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, "#!/bin/sh\n", { mode: 0o755 });
  }
  return { root, bin, repo, cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

const posix = process.platform !== "win32";

test("relative PATH entries (empty, '.', 'bin') are skipped: the working folder is never searched", { skip: !posix && "POSIX paths" }, () => {
  const t = tree();
  const cwd = process.cwd();
  try {
    process.chdir(t.repo); // where a relative entry would look
    const found = findOnPath("seek", { pathEnv: ["", ".", "bin", "./bin", t.bin].join(":"), folders: [], platform: "linux" });
    assert.equal(found, path.join(t.bin, "seek"));
  } finally {
    process.chdir(cwd);
    t.cleanup();
  }
});

test("a PATH entry inside a workspace folder is skipped, also through a link", { skip: !posix && "POSIX paths" }, () => {
  const t = tree();
  try {
    const link = path.join(t.root, "link-to-repo-bin");
    fs.symlinkSync(path.join(t.repo, "bin"), link);
    const lookup = { pathEnv: [path.join(t.repo, "bin"), t.repo, link, t.bin].join(":"), folders: [t.repo], platform: "linux" as const };
    assert.equal(findOnPath("seek", lookup), path.join(t.bin, "seek"));
    assert.deepEqual(resolveProgram("", lookup), { command: path.join(t.bin, "seek") });
  } finally {
    t.cleanup();
  }
});

test("nothing outside the workspace: missing, not the repository's program", { skip: !posix && "POSIX paths" }, () => {
  const t = tree();
  try {
    const program = resolveProgram("  ", { pathEnv: `.:${t.repo}`, folders: [t.repo], platform: "linux" });
    assert.ok("error" in program && program.missing, JSON.stringify(program));
  } finally {
    t.cleanup();
  }
});

test("a file that is not executable or a folder named seek is passed over", { skip: !posix && "POSIX paths" }, () => {
  const t = tree();
  try {
    const plain = path.join(t.root, "plain");
    fs.mkdirSync(path.join(plain, "seek"), { recursive: true });
    const noexec = path.join(t.root, "noexec");
    fs.mkdirSync(noexec);
    fs.writeFileSync(path.join(noexec, "seek"), "", { mode: 0o644 });
    const lookup = { pathEnv: [plain, noexec, t.bin].join(":"), folders: [], platform: "linux" as const };
    // As root, access(X_OK) holds for any file with an x bit; this one has none.
    assert.equal(findOnPath("seek", lookup), path.join(t.bin, "seek"));
  } finally {
    t.cleanup();
  }
});

test("seek.path must be absolute; an absolute one is taken as it is", () => {
  const lookup = { pathEnv: "", folders: ["/w"], platform: process.platform };
  for (const given of ["./x.sh", "x.sh", "seek", "bin/seek"]) {
    const program = resolveProgram(given, lookup);
    assert.ok("error" in program && !program.missing && program.error.includes(`absolute path, not ${JSON.stringify(given)}`), `${given}: ${JSON.stringify(program)}`);
  }
  const absolute = path.resolve("/opt/seek/bin/seek");
  assert.deepEqual(resolveProgram(absolute, lookup), { command: absolute });
});

test("Windows: a '.' entry is not searched even where seek.exe lies; folders compare without case", { skip: !posix && "POSIX file names" }, () => {
  assert.ok(isInside("C:\\Repo\\Tools\\seek.exe", "c:\\repo", "win32"));
  assert.ok(!isInside("C:\\Repository\\seek.exe", "C:\\Repo", "win32"));
  assert.ok(isInside("/w/a/b", "/w/a", "linux"));
  assert.ok(!isInside("/w/ab", "/w/a", "linux"));
  assert.ok(!isInside("/W/a", "/w/a", "linux"));
  assert.equal(pathFrom({ Path: "C:\\bin" }, "win32"), "C:\\bin");
  assert.equal(pathFrom({ PATH: "/bin" }, "linux"), "/bin");
  // The planted seek.exe in the working folder, as Windows' own lookup would find it.
  const t = tree();
  const cwd = process.cwd();
  try {
    fs.writeFileSync(path.join(t.repo, "seek.exe"), "MZ");
    process.chdir(t.repo);
    assert.equal(findOnPath("seek", { pathEnv: ";.;C:seek", folders: [], platform: "win32" }), undefined);
  } finally {
    process.chdir(cwd);
    t.cleanup();
  }
});
