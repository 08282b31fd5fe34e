"""Re-run the audit of issue 19: apply each hand-written mutation (a bug a person could
plausibly introduce) to ``src/seek``, run the tests that must catch it, restore the file.

Usage: ``.venv/bin/python scripts/audit_mutations.py [--only NAME ...] [--list]``

Prints ``killed`` or ``SURVIVED`` per mutation and exits 1 when any survived (or no longer
applies because the code moved: then update the mutation here). The mutations are applied
to a scratch copy of ``src`` and ``tests`` (imported first through ``PYTHONPATH``), never to
the working tree. Not part of CI: about two minutes on two cores.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutation:
    name: str
    file: str
    old: str
    new: str
    tests: tuple[str, ...]


DOC = "tests/test_documented_values.py::"
MUTATIONS = (
    Mutation(
        "size limit flipped in the single-file check (watch)",
        "scan/walk.py",
        "    if st.st_size > max_file_bytes:\n        return TOO_BIG\n    return ScannedFile(",
        "    if st.st_size >= max_file_bytes:\n        return TOO_BIG\n    return ScannedFile(",
        (DOC + "test_a_file_of_exactly_the_size_limit_is_indexed_by_the_scan_and_by_watch",
         DOC + "test_watch_updates_keep_a_file_of_exactly_the_limit"),
    ),
    Mutation(
        "search ignores the rrf_k setting",
        "retrieve/pipeline.py",
        "            self.settings.rrf_k,\n        )",
        "            60,\n        )",
        (DOC + "test_search_fuses_with_the_rrf_k_setting",),
    ),
    Mutation(
        "follow-up rule's 3-word boundary < 3 -> < 4",
        "text.py",
        "    if len(words) < 3:",
        "    if len(words) < 4:",
        (DOC + "test_follow_up_boundaries",),
    ),
    Mutation(
        "writer lock removed from single-file updates (watch)",
        "indexer.py",
        'with self.store.writer_lock(f"seek watch {self.root}"):',
        "with open(__file__):",  # a context manager that locks nothing
        ("tests/test_watch.py::test_single_file_updates_take_the_writer_lock",),
    ),
    Mutation(
        "session's previous-answer files not passed as focus",
        "chat.py",
        "context = workspace_context(root, searched, settings, focus=focus)",
        "context = workspace_context(root, searched, settings, focus=())",
        ("tests/test_chat.py::test_a_follow_up_focuses_on_the_previous_answers_files",),
    ),
    Mutation(
        "window blend 0.3 -> 1.0",
        "retrieve/loaded.py",
        "WINDOW_BEST_WEIGHT = 0.3\n",
        "WINDOW_BEST_WEIGHT = 1.0\n",
        (DOC + "test_a_chunk_scores_three_tenths_of_its_best_window_and_seven_of_the_mean",),
    ),
    Mutation(
        "only HTTP 400 counts as a refused list",
        "embed/http.py",
        "        if 400 <= response.status_code < 500:\n            raise _ListRefused",
        "        if response.status_code == 400:\n            raise _ListRefused",
        ("tests/test_embed_http.py::test_any_4xx_to_a_list_switches_to_singles",),
    ),
    Mutation(
        "watch debounce timer not restarted by a new event",
        "watch.py",
        "            previous = self._timers.pop(rel, None)\n"
        "            if previous is not None:\n"
        "                previous.cancel()\n",
        "            if rel in self._timers:\n                return\n",
        ("tests/test_watch.py::test_a_new_event_restarts_the_debounce_timer",),
    ),
    Mutation(
        "30 s request limit -> 3000 s",
        "web/api.py",
        "REQUEST_TIMEOUT_S = 30.0",
        "REQUEST_TIMEOUT_S = 3000.0",
        ("tests/test_serve_errors.py::test_the_request_time_limit_is_thirty_seconds_as_documented",),
    ),
    Mutation(
        "e5- task prefixes removed",
        "embed/__init__.py",
        '    ("e5-", "passage: ", "query: "),\n',
        "",
        (DOC + "test_task_prefixes_by_model_name",
         DOC + "test_e5_documents_are_embedded_with_their_passage_prefix"),
    ),
    Mutation(
        "once-a-second freshness check -> always",
        "live.py",
        ">= FRESHNESS_S:",
        ">= 0:",
        (DOC + "test_live_indexes_check_for_changes_at_most_once_a_second",),
    ),
    Mutation(
        "429 schedule changed",
        "embed/http.py",
        "RATE_LIMIT_DELAYS_S = (0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0)",
        "RATE_LIMIT_DELAYS_S = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 16.0)",
        ("tests/test_embed_http.py::test_persistent_429_is_a_clear_error",),
    ),
    Mutation(
        "candidates per result 5 -> 1",
        "retrieve/pipeline.py",
        "CANDIDATES_PER_RESULT = 5\n",
        "CANDIDATES_PER_RESULT = 1\n",
        (DOC + "test_each_retriever_contributes_five_candidates_per_result",),
    ),
    Mutation(
        "identifier (symbol query) weight 0.3 -> 0.7",
        "retrieve/signals/query.py",
        "SEMANTIC_WEIGHT_SYMBOL = 0.3\n",
        "SEMANTIC_WEIGHT_SYMBOL = 0.7\n",
        (DOC + "test_an_identifier_leans_on_keywords_and_a_sentence_is_balanced",),
    ),
    # The audit's other findings, kept here so they stay caught.
    Mutation(
        "tree-sitter off for every language but Python",
        "chunk/__init__.py",
        "    grammar = grammar_for_path(rel_path)\n",
        "    grammar = grammar_for_path(rel_path)\n"
        '    grammar = grammar if grammar == "python" else None\n',
        ("tests/test_chunking.py::test_syntax_chunking_splits_at_definitions",),
    ),
    Mutation(
        "an interrupted run re-embeds everything (a silent rebuild)",
        "indexer.py",
        "                self._drop_orphans(manifest, removed)\n",
        "                self._drop_orphans(manifest, removed)\n"
        "                self.table.delete_files(sorted(manifest.files))\n"
        "                manifest.files.clear()\n"
        "                stale = list(scan.files)\n",
        ("tests/test_crash_safety.py",),
    ),
    Mutation(
        "a FIFO is opened without O_NONBLOCK",
        "index/stages.py",
        ' | getattr(os, "O_NONBLOCK", 0)',
        "",
        ("tests/test_hostile_input.py::test_file_swapped_for_a_fifo_before_read_does_not_block",),
    ),
)  # fmt: skip


def scratch_copy() -> Path:
    """src, tests and pyproject.toml copied to a temporary folder."""
    work = Path(tempfile.mkdtemp(prefix="seek-audit-"))
    for name in ("src", "tests"):
        shutil.copytree(ROOT / name, work / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "pyproject.toml", work / "pyproject.toml")
    return work


def run(work: Path, mutation: Mutation) -> tuple[str, float]:
    path = work / "src" / "seek" / mutation.file
    original = path.read_text(encoding="utf-8") if path.is_file() else ""
    if original.count(mutation.old) != 1:
        return "NOT APPLICABLE (code moved: update the mutation)", 0.0
    env = {**os.environ, "PYTHONPATH": str(work / "src"), "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.monotonic()
    try:
        path.write_text(original.replace(mutation.old, mutation.new), encoding="utf-8")
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
             *mutation.tests],
            cwd=work, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    finally:
        path.write_text(original, encoding="utf-8")
    verdict = "killed" if proc.returncode == 1 else f"SURVIVED (pytest exit {proc.returncode})"
    return verdict, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="run the mutations whose name contains these")
    parser.add_argument("--list", action="store_true", help="list mutation -> tests and stop")
    args = parser.parse_args()
    chosen = [m for m in MUTATIONS if not args.only or any(word in m.name for word in args.only)]
    if args.list:
        for mutation in chosen:
            print(f"{mutation.name}\n  " + "\n  ".join(mutation.tests))
        return 0
    work = scratch_copy()
    bad = 0
    try:
        for mutation in chosen:
            verdict, seconds = run(work, mutation)
            bad += verdict != "killed"
            tests = ", ".join(mutation.tests)
            print(f"{verdict:<10} {seconds:5.1f} s  {mutation.name}  <- {tests}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
