"""The real rows the synthetic corpora of ``bench.org.scale`` are copied from (issue 45,
deliver 5): four installed Python packages - urllib3, requests (which imports urllib3),
idna and charset_normalizer - as repositories of one corpus, indexed by seek's own corpus
run in this process, then read back: each repository's chunk rows, graph rows, link rows and
manifest."""

from __future__ import annotations

import importlib.util
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LIBRARY = "urllib3"
DEPENDENT = "requests"
OTHERS = ("idna", "charset_normalizer")
PACKAGES = (LIBRARY, DEPENDENT, *OTHERS)


def installed(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise SystemExit(f"{name} is not installed in this Python")
    return Path(spec.origin).parent


def as_repository(package: str, folder: Path) -> Path:
    """An installed package's sources as a checkout: ``src/<package>`` and a pyproject, as
    tests/test_corpus_org.py lays them out."""
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(installed(package), folder / "src" / package,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so"))  # fmt: skip
    (folder / "pyproject.toml").write_text(f'[project]\nname = "{package}"\nversion = "0"\n')
    return folder


def settings_in(home: Path):
    from seek.settings import load_settings

    home.mkdir(parents=True, exist_ok=True)
    return load_settings(None, overrides={"home": str(home)}, env={},
                         user_config=home / "no-user-config.toml")  # fmt: skip


def build_base(work: Path) -> Path:
    """The real corpus under ``work/base`` (kept: a second call reuses it)."""
    from seek.corpus.build import CorpusIndexer
    from seek.corpus.catalog import Catalog
    from seek.corpus.fanout import LocalRunner
    from seek.corpus.location import CorpusLocation

    corpus = work / "base"
    if (corpus / "done").is_file():
        return corpus
    shutil.rmtree(corpus, ignore_errors=True)
    location = CorpusLocation(str(corpus))
    catalog = Catalog(location)
    for package in PACKAGES:
        catalog.add(str(as_repository(package, work / "checkouts" / package)), package)
    CorpusIndexer(location, settings_in(work / "home"), LocalRunner()).run()
    (corpus / "done").write_text("indexed\n")
    return corpus


@dataclass(slots=True)
class RealRepo:
    """One repository's rows as the corpus stores them."""

    name: str
    chunks: Any  # pyarrow table of its chunk rows (every column)
    graph: list[tuple[str, str, str]]  # (path, definitions, facts), its marker left out
    links: list[tuple[str, str, str, str, str, str]]  # every kind but the marker
    manifest: dict[str, Any]

    @property
    def chunk_count(self) -> int:
        return sum(1 for p in self.chunks.column("part").to_pylist() if p == 0)


def read_real(corpus: Path) -> dict[str, RealRepo]:
    from seek.corpus.catalog import Catalog
    from seek.corpus.location import CorpusLocation
    from seek.store.corpus_graph import CorpusGraph
    from seek.store.corpus_links import MARKER, CorpusLinks
    from seek.store.corpus_table import CorpusTable

    location = CorpusLocation(str(corpus))
    table = CorpusTable(location)
    graph, links = CorpusGraph(table), CorpusLinks(table)
    catalog = Catalog(location)
    out = {}
    for name in PACKAGES:
        where = f"repo = '{name}'"
        rows = table.open().search().where(where).limit(table.count_rows(where)).to_arrow()
        link_rows = [r for r in links._rows(where) if r[1] != MARKER]
        manifest = location.read_json(catalog.manifest_name(name))
        out[name] = RealRepo(name, rows, graph.load_repo(name) or [], link_rows, manifest)
    return out
