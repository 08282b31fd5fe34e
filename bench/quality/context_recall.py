"""Context recall: does ``seek context`` hand the chat model the lines that answer?

Issue 13's measure, used by ``bench.quality``: for each question, the blocks that
``seek context`` builds at its default settings (``search(question, k=rerank_top)`` then
``build_context``, exactly as :func:`seek.retrieve.context` does) are judged against the
question's **relevant** targets (secondary ones are nice to have, not required). A target is
covered when a code block of its file overlaps its span (a whole-file target: any block of the
file). The question is recalled when every relevant target is covered.

Per question the JSON keeps the blocks (path, lines, score), their characters, each target's
coverage and the context stage's time; per repository and overall: recall (share of
questions), target recall, mean blocks and characters per question, and the median time of
the context stage (``build_context`` alone, the search excluded).
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.quality.scoring import Hit, Query, covers, percentile


def judge(query: Query, blocks: Sequence[Any]) -> dict[str, Any]:
    """Coverage of the question's relevant targets by context blocks (``path``, 0-based
    ``start``/``end``, ``content``, ``score``, ``kind``; team blocks are not local code)."""
    code = [b for b in blocks if getattr(b, "kind", "code") != "team"]
    hits = [Hit(b.path, b.start + 1, b.end + 1) for b in code]
    targets = []
    for target in query.relevant:
        covered = any(covers(hit, target) for hit in hits)
        file_found = any(covers(hit, target, use_spans=False) for hit in hits)
        label = target.path
        if target.has_span:
            label += f":{target.start_line}-{target.end_line}"
        targets.append({"target": label, "covered": covered, "file_in_context": file_found})
    return {
        "recalled": bool(targets) and all(t["covered"] for t in targets),
        "targets": targets,
        "blocks": len(code),
        "chars": sum(len(b.content) for b in code),
        "block_list": [
            [b.path, b.start + 1, b.end + 1, round(float(b.score), 4), b.kind] for b in code
        ],
    }


def run_context(
    searcher: Any,
    root: Path,
    settings: Any,
    query: Query,
    *,
    threshold: float | None = None,
    snippets: int | None = None,
    budget: int | None = None,
) -> dict[str, Any]:
    """One question through ``seek context``'s pipeline on an open searcher, judged."""
    from seek.retrieve.context import build_context

    result = searcher.search(query.query, k=settings.rerank_top)
    started = time.perf_counter()
    context = build_context(
        root, result, settings, threshold=threshold, snippets=snippets, budget=budget
    )
    stage_ms = (time.perf_counter() - started) * 1000.0
    entry = {"query": query.query, **judge(query, context.blocks)}
    entry["context_ms"] = stage_ms
    entry["near_misses"] = [[b.path, b.start + 1, b.end + 1] for b in context.near_misses]
    return entry


def summarise(per_query: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Recall and noise over some questions."""
    if not per_query:
        return {"questions": 0}
    targets = [t for q in per_query for t in q["targets"]]
    times = [q["context_ms"] for q in per_query if "context_ms" in q]
    return {
        "questions": len(per_query),
        "recalled": sum(1 for q in per_query if q["recalled"]),
        "recall": statistics.fmean(1.0 if q["recalled"] else 0.0 for q in per_query),
        "target_recall": statistics.fmean(1.0 if t["covered"] else 0.0 for t in targets)
        if targets
        else None,
        "file_recall": statistics.fmean(1.0 if t["file_in_context"] else 0.0 for t in targets)
        if targets
        else None,
        "mean_blocks": statistics.fmean(q["blocks"] for q in per_query),
        "mean_chars": statistics.fmean(q["chars"] for q in per_query),
        "max_chars": max(q["chars"] for q in per_query),
        "median_context_ms": statistics.median(times) if times else None,
        "p95_context_ms": percentile(times, 95) if times else None,
    }


def overall(repos: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Pooled over every question of every repository (the issue's 39/60), plus the mean of
    the per-repository recalls."""
    pooled = [q for res in repos.values() for q in res.get("context", {}).get("queries", [])]
    out = summarise(pooled)
    per_repo = [
        res["context"]["summary"]["recall"]
        for res in repos.values()
        if res.get("context", {}).get("summary", {}).get("questions")
    ]
    out["mean_repo_recall"] = statistics.fmean(per_repo) if per_repo else None
    return out


def render(data: Mapping[str, Any]) -> list[str]:
    """The markdown section of the quality report (empty when context was not measured)."""
    seek = data.get("seek") or {}
    summary = seek.get("context")
    if not summary or not summary.get("questions"):
        return []
    lines = [
        "## seek context: recall and noise",
        "",
        "A question is recalled when every relevant target overlaps a code block of "
        "`seek context` at default settings; chars = characters of those blocks.",
        "",
        "| repo | questions | recalled | recall | target recall | blocks / q | chars / q "
        "| max chars | context ms (median) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def row(name: str, s: Mapping[str, Any]) -> str:
        return (
            f"| {name} | {s['questions']} | {s['recalled']} | {s['recall']:.3f} | "
            f"{s['target_recall'] or 0:.3f} | {s['mean_blocks']:.1f} | {s['mean_chars']:,.0f} | "
            f"{s['max_chars']:,} | {s['median_context_ms'] or 0:.1f} |"
        )

    for name, res in seek.get("repos", {}).items():
        s = res.get("context", {}).get("summary")
        if s and s.get("questions"):
            lines.append(row(name, s))
    lines.append(row("**all (pooled)**", summary))
    lines.append("")
    table = seek.get("context_sweep")
    if table:
        lines += [
            "### Recall against noise (`--context-sweep`, pooled)",
            "",
            "| weight | candidates | threshold | snippets | budget | recall | blocks / q "
            "| chars / q | max chars |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in table:
            lines.append(
                f"| {r['weight']} | {r.get('top', 12)} | {r['threshold']} | {r['snippets']} "
                f"| {r['budget']:,} | "
                f"{r['recall']:.3f} | {r['mean_blocks']:.1f} | {r['mean_chars']:,.0f} | "
                f"{r['max_chars']:,} |"
            )
        lines.append("")
    missed = [
        (name, q)
        for name, res in seek.get("repos", {}).items()
        for q in res.get("context", {}).get("queries", [])
        if not q["recalled"]
    ]
    if missed:
        lines += ["Questions not recalled (first missing target; whether its file was in):", ""]
        for name, q in missed:
            target = next(t for t in q["targets"] if not t["covered"])
            where = "file in context" if target["file_in_context"] else "file missing"
            lines.append(f"- {name}: {q['query'][:80]} -> {target['target']} ({where})")
        lines.append("")
    return lines


SWEEP_WEIGHTS = (0.1, 0.25, 0.5, 1.0)
SWEEP_THRESHOLDS = (0.01, 0.02, 0.04, 0.08)
SWEEP_SNIPPETS = (6, 8, 10)
SWEEP_BUDGETS = (8_000, 12_000)
SWEEP_TOPS = (12, 16, 20)
"""Candidates ``seek context`` weighs (``rerank_top``)."""


def sweep(searcher: Any, root: Path, settings: Any, queries: Sequence[Query]) -> list[dict]:
    """Recall against noise over a grid of the chunk stage's context weight (the weight of
    a file's further parts), candidates weighed, threshold, snippet limit and character
    budget: every question searched once per weight and count, ``build_context`` once per
    setting."""
    import dataclasses

    from seek.retrieve.context import build_context

    chunker = searcher.pipeline.chunker()
    if chunker is None:
        return []
    saved = chunker.context_rest_weight
    rows: list[dict] = []
    try:
        for weight in SWEEP_WEIGHTS:
            chunker.context_rest_weight = weight
            # ``seek context`` searches with k = its candidate count, and k also sets how deep
            # each retriever looks: one search per count, not a cut of a longer list.
            results = {
                top: [searcher.search(q.query, k=top) for q in queries] for top in SWEEP_TOPS
            }
            for top, threshold, snippets, budget in itertools.product(
                SWEEP_TOPS, SWEEP_THRESHOLDS, SWEEP_SNIPPETS, SWEEP_BUDGETS
            ):
                weighed = dataclasses.replace(settings, rerank_top=top)
                judged = []
                for query, result in zip(queries, results[top], strict=True):
                    context = build_context(
                        root,
                        result,
                        weighed,
                        threshold=threshold,
                        snippets=snippets,
                        budget=budget,
                    )
                    judged.append({**judge(query, context.blocks), "context_ms": 0.0})
                rows.append(
                    {
                        "weight": weight,
                        "top": top,
                        "threshold": threshold,
                        "snippets": snippets,
                        "budget": budget,
                        "queries": judged,
                    }
                )
    finally:
        chunker.context_rest_weight = saved
    return rows


def sweep_table(per_repo: Mapping[str, list[dict]]) -> list[dict]:
    """The sweep pooled over repositories: recall, mean blocks and characters per setting."""
    pooled: dict[tuple, list[dict]] = {}
    for rows in per_repo.values():
        for row in rows:
            key = (
                row["weight"],
                row.get("top", 12),
                row["threshold"],
                row["snippets"],
                row["budget"],
            )
            pooled.setdefault(key, []).extend(row["queries"])
    out = []
    for (weight, top, threshold, snippets, budget), judged in sorted(pooled.items()):
        s = summarise(judged)
        out.append(
            {
                "weight": weight,
                "top": top,
                "threshold": threshold,
                "snippets": snippets,
                "budget": budget,
                "recall": s["recall"],
                "mean_blocks": s["mean_blocks"],
                "mean_chars": s["mean_chars"],
                "max_chars": s["max_chars"],
            }
        )
    return out
