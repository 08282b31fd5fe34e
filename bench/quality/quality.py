"""Retrieval quality: seek against semble on the semble benchmark (NDCG@10, latency, ablations).

    python -m bench.quality BENCH_DIR [--repos a,b | --all] [--ablate]
        [--no-semble | --semble-python PATH] [--no-seek] [--runs 5] [--home DIR] [--model DIR]
        [--out bench/results/quality.json]

Methodology: shared/spec/reference-ranking.md §2. For every repo (default: the 30 names in
shared/bench/semble/dev-repos.txt) the folder ``BENCH_DIR/<name>/<benchmark_root>`` is indexed
and every annotated query is searched for its top 10 chunks, which ``bench.quality.scoring`` judges:

* **seek** runs in this process: ``index_workspace`` into a persistent bench home (``--home``,
  default ``~/.cache/seek-bench``; incremental, so re-runs reuse the index), ``Searcher.open``
  once per repo, then ``search(query, k=10)`` ``--runs`` times per query (latency = median).
  ``--ablate`` re-runs every query once with each signal of ``seek.retrieve.SIGNALS`` disabled
  in turn, and with ``mode="bm25"`` and ``mode="vector"``.
* **semble** 0.7.0 runs with its own python (``--semble-python``), one
  ``bench/quality/_semble_quality_worker.py`` process per repo, with the same local model
  (``SEMBLE_MODEL_NAME``), offline, and a fresh temporary cache folder.

Writes the JSON (``--out``) and a markdown report next to it (same name, ``.md``), and prints
the report. A repo that fails is reported and skipped; missing checkouts and annotations are
skipped with a warning. See bench/README.md, section "Quality".
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import (
    DEFAULT_HOME,
    REPO_ROOT,
    RESULTS,
    SEMBLE_SET,
    BenchSet,
    add_bench_dir,
    bench_settings,
    builtin_model_dir,
    loadavg,
    log,
    resolve_bench_dir,
    semble_python_path,
    shown,
)
from bench.quality import context_recall
from bench.quality.record import write_summary
from bench.quality.scoring import (
    CATEGORIES,
    Hit,
    Query,
    aggregate,
    hits_from_json,
    latency_summary,
    load_annotations,
    repo_summary,
    score_query,
)

DEFAULT_OUT = RESULTS / "quality.json"
SEMBLE_WORKER = Path(__file__).resolve().with_name("_semble_quality_worker.py")
K = 10


# -- the benchmark set -----------------------------------------------------------------------
@dataclass
class Repo:
    name: str
    language: str
    folder: Path
    queries: list[Query] = field(default_factory=list)


def load_repos(
    bench_dir: Path, names: Sequence[str] | None, bench_set: BenchSet = SEMBLE_SET
) -> tuple[list[Repo], list[dict]]:
    """The repos to run, and the ones skipped (with the reason)."""
    specs = bench_set.specs()
    if names is None:
        names = list(specs)
    repos: list[Repo] = []
    skipped: list[dict] = []
    for name in names:
        spec = specs.get(name)
        if spec is None:
            skipped.append({"repo": name, "reason": "not in repos.json"})
            continue
        root = spec.get("benchmark_root") or ""
        folder = bench_dir / name / root if root else bench_dir / name
        annotations = bench_set.annotations / f"{name}.json"
        if not folder.is_dir():
            skipped.append({"repo": name, "reason": f"no checkout at {folder}"})
            continue
        if not annotations.is_file():
            skipped.append({"repo": name, "reason": f"no annotations at {annotations}"})
            continue
        try:
            queries = load_annotations(annotations)
        except (ValueError, KeyError, TypeError) as exc:
            skipped.append({"repo": name, "reason": f"bad annotations: {exc}"})
            continue
        repos.append(Repo(name, spec.get("language", "?"), folder, queries))
    for entry in skipped:
        log(f"warning: skipping {entry['repo']}: {entry['reason']}")
    return repos, skipped


# -- scoring one tool's answers for one repo -------------------------------------------------
def score_repo(
    repo: Repo,
    hits_per_query: Sequence[Sequence[Hit]],
    latencies_ms: Sequence[float] | None,
    *,
    keep_hits: bool = True,
) -> dict[str, Any]:
    """Per-query scores and the per-repo summary (NDCG, latency, anomalies)."""
    per_query = []
    scores = []
    for query, hits in zip(repo.queries, hits_per_query, strict=True):
        score = score_query(hits, query, K)
        scores.append(score)
        entry: dict[str, Any] = {"query": query.query, "category": query.category, **score}
        entry["n_hits"] = len(hits)
        if keep_hits:
            entry["hits"] = [[h.path, h.start_line, h.end_line] for h in hits]
        per_query.append(entry)
    if latencies_ms is not None:
        for entry, ms in zip(per_query, latencies_ms, strict=True):
            entry["latency_ms"] = ms
    summary = repo_summary(scores, [q.category for q in repo.queries])
    if latencies_ms is not None:
        summary["latency"] = latency_summary(latencies_ms)
    summary["anomalies"] = anomalies(repo, hits_per_query)
    return {"summary": summary, "queries": per_query}


def anomalies(repo: Repo, hits_per_query: Sequence[Sequence[Hit]]) -> dict[str, Any]:
    """Things worth a look: empty or short result lists, paths that are not files, bad spans."""
    empty = [q.query for q, hits in zip(repo.queries, hits_per_query, strict=True) if not hits]
    short = sum(1 for hits in hits_per_query if 0 < len(hits) < K)
    missing: set[str] = set()
    bad_spans = 0
    for hits in hits_per_query:
        for hit in hits:
            if hit.start_line < 1 or hit.end_line < hit.start_line:
                bad_spans += 1
            if hit.path not in missing and not (repo.folder / hit.path).is_file():
                missing.add(hit.path)
    return {
        "empty_queries": empty,
        "short_results": short,
        "paths_not_found": sorted(missing)[:20],
        "paths_not_found_count": len(missing),
        "bad_spans": bad_spans,
    }


# -- seek ------------------------------------------------------------------------------------
class SeekRunner:
    """seek in this process: one persistent bench home, one Searcher per repo."""

    def __init__(
        self, home: Path, model: Path | None = None, context: bool = True, sweep: bool = False
    ) -> None:
        from seek import index_workspace
        from seek.retrieve import SIGNALS, Searcher

        self.index_workspace = index_workspace
        self.Searcher = Searcher
        self.signals: tuple[str, ...] = tuple(SIGNALS)
        self.context = context
        self.sweep = sweep
        home.mkdir(parents=True, exist_ok=True)
        # No user config file, so ~/.config/seek cannot change what is measured.
        overrides = {}
        if model is not None:
            # Measure this embedder alone: no learned ranker on top.
            overrides.update(model=str(model), ranker_model="off")
        self.settings = bench_settings(home, **overrides)

    def version(self) -> str:
        import seek

        return getattr(seek, "__version__", "")

    def run_repo(self, repo: Repo, runs: int, ablate: bool) -> dict[str, Any]:
        started = time.perf_counter()
        report = self.index_workspace(repo.folder, self.settings)
        index_s = time.perf_counter() - started
        started = time.perf_counter()
        searcher = self.Searcher.open(repo.folder, self.settings)
        open_s = time.perf_counter() - started
        notes: dict[str, set[str]] = {}  # note -> the queries it came with

        timings: dict[str, list[float]] = {}  # seek's own per-stage timings, timed runs only

        def search(query: str, **kwargs: Any) -> list[Hit]:
            result = searcher.search(query, k=K, **kwargs)
            for note in getattr(result, "notes", ()):
                notes.setdefault(note, set()).add(query)
            if not kwargs:
                for stage, ms in (getattr(result, "timings_ms", None) or {}).items():
                    timings.setdefault(stage, []).append(float(ms))
            return _seek_hits(result)

        try:
            search("warm up")  # first-call costs (lazy imports, the model) stay out of timings
            notes.clear()
            timings.clear()
            hits_per_query, latencies, unstable = _timed_queries(search, repo.queries, runs)
            result = score_repo(repo, hits_per_query, latencies)
            result["summary"]["anomalies"]["search_notes"] = {n: len(q) for n, q in notes.items()}
            result["summary"]["index"] = {
                "seconds": index_s,
                "open_s": open_s,
                "files": getattr(report, "files", None),
                "chunks": getattr(report, "chunks", None),
                "embedded": getattr(report, "embedded", None),
                "report": report.summary() if hasattr(report, "summary") else str(report),
            }
            result["summary"]["unstable_queries"] = unstable
            result["summary"]["stage_median_ms"] = {
                stage: statistics.median(values) for stage, values in timings.items()
            }
            if self.context:
                result["context"] = self._context(repo, searcher)
            if self.sweep:
                result["context_sweep"] = context_recall.sweep(
                    searcher, repo.folder, self.settings, repo.queries
                )
            if ablate:
                result["ablations"] = self._ablate(repo, search)
        finally:
            close = getattr(searcher, "close", None)
            if callable(close):
                close()
            searcher = None
            gc.collect()
        return result

    def _context(self, repo: Repo, searcher: Any) -> dict[str, Any]:
        """Every question through ``seek context`` at default settings (``context_recall``)."""
        per_query = []
        for query in repo.queries:
            entry = context_recall.run_context(searcher, repo.folder, self.settings, query)
            per_query.append({"category": query.category, **entry})
        return {"summary": context_recall.summarise(per_query), "queries": per_query}

    def variants(self) -> list[tuple[str, dict[str, Any]]]:
        out: list[tuple[str, dict[str, Any]]] = []
        for signal in self.signals:
            out.append((f"-{signal}", {"disabled": frozenset({signal})}))
        out.append(("bm25 only", {"mode": "bm25"}))
        out.append(("vector only", {"mode": "vector"}))
        return out

    def _ablate(self, repo: Repo, search: Callable[..., list[Hit]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, kwargs in self.variants():
            hits, times = [], []
            try:
                for q in repo.queries:  # one run each: a single timing, not a median
                    started = time.perf_counter()
                    hits.append(search(q.query, **kwargs))
                    times.append((time.perf_counter() - started) * 1000.0)
            except Exception as exc:  # one broken variant must not lose the repo
                out[name] = {"error": f"{type(exc).__name__}: {exc}"}
                log(f"  ablation {name} failed on {repo.name}: {exc}")
                continue
            scored = score_repo(repo, hits, None, keep_hits=False)
            out[name] = {
                "summary": scored["summary"],
                "ndcg10": [q["ndcg10"] for q in scored["queries"]],
                "latency_ms": times,
            }
        return out


def _seek_hits(result: Any) -> list[Hit]:
    hits = result.hits if hasattr(result, "hits") else result
    return [Hit(str(h.path).replace("\\", "/"), int(h.start_line), int(h.end_line)) for h in hits]


def _timed_queries(
    run: Callable[[str], list[Hit]], queries: Sequence[Query], runs: int
) -> tuple[list[list[Hit]], list[float], list[str]]:
    """Each query ``runs`` times in a row: hits of the first run, median latency (ms)."""
    hits_per_query: list[list[Hit]] = []
    latencies: list[float] = []
    unstable: list[str] = []
    for query in queries:
        first: list[Hit] | None = None
        times = []
        for _ in range(max(1, runs)):
            t0 = time.perf_counter()
            hits = run(query.query)
            times.append((time.perf_counter() - t0) * 1000.0)
            if first is None:
                first = hits
            elif hits != first and query.query not in unstable:
                unstable.append(query.query)
        hits_per_query.append(first or [])
        latencies.append(statistics.median(times))
    return hits_per_query, latencies, unstable


# -- semble ----------------------------------------------------------------------------------
def semble_env(model: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["HF_HUB_OFFLINE"] = "1"
    env["SEMBLE_MODEL_NAME"] = str(model)
    env.pop("PYTHONPATH", None)  # semble's venv only
    env.pop("SEMBLE_CACHE_LOCATION", None)  # the worker sets a fresh one
    return env


def run_semble_repo(
    repo: Repo, python: Path, model: Path, runs: int, timeout: float
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-quality-") as tmp:
        queries_file = Path(tmp) / "queries.json"
        queries_file.write_text(json.dumps([q.query for q in repo.queries]), encoding="utf-8")
        command = [
            str(python),
            str(SEMBLE_WORKER),
            str(repo.folder),
            str(model),
            str(queries_file),
            "--runs",
            str(runs),
            "--top-k",
            str(K),
        ]
        proc = subprocess.run(
            command,
            cwd=tmp,
            env=semble_env(model),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
        raise RuntimeError(f"semble worker exit {proc.returncode}: " + "\n".join(tail))
    lines = [line for line in proc.stdout.strip().splitlines() if line.strip()]
    if not lines:
        raise RuntimeError("the semble worker printed nothing")
    payload = json.loads(lines[-1])
    answers = payload["queries"]
    if len(answers) != len(repo.queries):
        raise RuntimeError(f"semble worker answered {len(answers)} of {len(repo.queries)}")
    hits = [hits_from_json(a["hits"]) for a in answers]
    latencies = [float(a["latency_ms"]) for a in answers]
    result = score_repo(repo, hits, latencies)
    result["summary"]["index"] = {
        "seconds": payload.get("index_s"),
        "files": payload.get("files"),
        "chunks": payload.get("chunks"),
    }
    result["summary"]["unstable_queries"] = [
        q.query for q, a in zip(repo.queries, answers, strict=True) if not a.get("stable", True)
    ]
    result["version"] = payload.get("version")
    result["model"] = payload.get("model")
    return result


# -- one tool over all repos -----------------------------------------------------------------
def run_tool(
    name: str,
    repos: Sequence[Repo],
    run_one: Callable[[Repo], dict[str, Any]],
) -> dict[str, Any]:
    results: dict[str, Any] = {}
    failures: list[dict[str, str]] = []
    for i, repo in enumerate(repos, start=1):
        started = time.perf_counter()
        try:
            results[repo.name] = run_one(repo)
        except Exception as exc:  # a failing repo is reported and skipped, never fatal
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            failures.append({"repo": repo.name, "error": detail})
            log(f"[{name}] {i}/{len(repos)} {repo.name}: FAILED: {detail}")
            log(traceback.format_exc())
            continue
        summary = results[repo.name]["summary"]
        log(
            f"[{name}] {i}/{len(repos)} {repo.name}: NDCG@10 {summary['ndcg10']:.3f} "
            f"(file {summary['ndcg10_file']:.3f}), p50 {summary['latency']['p50_ms']:.1f} ms, "
            + (
                f"context recall {ctx['recall']:.3f}, "
                if (ctx := results[repo.name].get("context", {}).get("summary"))
                else ""
            )
            + f"{time.perf_counter() - started:.1f} s"
        )
    return summarise_tool(repos, results, failures)


def summarise_tool(
    repos: Sequence[Repo], results: dict[str, Any], failures: list[dict[str, str]]
) -> dict[str, Any]:
    languages = {r.name: r.language for r in repos}
    summaries = {name: res["summary"] for name, res in results.items()}
    out: dict[str, Any] = aggregate(summaries, languages)
    pooled = [
        q["latency_ms"] for res in results.values() for q in res["queries"] if "latency_ms" in q
    ]
    p50s = [s["latency"]["p50_ms"] for s in summaries.values() if s.get("latency")]
    out["latency"] = {
        "pooled": latency_summary(pooled),
        "mean_repo_p50_ms": statistics.fmean(p50s) if p50s else None,
    }
    out["repos"] = results
    if any("context" in res for res in results.values()):
        out["context"] = context_recall.overall(results)
    sweeps = {n: r["context_sweep"] for n, r in results.items() if r.get("context_sweep")}
    if sweeps:
        out["context_sweep"] = context_recall.sweep_table(sweeps)
    out["failures"] = failures
    out["empty_queries"] = sum(len(s["anomalies"]["empty_queries"]) for s in summaries.values())
    return out


def summarise_ablations(repos: Sequence[Repo], seek: dict[str, Any]) -> dict[str, Any]:
    """Per variant: the aggregate over the repos it ran on, and its delta from the full system."""
    languages = {r.name: r.language for r in repos}
    names: list[str] = []
    for res in seek["repos"].values():
        for variant in res.get("ablations", {}):
            if variant not in names:
                names.append(variant)
    full = {name: res["summary"] for name, res in seek["repos"].items()}
    out: dict[str, Any] = {}
    for variant in names:
        summaries = {
            name: res["ablations"][variant]["summary"]
            for name, res in seek["repos"].items()
            if "summary" in res.get("ablations", {}).get(variant, {})
        }
        if not summaries:
            out[variant] = {"error": "failed on every repo"}
            continue
        agg = aggregate(summaries, languages)
        base = aggregate({n: full[n] for n in summaries}, languages)  # same repo set
        delta = {
            metric: agg["overall"][metric] - base["overall"][metric]
            for metric in ("ndcg10", "ndcg10_file", "ndcg5")
        }
        delta_cat = {
            cat: agg["per_category"][cat]["ndcg10"] - base["per_category"][cat]["ndcg10"]
            for cat in agg["per_category"]
        }
        worst = sorted(
            ((full[n]["ndcg10"] - s["ndcg10"], n) for n, s in summaries.items()), reverse=True
        )
        times = [
            ms
            for res in seek["repos"].values()
            for ms in res.get("ablations", {}).get(variant, {}).get("latency_ms", [])
        ]
        out[variant] = {
            "latency": latency_summary(times) if times else None,
            "overall": agg["overall"],
            "per_category": agg["per_category"],
            "full_overall": base["overall"],
            "delta": delta,
            "delta_per_category": delta_cat,
            "repos": len(summaries),
            "most_hurt_repos": [{"repo": n, "drop": d} for d, n in worst[:3]],
            "most_helped_repos": [{"repo": n, "gain": -d} for d, n in worst[::-1][:3]],
        }
    return out


# -- the report ------------------------------------------------------------------------------
def _f(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}"


def _d(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:+.3f}"


def _table(
    header: Sequence[str], rows: Sequence[Sequence[str]], text: Sequence[int] = (0,)
) -> list[str]:
    """A markdown table; the columns numbered in ``text`` are left-aligned, the rest right."""
    aligns = ["---" if i in text else "---:" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(aligns) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def render_markdown(data: dict[str, Any]) -> str:
    tools = [t for t in ("seek", "semble") if isinstance(data.get(t), dict)]
    meta = data["meta"]
    lines = [
        "# Retrieval quality: seek vs semble",
        "",
        f"{meta['date']} · {meta['machine']} · repos: {meta['repos_run']} run"
        f" ({len(meta['skipped'])} skipped) · {meta['runs']} runs per query for latency",
        "",
        f"Command: `{meta['command']}` · seek {meta.get('seek_commit', '?')} "
        f"(sources {meta.get('seek_source_digest', '?')}) · load average (1/5/15 min) at start "
        f"{meta.get('loadavg_start')}, end {meta.get('loadavg_end')}",
        "",
        "NDCG@10 per shared/spec/reference-ranking.md §2.3-2.4 (mean of per-repo means). "
        "Chunk level = the 10 hits as returned; file level = hits deduplicated to 10 files, "
        "spans ignored. Latency = per-query median of the runs; p50/p95 over all queries "
        "pooled; 'repo p50' = mean of per-repo p50s (semble's summary number).",
        "",
    ]
    for note in data.get("notes", []):
        lines.append(f"- {note}")
    if data.get("notes"):
        lines.append("")

    lines += ["## Overall", ""] if tools else ["No tool was run.", ""]
    rows = []
    for tool in tools:
        t = data[tool]
        o = t["overall"]
        lat = t["latency"]
        rows.append(
            [
                tool,
                str(o["repos"]),
                str(o["queries"]),
                _f(o["ndcg10"]),
                _f(o["ndcg10_file"]),
                _f(o["ndcg5"]),
                _f(o["ndcg5_file"]),
                _f(lat["pooled"]["p50_ms"], 2),
                _f(lat["pooled"]["p95_ms"], 2),
                _f(lat["mean_repo_p50_ms"], 2),
            ]
        )
    header = ["tool", "repos", "queries", "NDCG@10 chunk", "NDCG@10 file", "NDCG@5 chunk"]
    header += ["NDCG@5 file", "p50 ms", "p95 ms", "repo p50 ms"]
    if tools:
        lines += _table(header, rows) + [""]

    def paired(section: str, key_label: str, extra: Callable[[str], list[str]]) -> list[str]:
        keys: list[str] = []
        for tool in tools:
            keys += [k for k in data[tool][section] if k not in keys]
        if section == "per_language":
            keys.sort()
        header = [key_label, *extra("header")]
        for tool in tools:
            header += [f"{tool} chunk", f"{tool} file"]
        if len(tools) == 2:
            header.append("Δ chunk")
        rows = []
        for key in keys:
            row = [key, *extra(key)]
            vals = []
            for tool in tools:
                entry = data[tool][section].get(key, {})
                row += [_f(entry.get("ndcg10")), _f(entry.get("ndcg10_file"))]
                vals.append(entry.get("ndcg10"))
            if len(tools) == 2:
                row.append(_d(vals[0] - vals[1]) if None not in vals else "-")
            rows.append(row)
        return _table(header, rows)

    first = data[tools[0]] if tools else {}

    def lang_extra(key: str) -> list[str]:
        if key == "header":
            return ["repos"]
        return [str(first.get("per_language", {}).get(key, {}).get("repos", "-"))]

    def cat_extra(key: str) -> list[str]:
        if key == "header":
            return ["repos", "queries"]
        entry = first.get("per_category", {}).get(key, {})
        return [str(entry.get("repos", "-")), str(entry.get("queries", "-"))]

    if tools:
        lines += ["## Per category (NDCG@10)", ""]
        lines += paired("per_category", "category", cat_extra) + [""]
        lines += ["## Per language (NDCG@10)", ""]
        lines += paired("per_language", "language", lang_extra) + [""]

        lines += ["## Per repo", ""]
        names: list[str] = []
        for tool in tools:
            names += [n for n in data[tool]["repos"] if n not in names]
        header = ["repo", "language", "queries"]
        for tool in tools:
            header += [f"{tool} chunk", f"{tool} file", f"{tool} p50 ms", f"{tool} p95 ms"]
        rows = []
        for name in names:
            lang = data["meta"]["languages"].get(name, "?")
            row = [name, lang, "-"]
            for tool in tools:
                res = data[tool]["repos"].get(name)
                if res is None:
                    row += ["fail", "-", "-", "-"]
                    continue
                s = res["summary"]
                row[2] = str(s["queries"])
                row += [
                    _f(s["ndcg10"]),
                    _f(s["ndcg10_file"]),
                    _f(s["latency"]["p50_ms"], 2),
                    _f(s["latency"]["p95_ms"], 2),
                ]
            rows.append(row)
        lines += _table(header, rows, text=(0, 1)) + [""]

    lines += context_recall.render(data)
    stages: dict[str, list[float]] = {}
    for res in data.get("seek", {}).get("repos", {}).values():
        for stage, ms in res.get("summary", {}).get("stage_median_ms", {}).items():
            stages.setdefault(stage, []).append(ms)
    if stages:
        lines += [
            "## seek stage timings",
            "",
            "Median over the repos of each repo's median, in ms (`*_ms` of the search's "
            "`timings_ms`; vector and keyword overlap; `ranker_ms` = the learned ranker, "
            "features and model).",
            "",
        ]
        lines += _table(
            ["stage", "median ms", "slowest repo ms"],
            [[k, _f(statistics.median(v), 2), _f(max(v), 2)] for k, v in stages.items()],
            text=(0,),
        ) + [""]
    ablations = data.get("ablations")
    if ablations:
        lines += ["## seek ablations (one signal off / one retriever only)", ""]
        full = data["seek"]["overall"]
        header = ["variant", "NDCG@10 chunk", "Δ chunk", "NDCG@10 file", "Δ file"]
        header += [f"Δ {c}" for c in CATEGORIES] + ["p50 ms", "p95 ms", "most hurt repos"]
        pooled = data["seek"].get("latency", {}).get("pooled", {})
        rows = [
            ["full system", _f(full["ndcg10"]), "", _f(full["ndcg10_file"]), ""]
            + [""] * len(CATEGORIES)
            + [_f(pooled.get("p50_ms"), 2), _f(pooled.get("p95_ms"), 2), ""]
        ]
        for variant, entry in ablations.items():
            if "error" in entry:
                rows.append([variant, entry["error"]] + [""] * (len(header) - 2))
                continue
            hurt = ", ".join(
                f"{h['repo']} {-h['drop']:+.2f}"
                for h in entry["most_hurt_repos"]
                if h["drop"] >= 0.005
            )
            rows.append(
                [
                    variant,
                    _f(entry["overall"]["ndcg10"]),
                    _d(entry["delta"]["ndcg10"]),
                    _f(entry["overall"]["ndcg10_file"]),
                    _d(entry["delta"]["ndcg10_file"]),
                ]
                + [_d(entry["delta_per_category"].get(c)) for c in CATEGORIES]
                + [
                    _f((entry.get("latency") or {}).get("p50_ms"), 2),
                    _f((entry.get("latency") or {}).get("p95_ms"), 2),
                    hurt or "-",
                ]
            )
        lines += _table(header, rows, text=(0, len(header) - 1)) + [""]

    if len(tools) == 2:
        lines += _biggest_gaps(data)

    lines += ["## Anomalies", ""]
    any_anomaly = False
    for tool in tools:
        for failure in data[tool]["failures"]:
            any_anomaly = True
            lines.append(f"- {tool}: {failure['repo']} failed: {failure['error'].splitlines()[-1]}")
        for name, res in data[tool]["repos"].items():
            a = res["summary"]["anomalies"]
            bits = []
            if a["empty_queries"]:
                bits.append(f"{len(a['empty_queries'])} queries with no hits")
            if a["short_results"]:
                bits.append(f"{a['short_results']} queries with fewer than {K} hits")
            if a["paths_not_found_count"]:
                bits.append(f"{a['paths_not_found_count']} hit paths not found on disk")
            if a["bad_spans"]:
                bits.append(f"{a['bad_spans']} hits with bad line spans")
            for note, count in a.get("search_notes", {}).items():
                bits.append(f"note x{count}: {note}")
            if res["summary"].get("unstable_queries"):
                n = len(res["summary"]["unstable_queries"])
                bits.append(f"{n} queries with run-to-run different hits")
            if bits:
                any_anomaly = True
                lines.append(f"- {tool} {name}: " + "; ".join(bits))
    for entry in meta["skipped"]:
        any_anomaly = True
        lines.append(f"- skipped {entry['repo']}: {entry['reason']}")
    if not any_anomaly:
        lines.append("- none")
    lines.append("")
    return "\n".join(lines)


def _biggest_gaps(data: dict[str, Any], limit: int = 15) -> list[str]:
    gaps = []
    for name, res in data["seek"]["repos"].items():
        other = data["semble"]["repos"].get(name)
        if other is None:
            continue
        for mine, theirs in zip(res["queries"], other["queries"], strict=True):
            gaps.append((theirs["ndcg10"] - mine["ndcg10"], name, mine, theirs))
    gaps.sort(key=lambda g: g[0], reverse=True)
    worse = [g for g in gaps if g[0] > 0][:limit]
    if not worse:
        return []
    lines = [f"## Queries where seek trails semble most (top {len(worse)}, NDCG@10 chunk)", ""]
    rows = []
    for _gap, name, mine, theirs in worse:
        top = mine.get("hits", [[None]])
        first_hit = f"{top[0][0]}:{top[0][1]}" if top and top[0][0] else "(none)"
        query = mine["query"] if len(mine["query"]) <= 60 else mine["query"][:57] + "..."
        rows.append(
            [
                name,
                query.replace("|", "\\|"),
                mine["category"],
                _f(mine["ndcg10"], 2),
                _f(theirs["ndcg10"], 2),
                first_hit.replace("|", "\\|"),
            ]
        )
    header = ["repo", "query", "category", "seek", "semble", "seek top hit"]
    return lines + _table(header, rows, text=(0, 1, 2, 5)) + [""]


# -- main ------------------------------------------------------------------------------------
def _git_head() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "src"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return head + ("+dirty(src)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "?"


def _source_digest() -> str:
    """A short hash of seek's sources, tying the numbers to the code that produced them."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted((REPO_ROOT / "src" / "seek").rglob("*.py")):
        digest.update(path.relative_to(REPO_ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.quality", description=__doc__)
    add_bench_dir(parser)
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--repos", help="comma-separated repo names (default: the set's dev-repos.txt, or all)"
    )
    which.add_argument("--all", action="store_true", help="every repo in repos.json")
    parser.add_argument(
        "--set",
        type=Path,
        default=SEMBLE_SET.folder,
        help="benchmark folder: repos.json + annotations/ (default: the semble set)",
    )
    parser.add_argument(
        "--no-context",
        action="store_true",
        help="skip seek context recall (bench.quality.context_recall)",
    )
    parser.add_argument(
        "--context-sweep",
        action="store_true",
        help="also sweep seek context's weight, threshold, snippets and budget",
    )
    parser.add_argument("--ablate", action="store_true", help="seek signal/mode ablations")
    parser.add_argument("--no-semble", action="store_true", help="skip semble")
    parser.add_argument("--no-seek", action="store_true", help="skip seek (semble only)")
    parser.add_argument(
        "--semble-python", type=Path, help="semble's python (default: $SEMBLE_PYTHON)"
    )
    parser.add_argument("--runs", type=int, default=5, help="runs per query for latency")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME, help="seek bench index home")
    parser.add_argument(
        "--model", type=Path, help="Model2Vec folder for seek (sets ranker_model=off)"
    )
    parser.add_argument(
        "--semble-timeout", type=float, default=1800.0, help="seconds per semble repo"
    )
    args = parser.parse_args(argv)
    args.bench_dir = resolve_bench_dir(parser, args.bench_dir)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    checkouts = args.bench_dir.resolve()
    bench_set = BenchSet(args.set.expanduser().resolve())
    if not bench_set.repos_json.is_file():
        log(f"error: {bench_set.folder} has no repos.json")
        return 2
    if args.repos:
        names: list[str] | None = [n.strip() for n in args.repos.split(",") if n.strip()]
    elif args.all:
        names = None
    else:
        names = bench_set.default_names()
    repos, skipped = load_repos(checkouts, names, bench_set)
    if not repos:
        log("error: no repo to run")
        return 2
    runs = max(1, args.runs)
    home = args.home.expanduser().resolve()
    notes: list[str] = []
    specs = bench_set.specs()

    data: dict[str, Any] = {
        "meta": {
            "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "command": "python -m bench.quality "
            + " ".join(sys.argv[1:] if argv is None else list(argv)),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
            f"{platform.system()} {platform.release()}, Python {platform.python_version()}",
            "seek_commit": _git_head(),
            "seek_source_digest": _source_digest(),
            "loadavg_start": loadavg(),
            "set": bench_set.name,
            "runs": runs,
            "k": K,
            "model": shown(args.model.expanduser() if args.model else builtin_model_dir()),
            "repos_run": len(repos),
            "skipped": skipped,
            "languages": {r.name: r.language for r in repos},
            "revisions": {r.name: specs.get(r.name, {}).get("revision") for r in repos},
        },
        "notes": notes,
    }

    if not args.no_seek:
        try:
            runner = SeekRunner(
                home,
                args.model.expanduser().resolve() if args.model else None,
                context=not args.no_context,
                sweep=args.context_sweep,
            )
        except Exception as exc:
            notes.append(f"seek not run: {type(exc).__name__}: {exc}")
            log(f"warning: seek not run: {exc}")
        else:
            data["meta"]["seek_version"] = runner.version()
            data["meta"]["signals"] = list(runner.signals)
            log(f"seek: {len(repos)} repos, home {home}")
            data["meta"]["loadavg_before_seek"] = loadavg()
            data["seek"] = run_tool(
                "seek", repos, lambda repo: runner.run_repo(repo, runs, args.ablate)
            )
            if args.ablate:
                data["ablations"] = summarise_ablations(repos, data["seek"])

    if not args.no_semble:
        python = semble_python_path(args.semble_python)
        if python is None or not python.exists():
            why = (
                f"no python at {python}" if python else "pass --semble-python or set SEMBLE_PYTHON"
            )
            notes.append(f"semble not run: {why}")
            log(f"warning: semble not run: {why}")
        else:
            model = builtin_model_dir()
            log(f"semble: {len(repos)} repos with {python}, model {model}")
            data["meta"]["loadavg_before_semble"] = loadavg()
            data["semble"] = run_tool(
                "semble",
                repos,
                lambda repo: run_semble_repo(repo, python, model, runs, args.semble_timeout),
            )
            versions = {r.get("version") for r in data["semble"]["repos"].values()}
            data["meta"]["semble_version"] = ", ".join(sorted(v for v in versions if v))

    for tool in ("seek", "semble"):
        if isinstance(data.get(tool), dict) and data[tool]["failures"]:
            failed = ", ".join(f["repo"] for f in data[tool]["failures"])
            notes.append(f"{tool} failed on: {failed} (left out of its means)")
    if isinstance(data.get("seek"), dict) and isinstance(data.get("semble"), dict):
        a, b = set(data["seek"]["repos"]), set(data["semble"]["repos"])
        if a != b:
            notes.append(
                f"the tools' repo sets differ: only seek {sorted(a - b)}, "
                f"only semble {sorted(b - a)}"
            )

    data["meta"]["loadavg_end"] = loadavg()
    digest_end = _source_digest()
    if digest_end != data["meta"]["seek_source_digest"]:
        notes.append(
            f"src/seek changed during the run ({data['meta']['seek_source_digest']} -> "
            f"{digest_end}): the seek numbers may mix two versions"
        )
        data["meta"]["seek_source_digest_end"] = digest_end
    out = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, default=str) + "\n", encoding="utf-8")
    report = render_markdown(data)
    md = out.with_suffix(".md")
    md.write_text(report, encoding="utf-8")
    summary_file = write_summary(out, data)  # what the docs' tables are generated from
    print(report)
    log(f"wrote {out}, {md} and {summary_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
