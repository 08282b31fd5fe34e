"""The renderers of ``bench.report``: results files in, a markdown table out (issue 46).

Each takes the loaded results files of its table, in the order the registry names them, and
returns the block's lines: one provenance line per file (date, commit and machine of the
run) and the table. A renderer only formats: every number comes from a results file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Results = Sequence[tuple[str, dict[str, Any]]]
"""(path relative to the repository root, loaded JSON) per results file."""


def machine(value: Any) -> str:
    """A results file's machine in a few words (harnesses record a string or
    ``bench.common.machine_info()``'s dict)."""
    if isinstance(value, dict):
        cpus = f"{value.get('cpus')} CPUs" if value.get("cpus") else ""
        mem = f"{value['mem_gb']:g} GB" if value.get("mem_gb") else ""
        return ", ".join(p for p in (value.get("cpu", ""), cpus, mem) if p) or "?"
    return str(value) if value else "?"


def provenance(path: str, data: dict[str, Any]) -> str:
    return (
        f"Run of record: {data.get('date', '?')}, seek `{data.get('commit', '?')}`, "
        f"machine: {machine(data.get('machine'))} (`{path}`)."
    )


def header(results: Results) -> list[str]:
    return [provenance(path, data) for path, data in results] + [""]


def table(head: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> list[str]:
    """``align``: one letter a column, ``l`` or ``r``."""
    rule = "|" + "|".join("---" if a == "l" else "---:" for a in align) + "|"
    return ["| " + " | ".join(head) + " |", rule] + ["| " + " | ".join(r) + " |" for r in rows]


def f3(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def ms(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"


def chars(value: float | None) -> str:
    return "" if value is None else f"{value:,.0f}"


# -- bench.quality ---------------------------------------------------------------------------
RANKER_OFF = "-learned_ranker"


def _quality_row(name: str, overall: dict, latency: dict | None, recall: str) -> list[str]:
    latency = latency or {}
    return [name, f3(overall.get("ndcg10")), f3(overall.get("ndcg10_file")),
            f3(overall.get("ndcg5")), ms(latency.get("p50_ms")), ms(latency.get("p95_ms")),
            recall]  # fmt: skip


def quality(results: Results) -> list[str]:
    """bench/README's table: seek, seek without its learned ranker, semble."""
    (path, data), = results  # fmt: skip
    rows = []
    seek, semble = data.get("seek"), data.get("semble")
    if seek:
        recall = seek.get("context_recall", {})
        shown = (f"{recall['recall']:.3f} ({recall['recalled']}/{recall['questions']})"
                 if recall.get("questions") else "")  # fmt: skip
        rows.append(_quality_row("seek (learned ranker on, the default)", seek["overall"],
                                 seek["latency"], shown))  # fmt: skip
        off = data.get("ablations", {}).get(RANKER_OFF)
        if off:
            rows.append(_quality_row("seek, learned ranker off (one run a question)",
                                     off["overall"], off["latency"], ""))  # fmt: skip
    if semble:
        rows.append(_quality_row(f"semble {data.get('semble_version', '')}".strip(),
                                 semble["overall"], semble["latency"], ""))  # fmt: skip

    def load(key: str) -> str:
        value = data.get(key)
        return f"{value[0]:.1f}" if value else "?"

    note = (
        f"{data.get('repos_run')} repositories, {data.get('runs')} runs a question (latency: the "
        f"median); load average {load('loadavg_before_seek')} as seek began, "
        f"{load('loadavg_before_semble')} as semble began, {load('loadavg_end')} at the end."
    )
    head = ["tool", "NDCG@10 chunk", "NDCG@10 file", "NDCG@5 chunk", "p50 ms", "p95 ms",
            "context recall"]  # fmt: skip
    return header(results)[:-1] + [note, ""] + table(head, rows, "lrrrrrr")


# -- the README's headline -------------------------------------------------------------------
def headline(results: Results) -> list[str]:
    """The README's table: quality, CPU per query and indexing CPU, seek beside semble (CPU
    rather than wall time: the machine the runs of record share is loaded, and its load is
    printed with them)."""
    (_, q), (_, cpu), (_, index), (_, cli) = results  # fmt: skip
    seek, semble = q["seek"], q.get("semble") or {}
    off = q.get("ablations", {}).get(RANKER_OFF, {}).get("overall", {})
    recall = seek.get("context_recall", {})
    s = index["summary"]
    version = q.get("semble_version", "")
    rows = [
        ["NDCG@10, chunk level (learned ranker on, the default)",
         f"**{f3(seek['overall']['ndcg10'])}**", f3(semble.get("overall", {}).get("ndcg10"))],
        ["NDCG@10 with the learned ranker off (`--no-rerank`)", f3(off.get("ndcg10")), ""],
        ["`seek context` recall (every answering span in its blocks)",
         f3(recall.get("recall")), ""],
        ["CPU per query, p50, mean over repositories (one BLAS thread)",
         f"{cpu['summary']['mean_seek_ms']:.2f} ms", f"{cpu['summary']['mean_semble_ms']:.2f} ms"],
        ["CPU of a cold index, mean per repository (seek also stores the code graph)",
         f"{s['seek_mean_cold_cpu_s']:.2f} s", f"{s['semble_mean_cold_cpu_s']:.2f} s"],
        ["`seek search` as a whole process: its wall time / semble's (median over repositories)",
         f"{_search_ratio(cli):.2f}×", ""],
    ]  # fmt: skip
    loads = (f"Load average (2 cores): {q['loadavg_before_seek'][0]:.1f}-{q['loadavg_end'][0]:.1f} "
             f"for quality, {cpu['summary']['load'][0]:.1f} at the end of CPU per query, up to "
             f"{s['max_loadavg_1m']:.1f} for indexing, up to {_max_load(cli):.1f} for whole "
             "processes.")  # fmt: skip
    return (header(results)[:-1] + [loads, ""]
            + table(["", "seek", f"semble {version}".strip()], rows, "lrr"))  # fmt: skip


def _search_ratio(cli: dict) -> float:
    from bench.speed.cli_speed import LARAVEL, comparison_rows, dev_summary

    repos = {n: comparison_rows(r["medians"]) for n, r in cli["repos"].items() if n != LARAVEL}
    return next(r["wall_ratio_median"] for r in dev_summary(repos)
                if r["operation"].startswith("search"))  # fmt: skip


def _max_load(cli: dict) -> float:
    return max((v for r in cli["repos"].values() for v in r.get("loadavg_1m") or []), default=0)


# -- bench.speed -----------------------------------------------------------------------------
def index_speed(results: Results) -> list[str]:
    (_, data), = results  # fmt: skip
    s = data["summary"]
    abseil = s.get("abseil-cpp_nochange_s") or {}
    rows = [
        ["mean cold wall", f"{s['seek_mean_cold_s']:.2f} s", f"{s['semble_mean_cold_s']:.2f} s",
         f"**{s['ratio_of_means']:.2f}** (ratio of means)"],
        ["mean cold CPU", f"{s['seek_mean_cold_cpu_s']:.2f} s",
         f"{s['semble_mean_cold_cpu_s']:.2f} s", f"**{s['cpu_ratio_of_means']:.2f}**"],
        ["per-repository wall ratio: median / geomean / max", "", "",
         f"{s['median_ratio']:.2f} / {s['geomean_of_ratios']:.2f} / {s['max_ratio']:.2f} "
         f"({s['max_ratio_repo']})"],
        ["mean no-change", f"{s['seek_mean_nochange_s']:.3f} s",
         f"{s['semble_mean_nochange_s']:.3f} s", ""],
        ["abseil-cpp no-change (the largest)", f"{abseil.get('seek', 0):.3f} s",
         f"{abseil.get('semble', 0):.3f} s", ""],
    ]  # fmt: skip
    runs = data.get("runs")
    note = (f"{s['repos_measured']} repositories, {runs} run{'' if runs == 1 else 's'} each "
            f"{'' if runs == 1 else '(medians) '}"
            f"at load average up to {s.get('max_loadavg_1m', 0):.1f}.")  # fmt: skip
    return header(results)[:-1] + [note, ""] + table(["", "seek", "semble", "ratio"], rows, "lrrr")


def query_cpu(results: Results) -> list[str]:
    """CPU per query, seek beside semble (the per-repository rows stay in the file)."""
    (_, data), = results  # fmt: skip
    s = data["summary"]
    done = [r for r in data["rows"] if r.get("seek") and r.get("semble")]
    worst = max(done, key=lambda r: r["seek"] / r["semble"])
    rows = [
        ["mean of the per-repository CPU p50s", f"{s['mean_seek_ms']:.2f} ms",
         f"{s['mean_semble_ms']:.2f} ms", f"{s['mean_seek_ms'] / s['mean_semble_ms']:.2f}"],
        ["per-repository ratio: median / max", "", "",
         f"**{s['median_ratio']:.2f}** / {worst['seek'] / worst['semble']:.2f} ({worst['repo']})"],
    ]  # fmt: skip
    note = (
        f"{s['repos']} repositories, one BLAS thread, load average at the end {s['load'][0]:.1f}."
    )
    return header(results)[:-1] + [note, ""] + table(["", "seek", "semble", "ratio"], rows, "lrrr")


def ms2(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


# -- bench.graph -----------------------------------------------------------------------------
LANGUAGE = {"python": "Python", "javascript": "JavaScript", "typescript": "TypeScript", "go": "Go"}


def graph_oracle(results: Results) -> list[str]:
    (_, data), = results  # fmt: skip
    rows = [[r["repo"], LANGUAGE.get(r["language"], r["language"]), str(r["sampled"]),
             f3(r["def_top1_at_use"]), f3(r["def_top1_name"]),
             f"{f3(r['refs_precision'])} / {f3(r['refs_recall'])}",
             f"{f3(r['grep_precision'])} / {f3(r['grep_recall'])}",
             f"{chars(r['refs_chars'])} / {chars(r['grep_chars'])}"]
            for r in data["repos"]]  # fmt: skip
    head = ["repository", "language", "defs", "definition of a use, top-1", "`def NAME` top-1",
            "uses precision / recall", "grep precision / recall",
            "characters: uses / grep"]  # fmt: skip
    return header(results) + table(head, rows, "llrrrrrr")


TOKEN_ARMS = (
    ("seek context", "`seek context` once, then its blocks' files"),
    ("seek search", "`seek search`, the hits' lines, then their files"),
    ("grep counts + read", "baseline: grep the words, read files whole"),
)


def graph_tokens(results: Results) -> list[str]:
    (_, data), = results  # fmt: skip
    pooled = data["questions_summary"]["all"]
    rows = [[label, f"{pooled[arm]['covered']:.2f}", chars(pooled[arm]["chars"]["median"]),
             chars(pooled[arm]["chars"]["mean"]), chars(pooled[arm]["covered_chars_median"])]
            for arm, label in TOKEN_ARMS]  # fmt: skip
    head = ["way to the answer", "covered", "median chars", "mean chars", "median when covered"]
    return header(results) + table(head, rows, "lrrrr")


def cli_speed(results: Results) -> list[str]:
    """Whole ``seek`` and ``semble`` processes over the dev repositories (laravel-framework,
    when the run had it, stays in the file)."""
    from bench.speed.cli_speed import LARAVEL, comparison_rows, dev_summary

    (_, data), = results  # fmt: skip
    repos = {name: comparison_rows(repo["medians"])
             for name, repo in data["repos"].items() if name != LARAVEL}  # fmt: skip
    loads = [value for name, repo in data["repos"].items() if name != LARAVEL
             for value in (repo.get("loadavg_1m") or [])
             if isinstance(value, int | float)]  # fmt: skip

    def ratios(row: dict, keys: tuple[str, ...]) -> str:
        if all(row[k] is None for k in keys):
            return ""
        return " / ".join(f"{row[k]:.2f}×" if row[k] is not None else "?" for k in keys)

    rows = [[f"`{r['operation']}`", f"{r['seek_wall_median']:.2f} s",
             ratios(r, ("wall_ratio_median", "wall_ratio_max", "wall_ratio_of_means")),
             ratios(r, ("rss_ratio_median", "rss_ratio_max"))]
            for r in dev_summary(repos)]  # fmt: skip
    note = f"{len(repos)} repositories, one run each"
    if loads:
        note += f", load average {min(loads):.1f}-{max(loads):.1f}"
    head = ["command", "seek wall, median", "wall ratio: median / max / of means",
            "RSS ratio: median / max"]  # fmt: skip
    return header(results)[:-1] + [note + ".", ""] + table(head, rows, "lrrr")


# -- bench.change (issue 44) ----------------------------------------------------------------


def _f1s(micro: dict, method: str) -> tuple[float, float]:
    return micro[method]["file"]["f1"], micro[method]["function"]["f1"]


def change_tools(results: Results) -> list[str]:
    """`seek tests` against per-test coverage, `seek impact` against history, `seek context
    --diff` against real commits: seek beside its baseline, one row a tool."""
    (_, tests), (_, impact), (_, review) = results
    repos = list(tests["repositories"])
    seek = [_f1s(tests["repositories"][r]["micro"], "seek") for r in repos]
    grep = [_f1s(tests["repositories"][r]["micro"], "grep") for r in repos]
    functions = sum(tests["repositories"][r]["functions"] for r in repos)

    def f1_cell(pairs: list[tuple[float, float]]) -> str:
        files = " / ".join(f"{p[0]:.2f}" for p in pairs)
        funcs = " / ".join(f"{p[1]:.2f}" for p in pairs)
        return f"test files F1 {files}; functions F1 {funcs}"

    users, every = impact["all"]["users"], impact["all"]
    rv = review["all"]
    rows = [
        ["`seek tests`",
         f"per-test coverage of {', '.join(repos)} ({functions} functions)",
         f1_cell(seek), "grep: " + f1_cell(grep)],
        ["`seek impact`",
         f"{every['cases']} signature changes in {len(impact['repos'])} repositories' histories",
         f"{users['depth3']['recall']:.2f} of the users the commit edited, in a median "
         f"{every['depth3_rows_median']:g} rows",
         f"grep: {users['grep']['recall']:.2f} in {every['grep_rows_median']:g} rows"],
        ["`seek context --diff`",
         f"one file of {rv['n']} real commits ({len(review['repos'])} repositories)",
         f"{rv['seek']['recall']:.2f} of the other changed files shown, median "
         f"{chars(rv['seek']['chars_median'])} characters",
         f"`git diff` + grep: {rv['grep']['recall']:.2f}, "
         f"{chars(rv['grep']['chars_files_median'])} characters to read"],
    ]  # fmt: skip
    return header(results) + table(["tool", "against", "seek", "baseline"], rows, "llll")


# -- bench.org.oracle --------------------------------------------------------------------------


def _pr(tally: dict | None) -> str:
    if not tally:
        return "not scored"
    return f"{f3(tally.get('precision'))} / {f3(tally.get('recall'))}"


def org_refs(results: Results) -> list[str]:
    """Cross-repository uses (issue 45): each slice's repositories and oracle, the sample, and
    seek's and grep's precision / recall of the uses in other repositories than the
    definition's; seek's dependents against the oracle's."""
    (_, data), = results  # fmt: skip
    rows = []
    for s in data["slices"]:
        repos = s["repos"]
        libraries = [name for name, r in repos.items() if r.get("library")]
        users = [name for name in repos if name not in libraries]
        seek = s.get("seek")
        rows.append([
            f"{LANGUAGE.get(s['language'], s['language'])}: {', '.join(users) or '-'} "
            f"→ {', '.join(libraries)}",
            f"{s['oracle']['tool']}: {s['oracle']['cross_refs']:,} uses of "
            f"{s['oracle']['with_cross_refs']:,} definitions",
            f"{s['sampled']} ({s['sampled_with_refs']} used)",
            _pr(seek), _pr(s["grep"]), _pr(seek.get("dependents") if seek else None),
        ])  # fmt: skip
    head = ["slice: other repositories → libraries (sampled)", "oracle: cross-repository uses",
            "definitions", "seek uses P / R", "grep P / R", "seek dependents P / R"]  # fmt: skip
    return header(results) + table(head, rows, "llrrrr")


def org_scale(results: Results) -> list[str]:
    """Cross-repository references at organisation scale (issue 45, deliver 5): `corpus refs`
    across every repository from a cold CLI and served, per corpus size and dependents; the
    links table and one repository's change."""
    (_, data), = results  # fmt: skip
    sizes = data["sizes"]
    columns = [(size, d) for size in sizes for d in (100, 10) if f"dependents_{d}" in sizes[size]]
    head = ["`corpus refs` across every repository"] + [
        f"{sizes[size]['build']['chunks'] / 1e6:.1f}M chunks, D={d}" for size, d in columns
    ]
    cold, served = ["cold CLI, median (its imports alone)"], ["served p50 / p95 (first answer)"]
    for size, d in columns:
        found = sizes[size][f"dependents_{d}"]
        refs, serve = found["refs"], found["serve"]
        cold.append(f"{refs['cold_cli_s']['median']:.2f} s ({refs['cold_imports_only_s']:.2f})")
        served.append(f"{serve['p50_ms']:.0f} / {serve['p95_ms']:.0f} ms "
                      f"({serve['first_ms'] / 1000:.2f} s)")  # fmt: skip
    lines = header(results) + table(head, [cold, served], "l" + "r" * len(columns))
    biggest = max(sizes.values(), key=lambda s: s["links"]["repos"])["links"]
    index = data["index"]
    runs = ", ".join(f"{v['cold_cli_s']['median']:.2f} s at {v['repos']} repositories"
                     for v in index.values())  # fmt: skip
    return lines + [
        "",
        f"Links of {biggest['repos']:,} repositories: {biggest['rows'] / 1e6:.2f}M rows, "
        f"{biggest['bytes_on_disk'] / 1e6:.0f} MB; one repository's rewritten in "
        f"{biggest['keep_current_one_repo_s']['median']:.2f} s. `seek corpus index URI REPO` "
        f"after one file of it changed: {runs}.",
    ]
