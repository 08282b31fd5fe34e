"""Where the time of one ``corpus refs`` and of one corpus run goes (``bench.org.scale``,
issue 45 deliver 5): each runs in a fresh process (``python -m bench.org.scale
--refs-where|--index-where``) with the steps of interest timed by wrapping them."""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any

from bench.org.scale_base import LIBRARY


def index_where_process(folder: str, repo: str, checkout: str) -> dict[str, float]:
    from seek.store.lance import package

    package()  # lancedb, imported before the clock starts: the first read does

    from bench.org.scale_base import settings_in
    from seek.corpus import build as corpus_build
    from seek.corpus.fanout import LocalRunner
    from seek.corpus.location import CorpusLocation
    from seek.store import corpus_graph, corpus_links, corpus_table

    spent: dict[str, float] = {}
    for owner, name, label in (
        (corpus_build.CorpusIndexer, "_check_tables", "read every table whole (check)"),
        (corpus_build.CorpusIndexer, "_prepare_repo", "scan the repository"),
        (corpus_build.CorpusIndexer, "_embed", "embed and commit the changed file"),
        (corpus_table.CorpusTable, "finish", "chunk table: indexes and compaction"),
        (corpus_graph.CorpusGraph, "finish", "graph table: index and compaction"),
        (corpus_build, "keep_current", "links: keep_current"),
        (corpus_links.CorpusLinks, "finish", "links table: indexes and compaction"),
    ):
        wrap(owner, name, label, spent)
    home = Path(folder).parent / "home"
    started = time.perf_counter()
    corpus_build.CorpusIndexer(CorpusLocation(folder), settings_in(home), LocalRunner(),
                               folders=[checkout]).run([repo])  # fmt: skip
    spent["run (all)"] = time.perf_counter() - started
    return {k: round(v, 3) for k, v in spent.items()}


def wrap(owner: Any, name: str, label: str, spent: dict[str, float]) -> None:
    """``owner.name`` timed into ``spent[label]``."""
    fn = getattr(owner, name)

    @functools.wraps(fn)
    def timed_call(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + time.perf_counter() - started

    setattr(owner, name, timed_call)


def refs_where_process(folder: str, target: str) -> dict[str, float]:
    """In a fresh process: the imports, then one ``cross_lookup`` timed by step."""
    started = time.perf_counter()
    import seek.cli.corpus_cmd  # noqa: F401 - what the CLI imports
    from seek.store.lance import package

    package()  # lancedb, as the first table read imports it

    spent: dict[str, float] = {"imports (seek CLI, lancedb)": time.perf_counter() - started}
    from seek.corpus import org
    from seek.corpus.location import CorpusLocation
    from seek.store import corpus_graph, corpus_links

    for owner, name, label in (
        (corpus_links.CorpusLinks, "named", "links: providers and importers by name"),
        (corpus_graph.CorpusGraph, "load_repo", "graph rows of the library"),
        (corpus_graph.CorpusGraph, "paths_of", "graph: every path of the importers"),
        (corpus_graph.CorpusGraph, "load_files_of", "graph rows of the importing files"),
        (org, "joint_graph", "joint graph: resolvers and imports"),
        (org, "read_joint", "read_joint (all)"),
        (org, "_fill_texts", "fill texts from the chunk table"),
    ):
        wrap(owner, name, label, spent)
    started = time.perf_counter()
    org.cross_lookup(CorpusLocation(folder), LIBRARY, "refs", target, 1000)
    spent["cross_lookup (all)"] = time.perf_counter() - started
    spent["uses bound and rows (rest)"] = (spent["cross_lookup (all)"]
                                           - spent["read_joint (all)"]
                                           - spent["fill texts from the chunk table"])  # fmt: skip
    return {k: round(v, 3) for k, v in spent.items()}
