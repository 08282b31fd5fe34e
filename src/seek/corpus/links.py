"""Which repository of a corpus provides what, and which files import it from outside their
own repository (issue 45, deliver 1 and 2): the rows of :mod:`seek.store.corpus_links`,
written per repository and read back checked.

Written at the end of each corpus run for every repository whose files changed (or whose
links are missing): its provides as :func:`seek.corpus.provides.read_provides` reads them
from the checkout, and, from its stored graph rows, every import that resolves to nothing
inside the repository, under the names a provider would answer it by
(:func:`seek.corpus.import_names.import_keys`). The cost is one repository's rows, never the
corpus's: another repository's change leaves these rows as they are, and the edges between
repositories are found by name when a question is asked (:mod:`seek.corpus.joint`).

Read back, every row is checked as every corpus entry is (a repository's content wrote it,
and an S3 corpus may have been written by another machine): a bad repository name, kind,
ecosystem or a name or path with control characters drops the row, logged. A name two
repositories provide is kept for both, and whoever binds through it says so
(:func:`providers`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import orjson

from seek.corpus.import_names import ecosystem_of, import_keys
from seek.corpus.location import CorpusError, check_repo_name
from seek.corpus.provides import ECOSYSTEMS, Provided
from seek.graph.model import Import
from seek.index.graph_rows import rows_resolver
from seek.store.corpus_graph import CorpusGraph
from seek.store.corpus_links import IMPORTS, PROVIDES, CorpusLinks, Row

log = logging.getLogger(__name__)

MAX_NAME_CHARS = 1024
MAX_PATH_CHARS = 4096


@dataclass(frozen=True, slots=True)
class Link:
    """One checked row: a name ``repo`` provides (``root`` what it denotes, ``path`` where it
    was declared), or a name the file ``path`` of ``repo`` imports from outside."""

    repo: str
    kind: str
    ecosystem: str
    name: str
    path: str
    root: str


def link_rows(
    repo: str, graph_rows: Iterable[tuple[str, str, str]], provided: Iterable[Provided]
) -> list[Row]:
    """``repo``'s rows: what it provides, and what its files import from outside it.
    ``graph_rows``: its stored (path, definitions, facts) rows."""
    rows: list[Row] = [(repo, PROVIDES, p.ecosystem, p.name, p.source, p.root) for p in provided]
    graph_rows = list(graph_rows)
    files: dict[str, tuple[str, list]] = {}
    for path, _, data in graph_rows:
        facts = orjson.loads(data)
        if facts.get("i"):
            files[path] = (facts["g"], facts["i"])
        dynamic = _dynamic(facts)
        if dynamic is not None:
            rows.append((repo, IMPORTS, dynamic, DYNAMIC, path, ""))
    resolver = rows_resolver([r[0] for r in graph_rows], (r[2] for r in graph_rows))
    seen: set[tuple[str, str, str]] = set()
    for path, (grammar, imports) in files.items():
        for values in imports:
            line, target = values[0], values[1]
            if not isinstance(target, str):
                continue
            keys = import_keys(grammar, target)
            if keys is None:
                continue
            imp = Import(path, line, target, tuple(values[2] or ()), values[3])
            if resolver.resolve(grammar, imp):
                continue  # held by the repository itself
            ecosystem, names = keys
            for name in names:
                if (path, ecosystem, name) not in seen:
                    seen.add((path, ecosystem, name))
                    rows.append((repo, IMPORTS, ecosystem, name, path, ""))
    return rows


DYNAMIC = "*"
"""The name of an ``imports`` row for a file that loads modules by a name computed at run
time: what it loads cannot be known, and an answer about the ecosystem says so."""
_LOADERS = {
    "python": {"import_module", "__import__"},
    "javascript": {"require"},
    "typescript": {"require"},
    "tsx": {"require"},
    "ruby": {"require", "load", "autoload"},
    "java": {"forName", "loadClass"},
}
_NAME, _LINE, _CALL = 0, 1, 4  # of a stored reference (seek.index.graph_rows: no path)


def _dynamic(facts: dict) -> str | None:
    """The ecosystem of a file that calls a module loader other than on an import line
    (`importlib.import_module(name)`, `require(path)` of a computed path), else None."""
    loaders = _LOADERS.get(facts.get("g", ""))
    if not loaders:
        return None
    static = {values[0] for values in facts.get("i", ())}
    for ref in facts.get("r", ()):
        if ref[_CALL] and ref[_NAME] in loaders and ref[_LINE] not in static:
            return ecosystem_of(facts["g"])
    return None


def _checked(row: Row) -> Link | None:
    repo, kind, ecosystem, name, path, root = row
    try:
        check_repo_name(repo)
    except CorpusError:
        return None
    if kind not in (PROVIDES, IMPORTS) or ecosystem not in ECOSYSTEMS:
        return None
    for text, most in ((name, MAX_NAME_CHARS), (path, MAX_PATH_CHARS), (root, MAX_PATH_CHARS)):
        if not isinstance(text, str) or len(text) > most:
            return None
        if any(ord(c) < 32 or ord(c) == 127 for c in text):
            return None
    if not name or any(_outside(p) for p in (path, root)):
        return None
    return Link(repo, kind, ecosystem, name, path, root)


def _outside(rel: str) -> bool:
    """Whether a path a row names leaves its repository (absolute, or through ``..``): only a
    key into the repository's stored rows, never opened, yet no reader writes such a row."""
    return rel.startswith("/") or ".." in rel.split("/")


def checked(rows: Iterable[Row]) -> list[Link]:
    """The rows that pass :func:`_checked`; the others logged and dropped."""
    out = []
    for row in rows:
        link = _checked(row)
        if link is None:
            log.warning("a link row of the corpus was dropped: %r", row[:4])
        else:
            out.append(link)
    return out


def provided_by(links: CorpusLinks, repo: str) -> list[Link]:
    """What ``repo`` provides."""
    return checked(links.of_repo(repo, PROVIDES))


def providers(links: CorpusLinks, ecosystem: str, names: Sequence[str]) -> list[Link]:
    """Every repository's claim to provide one of ``names`` in ``ecosystem``: two
    repositories providing one name are both returned (a clash the caller reports)."""
    return checked(links.named(PROVIDES, ecosystem, names))


def importers(links: CorpusLinks, ecosystem: str, names: Sequence[str]) -> list[Link]:
    """The files (of any repository) that import one of ``names`` from outside their own."""
    return checked(links.named(IMPORTS, ecosystem, names))


def keep_current(
    links: CorpusLinks, graph: CorpusGraph, repo: str, provided: Sequence[Provided]
) -> bool:
    """Write ``repo``'s links again when they are missing (never written, or unmarked by a
    run that changed its files) or what it provides changed; True when written. Reads and
    writes only ``repo``'s rows."""
    stored = {(p.ecosystem, p.name, p.path, p.root) for p in provided_by(links, repo)}
    now = {(p.ecosystem, p.name, p.source, p.root) for p in provided}
    if links.has_links(repo) and stored == now:
        return False
    rows = graph.load_repo(repo) or []
    links.replace_repo(repo, link_rows(repo, rows, provided))
    return True
