"""Synthetic corpora for ``bench.org.scale`` (issue 45, deliver 5): many repositories written
straight into a corpus's tables from the real rows of :mod:`bench.org.scale_base`, nothing
embedded.

* the library ``urllib3``: its real chunk, graph and link rows;
* ``D`` dependents ``requests-0000``...: copies of requests' rows, each providing a name of
  its own (``requests_0000``...) and importing ``urllib3`` as requests does;
* filler repositories ``fill-00000``...: copies of one of the four real repositories (in
  turn), their files repeated under ``c0/``, ``c1/``... until a repository holds about
  ``filler_chunks`` chunks, each providing a name of its own. Their imports of ``urllib3``
  are renamed ``vendored_urllib3`` in the graph facts first, so they import nothing of the
  library, and their link rows are what :func:`seek.corpus.links.link_rows` makes of those
  facts.

``full``: every chunk row keeps its real content, keywords and 384-dimension vector (a real
corpus run can then add rows to the table); otherwise (the 1M and 10M corpora) the filler's
content is cut to its first 64 characters, its keywords left empty and its vectors 8 random
dimensions, while the library's and dependents' rows stay whole (their text is what
``corpus refs`` reads).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from bench.org.scale_base import DEPENDENT, LIBRARY, PACKAGES, RealRepo

BATCH_ROWS = 200_000
SHORT_CONTENT = 64
SHORT_DIMS = 8
VENDORED = "vendored_" + LIBRARY


def dependent_name(i: int) -> str:
    return f"{DEPENDENT}-{i:04d}"


def filler_name(i: int) -> str:
    return f"fill-{i:05d}"


def vendored_facts(facts: str) -> str:
    """A file's graph facts with every import of the library renamed (``urllib3.util`` ->
    ``vendored_urllib3.util``): the file then imports nothing the library provides."""
    data = orjson.loads(facts)
    for imp in data.get("i") or ():
        target = imp[1]
        if isinstance(target, str) and (target == LIBRARY or target.startswith(LIBRARY + ".")):
            imp[1] = VENDORED + target[len(LIBRARY) :]
    return orjson.dumps(data).decode()


@dataclass(slots=True)
class Template:
    """One kind of repository: its rows with the ``repo`` column left out, and the link rows
    of a repository named ``NAME`` providing ``PROVIDED`` (both replaced per copy)."""

    chunks: Any  # pyarrow table
    graph: list[tuple[str, str, str]]
    links: list[tuple[str, str, str, str, str, str]]
    files: dict[str, Any]  # the manifest's stamps

    @property
    def chunk_count(self) -> int:
        return int(np.count_nonzero(np.asarray(self.chunks.column("part")) == 0))


NAME, PROVIDED = "template-repo", "template_name"


def _short(chunks: Any, seed: int, keep_text: bool) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    n = chunks.num_rows
    vectors = np.random.default_rng(seed).standard_normal((n, SHORT_DIMS), dtype=np.float32)
    flat = pa.array(vectors.reshape(-1), pa.float32())
    if keep_text:
        return chunks.set_column(chunks.schema.get_field_index("vector"), "vector",
                                 pa.FixedSizeListArray.from_arrays(flat, SHORT_DIMS))  # fmt: skip
    chunks = chunks.set_column(chunks.schema.get_field_index("content"), "content",
                               pc.utf8_slice_codeunits(chunks.column("content"), 0,
                                                       SHORT_CONTENT))  # fmt: skip
    chunks = chunks.set_column(chunks.schema.get_field_index("keywords"), "keywords",
                               pa.array([""] * n, pa.string()))  # fmt: skip
    return chunks.set_column(chunks.schema.get_field_index("vector"), "vector",
                             pa.FixedSizeListArray.from_arrays(flat, SHORT_DIMS))  # fmt: skip


def template(real: RealRepo, copies: int, vendored: bool, full: bool, seed: int) -> Template:
    """``real``'s rows as a template: ``copies`` > 1 repeats its files under ``c<j>/``."""
    import pyarrow as pa

    from seek.corpus.links import link_rows
    from seek.corpus.provides import Provided
    from seek.store.corpus_links import PROVIDES

    chunks = real.chunks.drop_columns(["repo"])
    if not full:
        chunks = _short(chunks, seed, keep_text=not vendored)
    graph = [(p, d, vendored_facts(f) if vendored else f) for p, d, f in real.graph]
    files = dict(real.manifest["files"])
    provided = [Provided(r[2], PROVIDED, r[5], r[4]) for r in real.links if r[1] == PROVIDES]
    if copies > 1:
        prefixed_chunks, prefixed_graph, prefixed_files = [], [], {}
        for j in range(copies):
            prefix = f"c{j}/"
            paths = pa.array([prefix + p for p in chunks.column("path").to_pylist()])
            prefixed_chunks.append(chunks.set_column(chunks.schema.get_field_index("path"),
                                                     "path", paths))  # fmt: skip
            prefixed_graph += [(prefix + p, d, f) for p, d, f in graph]
            prefixed_files.update({prefix + p: s for p, s in files.items()})
        chunks, graph, files = pa.concat_tables(prefixed_chunks), prefixed_graph, prefixed_files
        provided = [Provided(p.ecosystem, p.name, f"c0/{p.root}", f"c0/{p.source}")
                    for p in provided]  # fmt: skip
    links = link_rows(NAME, graph, provided)
    return Template(chunks, graph, links, files)


def renamed_links(template: Template, repo: str, provided: str) -> list[tuple]:
    return [(repo, kind, eco, provided if name == PROVIDED else name, path, root)
            for _, kind, eco, name, path, root in template.links]  # fmt: skip


@dataclass(slots=True)
class Plan:
    dependents: int
    fillers: int
    filler_chunks: int = 1000
    full: bool = False


def templates(real: dict[str, RealRepo], plan: Plan) -> dict[str, Template]:
    """The library, the dependent, a dependent that imports nothing of the library (to turn
    dependents into non-dependents), and one filler per real repository."""
    out = {
        LIBRARY: _as_is(real[LIBRARY], plan.full),
        DEPENDENT: template(real[DEPENDENT], 1, False, plan.full, 1),
        "not-" + DEPENDENT: template(real[DEPENDENT], 1, True, plan.full, 1),
    }
    for k, name in enumerate(PACKAGES):
        copies = max(1, round(plan.filler_chunks / real[name].chunk_count))
        out["fill-" + name] = template(real[name], copies, True, plan.full, 10 + k)
    return out


def _as_is(real: RealRepo, full: bool) -> Template:
    t = template(real, 1, False, full, 0)
    t.links = [(NAME, *r[1:]) for r in real.links]  # its own name, as provided
    return t


def repos(plan: Plan) -> Iterator[tuple[str, str, str]]:
    """(repository, template, provided name) of every repository of the plan."""
    yield LIBRARY, LIBRARY, LIBRARY
    for i in range(plan.dependents):
        yield dependent_name(i), DEPENDENT, f"{DEPENDENT}_{i:04d}"
    for i in range(plan.fillers):
        yield filler_name(i), "fill-" + PACKAGES[i % len(PACKAGES)], f"fill_{i:05d}"


class _Writer:
    """Rows appended in batches of about ``BATCH_ROWS``."""

    def __init__(self, add) -> None:
        self.add, self.pending, self.rows = add, [], 0

    def put(self, data: Any) -> None:
        self.pending.append(data)
        self.rows += data.num_rows
        if self.rows >= BATCH_ROWS:
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa

        if self.pending:
            self.add(pa.concat_tables(self.pending))
        self.pending, self.rows = [], 0


def write_corpus(folder: Path, real: dict[str, RealRepo], plan: Plan, model: str,
                 sources: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    """The corpus ``plan`` describes, in ``folder`` (which must not exist): its tables,
    indexes, ``corpus.json`` and manifests. ``sources``: repository -> a real folder (the
    others name a folder that does not exist: they are never indexed)."""
    import pyarrow as pa

    from seek.corpus.catalog import Catalog
    from seek.corpus.location import CONFIG_OBJECT, CorpusLocation
    from seek.store.corpus_graph import MARKER as GRAPH_MARKER
    from seek.store.corpus_graph import CorpusGraph
    from seek.store.corpus_links import MARKER, CorpusLinks
    from seek.store.corpus_table import CorpusTable

    started = time.perf_counter()
    location = CorpusLocation(str(folder))
    table = CorpusTable(location)
    graph, links = CorpusGraph(table), CorpusLinks(table)
    kinds = templates(real, plan)
    chunk_writer = _Writer(table.add)
    graph_writer = _Writer(lambda data: _add(graph, graph_table_name(), data))
    link_rows: list[tuple] = []
    catalog = Catalog(location)
    config: dict[str, Any] = {"repos": {}, "model": model}
    chunks = 0
    order = [f.name for f in real[LIBRARY].chunks.schema]
    for repo, kind, provided in repos(plan):
        t = kinds[kind]
        n = t.chunks.num_rows
        chunk_writer.put(t.chunks.append_column("repo", pa.array([repo] * n)).select(order))
        rows = [*t.graph, (GRAPH_MARKER, "[]", "{}")]
        graph_writer.put(pa.table({"repo": [repo] * len(rows),
                                   "path": [r[0] for r in rows],
                                   "definitions": [r[1] for r in rows],
                                   "facts": [r[2] for r in rows]}))  # fmt: skip
        link_rows += [*renamed_links(t, repo, provided), (repo, MARKER, "", "", "", "")]
        chunks += t.chunk_count
        config["repos"][repo] = (sources or {}).get(repo, f"/nonexistent-synthetic/{repo}")
        manifest = {**real[LIBRARY].manifest, "files": t.files,
                    "updatedAt": int(time.time() * 1000), "runOpen": False}  # fmt: skip
        location.write_json(catalog.manifest_name(repo), manifest)
    chunk_writer.flush()
    graph_writer.flush()
    for i in range(0, len(link_rows), BATCH_ROWS):
        _add(links, links_table_name(), links._arrow(link_rows[i : i + BATCH_ROWS]))
    location.write_json(CONFIG_OBJECT, config)
    written = time.perf_counter() - started
    started = time.perf_counter()
    if plan.full:
        table.finish(compact=False)  # full text, scalar (and IVF-PQ past its row count)
    else:
        from lancedb.index import Bitmap, BTree

        table.open().create_index("repo", config=Bitmap())  # what `corpus refs` reads by
        table.open().create_index("path", config=BTree())
    graph.finish()
    links.finish()
    return {"repos": len(config["repos"]), "chunks": chunks, "chunk_rows": table.count_rows(),
            "graph_rows": graph.open().count_rows(), "link_rows": links.open().count_rows(),
            "write_s": round(written, 1),
            "index_s": round(time.perf_counter() - started, 1)}  # fmt: skip


def _add(store: Any, name: str, data: Any) -> None:
    """Arrow rows appended to a corpus table (the graph's or the links'), created by the
    first."""
    if store.open() is None:
        store._table = store.chunks.connect().create_table(name, data)
    else:
        store.open().add(data)


def graph_table_name() -> str:
    from seek.store.corpus_graph import GRAPH_TABLE

    return GRAPH_TABLE


def links_table_name() -> str:
    from seek.store.corpus_links import LINKS_TABLE

    return LINKS_TABLE


def set_dependents(folder: Path, real: dict[str, RealRepo], plan: Plan, now: int) -> float:
    """Turn dependents ``now``.. of ``plan`` into repositories that import nothing of the
    library (their graph and link rows replaced); the seconds it took."""
    from seek.corpus.location import CorpusLocation
    from seek.store.corpus_graph import CorpusGraph
    from seek.store.corpus_links import CorpusLinks
    from seek.store.corpus_table import CorpusTable

    started = time.perf_counter()
    table = CorpusTable(CorpusLocation(str(folder)))
    graph, links = CorpusGraph(table), CorpusLinks(table)
    t = templates(real, Plan(0, 0, plan.filler_chunks, plan.full))["not-" + DEPENDENT]
    for i in range(now, plan.dependents):
        repo = dependent_name(i)
        graph.fill(repo, t.graph)
        links.replace_repo(repo, renamed_links(t, repo, f"{DEPENDENT}_{i:04d}"))
    graph.finish()
    links.finish()
    return time.perf_counter() - started
