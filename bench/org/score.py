"""Scoring cross-repository references against an oracle (issue 45, deliver 4).

Everything here works on the reduced oracle (bench/org/FORMAT.md) and on sets of
``(repo, path, line)`` rows, so that it is tested without a checker run: the sample, the
micro precision/recall of a set of answers, ``grep -rnw NAME`` over a slice, and the reading
of ``seek corpus refs/dependents --json``.
"""

from __future__ import annotations

import random
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path

from bench.org.slices import Slice, split_path

Row = tuple[str, str, int]
"""(repository, path inside it, 1-based line)."""


def sample(definitions: list[dict], with_refs: int, without_refs: int, seed: int) -> list[dict]:
    """Up to ``with_refs`` definitions that the oracle has with at least one cross-repository
    reference and up to ``without_refs`` with none (an answer there can only be wrong), drawn
    with ``seed``; in the oracle's order, so that a run is reproducible."""
    used = [d for d in definitions if d["refs"]]
    unused = [d for d in definitions if not d["refs"]]
    rng = random.Random(seed)
    chosen = rng.sample(used, min(with_refs, len(used)))
    chosen += rng.sample(unused, min(without_refs, len(unused)))
    index = {id(d): n for n, d in enumerate(definitions)}
    return sorted(chosen, key=lambda d: index[id(d)])


def cross_rows(rows: Iterable[dict], repo: str) -> set[Row]:
    """The rows of a ``seek corpus refs --json`` answer that lie in another repository than
    the definition's (``repo``), as (repo, path, line)."""
    return {(r["repo"], r["path"], int(r["line"])) for r in rows if r.get("repo") != repo}


def declaration_rows(oracle: dict, name: str) -> set[Row]:
    """The lines that declare ``name`` anywhere in the slice: not uses (an override, a
    re-declaration, a stub), whoever reports them."""
    return {tuple(x) for x in oracle["declarations"].get(name, ())}  # type: ignore[misc]


class Tally:
    """Micro counts: true positives, what was answered, what is true."""

    def __init__(self) -> None:
        self.tp = self.found = self.truth = 0
        self.by_kind: dict[str, Tally] = {}

    def add(self, found: set, truth: set, kind: str | None = None) -> None:
        self.tp += len(found & truth)
        self.found += len(found)
        self.truth += len(truth)
        if kind is not None:
            self.by_kind.setdefault(kind, Tally()).add(found, truth)

    def to_json(self) -> dict:
        out = {
            "precision": round(self.tp / self.found, 4) if self.found else None,
            "recall": round(self.tp / self.truth, 4) if self.truth else None,
            "tp": self.tp,
            "fp": self.found - self.tp,
            "fn": self.truth - self.tp,
        }
        if self.by_kind:  # the definitions' kinds (function, type, term; Go's are all one)
            out["by_kind"] = {k: t.to_json() for k, t in sorted(self.by_kind.items())}
        return out


def grep_cross(slice_: Slice, root: Path, name: str, repo: str) -> set[Row]:
    """``grep -rnw NAME`` over every repository of the slice: the rows in repositories other
    than ``repo``."""
    run = subprocess.run(["grep", "-rnw", "--", name, "."], cwd=root, capture_output=True)
    rows = set()
    for raw in run.stdout.decode("utf-8", "replace").splitlines():
        path, _, rest = raw.partition(":")
        line, _, _ = rest.partition(":")
        split = split_path(slice_, path.removeprefix("./"))
        if line.isdigit() and split is not None and split[0] != repo:
            rows.add((split[0], split[1], int(line)))
    return rows


def score_definitions(
    oracle: dict,
    chosen: list[dict],
    answer: Callable[[dict], set[Row]],
    misses: list | None = None,
    label: str = "",
    text: Callable[[Row], str] | None = None,
) -> Tally:
    """``answer(definition)``'s cross-repository rows against the oracle's, declaration lines
    left out of both; wrong and missed rows to ``misses``."""
    tally = Tally()
    for d in chosen:
        decl = declaration_rows(oracle, d["name"])
        truth = {tuple(x) for x in d["refs"]} - decl
        found = answer(d) - decl
        tally.add(found, truth, d.get("kind"))
        if misses is not None and found != truth:
            show = text or (lambda row: f"{row[0]}:{row[1]}:{row[2]}")
            misses.append(
                {
                    "by": label,
                    "definition": f"{d['repo']}:{d['path']}:{d['line']} {d['kind']} {d['name']}",
                    "wrong": [show(x) for x in sorted(found - truth)],
                    "missed": [show(x) for x in sorted(truth - found)],
                }
            )
    return tally


def dependents_rows(answer: dict | list) -> set[str]:
    """The repositories a ``seek corpus dependents --json`` answer names: its rows (a list, or
    an object's ``rows``/``dependents``), each a name or an object with ``repo``."""
    rows = answer
    if isinstance(answer, dict):
        rows = answer.get("rows", answer.get("dependents", []))
    out = set()
    for row in rows or ():
        out.add(row if isinstance(row, str) else row.get("repo") or row.get("name"))
    return out - {None}


def score_dependents(
    oracle: dict, repos: list[str], answer: Callable[[str], set[str]]
) -> tuple[Tally, dict]:
    """Each repository's dependents by ``answer`` against the oracle's (pairs (A, B): B uses
    a definition of A), micro over ``repos``; and the two sets per repository."""
    tally, shown = Tally(), {}
    for repo in repos:
        truth = set(oracle["dependents"].get(repo, ()))
        found = answer(repo) - {repo}
        tally.add({(repo, b) for b in found}, {(repo, b) for b in truth})
        shown[repo] = {"oracle": sorted(truth), "found": sorted(found)}
    return tally, shown
