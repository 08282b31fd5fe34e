"""Does a graph read lazily answer as the assembled one? (issue 28: a one-shot `seek def` /
`seek refs` decodes only the files that mention the name, ``seek.index.graph_rows.read_graph``.)

    python -m bench.checks.lazy_graph [BENCH_DIR] --home DIR [--repos a,b] [--names 300]

Each repository (its benchmark root, ``bench.common``; every semble, spans and own-set
repository present under BENCH_DIR without ``--repos``) is indexed into ``--home``, its graph
rows read once and assembled whole (``assemble``). Then a sample of the names it defines or
uses (``--names``, seeded) and of its definitions (half as many) is asked of both, each
question on a fresh lazy graph as a one-shot call would: `defs` and `refs` of each name;
`defs` from the definition's file, `refs`, `uses`, `callers` and `callees` of each
definition, and `definition_at` of its file's first five uses; then the map, every use's
count and the files themselves. It prints each difference and a line per repository, and
exits 1 when anything differs.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

from bench.common import (
    SHARED,
    SPANS,
    SPANS_OWN,
    add_bench_dir,
    bench_settings,
    log,
    resolve_bench_dir,
)


def roots(bench_dir: Path, names: list[str] | None) -> list[tuple[str, Path]]:
    """(name, benchmark root) of the sets' repositories checked out under ``bench_dir``."""
    found: dict[str, Path] = {}
    for folder in (SHARED, SPANS, SPANS_OWN):
        for entry in json.loads((folder / "repos.json").read_text()):
            root = bench_dir / entry["name"] / (entry.get("benchmark_root") or "")
            if root.is_dir() and (names is None or entry["name"] in names):
                found.setdefault(entry["name"], root)
    return sorted(found.items())


def differences(rows: list, names: int, seed: int) -> list[str]:
    from seek.index.graph_rows import assemble, read_graph

    whole = assemble(rows)
    spelt = sorted(
        {d.name for f in whole.files.values() for d in f.definitions}
        | {r.name for f in whole.files.values() for r in f.references}
    )
    defined = [d for f in whole.files.values() for d in f.definitions]
    pick = random.Random(seed)
    out = []
    for name in pick.sample(spelt, min(names, len(spelt))):
        for tool in ("defs", "refs"):
            if getattr(read_graph(rows), tool)(name) != getattr(whole, tool)(name):
                out.append(f"{tool} {name}")
    for d in pick.sample(defined, min(names // 2, len(defined))):
        lazy = read_graph(rows)
        if lazy.defs(d.name, d.path) != whole.defs(d.name, d.path):
            out.append(f"defs {d.name} from {d.path}")
        for tool in ("refs", "uses", "callers", "callees"):
            if getattr(lazy, tool)(d) != getattr(whole, tool)(d):
                out.append(f"{tool} {d.path}:{d.line} {d.name}")
        for r in whole.files[d.path].references[:5]:
            if lazy.definition_at(r.path, r.line) != whole.definition_at(r.path, r.line):
                out.append(f"definition_at {r.path}:{r.line}")
    lazy = read_graph(rows)
    if lazy.map("how does it work", 512) != whole.map("how does it work", 512):
        out.append("map")
    if lazy.inbound() != whole.inbound():
        out.append("inbound")
    if dict(lazy.files) != whole.files:
        out.append("files")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_bench_dir(parser)
    parser.add_argument("--home", required=True, help="seek's index home for the checkouts")
    parser.add_argument("--repos", help="comma-separated repository names (default: all)")
    parser.add_argument("--names", type=int, default=300, help="names asked per repository")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    from seek import index_workspace
    from seek.store import index_dir_for, load_manifest
    from seek.store.graph_table import GraphTable, graph_table_name

    settings = bench_settings(Path(args.home).expanduser())
    bench_dir = resolve_bench_dir(parser, args.bench_dir)
    wanted = args.repos.split(",") if args.repos else None
    failed = 0
    for name, root in roots(bench_dir, wanted):
        index_workspace(root, settings)
        index_dir = index_dir_for(root, settings)
        table = GraphTable(index_dir, graph_table_name(load_manifest(index_dir).table))
        rows = table.load_all()
        started = time.perf_counter()
        found = differences(rows, args.names, args.seed)
        for line in found:
            print(f"{name}: differs: {line}")
        failed += len(found)
        log(f"{name}: {len(rows)} files, {len(found)} differences "
            f"({time.perf_counter() - started:.1f} s)")  # fmt: skip
    print(f"differences: {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
