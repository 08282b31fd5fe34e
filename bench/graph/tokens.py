"""Tokens an agent spends: seek's tools against grep + read (issue 28, deliver 6).

    .venv/bin/python -m bench.graph.tokens [BENCH_DIR] [--sets spans,own] [--repos a,b]
        [--cap 60000] [--home DIR] [--lookups flask,chi,...] [--sample 200] [--seed 0]
        [--oracle-bin DIR] [--cache DIR] [--no-questions] [--no-lookups]
        [--out bench/results/graph_tokens.json]

**Questions** (``--sets``: the spans dev set and this project's own set, every question):
each is replayed as an agent would answer it, counting the characters of every tool output
until the answer is covered (:mod:`bench.graph.replay`: every relevant target overlaps what
was delivered, judged as ``bench.quality``'s context recall; past ``--cap`` characters it is
not covered).  seek runs in this process through the workspace facade, over an index in
``--home`` (default: a temporary folder), exactly as its MCP tools print:

* ``seek context``: the ``context`` tool once (its prompt text and report line, default
  budget), then the files its blocks come from, read whole, in block order;
* ``seek search``: the ``search`` tool (k=10, twelve lines of each hit shown; a listing,
  which puts no lines in hand), then each hit's lines in rank order, then the hits' files
  read whole in rank order;

and the baseline, grep + read (:mod:`bench.graph.replay`): each question word grepped
(``grep -rniwI``, counted as ``rg -ciw`` prints it, or with every matching line), files read
whole by how many words they match.

**Lookups** ("where is X defined", "who uses X"; ``--lookups``): the definitions
``bench.graph.oracle`` samples (same seed, same oracles, read from its cache), each asked
of seek's ``defs NAME`` and ``refs NAME`` tools (MCP defaults: 20 and 50 rows; text as the
tool prints it) and of ``grep -rnw NAME``: characters of output, reference precision and
recall against the oracle at line granularity (declaration lines left out, as the oracle
harness does), and whether the first line answered is the definition.  ``refs PATH:LINE``
(the definition's site, what an agent asks after ``defs``) is measured too, at the tool's
default limit and with no row limit.  These are the tools as shipped (the graph stored with
the index), where ``bench.graph.oracle`` measures ``seek.graph.build_graph`` in memory.

Writes the JSON (``--out``) and prints the markdown tables (bench/README.md, "Tokens an
agent spends").
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import (
    REPO_ROOT,
    REPOS_JSON,
    SPANS,
    SPANS_OWN,
    BenchSet,
    add_bench_dir,
    bench_settings,
    log,
    resolve_bench_dir,
    shown,
)
from bench.graph.replay import (
    CHARS_PER_TOKEN,
    DEFAULT_CAP,
    Files,
    Replay,
    grep_and_read,
    grep_word,
    question_words,
)
from bench.quality.scoring import Hit, load_annotations

DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "graph_tokens.json"
SETS = {"spans": SPANS, "own": SPANS_OWN}
ARMS = ("seek context", "seek search", "grep counts + read", "grep lines + read")
BASELINE = "grep counts + read"
SEARCH_K = 10
DEF_LIMIT, REFS_LIMIT = 20, 50  # the MCP tools' defaults


# -- seek's arms ----------------------------------------------------------------------------


def seek_context(workspaces: Any, folder: Path, question: str, replay: Replay, files: Files):
    """The ``context`` tool once, then its blocks' files read whole."""
    from seek.untrusted import printable_text

    result = workspaces.context(folder, question)
    body = result.prompt() or "No code scored above the threshold."
    text = printable_text(f"{body}\n\n{result.context_line()}")  # as the MCP tool returns it
    code = [b for b in result.blocks if b.kind != "team"]
    if replay.deliver("context", len(text), [Hit(b.path, b.start + 1, b.end + 1) for b in code]):
        return
    for path in dict.fromkeys(b.path for b in code):
        if replay.deliver(f"read {path}", *files.whole(path)):
            return


def seek_search(workspaces: Any, folder: Path, question: str, replay: Replay, files: Files):
    """The ``search`` tool, then each hit's lines, then the hits' files read whole."""
    from seek.mcp import format_hits

    result = workspaces.search(folder, question, SEARCH_K)
    if replay.deliver("search", len(format_hits(result)), ()):  # a listing: see replay
        return
    for h in result.hits:
        if replay.deliver(f"lines {h.path}", *files.lines(h.path, h.start_line, h.end_line)):
            return
    for path in dict.fromkeys(h.path for h in result.hits):
        if replay.deliver(f"read {path}", *files.whole(path)):
            return


# -- the questions ----------------------------------------------------------------------------


def run_questions(
    bench_dir: Path, set_name: str, names: Sequence[str] | None, home: Path, cap: int
) -> list[dict]:
    from seek import index_workspace
    from seek.workspace import Workspaces

    bench_set = BenchSet(SETS[set_name])
    settings = bench_settings(home)
    out = []
    for name, spec in bench_set.specs().items():
        if names and name not in names:
            continue
        folder = bench_dir / name / (spec.get("benchmark_root") or "")
        annotations = bench_set.annotations / f"{name}.json"
        if not folder.is_dir() or not annotations.is_file():
            log(f"{set_name}/{name}: no checkout or annotations; skipped")
            continue
        started = time.perf_counter()
        index_workspace(folder, settings)
        workspaces = Workspaces(settings=settings)
        files = Files(folder)
        for query in load_annotations(annotations):
            words = question_words(query.query)
            greps = [grep_word(folder, w) for w in words]
            arms = {}
            for arm, play in (("seek context", seek_context), ("seek search", seek_search)):
                replay = Replay(query.relevant, cap)
                play(workspaces, folder, query.query, replay, files)
                arms[arm] = replay.summary()
            for arm, mode in (("grep counts + read", "counts"), ("grep lines + read", "lines")):
                replay = grep_and_read(folder, query.relevant, words, mode, cap, files, greps)
                arms[arm] = replay.summary()
            out.append(
                {"set": set_name, "repo": name, "query": query.query, "words": words, **arms}
            )
        log(f"{set_name}/{name}: {time.perf_counter() - started:.0f} s")
    return out


def _stats(values: Sequence[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "mean": statistics.fmean(values)}


def summarise_questions(rows: Sequence[dict], cap: int) -> dict:
    """Per set, pooled (``all``) and per repository (``set/repo``): covered share and
    characters per question for every arm (a question not covered counts what it spent, at
    most the cap), and each arm's ratio to the baseline."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        groups[row["set"]].append(row)
        groups["all"].append(row)
    for row in rows:  # after the sets, so the table's rows come first
        groups[f"{row['set']}/{row['repo']}"].append(row)
    out = {}
    for group, members in groups.items():
        entry: dict[str, Any] = {"questions": len(members)}
        for arm in ARMS:
            chars = [m[arm]["chars"] for m in members]
            entry[arm] = {
                "covered": round(statistics.fmean(m[arm]["covered"] for m in members), 4),
                "covered_by_first_call": round(
                    statistics.fmean(m[arm]["covered"] and m[arm]["calls"] == 1 for m in members),
                    4,
                ),
                "chars": {k: round(v) for k, v in _stats(chars).items()},
                "covered_chars_median": statistics.median(
                    [m[arm]["chars"] for m in members if m[arm]["covered"]] or [0]
                ),
            }
        base = entry[BASELINE]["chars"]
        for arm in ARMS:
            own = entry[arm]["chars"]
            entry[arm]["ratio_to_baseline"] = {
                k: round(own[k] / base[k], 3) if base[k] else None for k in ("median", "mean")
            }
        out[group] = entry
    return out


def questions_table(summary: dict, cap: int) -> str:
    head = (
        "| set | questions | arm | covered | median chars (tokens) | mean chars (tokens) "
        "| mean vs baseline | median chars, covered only |"
    )
    lines = [head, "|---|--:|---|--:|--:|--:|--:|--:|"]
    groups = [g for g in summary if g != "all" and "/" not in g] + ["all"]  # repos: JSON only
    for group in groups:
        entry = summary[group]
        for arm in ARMS:
            a = entry[arm]
            med, mean = a["chars"]["median"], a["chars"]["mean"]
            lines.append(
                f"| {group} | {entry['questions']} | {arm} | {a['covered']:.2f} "
                f"| {med:,} ({med // CHARS_PER_TOKEN:,}) | {mean:,} ({mean // CHARS_PER_TOKEN:,}) "
                f"| {a['ratio_to_baseline']['mean']:.2f}x | {a['covered_chars_median']:,.0f} |"
            )
    lines.append(f"\nNot covered within {cap:,} characters: counted at what it spent (<= cap).")
    return "\n".join(lines)


# -- the lookups ----------------------------------------------------------------------------


def oracle_sample(folder: Path, oracle: dict, sample: int, seed: int):
    """``bench.graph.oracle.score_repo``'s sample: the graph's definitions the oracle has at
    the same name position, drawn with the same seed; with each name's definition lines."""
    from bench.graph.oracle import match_definitions, workspace_files
    from seek.graph import build_graph

    matched, def_lines = match_definitions(build_graph(workspace_files(folder)), oracle)
    rng = random.Random(seed)
    return rng.sample(matched, min(sample, len(matched))), def_lines


def grep_name(folder: Path, name: str) -> tuple[list[tuple[str, int]], int]:
    """``grep -rnw NAME`` as the oracle harness runs it: matching lines in order, chars."""
    from bench.graph.oracle import grep_run

    hits, output = grep_run(folder, name)
    return hits, len(output.decode("utf-8", "replace"))


def _ask(method, *args):
    from seek.errors import SeekError

    try:
        result = method(*args)
    except SeekError as exc:  # a name the tool refuses: the agent got a one-line error
        return [], len(str(exc))
    return result.rows, len(result.to_text())


def score_lookups(name: str, folder: Path, oracle: dict, sample: int, seed: int, home: Path):
    from seek import index_workspace
    from seek.workspace import Workspaces
    from seek.workspace.code_graph import MAX_ROWS

    chosen, def_lines = oracle_sample(folder, oracle, sample, seed)
    settings = bench_settings(home)
    index_workspace(folder, settings)
    ws = Workspaces(settings=settings)
    t: dict[str, float] = defaultdict(float)
    for d, symbol, name_line in chosen:
        entry = oracle[symbol]
        decl = {(p, ln) for p, ln, _ in entry["defs"]} | {(d.path, name_line)} | def_lines[d.name]
        truth = {(p, ln) for p, ln, _ in entry["refs"]} - decl

        def is_def(path, line, end_line=None, column=None, sites=entry["defs"]):
            if column is None:  # a grep line: the oracle's definition line
                return any((path, line) == (p, ln) for p, ln, _ in sites)
            return any((path, n, column) in sites for n in range(line, end_line + 1))

        t["questions"] += 1
        started = time.perf_counter()
        rows, chars = _ask(ws.defs, folder, d.name, DEF_LIMIT)
        t["defs_s"] += time.perf_counter() - started
        t["def_chars"] += chars
        t["def_top1"] += bool(rows) and is_def(
            rows[0]["path"], rows[0]["line"], rows[0]["end_line"], rows[0]["column"] - 1
        )
        t["def_found"] += any(
            is_def(r["path"], r["line"], r["end_line"], r["column"] - 1) for r in rows
        )
        grep, grep_chars = grep_name(folder, d.name)
        t["grep_chars"] += grep_chars
        t["grep_top1"] += bool(grep) and is_def(*grep[0])
        t["grep_found"] += any(is_def(*g) for g in grep)
        grep_set = set(grep) - decl
        t["truth"] += len(truth)
        t["grep"] += len(grep_set)
        t["grep_tp"] += len(grep_set & truth)
        site = f"{d.path}:{d.line}"
        for key, target, limit in (
            ("refs", d.name, REFS_LIMIT),
            ("refs_at", site, REFS_LIMIT),
            ("refs_at_all", site, MAX_ROWS),  # no row limit: what the limit costs in recall
        ):
            started = time.perf_counter()
            rows, chars = _ask(ws.refs, folder, target, limit)
            seconds = time.perf_counter() - started
            t[f"{key}_s"] += seconds
            t[f"{key}_max_s"] = max(t[f"{key}_max_s"], seconds)
            ours = {(r["path"], r["line"]) for r in rows} - decl
            t[f"{key}_chars"] += chars
            t[key] += len(ours)
            t[f"{key}_tp"] += len(ours & truth)
    return _summary(name, t)


def _summary(name: str, t: dict[str, float]) -> dict:
    """One row of the lookups table from its summed counts."""
    div = lambda a, b: round(a / b, 4) if b else None  # noqa: E731
    return {
        "repo": name,
        "questions": int(t["questions"]),
        "def_top1": div(t["def_top1"], t["questions"]),
        "def_found": div(t["def_found"], t["questions"]),
        "grep_first_line_is_def": div(t["grep_top1"], t["questions"]),
        "refs_precision": div(t["refs_tp"], t["refs"]),
        "refs_recall": div(t["refs_tp"], t["truth"]),
        "refs_at_precision": div(t["refs_at_tp"], t["refs_at"]),
        "refs_at_recall": div(t["refs_at_tp"], t["truth"]),
        "refs_at_all_precision": div(t["refs_at_all_tp"], t["refs_at_all"]),
        "refs_at_all_recall": div(t["refs_at_all_tp"], t["truth"]),
        "grep_precision": div(t["grep_tp"], t["grep"]),
        "grep_recall": div(t["grep_tp"], t["truth"]),
        "chars_per_question": {
            "defs": div(t["def_chars"], t["questions"]),
            "refs": div(t["refs_chars"], t["questions"]),
            "refs_at": div(t["refs_at_chars"], t["questions"]),
            "refs_at_all": div(t["refs_at_all_chars"], t["questions"]),
            "grep": div(t["grep_chars"], t["questions"]),
        },
        "ms_per_call": {
            "defs": div(1000 * t["defs_s"], t["questions"]),
            "refs": div(1000 * t["refs_s"], t["questions"]),
            "refs_at": div(1000 * t["refs_at_s"], t["questions"]),
            "refs_max": round(1000 * t["refs_max_s"]),
        },
        "counts": {k: round(v, 3) if k.endswith("_s") else int(v) for k, v in t.items()},
    }


def total_lookups(rows: Sequence[dict]) -> dict:
    """The repositories' counts summed (micro averages)."""
    t: dict[str, float] = defaultdict(float)
    for row in rows:
        for k, v in row["counts"].items():
            t[k] = max(t[k], v) if k.endswith("_max_s") else t[k] + v
    return _summary("all (micro)", t)


def _f(value: float | None, spec: str = ".2f") -> str:
    return "-" if value is None else format(value, spec)


def lookups_table(rows: Sequence[dict]) -> str:
    lines = [
        "| repository | n | defs top-1 | grep line 1 is def | refs P / R | refs PATH:LINE P / R "
        "| (no row limit) | grep -rnw P / R | chars: defs / refs / refs PATH:LINE / grep |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in rows:
        c = r["chars_per_question"]
        lines.append(
            f"| {r['repo']} | {r['questions']} | {_f(r['def_top1'])} "
            f"| {_f(r['grep_first_line_is_def'])} "
            f"| {_f(r['refs_precision'])} / {_f(r['refs_recall'])} "
            f"| {_f(r['refs_at_precision'])} / {_f(r['refs_at_recall'])} "
            f"| {_f(r['refs_at_all_precision'])} / {_f(r['refs_at_all_recall'])} "
            f"| {_f(r['grep_precision'])} / {_f(r['grep_recall'])} "
            f"| {_f(c['defs'], ',.0f')} / {_f(c['refs'], ',.0f')} / {_f(c['refs_at'], ',.0f')} "
            f"/ {_f(c['grep'], ',.0f')} |"
        )
    return "\n".join(lines)


def run_lookups(bench_dir: Path, names: Sequence[str], args, home: Path) -> list[dict]:
    from bench.graph.oracle import (
        _fingerprint,
        cached_oracle,
        go_oracle,
        scip_oracle,
        workspace_files,
    )

    specs = {r["name"]: r for r in json.loads(REPOS_JSON.read_text())}
    rows = []
    for name in names:
        spec = specs.get(name)
        if spec is None:
            log(f"lookups/{name}: not in {REPOS_JSON.name}; skipped")
            continue
        language = spec["language"]
        # the folder bench.graph.oracle scores: a Go module's root (go.mod is there)
        folder = bench_dir / name
        if language != "go":
            folder = folder / (spec.get("benchmark_root") or "")
        if not folder.is_dir():
            log(f"lookups/{name}: no checkout at {folder}; skipped")
            continue
        key = f"{name}-{language}-{_fingerprint(workspace_files(folder))}"

        def compute(folder=folder, language=language):
            if language == "go":
                return go_oracle(args.oracle_bin, folder)
            with tempfile.TemporaryDirectory() as tmp:
                return scip_oracle(args.oracle_bin, folder, language, Path(tmp) / "i.scip")

        try:
            oracle = cached_oracle(args.cache, key, compute)
        except (RuntimeError, OSError) as exc:
            log(f"lookups/{name}: no oracle ({exc}); skipped")
            continue
        started = time.perf_counter()
        row = score_lookups(name, folder, oracle, args.sample, args.seed, home)
        row["language"] = language
        rows.append(row)
        log(f"lookups/{name}: {time.perf_counter() - started:.0f} s")
    return rows


# -- the program ----------------------------------------------------------------------------


def _shown_arg(arg: str, bench_dir: Path) -> str:
    if "/" not in arg:
        return arg
    path = Path(arg).expanduser()
    return "$BENCH_DIR" if path.resolve() == bench_dir.resolve() else shown(path, bench_dir)


def main(argv: list[str] | None = None) -> int:
    from bench.graph.oracle import DEFAULT_CACHE, DEFAULT_REPOS

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_bench_dir(parser)
    parser.add_argument("--sets", default="spans,own", help="question sets: spans, own")
    parser.add_argument("--repos", default="", help="only these repositories of the sets")
    parser.add_argument("--cap", type=int, default=DEFAULT_CAP, help="characters per question")
    parser.add_argument("--home", type=Path, help="seek's index home (default: a temp folder)")
    parser.add_argument("--lookups", default=DEFAULT_REPOS, help="oracle repositories")
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--oracle-bin", type=Path, default=Path.home() / "oracle" / "bin")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--no-questions", action="store_true")
    parser.add_argument("--no-lookups", action="store_true")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    bench_dir = resolve_bench_dir(parser, args.bench_dir)
    unknown = [s for s in args.sets.split(",") if s not in SETS]
    if unknown:
        parser.error(f"unknown set {unknown[0]!r}: choose from {', '.join(SETS)}")
    with tempfile.TemporaryDirectory(prefix="seek-tokens-") as tmp:
        home = args.home or Path(tmp)
        given = sys.argv[1:] if argv is None else argv
        report: dict[str, Any] = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            # as run, with no machine's folders in it (bench.common.shown)
            "command": "python -m bench.graph.tokens "
            + " ".join(_shown_arg(a, bench_dir) for a in given),
            "cap": args.cap,
            "chars_per_token": CHARS_PER_TOKEN,
            "baseline": BASELINE,
        }
        if not args.no_questions:
            repos = [r for r in args.repos.split(",") if r] or None
            rows = []
            for set_name in args.sets.split(","):
                rows += run_questions(bench_dir, set_name, repos, home, args.cap)
            report["questions_summary"] = summarise_questions(rows, args.cap)
            report["questions"] = rows
            print(questions_table(report["questions_summary"], args.cap))
        if not args.no_lookups:
            rows = run_lookups(bench_dir, args.lookups.split(","), args, home)
            report["lookups"] = rows + [total_lookups(rows)] if rows else []
            print(lookups_table(report["lookups"]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
