"""Who in the organisation uses this: ``seek corpus refs|callers`` across the corpus's
repositories, and ``seek corpus dependents`` (issue 45, deliver 3).

A question about a definition of repository A reads one joint graph
(:mod:`seek.corpus.joint`): A whole, and of every other repository only the files that
import one of the names A provides from outside their own repository (the corpus's links,
:mod:`seek.corpus.links`) and, in Go, the other files of their packages
(which reach A through what the importing files declare), so its cost follows A and its
importers, not the corpus. The answer's rows are the workspace tools' rows
(:mod:`seek.workspace.code_graph`), each naming its ``repo`` and a ``path`` of that
repository; A's rows first, then each other repository's by name, each by file and
enclosing definition.

What cannot be bound for sure is said in the notes: a name two repositories provide (the
import binds to neither), a repository whose links are not stored yet (indexed by an older
seek), and the repositories whose files load modules by a name computed at run time (their
uses through such a module are not followed).

A server keeps the joint graphs it assembled (:class:`JointGraphs`), each until the stamp of
one of the repositories it read changes.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seek.corpus.joint import (
    JointResolver,
    RepoPart,
    joined,
    joint_graph,
    package_mates,
    split,
)
from seek.corpus.links import DYNAMIC, Link, importers, provided_by, providers
from seek.corpus.location import CorpusError, CorpusLocation, check_repo_name
from seek.graph import CodeGraph, Definition, Reference
from seek.store.corpus_graph import CorpusGraph
from seek.store.corpus_links import CorpusLinks
from seek.store.corpus_table import CorpusTable
from seek.workspace import code_graph as cg
from seek.workspace.code_graph import GraphResult

CROSS_TOOLS = ("refs", "callers", "dependents")
MAX_KEPT = 8
"""Joint graphs a server keeps (the least recently asked go first)."""


@dataclass(slots=True)
class Joint:
    """One repository's joint graph and what the answers say of it."""

    repo: str
    graph: CodeGraph | None
    resolver: JointResolver | None
    importing: dict[str, list[str]] = field(default_factory=dict)
    """Other repository -> its files that import a name ``repo`` provides."""
    notes: list[str] = field(default_factory=list)
    reading: dict[str, list[str]] = field(default_factory=dict)
    """Other repository -> its files in the graph: those importing, and their package's
    files in languages whose package shares one scope (:func:`package_mates`)."""


def read_joint(location: CorpusLocation, repo: str) -> Joint:
    """``repo``'s joint graph as the corpus stores it now."""
    check_repo_name(repo)
    table = CorpusTable(location)
    graph_table, links = CorpusGraph(table), CorpusLinks(table)
    rows = graph_table.load_repo(repo)
    if rows is None:
        from seek.corpus.graph import not_stored

        return Joint(repo, None, None, notes=[not_stored(repo)])
    notes = []
    if not links.has_links(repo):
        notes.append(
            f"What {repo} provides is not stored yet (indexed by an older seek): run "
            f"`seek corpus index URI {repo}`; only its own uses are listed."
        )
    provided = provided_by(links, repo)
    by_ecosystem: dict[str, list[str]] = defaultdict(list)
    for link in provided:
        by_ecosystem[link.ecosystem].append(link.name)
    claims: dict[tuple[str, str], list[Link]] = defaultdict(list)
    importing: dict[str, set[str]] = defaultdict(set)
    loading: dict[str, str] = {}  # repository -> a file that loads modules at run time
    for ecosystem, names in by_ecosystem.items():
        for claim in providers(links, ecosystem, names):
            claims[(claim.ecosystem, claim.name)].append(claim)
        for found in importers(links, ecosystem, [*names, DYNAMIC]):
            if found.repo == repo:
                continue
            if found.name == DYNAMIC:
                loading.setdefault(found.repo, found.path)
            else:
                importing[found.repo].add(found.path)
    parts = {repo: RepoPart(rows, [r[0] for r in rows])}
    every_path = graph_table.paths_of(sorted(importing))
    reading = {
        other: sorted(importing[other] | package_mates(importing[other], every_path.get(other, ())))
        for other in sorted(importing)
    }
    loaded = graph_table.load_files_of(reading)
    for other in sorted(importing):
        parts[other] = RepoPart(loaded[other], every_path.get(other, ()))
    for (ecosystem, name), found in sorted(claims.items()):
        others = sorted({c.repo for c in found} - {repo})
        if others:
            notes.append(
                f"{ecosystem} name {name!r} is provided by {repo} and by {', '.join(others)}: "
                "imports of it are not bound to either."
            )
    if loading:
        shown = ", ".join(f"{r} ({p})" for r, p in sorted(loading.items())[:5])
        more = f" and {len(loading) - 5} more" if len(loading) > 5 else ""
        notes.append(
            f"Modules loaded by a name computed at run time are not followed: {shown}{more}."
        )
    graph, resolver = joint_graph(parts, claims)
    files = {other: sorted(paths) for other, paths in importing.items()}
    return Joint(repo, graph, resolver, files, notes, reading)


class JointGraphs:
    """A server's joint graphs, each kept until the stamp of a repository it read changes."""

    def __init__(
        self, location: CorpusLocation, stamps: Callable[[], Mapping[str, object]]
    ) -> None:
        self.location = location
        self.stamps = stamps
        self._guard = threading.Lock()
        self._kept: OrderedDict[str, tuple[dict[str, object], Joint]] = OrderedDict()

    def get(self, repo: str) -> Joint:
        stamps = self.stamps()
        if repo not in stamps:
            raise CorpusError(f"the corpus {self.location.uri} has no repository {repo!r}")
        with self._guard:
            kept = self._kept.get(repo)
            if kept is not None and all(stamps.get(r) == s for r, s in kept[0].items()):
                # a repository added since may import it: its stamp is new to the kept set
                if set(stamps) <= set(kept[0]):
                    self._kept.move_to_end(repo)
                    return kept[1]
            joint = read_joint(self.location, repo)
            self._kept[repo] = (dict(stamps), joint)
            while len(self._kept) > MAX_KEPT:
                self._kept.popitem(last=False)
            return joint


def cross_lookup(
    location: CorpusLocation,
    repo: str,
    tool: str,
    target: str,
    limit: int | None = None,
    graphs: JointGraphs | None = None,
) -> GraphResult:
    """``refs NAME|PATH:LINE``, ``callers PATH:LINE`` or ``dependents`` of ``repo`` across
    the corpus (see the module docstring)."""
    from seek.corpus.catalog import Catalog

    if tool not in CROSS_TOOLS:
        raise CorpusError(f"unknown tool {tool!r}: one of {', '.join(CROSS_TOOLS)}")
    check_repo_name(repo)
    rows_limit = cg.check_limit(limit)
    location_of = cg.parse_location(target) if tool != "dependents" else None
    if tool == "callers" and location_of is None:
        raise CorpusError(f"expected PATH:LINE, e.g. src/app.py:42, not {target.strip()!r}")
    if tool == "refs" and location_of is None:
        cg.check_name(target)
    if graphs is not None:
        joint = graphs.get(repo)
    elif repo not in Catalog(location).repos():
        raise CorpusError(f"the corpus {location.uri} has no repository {repo!r}")
    else:
        joint = read_joint(location, repo)
    found = cg.Lookup(_NOWHERE, joint.graph, list(joint.notes))
    if tool == "dependents":
        return found.result(tool, repo, dependents(joint), rows_limit, render_rows=render_rows)
    if joint.graph is None:
        return found.result(tool, target, [], rows_limit)
    subject: Definition | None = None
    if location_of is not None:
        path, line = location_of
        subject = found.at(joined(repo, path), line, uses=tool == "refs")
        found.notes = [n.replace(joined(repo, path), path) for n in found.notes]
        wanted = [subject] if subject is not None else []
    else:
        wanted = [d for d in joint.graph.defs(target) if split(d.path)[0] == repo]
    if tool == "callers":
        rows = [cg.definition_row(d) for d in joint.graph.callers(subject)] if subject else []
    else:
        lines = cg.Lines()  # of no file: the text is the corpus's (fill_texts)
        uses = _grouped({u for d in wanted for u in joint.graph.uses(d)})
        rows = [cg.use_row(_NOWHERE, u, lines) for u in uses]
    rows = _ordered([_split_row(row) for row in rows], repo)
    _note_ambiguous(joint, found.notes)
    result = found.result(
        tool,
        target,
        rows,
        rows_limit,
        subject=_split_row(cg.definition_row(subject)) if subject is not None else None,
        render_rows=render_rows,
    )
    if tool == "refs":
        _fill_texts(location, result.rows)
    return result


_NOWHERE = Path("/nonexistent-seek-corpus")  # Lookup reads no file here: the rows' text
# comes from the corpus's chunks (fill_texts)


def _grouped(uses: set[Reference]) -> list[Reference]:
    """By file, then by enclosing definition in the order of its first use, as
    :meth:`seek.graph.CodeGraph.refs` groups them."""
    groups: dict[tuple[str, str | None], list[Reference]] = {}
    for ref in sorted(uses, key=lambda r: (r.path, r.line, r.column)):
        groups.setdefault((ref.path, ref.enclosing), []).append(ref)
    return [ref for group in groups.values() for ref in group]


def _split_row(row: dict[str, Any]) -> dict[str, Any]:
    repo, path = split(row["path"])
    return {"repo": repo, **row, "path": path}


def _ordered(rows: list[dict[str, Any]], repo: str) -> list[dict[str, Any]]:
    """The asked repository's rows first, then the others' by name; each in its order."""
    return sorted(rows, key=lambda row: (row["repo"] != repo, row["repo"]))


def _note_ambiguous(joint: Joint, notes: list[str]) -> None:
    if joint.resolver is None:
        return
    for (where, target), repos in sorted(joint.resolver.ambiguous.items())[:10]:
        notes.append(
            f"{where} imports {target!r}, which {' and '.join(repos)} all provide: "
            "its uses there are not bound."
        )


def dependents(joint: Joint) -> list[dict[str, Any]]:
    """Each repository importing what ``joint.repo`` provides: how many of its files do, how
    many of its uses (in the files read) bind to the repository's definitions, and which,
    most used first."""
    graph, repo = joint.graph, joint.repo
    out = []
    for other, paths in sorted(joint.importing.items()):
        names: Counter[str] = Counter()
        if graph is not None:
            for path in joint.reading.get(other, paths):
                facts = graph.files.get(joined(other, path))
                for ref in facts.references if facts is not None else ():
                    bound = {d.qualified for d in graph.candidates(ref)
                             if split(d.path)[0] == repo}  # fmt: skip
                    names.update(bound)
        out.append(
            {
                "repo": other,
                "files": len(paths),
                "uses": sum(names.values()),
                "names": dict(names.most_common(20)),
            }
        )
    return sorted(out, key=lambda row: (-row["uses"], -row["files"], row["repo"]))


def _fill_texts(location: CorpusLocation, rows: list[dict[str, Any]]) -> None:
    from seek.corpus.graph import fill_texts

    fill_texts(location, rows)  # every repository's rows in one read of the chunks


def render_rows(result: GraphResult) -> list[str]:
    """The text of a cross-repository answer: rows under their repository, then (``refs``)
    their file and enclosing definition; names and lines from repositories escaped."""
    from seek.untrusted import printable

    out: list[str] = []
    if result.tool == "dependents":
        for row in result.rows:
            names = ", ".join(f"{printable(n)} {c}" for n, c in row["names"].items())
            out.append(f"{row['repo']}  {row['files']} files, {row['uses']} uses  {names}")
        return out
    by_repo: dict[str, list[dict[str, Any]]] = {}
    for row in result.rows:  # the rows come grouped by repository already
        by_repo.setdefault(row["repo"], []).append(row)
    for repo, rows in by_repo.items():
        out.append(f"{repo}:")
        if result.tool == "refs":
            out.extend(cg.use_lines(rows, indent="  "))
        else:
            out.extend("  " + cg.definition_line(row) for row in rows)
    return out
