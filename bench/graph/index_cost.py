"""What storing the code graph with the index costs a cold `seek index` (issue 28: at most
+25 % time and +10 % peak RSS), measured in the same run, interleaved.

    .venv/bin/python -m bench.graph.index_cost BENCH_DIR [--repos requests,gin,express,flask]
        [--runs 1] [--out bench/results/graph_index_cost.json]

Per repository and run, two fresh child processes of ``bench.speed.index_speed``'s seek worker
(model load and store import excluded; cold index into a fresh home, then a no-change
run): ``graph``, as shipped, and ``nograph``, the same with the per-file graph extraction
switched off (``seek.index.stages.file_facts`` returns nothing, so no facts are read or
written). Their order alternates by repository and run, so drift in the machine's load
does not favour one arm. Ratios are graph / nograph of the cold wall time, cold CPU time
(the graph worker's included: it is a waited-for child) and peak RSS.

The graph's facts are extracted on a forked worker where the machine allows
(:mod:`seek.index.graph_worker`), whose memory the index process's own peak RSS does not
show. So per repository and arm ``--memory-runs`` more children (default 1, not timed) are
watched from this process: the peak, over the child's life, of the proportional set size of
it and its descendants together (``tree_pss_mb``; a page the worker shares with the index
process counts once), and its ratio.

``--parts`` adds, per repository, one more child that splits the graph's share: CPU seconds
of one pass over the files seek indexes (the default settings' scan) for chunking (its
parse included), the parse the extractor no longer repeats (the chunker's tree is passed),
`extract_rows(tree=)` (the indexer's call), and encoding the rows; after an untimed first
pass, whose cost (query compilation per grammar, the first extraction) is reported apart as
``first_pass_s``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from datetime import UTC, datetime
from pathlib import Path

from bench.common import (
    REPO_ROOT,
    RESULTS,
    builtin_model_dir,
    read_benchmark_roots,
    repo_folder,
    run_sampling_memory,
)
from bench.speed.index_speed import child_env, prewarm, run_child

DEFAULT_REPOS = ("requests", "gin", "express", "flask")
DEFAULT_OUT = RESULTS / "graph_index_cost.json"
ARMS = ("graph", "nograph")
PARTS = ("chunk_s", "parse_s", "extract_s", "encode_s")
MEASURES = ("cold_s", "cold_cpu_s", "peak_rss_mb", "tree_pss_mb")


def parts(folder: str) -> dict:
    """CPU seconds of each step of the graph's share of a cold index (see ``--parts``)."""
    import time

    from seek.chunk import chunk_file_parsed
    from seek.chunk.languages import grammar_for_path, parser_for
    from seek.graph.extract import extract_rows
    from seek.index.graph_rows import encode
    from seek.index.rules import chunking_spec
    from seek.index.stages import read_regular_file
    from seek.scan import scan_workspace
    from seek.settings import load_settings

    settings = load_settings(user_config=Path(folder) / "no-config.toml")
    spec = chunking_spec(settings)
    scan = scan_workspace(Path(folder), max_file_bytes=settings.max_file_bytes)
    files = [(f.rel, read_regular_file(Path(folder) / f.rel)) for f in scan.files]

    def one_pass(spent: dict[str, float]) -> int:
        count = 0
        for rel, data in files:
            started = time.process_time()
            _, tree = chunk_file_parsed(
                rel, data, max_chars=spec.max, min_chars=spec.min, overlap_chars=spec.overlap
            )
            spent["chunk_s"] += time.process_time() - started
            if tree is None:
                continue
            started = time.process_time()
            parser_for(grammar_for_path(rel)).parse(data)
            spent["parse_s"] += time.process_time() - started
            started = time.process_time()
            found = extract_rows(rel, data, tree=tree)  # what graph_rows.file_facts runs
            spent["extract_s"] += time.process_time() - started
            if found is not None:
                started = time.process_time()
                encode(found[0], None, found[1])
                spent["encode_s"] += time.process_time() - started
                count += 1
        return count

    started = time.process_time()
    one_pass(dict.fromkeys(PARTS, 0.0))
    first = time.process_time() - started
    spent = dict.fromkeys(PARTS, 0.0)
    with_facts = one_pass(spent)
    return {**spent, "first_pass_s": first, "files": len(files), "with_facts": with_facts}


def worker(arm: str, folder: str) -> dict:
    if arm == "nograph":
        import seek.index.embed_steps
        import seek.index.stages

        seek.index.stages.file_facts = lambda *args: None  # the one switch: no extraction...
        seek.index.embed_steps.usable = lambda files: False  # ...so no graph worker either
    from bench.speed.index_speed import seek_worker

    return seek_worker(folder)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench_dir", help="folder with one checkout per benchmark repo")
    parser.add_argument("--repos", default=",".join(DEFAULT_REPOS))
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    parser.add_argument("--parts", action="store_true", help="split the graph's CPU share")
    parser.add_argument("--memory-runs", type=int, default=1,
                        help="untimed runs per arm: their process tree's PSS")  # fmt: skip
    parser.add_argument("--worker", choices=(*ARMS, "parts"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker == "parts":
        print(json.dumps(parts(args.bench_dir)))
        return 0
    if args.worker:
        print(json.dumps(worker(args.worker, args.bench_dir)))
        return 0
    roots = read_benchmark_roots()
    env = child_env(builtin_model_dir())
    rows = []
    for number, name in enumerate(args.repos.split(",")):
        folder = repo_folder(Path(args.bench_dir), name, roots)
        prewarm(folder)
        samples: dict[str, list[dict]] = {arm: [] for arm in ARMS}
        for run in range(args.runs):
            order = ARMS if (number + run) % 2 == 0 else ARMS[::-1]
            for arm in order:
                command = [sys.executable, "-m", "bench.graph.index_cost", "--worker", arm]
                sample = run_child([*command, str(folder)], env, timeout=1800)
                sample["loadavg_1m"] = os.getloadavg()[0]
                samples[arm].append(sample)
                print(
                    f"{name} {arm}: cold {sample['cold_s']:.2f} s ({sample['cold_cpu_s']:.2f} s "
                    f"CPU), {sample['files']} files, {sample['chunks']} chunks, "
                    f"{sample['peak_rss_mb']:.0f} MB",
                    file=sys.stderr,
                    flush=True,
                )
        tree_pss: dict[str, list[float]] = {arm: [] for arm in ARMS}
        for _ in range(args.memory_runs):
            for arm in ARMS:
                command = [sys.executable, "-m", "bench.graph.index_cost", "--worker", arm]
                _, peak = run_sampling_memory([*command, str(folder)], env, REPO_ROOT, 1800)
                tree_pss[arm].append(peak)
                print(f"{name} {arm}: process tree peak PSS {peak:.0f} MB", file=sys.stderr)
        row = {"repo": name}
        for arm in ARMS:
            row[arm] = {
                "cold_s": statistics.median(s["cold_s"] for s in samples[arm]),
                "cold_cpu_s": statistics.median(s["cold_cpu_s"] for s in samples[arm]),
                "peak_rss_mb": max(s["peak_rss_mb"] for s in samples[arm]),
                "files": samples[arm][-1]["files"],
                "chunks": samples[arm][-1]["chunks"],
                "loadavg_1m": [s["loadavg_1m"] for s in samples[arm]],
            }
            if tree_pss[arm]:
                row[arm]["tree_pss_mb"] = max(tree_pss[arm])
        for key in MEASURES:
            if key in row["graph"]:
                row[f"{key}_ratio"] = row["graph"][key] / row["nograph"][key]
        if args.parts:
            command = [sys.executable, "-m", "bench.graph.index_cost", "--worker", "parts"]
            row["parts"] = run_child([*command, str(folder)], env, timeout=1800)
        rows.append(row)
    summary = {
        f"{key}_ratio_median": statistics.median(r[f"{key}_ratio"] for r in rows)
        for key in MEASURES
        if all(f"{key}_ratio" in r for r in rows)
    }
    result = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "runs": args.runs,
        "rows": rows,
        "summary": summary,
    }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    head = "| repo | files | cold s (graph / none) | ratio | CPU ratio | peak MB (graph / none) |"
    print(head + " ratio | tree PSS MB (graph / none) | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        g, n = r["graph"], r["nograph"]
        pss = (
            f"{g['tree_pss_mb']:.0f} / {n['tree_pss_mb']:.0f} | {r['tree_pss_mb_ratio']:.3f}"
            if "tree_pss_mb_ratio" in r
            else "- | -"
        )
        print(
            f"| {r['repo']} | {g['files']} | {g['cold_s']:.2f} / {n['cold_s']:.2f} | "
            f"{r['cold_s_ratio']:.3f} | {r['cold_cpu_s_ratio']:.3f} | "
            f"{g['peak_rss_mb']:.0f} / {n['peak_rss_mb']:.0f} | {r['peak_rss_mb_ratio']:.3f} | "
            f"{pss} |"
        )
    if args.parts:
        print("\n| repo | files (with facts) | chunk s | parse s (spared) | extract s | encode s "
              "| first pass s |")  # fmt: skip
        print("|---|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            p = r["parts"]
            print(
                f"| {r['repo']} | {p['files']} ({p['with_facts']}) | {p['chunk_s']:.2f} | "
                f"{p['parse_s']:.2f} | {p['extract_s']:.2f} | {p['encode_s']:.2f} | "
                f"{p['first_pass_s']:.2f} |"
            )
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
