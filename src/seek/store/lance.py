"""LanceDB for the chunk table: its native engine without its Python package where that is
safe, the package everywhere else (issue 14).

Why: ``import lancedb`` costs ~1.0-1.3 s of CPU and ~60 MB before a row is touched (about 700
modules: the namespace client's pydantic models, embedding and reranker registries), while
the engine itself, the pyo3 extension ``lancedb._lancedb``, loads in ~0.1 s. An index run
(cold or updating) and its checks need only a handful of table operations, so a ``seek
index`` process loads the extension alone and drives its async methods on the store's event
loop (:mod:`seek.store.event_loop`): :func:`connect` returns a :class:`Connection` whose
:class:`Table` does exactly what :class:`seek.store.table.ChunkTable` asks (create, add,
delete, count, list indexes, optimize, scan). The full-text index, keyword and vector
queries, the corpus, and every operation when the lean path is off go through the public
package (:func:`package`), whose sync API gives the same :class:`Table` methods here
(:class:`PackageTable`). Both write the
same table: the package's ``create_table``/``add`` of an Arrow table with seek's schema pass
the same Arrow data to the same native calls (``tests/test_lance_native.py`` writes with one
and reads with the other).

Risk, and how it is bounded: ``lancedb._lancedb`` is private API, free to change in any
release. The lean path is used only with the lancedb versions it was tested with
(``TESTED_VERSIONS``, read from the installed distribution's folder name); with any other
version, a missing extension, a failed load or ``SEEK_LANCEDB=package`` in the environment,
seek uses the public package for everything (slower to start, same results). The
extension is loaded under its own name, so a later ``import lancedb`` reuses it (a pyo3
module is initialised once per process).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import threading
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from seek.store.event_loop import wait

TESTED_VERSIONS = ("0.40.",)
"""lancedb releases whose private ``_lancedb`` API the lean path was tested against (prefix
match on the version). Widen only after ``tests/test_lance_native.py`` passes with the new
release; pyproject.toml keeps lancedb open-ended so that a newer release still works
through the public package."""
NATIVE_NAME = "lancedb._lancedb"
ENV_SWITCH = "SEEK_LANCEDB"
"""``package``: never load the extension alone (the public package for everything)."""

_guard = threading.Lock()
_native: Any = None
_native_tried = False


def _installed_version(package_dir: Path) -> str | None:
    """The version in ``lancedb-<version>.dist-info`` beside the package (no
    importlib.metadata: its import costs more than this look-up)."""
    for entry in package_dir.parent.glob("lancedb-*.dist-info"):
        return entry.name[len("lancedb-") : -len(".dist-info")]
    return None


def native_module() -> Any | None:
    """``lancedb._lancedb`` when the lean path may be used, else None (see module docs)."""
    global _native, _native_tried
    if _native_tried:
        return _native
    with _guard:
        if not _native_tried:
            _native = _load_native()
            _native_tried = True
    return _native


def _load_native() -> Any | None:
    if os.environ.get(ENV_SWITCH, "").strip().lower() == "package":
        return None
    os.environ.setdefault("LANCEDB_LOG", "error")  # lance's "creating dataset" warnings
    try:
        spec = importlib.util.find_spec("lancedb")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    package_dir = Path(next(iter(spec.submodule_search_locations)))
    version = _installed_version(package_dir)
    if version is None or not version.startswith(TESTED_VERSIONS):
        return None
    loaded = sys.modules.get(NATIVE_NAME)
    if loaded is not None:  # the public package was imported first
        return loaded
    found = [
        package_dir / f"_lancedb{suffix}"
        for suffix in importlib.machinery.EXTENSION_SUFFIXES
        if (package_dir / f"_lancedb{suffix}").is_file()
    ]
    if not found:
        return None
    import pyarrow  # noqa: F401 - the extension hands Arrow data to and from pyarrow

    try:
        loader = importlib.machinery.ExtensionFileLoader(NATIVE_NAME, str(found[0]))
        module_spec = importlib.util.spec_from_file_location(NATIVE_NAME, found[0], loader=loader)
        assert module_spec is not None
        module = importlib.util.module_from_spec(module_spec)
        loader.exec_module(module)
    except Exception:  # noqa: BLE001 - any failure: the public package does the work
        return None
    # Registered even when unusable here: a pyo3 module initialises once per process, so the
    # package's own `from ._lancedb import ...` must find this one.
    sys.modules[NATIVE_NAME] = module
    needed = ("connect", "Session", "Connection", "Table")
    return module if all(hasattr(module, name) for name in needed) else None


def package() -> Any:
    """The public ``lancedb`` package (its extension is the one already loaded, if any;
    its REST namespace client loaded when first used, :mod:`seek.store.lance_client`)."""
    from seek.store.lance_client import defer_namespace_client

    os.environ.setdefault("LANCEDB_LOG", "error")
    defer_namespace_client(os.environ.get(ENV_SWITCH, ""))
    import lancedb

    if NATIVE_NAME in sys.modules and "_lancedb" not in vars(lancedb):
        # Loaded before the package: its `from . import _lancedb` finds it in sys.modules,
        # but plain attribute access would not.
        lancedb._lancedb = sys.modules[NATIVE_NAME]
    return lancedb


class _Scannable:
    """What the extension's ``add`` reads (the package's ``Scannable``): a schema, a row
    count and a reader that can be made again."""

    def __init__(self, data: Any) -> None:
        self.schema = data.schema
        self.num_rows = data.num_rows
        self.reader = data.to_reader
        self.rescannable = True


class Table:
    """One table through the extension: the operations ChunkTable uses, synchronously."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def add(self, data: Any) -> None:
        """Append a pyarrow Table."""
        wait(lambda: self._inner.add(_Scannable(data), "append"))

    def delete(self, where: str) -> None:
        wait(lambda: self._inner.delete(where))

    def count_rows(self, where: str | None = None) -> int:
        return int(wait(lambda: self._inner.count_rows(where)))

    def list_indices(self) -> list[Any]:
        return list(wait(self._inner.list_indices))

    def version(self) -> int:
        return int(wait(self._inner.version))

    def optimize(self, cleanup_older_than: timedelta) -> None:
        since_ms = round(cleanup_older_than.total_seconds() * 1000)
        wait(lambda: self._inner.optimize(cleanup_since_ms=since_ms, delete_unverified=False))

    def scan(self, columns: Sequence[str], where: str | None = None) -> Any:
        """Every row (matching ``where``) of ``columns``, as a pyarrow Table."""
        import pyarrow as pa

        query = self._inner.query()
        query.select_columns(list(columns))
        if where is not None:
            query.where(where)

        async def batches() -> list[Any]:
            stream = await query.execute(None, None)
            return [batch async for batch in stream]

        found = wait(batches)
        if found:
            return pa.Table.from_batches(found)
        return pa.Table.from_batches([], schema=wait(query.output_schema))


class Connection:
    """A local database folder through the extension."""

    def __init__(self, folder: Path, index_cache_bytes: int, metadata_cache_bytes: int) -> None:
        native = native_module()
        assert native is not None
        session = native.Session(index_cache_bytes, metadata_cache_bytes)
        # The package's lancedb.connect(path, session=...) for a local folder: no key,
        # region, hosts, consistency interval, client config or storage options.
        self._inner = wait(
            lambda: native.connect(str(folder), None, None, None, None, None, None, None, session)
        )

    def open_table(self, name: str) -> Table:
        return Table(wait(lambda: self._inner.open_table(name)))

    def create_table(self, name: str, data: Any) -> Table:
        """A new table of ``data`` (a pyarrow Table), replacing any of that name."""
        return Table(wait(lambda: self._inner.create_table(name, "overwrite", data.to_reader())))

    def drop_table(self, name: str) -> None:
        wait(lambda: self._inner.drop_table(name))


class PackageTable:
    """The same methods as :class:`Table`, through the public package's sync table (and
    the handle the package-only operations need: ``raw``)."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def add(self, data: Any) -> None:
        self.raw.add(data)

    def delete(self, where: str) -> None:
        self.raw.delete(where)

    def count_rows(self, where: str | None = None) -> int:
        return int(self.raw.count_rows(where))

    def list_indices(self) -> list[Any]:
        return list(self.raw.list_indices())

    def version(self) -> int:
        return int(self.raw.version)

    def optimize(self, cleanup_older_than: timedelta) -> None:
        self.raw.optimize(cleanup_older_than=cleanup_older_than)

    def scan(self, columns: Sequence[str], where: str | None = None) -> Any:
        query = self.raw.search()
        if where is not None:
            query = query.where(where)
        return query.select(list(columns)).limit(max(1, self.raw.count_rows())).to_arrow()


class PackageConnection:
    """The same methods as :class:`Connection`, through the public package."""

    def __init__(self, folder: Path, index_cache_bytes: int, metadata_cache_bytes: int) -> None:
        lancedb = package()
        session = lancedb.Session(
            index_cache_size_bytes=index_cache_bytes, metadata_cache_size_bytes=metadata_cache_bytes
        )
        self.raw = lancedb.connect(str(folder), session=session)

    def open_table(self, name: str) -> PackageTable:
        return PackageTable(self.raw.open_table(name))

    def create_table(self, name: str, data: Any) -> PackageTable:
        return PackageTable(self.raw.create_table(name, data, mode="overwrite"))

    def drop_table(self, name: str) -> None:
        self.raw.drop_table(name)


def connect(
    folder: Path, index_cache_bytes: int, metadata_cache_bytes: int
) -> Connection | PackageConnection:
    """The lean connection when the extension may be used alone, else the package's."""
    os.environ.setdefault("LANCEDB_LOG", "error")  # lance's "creating dataset" warnings
    if native_module() is not None:
        return Connection(folder, index_cache_bytes, metadata_cache_bytes)
    return PackageConnection(folder, index_cache_bytes, metadata_cache_bytes)
