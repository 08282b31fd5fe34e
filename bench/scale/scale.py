"""A corpus past one machine's comfort: indexing throughput, query latency, memory and NDCG at
100k and 1M chunks (issue 17; bench/README.md, "Scale").

    python -m bench.scale [--work /tmp/seek-scale] [--bench-dir BENCH_DIR]
        [--phases build,throughput,replicate,query,ndcg] [--s3 URI] [--out bench/results/scale.json]

Phases (each adds its numbers to ``--out``; a later run can pick up at any phase, the work
folder keeps the corpora):

- **build**: the *base* corpus, every chunk embedded once: the 40 benchmark repositories
  (their ``benchmark_root``, as ``bench.quality`` indexes them), the Python standard library
  and one repository per top-level package of this checkout's ``site-packages`` (code only:
  ``*.json``, ``*.txt``, ``*.csv``, ``*.pyi`` and source maps are left out there), indexed by
  ``seek corpus index`` on a local Ray with 2 workers.
- **throughput**: the same 7 benchmark repositories (tokio, gin, fastapi, axum, cobra,
  flask, requests: ~8,200 chunks) indexed by seek's single-process indexer
  (``index_workspace``), by the corpus indexer in-process, and on Ray with 1 and 2 workers,
  side by side (chunks/s; Ray's start-up is not counted).
- **replicate**: the *1m* corpus: the base rows plus copies of them under distinct
  repository names (``<name>--copy<i>``; the copies reuse the base's vectors, so no
  embedding is repeated) until it holds at least 1,000,000 chunks; and the *100k* corpus:
  the 30 dev repositories plus others until 100,000 chunks. Then their indexes are built
  (``CorpusTable.finish``: full text, scalar, IVF-PQ).
- **query**: for each corpus, one fresh process asks every semble dev question twice - once
  over the whole corpus, once filtered to its repository - and reports p50/p95 latency
  (wall clock, and the process's CPU time per question, which a loaded machine inflates
  less) and its peak RSS; at 100k also over the whole corpus with exact (flat) vector search, which
  is where the IVF-PQ threshold comes from; with an IVF-PQ index, every filtered question
  once more on it (``filtered_ann``: what the ANN costs in NDCG). Each mode records the load
  average at its start and end, and the filtered ones their NDCG@10 (``ndcg10``).
- **ndcg**: NDCG@10 of the dev questions filtered to their repository in the 1m corpus,
  against seek's per-workspace search of the same 30 folders (same code, same run).

- **s3** (with ``--s3 URI``, e.g. ``s3://bench/scale`` with ``AWS_ENDPOINT_URL`` naming a
  local S3 server): the first of ``--sizes`` staged locally in small data files with its
  indexes, uploaded there file by file (:func:`to_s3`), and its queries measured as in
  **query** against the ``s3://`` URI (``--every N``: every Nth question, as a mock S3
  server is slow).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import (
    BENCH_DIR_HELP,
    REPO_ROOT,
    RESULTS,
    SEMBLE_SET,
    bench_settings,
    loadavg,
    peak_rss_kb,
    resolve_bench_dir,
)
from bench.common import log as _log

DEFAULT_OUT = RESULTS / "scale.json"
DEFAULT_WORK = Path("/tmp/seek-scale")
CODE_ONLY = ("*.json", "*.txt", "*.csv", "*.pyi", "*.map", "*.min.js", "*.svg", "*.html")
THROUGHPUT_REPOS = ("tokio", "gin", "fastapi", "axum", "cobra", "flask", "requests")
TARGET_1M = 1_000_000
TARGET_100K = 100_000
COPY_ROWS = 250_000
UNFILTERED_EVERY = 3
"""Latency over the whole corpus is measured on every third question (each question
filtered to its repository is asked, for NDCG)."""


def log(message: str) -> None:
    _log(message, stamp=True)  # a phase runs for hours: the time of each line matters


def settings_for(home: Path, code_only: bool = False):
    if code_only:
        return bench_settings(home, ignored_globs=list(CODE_ONLY))
    return bench_settings(home)


def bench_folders(bench_dir: Path) -> dict[str, Path]:
    """Every benchmark repository's folder, as bench.quality indexes it."""
    folders = {}
    for name, spec in SEMBLE_SET.specs().items():
        root = spec.get("benchmark_root") or ""
        folder = bench_dir / name / root if root else bench_dir / name
        if folder.is_dir():
            folders[name] = folder
    return folders


def python_folders() -> dict[str, Path]:
    import sysconfig

    folders = {"python-stdlib": Path(sysconfig.get_paths()["stdlib"])}
    site = Path(sysconfig.get_paths()["purelib"])
    for child in sorted(site.iterdir()):
        if child.is_dir() and not child.name.endswith((".dist-info", ".egg-info", "__pycache__")):
            folders[f"site-{child.name.lower().replace('_', '-')}"] = child
    return folders


def load(out: Path) -> dict[str, Any]:
    return json.loads(out.read_text()) if out.is_file() else {}


def save(out: Path, results: dict[str, Any]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")


# -- build -------------------------------------------------------------------------------
def build(work: Path, bench_dir: Path) -> dict[str, Any]:
    from seek.corpus.build import CorpusIndexer
    from seek.corpus.catalog import Catalog
    from seek.corpus.fanout import RayRunner
    from seek.corpus.location import CorpusLocation

    location = CorpusLocation(str(work / "base"))
    catalog = Catalog(location)
    groups = [(bench_folders(bench_dir), False), (python_folders(), True)]
    runner = RayRunner(workers=2)
    reports = []
    try:
        for folders, code_only in groups:
            for name, folder in folders.items():
                catalog.add(str(folder), name)
            settings = settings_for(work / "home", code_only)
            log(f"indexing {len(folders)} repositories (code only: {code_only})")
            started = time.perf_counter()
            report = CorpusIndexer(location, settings, runner, ann_min_rows=1 << 62).run(
                list(folders)
            )
            reports.append(report.to_json() | {"wall_s": time.perf_counter() - started})
            log(f"{report.chunks} chunks in {report.seconds:.0f} s")
    finally:
        runner.close()
    chunks = sum(r["chunks"] for r in reports)
    return {"chunks": chunks, "runs": [{k: v for k, v in r.items() if k != "repos"}
                                       for r in reports], "loadavg": loadavg()}  # fmt: skip


# -- throughput ----------------------------------------------------------------------------
def throughput(work: Path, bench_dir: Path) -> dict[str, Any]:
    import shutil

    from seek.corpus.build import CorpusIndexer
    from seek.corpus.catalog import Catalog
    from seek.corpus.fanout import LocalRunner, RayRunner
    from seek.corpus.location import CorpusLocation
    from seek.index.indexer import index_workspace

    folders = {n: f for n, f in bench_folders(bench_dir).items() if n in THROUGHPUT_REPOS}
    out: dict[str, Any] = {"repos": sorted(folders), "loadavg_start": loadavg()}
    home = work / "tp-home"
    shutil.rmtree(home, ignore_errors=True)
    settings = settings_for(home)
    started = time.perf_counter()
    chunks = 0
    for folder in folders.values():
        chunks += index_workspace(folder, settings).chunks
    seconds = time.perf_counter() - started
    out["single_process_indexer"] = {"chunks": chunks, "seconds": round(seconds, 2),
                                     "chunks_per_s": round(chunks / seconds, 1)}  # fmt: skip
    log(f"single process: {out['single_process_indexer']}")
    for label, workers in (("corpus_in_process", 0), ("ray_1_worker", 1), ("ray_2_workers", 2)):
        target = work / f"tp-{label}"
        shutil.rmtree(target, ignore_errors=True)
        location = CorpusLocation(str(target))
        for name, folder in folders.items():
            Catalog(location).add(str(folder), name)
        runner = LocalRunner() if workers == 0 else RayRunner(workers=workers)
        try:
            if workers:  # warm the workers (model loaded) so start-up is not counted
                list(runner.map_unordered(_warm, [()] * workers, workers))
            report = CorpusIndexer(location, settings, runner).run()
        finally:
            runner.close()
        out[label] = {"chunks": report.chunks, "seconds": round(report.seconds, 2),
                      "chunks_per_s": round(report.chunks / report.seconds, 1)}  # fmt: skip
        log(f"{label}: {out[label]}")
    out["loadavg_end"] = loadavg()
    return out


def _warm() -> int:
    from seek.corpus.work import embedder_for
    from seek.embed import model_id_for
    from seek.settings import load_settings

    settings = load_settings()
    embedder_for(settings, model_id_for(settings)).embed(["warm up"])
    return os.getpid()


# -- replicate -----------------------------------------------------------------------------
class _Batches:
    """Rows added to a table in batches of ``COPY_ROWS`` (fewer, larger fragments: no
    compaction needed afterwards)."""

    def __init__(self, table) -> None:
        self.table, self.pending, self.rows = table, [], 0

    def add(self, data) -> None:
        self.pending.append(data)
        self.rows += data.num_rows
        if self.rows >= COPY_ROWS:
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa

        if self.pending:
            self.table.add(pa.concat_tables(self.pending))
        self.pending, self.rows = [], 0


def _copy_repos(base, target, catalog_base, catalog_target, names, suffix: str) -> int:
    """Rows and manifests of ``names`` from base to target, renamed ``<name><suffix>``."""
    import pyarrow as pa

    chunks = 0
    table = base.open()
    for name in names:
        where = f"repo = '{name}'"
        rows = table.count_rows(where)
        if not rows:
            continue
        data = table.search().where(where).limit(rows).to_arrow()
        new_name = name + suffix
        data = data.set_column(data.schema.get_field_index("repo"), "repo",
                               pa.array([new_name] * data.num_rows, pa.string()))  # fmt: skip
        target.add(data)
        manifest = catalog_base.load_manifest(name)
        catalog_target.save_manifest(new_name, manifest)
        _register(catalog_target.location, {new_name: catalog_base.repos()[name].source})
        chunks += sum(s.chunks for s in manifest.files.values())
    return chunks


def _register(location, sources: dict[str, str]) -> None:
    """Catalog entries for copied repositories, written as they are: a copy's source may
    be gone from this machine (``Catalog.add`` checks it), and the copy is never re-indexed."""
    from seek.corpus.location import CONFIG_OBJECT

    with location.lock("_corpus", "bench.scale"):
        config = location.read_json(CONFIG_OBJECT) or {"repos": {}, "model": ""}
        config.setdefault("repos", {}).update(sources)
        location.write_json(CONFIG_OBJECT, config)


def replicate(work: Path, only: tuple[str, ...] = ("100k", "1m")) -> dict[str, Any]:
    import shutil

    from bench.common import read_repo_list
    from seek.corpus.catalog import Catalog
    from seek.corpus.location import CorpusLocation
    from seek.store.corpus_table import CorpusTable

    base_loc = CorpusLocation(str(work / "base"))
    base, base_catalog = CorpusTable(base_loc), Catalog(base_loc)
    sizes = {n: sum(s.chunks for s in base_catalog.load_manifest(n).files.values())
             for n in base_catalog.repos()}  # fmt: skip
    dev = [n for n in read_repo_list() if n in sizes]
    out: dict[str, Any] = {}
    plans = {"100k": TARGET_100K, "1m": TARGET_1M}
    for label in only:
        target_chunks = plans[label]
        folder = work / label
        shutil.rmtree(folder, ignore_errors=True)
        location = CorpusLocation(str(folder))
        table, catalog = CorpusTable(location), Catalog(location)
        catalog.set_model(base_catalog.model())
        started = time.perf_counter()
        writer = _Batches(table)
        chunks = _copy_repos(base, writer, base_catalog, catalog, dev, "")
        # Then other repositories, smallest first and none that would overshoot the target
        # by more than 5%, then copies of everything (as many as needed).
        for name in sorted((n for n in sizes if n not in dev), key=sizes.get):
            if chunks >= target_chunks:
                break
            if chunks + sizes[name] <= target_chunks * 1.05:
                chunks += _copy_repos(base, writer, base_catalog, catalog, [name], "")
        copy = 2
        while chunks < target_chunks:
            for name in sorted(sizes, key=sizes.get):
                if chunks >= target_chunks:
                    break
                if chunks + sizes[name] <= target_chunks * 1.05:
                    suffix = f"--copy{copy}"
                    chunks += _copy_repos(base, writer, base_catalog, catalog, [name], suffix)
            copy += 1
        writer.flush()
        copied = time.perf_counter() - started
        log(f"{label}: {chunks} chunks copied in {copied:.0f} s; building indexes")
        started = time.perf_counter()
        table.finish(compact=False)  # written in large fragments already
        out[label] = {"chunks": chunks, "rows": table.count_rows(), "repos": len(catalog.repos()),
                      "copy_s": round(copied, 1),
                      "index_build_s": round(time.perf_counter() - started, 1),
                      "indexes": table.index_names(), "loadavg": loadavg()}  # fmt: skip
        log(f"{label}: {out[label]}")
    return out


FRAGMENT_ROWS = 2_048
"""Rows per data file of a corpus staged for object storage: moto answers a ranged read by
reading the whole object, so a 1.4 GB fragment made every read of the table seconds long."""


class _Fragments:
    """Rows added in data files of at most ``FRAGMENT_ROWS`` rows."""

    def __init__(self, table) -> None:
        self.table = table

    def add(self, data) -> None:
        for offset in range(0, data.num_rows, FRAGMENT_ROWS):
            self.table.add(data.slice(offset, FRAGMENT_ROWS))


def to_s3(work: Path, uri: str, size: str) -> dict[str, Any]:
    """The ``size`` corpus on object storage: its rows rewritten in a local staging folder in
    small data files (``FRAGMENT_ROWS``), its indexes built there (training IVF-PQ through
    moto's ranged reads did not finish in round two), then every file of the folder -
    table, indexes, manifests, catalog - uploaded with boto3 as it is (a LanceDB dataset
    names its files relative to its folder)."""
    import shutil

    from seek.corpus.catalog import Catalog
    from seek.corpus.location import CorpusLocation
    from seek.store.corpus_table import CorpusTable

    source = CorpusLocation(str(work / size))
    staging = work / f"{size}-s3"
    marker = staging / "staged.json"  # a staging that finished is uploaded as it is
    table = CorpusTable(CorpusLocation(str(staging)))
    if marker.is_file():
        staged = json.loads(marker.read_text())
    else:
        shutil.rmtree(staging, ignore_errors=True)
        target = CorpusLocation(str(staging))
        src_catalog, dst_catalog = Catalog(source), Catalog(target)
        started = time.perf_counter()
        names = list(src_catalog.repos())
        _copy_repos(CorpusTable(source), _Fragments(table), src_catalog, dst_catalog, names, "")
        dst_catalog.set_model(src_catalog.model())
        copied = time.perf_counter() - started
        started = time.perf_counter()
        table.finish(compact=False)
        staged = {"copy_s": round(copied, 1),
                  "index_build_s": round(time.perf_counter() - started, 1)}  # fmt: skip
        marker.write_text(json.dumps(staged))
    location = CorpusLocation(uri)
    client = location.s3()
    started = time.perf_counter()
    files = [p for p in sorted(staging.rglob("*")) if p.is_file() and p != marker]
    for path in files:
        key = "/".join(filter(None, [location.prefix, str(path.relative_to(staging))]))
        client.upload_file(str(path), location.bucket, key)
    data_files = sorted(p.stat().st_size for p in files if p.suffix == ".lance")
    return {"uri": uri, "rows": table.count_rows(), **staged, "indexes": table.index_names(),
            "upload_s": round(time.perf_counter() - started, 1), "objects": len(files),
            "bytes": sum(p.stat().st_size for p in files),
            "largest_object": max(p.stat().st_size for p in files),
            "median_lance_file": data_files[len(data_files) // 2] if data_files else 0,
            "loadavg": loadavg()}  # fmt: skip


# -- query (one process per corpus) ------------------------------------------------------------
def query_process(
    uri: str, bench_dir: Path, runs: int, only_modes: tuple[str, ...] = (), every: int = 1
) -> dict[str, Any]:
    """Runs in its own process: latency and peak RSS of a corpus searcher."""
    from bench.quality.quality import load_repos
    from bench.quality.scoring import Hit, score_query
    from seek.corpus.location import CorpusLocation
    from seek.corpus.search import CorpusSearcher
    from seek.settings import load_settings

    repos, _ = load_repos(bench_dir, SEMBLE_SET.default_names())
    settings = load_settings(user_config=Path("/nonexistent/seek.toml"))
    rss_start = peak_rss_kb()
    searcher = CorpusSearcher(CorpusLocation(uri), settings)
    questions = [(repo.name, q) for repo in repos for q in repo.queries][::every]
    for name, q in questions[:5]:  # warm: model, ranker, caches
        searcher.search(q.query, 10, repos=[name])
    out: dict[str, Any] = {"questions": len(questions),
                           "unfiltered_questions": len(questions[::UNFILTERED_EVERY])}  # fmt: skip
    scores: dict[str, dict[str, list[float]]] = {}
    modes = [("filtered", True), ("unfiltered", False)]
    if searcher.table.has_vector_index():  # every filtered question on the ANN index too
        modes.append(("filtered_ann", True))
    if searcher.table.count_rows() <= 200_000:  # where exact search stops being enough
        modes.append(("unfiltered_exact", False))
    modes = [m for m in modes if m[0] in only_modes or not only_modes]
    exact = searcher._exact
    for label, filtered in modes:
        searcher._exact = exact  # type: ignore[method-assign]
        if label == "unfiltered_exact":
            searcher._exact = lambda where: True  # type: ignore[method-assign]
        elif label == "filtered_ann":
            searcher._exact = lambda where: False  # type: ignore[method-assign]
        latencies = []
        asked = questions if filtered else questions[::UNFILTERED_EVERY]
        cpu = []
        load_start = loadavg()
        for _ in range(runs):
            for name, q in asked:
                started, cpu_started = time.perf_counter(), time.process_time()
                result = searcher.search(q.query, 10, repos=[name] if filtered else ())
                latencies.append((time.perf_counter() - started) * 1000)
                cpu.append((time.process_time() - cpu_started) * 1000)
                if filtered and _ == 0:
                    hits = [Hit(h.path, h.start_line, h.end_line) for h in result.hits]
                    per_repo = scores.setdefault(label, {})
                    per_repo.setdefault(name, []).append(score_query(hits, q)["ndcg10"])
        latencies.sort()
        out[label] = {"p50_ms": round(statistics.median(latencies), 1),
                      "p95_ms": round(latencies[int(0.95 * (len(latencies) - 1))], 1),
                      "mean_ms": round(statistics.fmean(latencies), 1),
                      "cpu_p50_ms": round(statistics.median(cpu), 1),
                      "cpu_p95_ms": round(sorted(cpu)[int(0.95 * (len(cpu) - 1))], 1),
                      "loadavg_start": load_start, "loadavg_end": loadavg()}  # fmt: skip
        if label in scores:
            per_repo_mean = {n: statistics.fmean(v) for n, v in scores[label].items()}
            out[label]["ndcg10"] = statistics.fmean(per_repo_mean.values())
            out[label]["ndcg10_per_repo"] = per_repo_mean
    out["peak_rss_mb"] = round(peak_rss_kb() / 1024, 1)
    out["rss_before_open_mb"] = round(rss_start / 1024, 1)
    out["openblas_threads"] = os.environ.get("OPENBLAS_NUM_THREADS", "")
    return out


def query(uri: str, bench_dir: Path, runs: int, modes: str = "", every: int = 1) -> dict[str, Any]:
    command = [sys.executable, "-m", "bench.scale", "--query-process", uri,
               "--bench-dir", str(bench_dir), "--runs", str(runs), "--modes", modes,
               "--every", str(every)]  # fmt: skip
    # The search process runs numpy's BLAS on one thread, as every seek command does
    # (seek.store.threads.one_blas_thread): OpenBLAS's idle threads spin, and on 2 cores they
    # took CPU from LanceDB's (docs/research/bench-rounds.md, "Scale, round four").
    env = {**os.environ, "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "1")}
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT, env=env)
    if done.returncode:
        raise RuntimeError(f"query process failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1]) | {"loadavg": loadavg()}


def per_workspace_ndcg(work: Path, bench_dir: Path) -> dict[str, Any]:
    """seek's per-workspace search of the same folders (mean over repos of mean NDCG@10)."""
    from bench.quality.quality import load_repos
    from bench.quality.scoring import Hit, score_query
    from seek.index.indexer import index_workspace
    from seek.retrieve import Searcher

    settings = settings_for(work / "ws-home")
    repos, _ = load_repos(bench_dir, SEMBLE_SET.default_names())
    per_repo = {}
    for repo in repos:
        index_workspace(repo.folder, settings)
        searcher = Searcher.open(repo.folder, settings)
        scores = []
        for q in repo.queries:
            result = searcher.search(q.query, 10)
            hits = [Hit(h.path, h.start_line, h.end_line) for h in result.hits]
            scores.append(score_query(hits, q)["ndcg10"])
        per_repo[repo.name] = statistics.fmean(scores)
    return {"ndcg10": statistics.fmean(per_repo.values()), "ndcg10_per_repo": per_repo}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.scale", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    parser.add_argument("--bench-dir", type=Path, help=BENCH_DIR_HELP)
    parser.add_argument("--phases", default="build,throughput,replicate,query,ndcg")
    parser.add_argument("--sizes", default="100k,1m")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--s3", default="")
    parser.add_argument(
        "--modes", default="", help="query: only these (filtered,unfiltered,unfiltered_exact)"
    )
    parser.add_argument(
        "--every", type=int, default=1, help="query: every Nth dev question only (default all)"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--query-process", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if {"build", "throughput", "query", "s3", "ndcg"} & set(args.phases.split(",")):
        args.bench_dir = resolve_bench_dir(parser, args.bench_dir)
    if args.query_process:
        modes = tuple(m for m in args.modes.split(",") if m)
        found = query_process(args.query_process, args.bench_dir, args.runs, modes, args.every)
        print(json.dumps(found))
        return 0
    results = load(args.out)
    results["meta"] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                       "command": "python -m bench.scale " + " ".join(argv or sys.argv[1:]),
                       "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
                                  f"Python {platform.python_version()}"}  # fmt: skip
    sizes = tuple(s for s in args.sizes.split(",") if s)
    for phase in [p for p in args.phases.split(",") if p]:
        log(f"phase {phase}")
        if phase == "build":
            results["build"] = build(args.work, args.bench_dir)
        elif phase == "throughput":
            results["throughput"] = throughput(args.work, args.bench_dir)
        elif phase == "replicate":
            results.setdefault("corpora", {}).update(replicate(args.work, sizes))
        elif phase == "query":
            for size in sizes:
                results.setdefault("query", {})[size] = query(
                    str(args.work / size), args.bench_dir, args.runs, args.modes, args.every
                )
                log(f"query {size}: {results['query'][size]}")
        elif phase == "s3":
            if not args.s3:
                parser.error("the s3 phase needs --s3 URI")
            entry = to_s3(args.work, args.s3, sizes[0])
            entry["query"] = query(args.s3, args.bench_dir, args.runs, args.modes, args.every)
            results.setdefault("s3", {})[sizes[0]] = entry
            log(f"s3 {sizes[0]}: {entry}")
        elif phase == "ndcg":
            results["per_workspace"] = per_workspace_ndcg(args.work, args.bench_dir)
        else:
            parser.error(f"unknown phase {phase}")
        save(args.out, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
