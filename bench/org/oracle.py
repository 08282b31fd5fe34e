"""Cross-repository references against type-checker oracles (issue 45, deliver 4).

    python -m bench.org.oracle --root DIR --oracles DIR [--slices python,typescript,go]
        [--mirrors DIR] [--oracle-bin DIR] [--rebuild-oracles]
        [--seek-corpora DIR [--index] [--seek-cli]] [--sample 200] [--unused 50] [--seed 0]
        [--out bench/results/org_refs.json] [--misses FILE]

For each slice (bench/org/slices/*.json; :mod:`bench.org.slices`): its repositories are
written under ``--root`` from the git dirs under ``--mirrors`` (``fetch``'s layout), the
slice's type checker indexes them all at once (:mod:`bench.org.oracles`; the reduced answer
is kept as ``--oracles/<slice>.json``, bench/org/FORMAT.md, and read back on the next run),
and a fixed-seed sample of the library repositories' definitions is scored:

* the sample: definitions that seek's graph (``seek.graph.build_graph`` over the library
  repository alone) also has at the oracle's name position, as bench/graph/oracle.py
  matches them (elsewhere a ``PATH:LINE`` question would be about another definition);
  up to ``--sample`` with a cross-repository reference in the oracle and ``--unused``
  without;
* references, at line granularity, in repositories other than the definition's, declaration
  lines left out: ``grep -rnw NAME`` over every repository of the slice (the baseline) and,
  with ``--seek-corpora``, ``seek corpus refs URI PATH:LINE --repo A --limit 1000 --json``
  over the slice indexed as the corpus ``--seek-corpora/<slice>`` (``--index`` adds and
  indexes its repositories first);
* dependents: ``seek corpus dependents URI --repo A --json`` for each repository against the
  repositories that use one of A's definitions in the oracle.

Micro precision/recall per slice go to ``--out``; ``--misses`` writes each sampled
definition's wrong and missed rows with their text.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from bench.common import REPO_ROOT, run_record
from bench.graph.oracle import workspace_files
from bench.org import oracles, score
from bench.org.slices import Slice, load_all, materialize
from seek.graph import build_graph

DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "org_refs.json"


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def graph_positions(folder: Path) -> set[tuple[str, int, int, str]]:
    """(path, line, column, name) of each definition of seek's graph of ``folder``, at each of
    its first three lines: the name sits there, after decorators or a doc comment."""
    graph = build_graph(workspace_files(folder))
    out = set()
    for facts in graph.files.values():
        for d in facts.definitions:
            for line in range(d.line, min(d.line + 3, d.end_line + 1)):
                out.add((d.path, line, d.column, d.name))
    return out


def candidates(slice_: Slice, root: Path, oracle: dict) -> list[dict]:
    """The oracle's library definitions that seek's graph has at the same name position."""
    positions = set()
    for name in slice_.libraries:
        repo = slice_.repo(name)
        positions |= {(name, *p) for p in graph_positions(root / repo.folder)}
    return [
        d
        for d in oracle["definitions"]
        if (d["repo"], d["path"], d["line"], d["col"], d["name"]) in positions
    ]


def line_text(slice_: Slice, root: Path):
    cache: dict[tuple[str, str], list[str]] = {}

    def text(row: score.Row) -> str:
        repo, path, line = row
        if (repo, path) not in cache:
            file = root / slice_.repo(repo).folder / path
            cache[(repo, path)] = (
                file.read_text("utf-8", "replace").split("\n") if file.is_file() else []
            )
        lines = cache[(repo, path)]
        shown = lines[line - 1].strip()[:160] if 0 < line <= len(lines) else ""
        return f"{repo}:{path}:{line}: {shown}"

    return text


def load_oracle(slice_: Slice, args, commits: dict[str, str]) -> dict:
    path = args.oracles / f"{slice_.name}.json"
    if path.is_file() and not args.rebuild_oracles:
        return json.loads(path.read_text())
    _log(f"{slice_.name}: running the oracle over {args.root / slice_.name}")
    oracle = oracles.build(
        slice_, args.root / slice_.name, args.oracle_bin, commits, args.oracles / "scratch"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(oracle) + "\n")
    return oracle


def score_slice(slice_: Slice, args, misses: list | None) -> dict:
    root = args.root / slice_.name
    commits = materialize(slice_, args.root, args.mirrors) if args.mirrors else {}
    oracle = load_oracle(slice_, args, commits)
    found = candidates(slice_, root, oracle)
    chosen = score.sample(found, args.sample, args.unused, args.seed)
    text = line_text(slice_, root)
    started = time.perf_counter()
    grep = score.score_definitions(
        oracle, chosen, lambda d: score.grep_cross(slice_, root, d["name"], d["repo"]),
        misses, "grep", text,
    )  # fmt: skip
    grep_s = time.perf_counter() - started
    row = {
        "slice": slice_.name,
        "language": slice_.language,
        "repos": oracle["repos"],
        "oracle": {
            "tool": oracle["tool"],
            "seconds": oracle["seconds"],
            "date": oracle["date"],
            "library_definitions": len(oracle["definitions"]),
            "with_cross_refs": sum(bool(d["refs"]) for d in oracle["definitions"]),
            "cross_refs": sum(len(d["refs"]) for d in oracle["definitions"]),
            "dependents": oracle["dependents"],
        },
        "graph_matched": len(found),
        "sampled": len(chosen),
        "sampled_with_refs": sum(bool(d["refs"]) for d in chosen),
        "grep": {**grep.to_json(), "seconds": round(grep_s, 1)},
        "seek": None,
    }
    if args.seek_corpora:
        from bench.org.seek_answers import SeekAnswers, index_corpus

        corpus = args.seek_corpora / slice_.name
        answers = SeekAnswers(str(corpus), cli=args.seek_cli)
        if args.index:
            started = time.perf_counter()
            index_corpus(slice_, root, corpus, answers)
            row["seek_index_s"] = round(time.perf_counter() - started, 1)
        started = time.perf_counter()
        refs = score.score_definitions(oracle, chosen, answers.refs, misses, "seek", text)
        refs_s = time.perf_counter() - started
        deps, shown = score.score_dependents(
            oracle, [r.name for r in slice_.repos], answers.dependents
        )
        row["seek"] = {
            **refs.to_json(),
            "seconds": round(refs_s, 1),
            "per_question_ms": round(1000 * refs_s / max(1, len(chosen)), 1),
            "subjects_missed": answers.subjects_missed,
            "errors": answers.errors[:20],
            "dependents": {**deps.to_json(), "by_repo": shown},
            "backend": "cli" if args.seek_cli else "in-process CLI",
        }
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True, help="where the slices are written")
    parser.add_argument("--oracles", type=Path, required=True, help="the oracles' files")
    parser.add_argument("--slices", default="", help="comma-separated (default: all)")
    parser.add_argument("--mirrors", type=Path, help="fetch's git dirs (OWNER+NAME/repo)")
    parser.add_argument("--oracle-bin", type=Path, default=Path.home() / "oracle" / "bin")
    parser.add_argument("--rebuild-oracles", action="store_true")
    parser.add_argument("--seek-corpora", type=Path, help="score seek: the corpora's folder")
    parser.add_argument("--index", action="store_true", help="add and index the corpora first")
    parser.add_argument("--seek-cli", action="store_true", help="a seek process per question")
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--unused", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--misses", type=Path, help="write wrong and missed rows here (JSON)")
    args = parser.parse_args(argv)
    misses: list | None = [] if args.misses else None
    rows = []
    for slice_ in load_all([s for s in args.slices.split(",") if s] or None):
        row = score_slice(slice_, args, misses)
        _log(json.dumps({k: row[k] for k in ("slice", "sampled", "grep", "seek")}))
        rows.append(row)
    report = {
        **run_record(),
        "command": "python -m bench.org.oracle " + " ".join(sys.argv[1:] if argv is None else argv),
        "sample": args.sample,
        "unused": args.unused,
        "seed": args.seed,
        "slices": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    if args.misses:
        args.misses.write_text(json.dumps(misses, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
