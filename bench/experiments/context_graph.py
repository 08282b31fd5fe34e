"""`seek context` with the code graph (issue 28, deliver 5): the variants tried, measured and
not shipped (MODELS.md, "seek context: recall against noise"; docs/research/models-rounds.md,
"The code graph in seek context").

    python -m bench.experiments.context_graph BENCH_DIR [--sets spans,own,semble] [--home DIR]
        [--out FILE]

For every question of each set: one search (``k = rerank_top``, as ``seek context`` does) and
``build_context`` at the default settings but without the character budget, so that each
variant packs the same blocks (code, then imports) into the budget the way ``build_context``
does (skip a block that does not fit, keep going). The graph is the one stored with the index
(:func:`seek.workspace.code_graph.load_graph`, read once per repository and timed). Variants:

* ``base``: today's ``seek context``.
* ``callees``: the functions the best code block calls (calls binding to one definition)
  that the packed blocks do not show, the question's words first, then in the order of the
  first call; at most ``CTX_CALLEES`` (2), each cut to ``CTX_CALLEE_CHARS`` (1,500), placed
  right after that block (so the weakest blocks give way). ``callees-same``: only those in
  the block's own file.
* ``follow``: the definitions (functions, methods, types) that uses inside the three best code
  blocks bind to (uses that can mean at most two definitions) in *other* files, ordered by how
  many of those blocks use them, then by the question words they share (name and first doc
  line, light stemming), then by uses; at most three, each its definition's span cut to
  ``widen_chars``, added after the blocks while the budget remains. ``follow+same`` also takes
  definitions in the blocks' own files; ``follow-early`` places them before the first code
  block scoring under 0.05 instead of after the blocks.
* ``shared-state``: the functions elsewhere that use the fields and constants the best block
  uses (an option set in one place and read by the parser in another), most shared first.
* ``callers``: the functions that call the three best blocks' definitions and share a word
  with the question.
* ``signatures``: one line (``path:line: signature``) for each definition the three best
  blocks call that no block shows (unique binding), at most 10, as one block after the
  others when it fits.
* ``map``: the personalised repository map (``CodeGraph.ranked`` personalised by the
  question's words and the blocks' files), 256 tokens, definitions no block shows.
* ``base@20k`` / ``follow@20k``: the same with a 20,000-character budget (the reach of the
  mechanism when characters are not the limit).

A question is recalled as in :mod:`bench.quality.context_recall`. The signature and map blocks
name many places in one block, so they never cover a target; ``lenient`` counts a question
recalled when each missing target's span holds one of their lines (a pointer, not the lines).
``graph ms``: the variant's own work per question (median; the graph already loaded).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import DEFAULT_HOME, SEMBLE_SET, SPANS, SPANS_OWN, BenchSet, bench_settings, log
from bench.quality.context_recall import judge
from bench.quality.quality import load_repos

SETS = {"spans": BenchSet(SPANS), "own": BenchSet(SPANS_OWN), "semble": SEMBLE_SET}
FUNCTIONS = frozenset({"function", "method", "constructor", "macro"})
TYPES = frozenset({"class", "interface", "type", "struct", "trait", "enum", "module"})
STATE = frozenset({"field", "variable", "constant"})
SEEDS = 3
MAX_ADDED = 3
MAX_CANDIDATES = 2
EARLY_BELOW = 0.05
SIGNATURE_LINES = 10
MAP_TOKENS = 256
WIDE_BUDGET = 20_000
CALLEES = int(os.environ.get("CTX_CALLEES", "2"))
CALLEE_CHARS = int(os.environ.get("CTX_CALLEE_CHARS", "1500"))


def words(text: str) -> set[str]:
    """Lower-cased words of identifiers and prose, lightly stemmed (``pushed`` -> ``push``)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    out = set()
    for word in re.split(r"[^A-Za-z0-9]+", spaced.lower()):
        if len(word) <= 2:
            continue
        for suffix in ("ing", "ed", "es", "s"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                break
        out.add(word)
    return out


def _inside(block, line: int) -> bool:
    return block.start + 1 <= line <= block.end + 1


def _shown(blocks, path: str, first: int, last: int) -> bool:
    return any(b.path == path and not (b.end + 1 < first or b.start + 1 > last) for b in blocks)


def _seed_uses(graph, seeds):
    """(seed index, reference, definitions it binds to) for the uses inside the seed blocks."""
    for i, block in enumerate(seeds):
        facts = graph.files.get(block.path)
        for ref in facts.references if facts is not None else ():
            if not _inside(block, ref.line):
                continue
            found = graph.candidates(ref)
            if found and len(found) <= MAX_CANDIDATES:
                yield i, ref, found


def follow(graph, blocks, question: str, same_file: bool) -> list:
    """Definitions the best blocks' uses bind to, best first (see the module docstring)."""
    seeds = [b for b in blocks if b.kind == "code"][:SEEDS]
    asked = words(question)
    users: dict[Any, set[int]] = {}
    uses: dict[Any, int] = {}
    for i, _, found in _seed_uses(graph, seeds):
        for d in found:
            if d.kind not in FUNCTIONS | TYPES or (not same_file and d.path == seeds[i].path):
                continue
            users.setdefault(d, set()).add(i)
            uses[d] = uses.get(d, 0) + 1
    return sorted(
        users,
        key=lambda d: (
            -len(users[d]),
            -len(asked & (words(d.name) | words(d.doc))),
            -uses[d],
            d.path,
            d.line,
        ),
    )


def top_callees(graph, blocks, question: str, same_file: bool) -> list:
    """The functions the best code block calls (uses that are calls binding to one
    definition), question words first, then in the order of the first call (those already
    shown are left out by :func:`definition_blocks`)."""
    seeds = [b for b in blocks if b.kind == "code"][:1]
    asked = words(question)
    order: dict[Any, int] = {}
    for _, ref, found in _seed_uses(graph, seeds):
        d = found[0]
        if not ref.call or len(found) != 1 or d.kind not in FUNCTIONS:
            continue
        if same_file and d.path != seeds[0].path:
            continue
        order.setdefault(d, len(order))
    return sorted(order, key=lambda d: (-len(asked & (words(d.name) | words(d.doc))), order[d]))


def _function_of(graph, ref):
    """The function or method a use sits in (climbing out of nested fields and lambdas)."""
    owner = graph.by_key.get((ref.path, ref.enclosing)) if ref.enclosing else None
    while owner is not None and owner.kind not in FUNCTIONS and owner.container:
        owner = graph.by_key.get((owner.path, owner.container))
    return owner if owner is not None and owner.kind in FUNCTIONS else None


def shared_state(graph, blocks, question: str) -> list:
    seeds = [b for b in blocks if b.kind == "code"][:1]
    state = {d for _, _, found in _seed_uses(graph, seeds) for d in found if d.kind in STATE}
    asked = words(question)
    users: dict[Any, set] = {}
    for d in state:
        for ref in graph.uses(d):
            owner = _function_of(graph, ref)
            if owner is not None and not _shown(seeds, owner.path, owner.line, owner.end_line):
                users.setdefault(owner, set()).add(d)
    return sorted(
        users,
        key=lambda u: (-len(users[u]), -len(asked & words(u.name)), u.path, u.line),
    )


def callers(graph, blocks, question: str) -> list:
    seeds = [b for b in blocks if b.kind == "code"][:SEEDS]
    asked = words(question)
    own = {
        d
        for b in seeds
        if (facts := graph.files.get(b.path)) is not None
        for d in facts.definitions
        if _inside(b, d.line) and d.kind in FUNCTIONS | TYPES
    }
    found: dict[Any, int] = {}
    for d in own:
        for ref in graph.uses(d):
            owner = _function_of(graph, ref)
            if owner is None or _shown(seeds, owner.path, owner.line, owner.end_line):
                continue
            if asked & (words(owner.name) | words(owner.doc)):
                found[owner] = found.get(owner, 0) + 1
    return sorted(found, key=lambda u: (-found[u], u.path, u.line))


def definition_blocks(root: Path, definitions, shown, max_chars: int) -> list:
    """Up to :data:`MAX_ADDED` blocks, each a definition's span cut to ``max_chars``."""
    from seek.retrieve import context as ctx

    files: dict[str, Any] = {}
    out: list = []
    for d in definitions:
        if len(out) == MAX_ADDED:
            break
        if _shown([*shown, *out], d.path, d.line, d.end_line):
            continue
        if d.path not in files:
            try:
                files[d.path] = ctx._read(root, d.path)
            except ctx._Escaped:
                files[d.path] = None
        file = files[d.path]
        if file is None or d.line > len(file.lines):
            continue
        first, last = d.line - 1, min(d.end_line, len(file.lines)) - 1
        while last > first and file.sizes.chars(first, last) > max_chars:
            last -= 1
        content = "\n".join(file.lines[first : last + 1])
        out.append(ctx.Block(d.path, first, last, content, 0.0, "code"))
    return out


def signatures(graph, blocks) -> list:
    seeds = [b for b in blocks if b.kind == "code"][:SEEDS]
    out: dict[Any, None] = {}
    for _, ref, found in _seed_uses(graph, seeds):
        d = found[0]
        if ref.call and len(found) == 1 and not _shown(blocks, d.path, d.line, d.line):
            out[d] = None
    return list(out)[:SIGNATURE_LINES]


def repo_map(graph, blocks, question: str) -> tuple[str, list[tuple[str, int]]]:
    from seek.graph.lookup import TEST_PATH
    from seek.graph.rank import render_map

    seeds = tuple(dict.fromkeys(b.path for b in blocks if b.kind == "code"))
    ranked = [
        (score, d)
        for score, d in graph.ranked(question, seeds)
        if d.kind != "field"
        and not TEST_PATH.search(d.path)
        and not _shown(blocks, d.path, d.line, d.line)
    ]
    text = render_map(ranked, MAP_TOKENS)
    lines, path = [], ""
    for row in text.split("\n"):
        if row.startswith("  ") and row.strip().partition(":")[0].isdigit():
            lines.append((path, int(row.strip().partition(":")[0])))
        elif row.endswith(":"):
            path = row[:-1]
    return text, lines


def pack(blocks, budget: int) -> list:
    """``build_context``'s budget rule: skip a block that does not fit, keep going."""
    kept, left = [], budget
    for block in blocks:
        if len(block.content) <= left:
            kept.append(block)
            left -= len(block.content)
    return kept


@dataclass
class Outcome:
    blocks: list
    pointers: list[tuple[str, int]]  # lines a signature or map block names
    extra_chars: int  # characters of such a block
    ms: float


def variant(name: str, root: Path, everything: list, graph, question: str, settings) -> Outcome:
    """One variant's blocks for a question (``everything``: the code and imports blocks of
    ``build_context`` without the budget, in its order)."""
    budget = WIDE_BUDGET if name.endswith("@20k") else settings.prompt_budget_chars
    started = time.perf_counter()
    if name.startswith("base") or graph is None:  # no graph stored: what seek does today
        return Outcome(pack(everything, budget), [], 0, 0.0)
    code = [b for b in everything if b.kind == "code"]
    rest = [b for b in everything if b.kind != "code"]
    if name in ("signatures", "map"):
        kept = pack(everything, budget)
        if name == "signatures":
            found = signatures(graph, kept)
            text = "\n".join(f"{d.path}:{d.line}: {d.signature or d.name}" for d in found)
            pointers = [(d.path, d.line) for d in found]
        else:
            text, pointers = repo_map(graph, kept, question)
        ms = (time.perf_counter() - started) * 1000.0
        if not text or len(text) > budget - sum(len(b.content) for b in kept):
            return Outcome(kept, [], 0, ms)
        return Outcome(kept, pointers, len(text), ms)
    if name.startswith("callees"):
        kept = pack(everything, budget)
        found = top_callees(graph, kept, question, same_file=name == "callees-same")
        added = definition_blocks(root, found, kept, CALLEE_CHARS)[:CALLEES]
        ms = (time.perf_counter() - started) * 1000.0
        # the added blocks replace the same part of the file further down, if any
        later = [b for b in code[1:] if not _shown(added, b.path, b.start + 1, b.end + 1)]
        order = code[:1] + added + later + rest
        return Outcome(pack(order, budget), [], 0, ms)
    if name.startswith("follow"):
        found = follow(graph, everything, question, same_file=name == "follow+same")
    elif name == "shared-state":
        found = shared_state(graph, everything, question)
    else:
        found = callers(graph, everything, question)
    added = definition_blocks(root, found, everything, settings.widen_chars)
    ms = (time.perf_counter() - started) * 1000.0
    if name == "follow-early":
        cut = next((i for i, b in enumerate(code) if b.score < EARLY_BELOW), len(code))
        order = code[:cut] + added + code[cut:] + rest
    else:
        order = everything + added
    return Outcome(pack(order, budget), [], 0, ms)


VARIANTS = (
    "base",
    "callees",
    "callees-same",
    "follow",
    "follow+same",
    "follow-early",
    "shared-state",
    "callers",
    "signatures",
    "map",
    "base@20k",
    "follow@20k",
)


def run_set(name: str, bench_dir: Path, home: Path) -> dict[str, Any]:
    from seek import index_workspace
    from seek.retrieve import Searcher
    from seek.retrieve.context import Block, build_context
    from seek.store import index_dir_for
    from seek.workspace.code_graph import load_graph

    bench_set = SETS[name]
    repos, _ = load_repos(bench_dir, bench_set.default_names(), bench_set)
    settings = bench_settings(home)
    judged: dict[str, list[dict]] = {v: [] for v in VARIANTS}
    loads: list[float] = []
    for repo in repos:
        index_workspace(repo.folder, settings)
        searcher = Searcher.open(repo.folder, settings)
        started = time.perf_counter()
        graph, _ = load_graph(index_dir_for(repo.folder, settings))
        loads.append((time.perf_counter() - started) * 1000.0)
        for query in repo.queries:
            result = searcher.search(query.query, k=settings.rerank_top)
            whole = build_context(repo.folder, result, settings, budget=10**9)
            everything = [b for b in whole.blocks if b.kind != "team"]
            for v in VARIANTS:
                out = variant(v, repo.folder, everything, graph, query.query, settings)
                entry = judge(query, out.blocks)
                entry["chars"] += out.extra_chars
                pointed = [Block(p, line - 1, line - 1, "", 0.0) for p, line in out.pointers]
                entry["lenient"] = judge(query, [*out.blocks, *pointed])["recalled"]
                entry["ms"] = out.ms
                entry["repo"] = repo.name
                entry["query"] = query.query
                judged[v].append(entry)
        log(f"{name}: {repo.name} done (graph read {loads[-1]:.0f} ms)")
    rows = {}
    for v, entries in judged.items():
        rows[v] = {
            "questions": len(entries),
            "recalled": sum(e["recalled"] for e in entries),
            "recall": statistics.fmean(e["recalled"] for e in entries),
            "lenient": statistics.fmean(e["lenient"] for e in entries),
            "chars": statistics.fmean(e["chars"] for e in entries),
            "blocks": statistics.fmean(e["blocks"] for e in entries),
            "graph_ms": statistics.median(e["ms"] for e in entries),
        }
    base = [e["recalled"] for e in judged["base"]]
    changed = {
        v: [
            ("+" if e["recalled"] else "-") + f" {e['repo']}: {e['query'][:70]}"
            for i, e in enumerate(entries)
            if e["recalled"] != base[i]
        ]
        for v, entries in judged.items()
        if v != "base"
    }
    return {
        "rows": rows,
        "changed": changed,
        "graph_read_ms_median": statistics.median(loads),
        "graph_read_ms_max": max(loads),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.experiments.context_graph", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("bench_dir", type=Path)
    parser.add_argument("--sets", default="spans,own,semble")
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME)
    parser.add_argument("--out", type=Path, default=Path("/tmp/seek-context-graph.json"))
    args = parser.parse_args(argv)
    results = {}
    for name in args.sets.split(","):
        results[name] = found = run_set(name, args.bench_dir.expanduser(), args.home.expanduser())
        print(f"\n{name}: graph read (whole graph) median {found['graph_read_ms_median']:.0f} ms,"
              f" slowest {found['graph_read_ms_max']:.0f} ms")  # fmt: skip
        print("| variant | recalled | recall | lenient | chars / q | blocks / q | graph ms |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for v, r in found["rows"].items():
            print(
                f"| {v} | {r['recalled']}/{r['questions']} | {r['recall']:.3f} | "
                f"{r['lenient']:.3f} | {r['chars']:,.0f} | {r['blocks']:.1f} | "
                f"{r['graph_ms']:.1f} |"
            )
        for v, lines in found["changed"].items():
            for line in lines:
                print(f"  {v}: {line}")
        args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
