"""The record of a ``bench.quality`` run that the docs' tables are generated from (issue 46).

A run's full results (every question's hits, ablations' per-question scores) are megabytes
and stay out of the repository; ``FILE-summary.json`` beside them keeps what a table shows:
the run's date, commit and machine, each tool's overall NDCG, pooled latency and context
recall, and each ablation's overall figures. ``bench.report`` renders it.

    python -m bench.quality.record bench/results/quality.json   # write the summary again
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

META_KEPT = ("command", "seek_source_digest", "loadavg_start", "loadavg_end", "loadavg_before_seek",
             "loadavg_before_semble", "set", "runs",
             "k", "model", "repos_run", "skipped", "semble_version", "seek_version")  # fmt: skip


def _tool(result: dict[str, Any]) -> dict[str, Any]:
    context = result.get("context") or {}
    return {
        "overall": result["overall"],
        "latency": result["latency"]["pooled"],
        "mean_repo_p50_ms": result["latency"]["mean_repo_p50_ms"],
        "repos": len(result["repos"]),
        "failures": [f["repo"] for f in result.get("failures", [])],
        "context_recall": {
            k: context[k] for k in ("recall", "recalled", "questions", "mean_chars") if k in context
        },
    }


def summary(data: dict[str, Any]) -> dict[str, Any]:
    """The summary of a full results object (as ``bench.quality`` writes it)."""
    meta = data["meta"]
    out: dict[str, Any] = {
        "date": meta["date"],
        "commit": meta.get("seek_commit", "?"),
        "machine": meta["machine"],
        **{key: meta[key] for key in META_KEPT if key in meta},
        "notes": data.get("notes", []),
    }
    for tool in ("seek", "semble"):
        if isinstance(data.get(tool), dict):
            out[tool] = _tool(data[tool])
    ablations = data.get("ablations") or {}
    out["ablations"] = {
        name: {"overall": entry["overall"], "latency": entry.get("latency")}
        for name, entry in ablations.items()
        if "overall" in entry
    }
    return out


def summary_path(results: Path) -> Path:
    return results.with_name(results.stem + "-summary.json")


def write_summary(results: Path, data: dict[str, Any]) -> Path:
    path = summary_path(results)
    path.write_text(json.dumps(summary(data), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.quality.record", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("results", type=Path, help="a bench.quality results file (FILE.json)")
    results = parser.parse_args(argv).results
    print(write_summary(results, json.loads(results.read_text(encoding="utf-8"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
