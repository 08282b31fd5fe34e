"""Cross-repository references by type checkers over a whole slice (issue 45, deliver 4).

One checker run sees every repository of a slice at once (laid out by
:mod:`bench.org.slices`), with each import of another repository resolved to that
repository's checkout, not to an installed copy:

* Python: scip-python at the slice's root with a ``pyrightconfig.json`` whose ``extraPaths``
  hold each repository's import root (``src/`` when it has one): pyright resolves
  ``extraPaths`` before site-packages, so ``import urllib3`` in requests is urllib3's
  checkout;
* TypeScript: scip-typescript at the monorepo's root with its own ``tsconfig.json``, whose
  ``paths`` map ``@trpc/server`` to ``packages/server/src`` (``include`` narrowed to the
  slice's packages, ``types`` emptied: there is no node_modules and no network);
* Go: bench/org/oracle_go (go/types; an import resolved by the longest module path of the
  slice's go.mod files, as a go.work holding them would).

The answer is reduced to what the benchmark scores (bench/org/FORMAT.md): each definition
of a library repository with its references in *other* repositories at line granularity,
declaration lines left out as bench/graph/oracle.py does, and the repositories that use
each repository's definitions (the oracle's dependents).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

from bench.graph.oracle import _symbol_name, byte_columns, read_scip, workspace_files
from bench.org.slices import Slice, split_path

FORMAT_VERSION = 1


def symbol_kind(symbol: str) -> str | None:
    """A SCIP symbol's kind by its last descriptor's suffix (``#`` type, ``().`` method or
    function, ``.`` term); None for what no tool is asked about: a parameter ``(x)``, a
    type parameter ``[T]``, a module or namespace (``:``, ``/``). The Go oracle's symbols
    (:func:`read_go`, ``N:kind:name``) carry go/types' kind (func, method, type, field, var,
    const; ``other``, a package name or a label, is left out)."""
    if symbol[:1].isdigit() and symbol.count(":") == 2 and " " not in symbol:
        kind = symbol.split(":")[1]
        return None if kind == "other" else kind
    if symbol.endswith("()."):
        return "function"
    if symbol.endswith("#"):
        return "type"
    if symbol.endswith(")") or symbol.endswith("]") or symbol.endswith((":", "/")):
        return None
    if symbol.endswith("."):
        return "term"
    return None


def python_import_roots(slice_: Slice, root: Path) -> list[str]:
    return [
        f"{r.folder}/src" if (root / r.folder / "src").is_dir() else r.folder for r in slice_.repos
    ]


def run_python(slice_: Slice, root: Path, tool: Path, out: Path) -> dict[str, dict]:
    (root / "pyrightconfig.json").write_text(
        json.dumps({"extraPaths": python_import_roots(slice_, root)}) + "\n"
    )
    cmd = [str(tool / "scip-python"), "index", ".", "--project-name", slice_.name,
           "--project-version", "0", "--output", str(out)]  # fmt: skip
    _run(cmd, root)
    return read_scip(out)


def run_typescript(slice_: Slice, root: Path, tool: Path, out: Path) -> dict[str, dict]:
    config_path = root / "tsconfig.json"
    config = json.loads(config_path.read_text())
    config["include"] = [r.folder for r in slice_.repos]
    config.setdefault("compilerOptions", {})["types"] = []
    config_path.write_text(json.dumps(config, indent=1) + "\n")
    _run([str(tool / "scip-typescript"), "index", "--output", str(out)], root)
    return read_scip(out)


def run_go(root: Path, tool: Path) -> dict[str, dict]:
    run = subprocess.run(
        [str(tool / "org_oracle_go"), str(root)], capture_output=True, text=True, timeout=1800
    )
    if run.returncode != 0:
        raise RuntimeError(f"org_oracle_go failed: {run.stderr[-400:]}")
    return read_go(run.stdout)


def read_go(stdout: str) -> dict[str, dict]:
    symbols = {}
    for n, line in enumerate(stdout.splitlines()):
        row = json.loads(line)
        d = row["def"]
        symbols[f"{n}:{row.get('kind') or 'other'}:{row['name']}"] = {
            # go/token columns are 1-based bytes; tree-sitter's are 0-based bytes
            "defs": {(d["path"], d["line"], d["col"] - 1)},
            "refs": {(u["path"], u["line"], u["col"] - 1) for u in row["uses"] or ()},
        }
    return symbols


def _run(cmd: list[str], cwd: Path) -> None:
    run = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=3600)
    if run.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed: {run.stdout[-400:]} {run.stderr[-400:]}")


def reduce(slice_: Slice, symbols: dict[str, dict]) -> dict:
    """The oracle's symbols (paths relative to the slice's root) as the benchmark's oracle:
    see bench/org/FORMAT.md."""
    libraries = set(slice_.libraries)
    declared: dict[str, set[tuple[str, str, int]]] = defaultdict(set)  # name -> its lines
    kept = []
    for symbol, entry in symbols.items():
        kind = symbol_kind(symbol)
        if kind is None or not entry["defs"]:
            continue
        name = _symbol_name(symbol)
        defs = sorted(
            (*split, line, col)
            for path, line, col in entry["defs"]
            if (split := split_path(slice_, path)) is not None
        )
        if not defs:
            continue
        for repo, path, line, _ in defs:
            declared[name].add((repo, path, line))
        kept.append((symbol, kind, name, defs, entry["refs"]))
    definitions, dependents = [], defaultdict(set)
    for symbol, kind, name, defs, refs in kept:
        repo, path, line, col = defs[0]
        own = {(r, p, ln) for r, p, ln, _ in defs}
        cross = set()
        for ref_path, ref_line, _ in refs:
            split = split_path(slice_, ref_path)
            if split is None or split[0] == repo:
                continue
            site = (split[0], split[1], ref_line)
            if site not in own and site not in declared[name]:
                cross.add(site)
        for site in cross:
            dependents[repo].add(site[0])
        if repo in libraries:
            definitions.append({"repo": repo, "path": path, "line": line, "col": col,
                                "name": name, "kind": kind, "symbol": symbol,
                                "refs": sorted(list(s) for s in cross)})  # fmt: skip
    definitions.sort(key=lambda d: (d["repo"], d["path"], d["line"], d["col"], d["symbol"]))
    names = {d["name"] for d in definitions}
    return {
        "format": FORMAT_VERSION,
        "slice": slice_.name,
        "language": slice_.language,
        "definitions": definitions,
        "dependents": {repo: sorted(users) for repo, users in sorted(dependents.items())},
        "declarations": {name: sorted(list(s) for s in declared[name]) for name in sorted(names)},
    }


def build(slice_: Slice, root: Path, tool: Path, commits: dict[str, str], scratch: Path) -> dict:
    """Run the slice's checker over ``root`` (the slice's folder) and reduce its answer."""
    started = time.perf_counter()
    scratch.mkdir(parents=True, exist_ok=True)
    if slice_.language == "go":
        symbols = run_go(root, tool)
        tool_name = "bench/org/oracle_go (go/types)"
    else:
        out = scratch / f"{slice_.name}.scip"
        if slice_.language == "python":
            symbols, tool_name = run_python(slice_, root, tool, out), "scip-python"
        else:
            symbols, tool_name = run_typescript(slice_, root, tool, out), "scip-typescript"
        # SCIP counts columns in UTF-16 units; the rest of the benchmark in bytes
        symbols = byte_columns(symbols, workspace_files(root))
    oracle = reduce(slice_, symbols)
    oracle.update(
        {
            "tool": tool_name,
            "seconds": round(time.perf_counter() - started, 1),
            "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "repos": {
                r.name: {
                    "github": r.github,
                    "revision": r.revision,
                    "commit": commits.get(r.name),
                    "subdir": r.subdir,
                    "library": r.library,
                }
                for r in slice_.repos
            },  # fmt: skip
        }
    )
    return oracle
