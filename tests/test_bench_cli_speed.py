"""The pure parts of bench.speed.cli_speed: medians over runs, seek/semble rows and ratios, the
median repository, the table (issue 14, item 4). Nothing here is timed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# bench/ is a top-level folder of the repository, not part of the installed package.
_REPO_ROOT = str(Path(__file__).resolve().parent.parent)
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

from bench.speed.cli_speed import (  # noqa: E402
    aggregate_runs,
    comparison_rows,
    dev_summary,
    markdown_table,
    median_repo,
    run_measured,
)


def _s(wall: float, rss: float, cpu: float = 0.1) -> dict:
    return {"wall_s": wall, "cpu_s": cpu, "peak_rss_mb": rss}


def test_aggregate_takes_the_median_of_each_operation_per_tool() -> None:
    runs = [
        {"seek": {"search": _s(3.0, 300)}, "semble": {"search_warm": _s(1.0, 100)}},
        {"seek": {"search": _s(1.0, 310)}, "semble": {"search_warm": _s(2.0, 120)}},
        {"seek": {"search": _s(2.0, 290)}, "semble": {"search_warm": _s(9.0, 110)}},
    ]
    medians = aggregate_runs(runs)
    assert medians["seek"]["search"]["wall_s"] == 2.0
    assert medians["seek"]["search"]["peak_rss_mb"] == 300
    assert medians["seek"]["search"]["wall_runs"] == [3.0, 1.0, 2.0]
    assert medians["semble"]["search_warm"]["wall_s"] == 2.0
    assert medians["semble"]["search_warm"]["runs"] == 3


def test_rows_pair_each_seek_command_with_its_semble_counterpart() -> None:
    medians = aggregate_runs(
        [
            {
                "seek": {"search": _s(2.0, 300), "index_cold": _s(4.0, 400), "status": _s(1, 9)},
                "semble": {"search_warm": _s(1.0, 150), "search_cold": _s(5.0, 200)},
            }
        ]
    )
    rows = {row["operation"]: row for row in comparison_rows(medians)}
    assert rows["search -k 10 (warm index)"]["wall_s_ratio"] == pytest.approx(2.0)
    assert rows["search -k 10 (warm index)"]["peak_rss_mb_ratio"] == pytest.approx(2.0)
    assert rows["index, cold"]["wall_s_ratio"] == pytest.approx(0.8)
    # seek ran no no-change index here, so that row is semble's alone, without a ratio.
    assert rows["index, no change"]["seek_wall_s"] is None
    assert rows["index, no change"]["wall_s_ratio"] is None
    # semble has no status command.
    assert rows["status"]["semble_wall_s"] is None and rows["status"]["seek_wall_s"] == 1
    assert "--help" not in rows  # neither tool measured it


def _rows(ratio: float) -> list[dict]:
    return [{"operation": "search -k 10 (warm index)", "wall_s_ratio": ratio}]


def test_median_repo_is_the_middle_ratio_and_the_lower_middle_for_an_even_count() -> None:
    repos = {"a": _rows(3.0), "b": _rows(1.0), "c": _rows(2.0)}
    assert median_repo(repos) == "c"
    repos["d"] = _rows(4.0)
    assert median_repo(repos) == "c"
    with pytest.raises(ValueError):
        median_repo({"a": _rows(None)})  # type: ignore[arg-type]


def test_dev_summary_gives_median_max_and_the_ratio_of_mean_walls() -> None:
    def repo(seek: float, semble: float) -> list[dict]:
        medians = {
            "seek": {"index_cold": _s(seek, 200)},
            "semble": {"search_cold": _s(semble, 100)},
        }
        return comparison_rows(aggregate_runs([medians]))

    summary = dev_summary({"a": repo(1.0, 2.0), "b": repo(3.0, 2.0), "c": repo(8.0, 4.0)})
    (cold,) = [row for row in summary if row["operation"] == "index, cold"]
    assert cold["repos"] == 3
    assert cold["wall_ratio_median"] == pytest.approx(1.5)
    assert cold["wall_ratio_max"] == pytest.approx(2.0)
    assert cold["wall_ratio_of_means"] == pytest.approx(12 / 8)  # 4.0 / 2.667
    assert cold["rss_ratio_median"] == pytest.approx(2.0)
    assert cold["seek_wall_median"] == 3.0


def test_table_shows_missing_values_as_blank_cells() -> None:
    medians = aggregate_runs([{"seek": {"status": _s(0.5, 64)}}])
    table = markdown_table("x", comparison_rows(medians))
    assert "| `status` | 0.50 s |  |  | 0.10 s |  | 64 MiB |  |  |" in table


def test_run_measured_reports_the_childs_own_peak_rss_and_fails_on_exit_codes(
    tmp_path: Path,
) -> None:
    grow = "b = bytearray(80 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096])"
    sample = run_measured([sys.executable, "-c", grow], {}, tmp_path)
    assert sample["peak_rss_mb"] > 80
    assert sample["wall_s"] > 0
    with pytest.raises(RuntimeError, match="exit 3"):
        run_measured([sys.executable, "-c", "import sys; sys.exit(3)"], {}, tmp_path)


def test_repeated_searches_of_a_run_keep_their_medians() -> None:
    from bench.speed.cli_speed import median_of

    samples = [{"wall_s": w, "cpu_s": w / 2, "peak_rss_mb": 100 + w} for w in (3.0, 1.0, 2.0)]
    assert median_of(samples) == {"wall_s": 2.0, "cpu_s": 1.0, "peak_rss_mb": 102.0}
    assert median_of(samples[:1]) is samples[0]
