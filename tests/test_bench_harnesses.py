"""bench/ as a package a newcomer can run (bench/README.md, "Set-up" and "Layout"): every
harness answers --help, and the checkouts' folder comes from an argument or $BENCH_DIR,
never from a machine's default, with a one-line error when neither names one."""

from __future__ import annotations

import argparse
import contextlib
import io
import runpy
import sys
from pathlib import Path

import pytest

from bench import common

BENCH = Path(common.__file__).resolve().parent


def harnesses() -> list[str]:
    """Every module under bench/ that runs as a program (``python -m bench....``)."""
    found = []
    for path in sorted(BENCH.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if path.name.startswith("_") and path.name != "__main__.py":
            continue  # semble's workers run with semble's python, outside this package
        if 'if __name__ == "__main__"' in text or path.name == "__main__.py":
            parts = path.relative_to(BENCH.parent).with_suffix("").parts
            found.append(".".join(parts[:-1] if parts[-1] == "__main__" else parts))
    return found


def test_the_harnesses_of_record_are_found() -> None:
    names = set(harnesses())
    for name in ("bench.quality", "bench.speed.index_speed", "bench.speed.cli_speed",
                 "bench.scale", "bench.soak", "bench.serve.serve_load",
                 "bench.train.train_ranker", "bench.checks.same_hits"):  # fmt: skip
        assert name in names


# runpy warns when another test imported the module first; running it again is the point.
@pytest.mark.filterwarnings("ignore:.*found in sys.modules:RuntimeWarning")
@pytest.mark.parametrize("module", harnesses())
def test_every_harness_answers_help(module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", [module, "--help"])
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit) as stopped:
        runpy.run_module(module, run_name="__main__", alter_sys=False)
    code = getattr(stopped, "code", 0) if stopped else 0
    assert code in (0, None), f"{module} --help exited {code}"
    assert out.getvalue().strip(), f"{module} --help printed nothing"


def parser_for_test() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="harness")
    common.add_bench_dir(parser)
    return parser


def test_bench_dir_comes_from_the_argument_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parser = parser_for_test()
    monkeypatch.delenv("BENCH_DIR", raising=False)
    assert common.resolve_bench_dir(parser, str(tmp_path)) == tmp_path
    monkeypatch.setenv("BENCH_DIR", str(tmp_path))
    assert common.resolve_bench_dir(parser, parser.parse_args([]).bench_dir) == tmp_path


@pytest.mark.parametrize("given", [None, "missing"])
def test_no_bench_dir_is_a_one_line_error(
    given: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.delenv("BENCH_DIR", raising=False)
    with pytest.raises(SystemExit) as stopped:
        common.resolve_bench_dir(parser_for_test(), tmp_path / given if given else None)
    assert stopped.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("harness: error: ") and "BENCH_DIR" in error


def test_results_name_folders_without_this_machines_paths(tmp_path: Path) -> None:
    checkout = tmp_path / "flask" / "src" / "flask"
    checkout.mkdir(parents=True)
    assert common.shown(checkout, tmp_path) == "$BENCH_DIR/flask/src/flask"
    assert common.shown(common.REPO_ROOT / "src" / "seek") == "src/seek"
    assert common.shown(tmp_path / "elsewhere") == "elsewhere"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_memory_of_a_process_tree_counts_its_children_once(tmp_path: Path) -> None:
    """bench.common.run_sampling_memory: a child that forks a worker holding 60 MB of its own
    is measured with it; pages the two share count once (PSS), not twice (RSS)."""
    program = (
        "import os, time\n"
        "shared = bytearray(40 << 20)\n"  # touched before the fork: shared by both
        "if os.fork() == 0:\n"
        "    own = bytearray(60 << 20)\n"  # the worker's own
        "    time.sleep(1.5)\n"
        "    os._exit(0)\n"
        "time.sleep(0.5)\n"
        "os.wait()\n"
        "print('done')\n"
    )
    out, peak = common.run_sampling_memory(
        [sys.executable, "-c", program], {}, tmp_path, timeout=60, every_s=0.02
    )
    assert out == "done\n"
    assert 100 < peak < 100 + 40, peak  # 40 + 60 + two interpreters, the 40 counted once
    with pytest.raises(RuntimeError, match="exit 3"):
        common.run_sampling_memory([sys.executable, "-c", "raise SystemExit(3)"], {}, tmp_path, 60)


def test_graph_oracle_reads_scip_columns_as_utf16_code_units():
    """SCIP counts columns in UTF-16 code units, tree-sitter in bytes: a use after
    non-ASCII text on its line lands on the graph's column (issue 44); ASCII lines and
    Go's byte columns are left as they are."""
    from bench.graph.oracle import byte_columns

    line = "msg(`Ungültig: ${issue.prefix} 😀 ${issue.x}`)".encode()
    files = [("pl.ts", b"const a = 1;\n" + line + b"\n")]
    utf16 = line.decode().encode("utf-16-le")
    prefix = len(line.decode()[: line.decode().index("prefix")].encode("utf-16-le")) // 2
    x = len(utf16[: utf16.index("x}".encode("utf-16-le"))]) // 2
    oracle = {"s": {"defs": {("pl.ts", 1, 6)}, "refs": {("pl.ts", 2, prefix), ("pl.ts", 2, x)}}}
    fixed = byte_columns(oracle, files)["s"]
    assert fixed["defs"] == {("pl.ts", 1, 6)}
    assert fixed["refs"] == {("pl.ts", 2, line.index(b"prefix")), ("pl.ts", 2, line.index(b"x}"))}
