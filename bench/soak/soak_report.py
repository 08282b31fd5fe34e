"""The soak's verdict, plot and table (issue 20's targets).

Targets, over a run of N requests sampled every few hundred or thousand:

- ``second_half_growth``: the highest RSS of the second half over the RSS at N/2, minus one;
  below 5 %;
- ``peak_over_1k``: the highest RSS after the first 1,000 requests over the RSS at 1,000;
  below 1.5;
- file descriptors and threads constant: in the second half they never exceed the most seen
  between request 1,000 and N/2 (a sample may catch a request in flight holding one more, so
  "constant" means no new highs and no trend, with the ranges printed);
- no errors, every planned request answered.
"""

from __future__ import annotations

from pathlib import Path

MAX_SECOND_HALF_GROWTH = 0.05
MAX_PEAK_OVER_1K = 1.5
WARM_UP = 1_000


def report(run: dict) -> dict:
    """The verdict of one run (``run["samples"]`` as written by bench/soak/soak.py)."""
    samples = [s for s in run["samples"] if s["requests"] >= WARM_UP]
    if len(samples) < 3:
        return {"pass": False, "why": "too few samples after the first 1,000 requests"}
    half_at = run["requests"] / 2
    half = min(samples, key=lambda s: abs(s["requests"] - half_at))
    first = [s for s in samples if s["requests"] <= half["requests"]]
    second = [s for s in samples if s["requests"] >= half["requests"]]
    base = samples[0]
    verdict = {
        "rss_start_mib": round(run["samples"][0]["rss_mib"], 1),
        "rss_1k_mib": round(base["rss_mib"], 1),
        "rss_half_mib": round(half["rss_mib"], 1),
        "rss_end_mib": round(samples[-1]["rss_mib"], 1),
        "rss_max_mib": round(max(s["rss_mib"] for s in samples), 1),
        "second_half_growth": round(max(s["rss_mib"] for s in second) / half["rss_mib"] - 1, 4),
        "peak_over_1k": round(max(s["rss_mib"] for s in samples) / base["rss_mib"], 3),
    }
    for key in ("fds", "threads"):
        verdict[f"{key}_first_half"] = [min(s[key] for s in first), max(s[key] for s in first)]
        verdict[f"{key}_second_half"] = [min(s[key] for s in second), max(s[key] for s in second)]
    verdict["pass"] = (
        verdict["second_half_growth"] < MAX_SECOND_HALF_GROWTH
        and verdict["peak_over_1k"] < MAX_PEAK_OVER_1K
        and verdict["fds_second_half"][1] <= verdict["fds_first_half"][1]
        and verdict["threads_second_half"][1] <= verdict["threads_first_half"][1]
        and run["errors"] == 0
        and run["requests"] == run["planned"]
    )
    return verdict


def table(runs: list[dict]) -> str:
    """The markdown table for bench/README.md."""
    lines = [
        "| server | requests | errors | edits seen (median s) | RSS start / 1k / half / end "
        "/ max (MiB) | 2nd-half growth | max / 1k | fds 1st / 2nd half | threads 1st / 2nd half "
        "| pass |",
        "|---|---:|---:|---:|---|---:|---:|---|---|---|",
    ]
    for run in runs:
        v = run["verdict"]
        rss = " / ".join(
            f"{v[k]:.0f}"
            for k in ("rss_start_mib", "rss_1k_mib", "rss_half_mib", "rss_end_mib", "rss_max_mib")
        )
        span = lambda pair: f"{pair[0]}-{pair[1]}"  # noqa: E731
        lines.append(
            f"| seek {run['server']} | {run['requests']:,} | {run['errors']} | "
            f"{run['edits']} ({run['edit_seen_median_s']}) | {rss} | "
            f"{v['second_half_growth']:+.1%} | {v['peak_over_1k']:.2f} | "
            f"{span(v['fds_first_half'])} / {span(v['fds_second_half'])} | "
            f"{span(v['threads_first_half'])} / {span(v['threads_second_half'])} | "
            f"{'yes' if v['pass'] else 'NO'} |"
        )
    return "\n".join(lines)


def write_plot(runs: list[dict], path: Path) -> None:
    """RSS, fds and threads against requests, one column per server."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not runs:
        return
    figure, axes = plt.subplots(2, len(runs), figsize=(6.5 * len(runs), 6), squeeze=False)
    for column, run in enumerate(runs):
        samples = run["samples"]
        x = [s["requests"] for s in samples]
        top, bottom = axes[0][column], axes[1][column]
        top.plot(x, [s["rss_mib"] for s in samples], label="RSS")
        top.plot(x, [s["anon_mib"] for s in samples], label="anonymous RSS", linestyle="--")
        base = run["verdict"].get("rss_1k_mib")
        if base:
            top.axhline(
                base * MAX_PEAK_OVER_1K, color="red", linewidth=0.8, label="1.5 x RSS at 1k"
            )
        top.set_ylim(bottom=0)
        top.set_ylabel("MiB")
        top.set_title(f"seek {run['server']}: {', '.join(run['workspaces'])}")
        top.legend(loc="lower right")
        bottom.plot(x, [s["fds"] for s in samples], label="open fds")
        bottom.plot(x, [s["threads"] for s in samples], label="threads")
        if all("lance_threads" in s for s in samples):  # runs from before had no such count
            lance = [s["lance_threads"] for s in samples]
            bottom.plot(x, lance, label="of which LanceDB's", linestyle="--")
        bottom.set_ylim(bottom=0)
        bottom.set_xlabel("requests" if run["server"] == "serve" else "tool calls")
        bottom.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)
