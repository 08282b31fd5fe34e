"""The search cache: what a searcher needs (:class:`~seek.retrieve.search_data.SearchData`),
derived from the table, in files that load in milliseconds without LanceDB or pyarrow
(issue 14).

LanceDB stays the store of record; this is a copy, arranged for search:

- ``vectors.npy``: every window's unit embedding (float32, rows sorted by chunk), memory-mapped
  (float32, not float16: the scores stay bit-identical to a search on the table, and numpy
  multiplies float16 slowly);
- ``chunks.npz``: per chunk its path (index into ``meta.json``'s list), number in the file,
  lines, first window row and the offsets of its text in ``contents.txt``;
- ``keywords.npz``: BM25 postings of the keyword column (:mod:`seek.retrieve.bm25`), the
  terms in ``meta.json``;
- ``words.npz``: the ranker's stemmed words per chunk (:mod:`seek.retrieve.wordsets`);
- ``table.json``: the table's files and sizes when the cache was written (``seek status``
  checks them instead of reading the table);
- ``meta.json``, written last: the format and the key.

**Key**: a digest of what determines the rows - the table's name, the index format, model,
dimensions, chunk settings and every file's content hash and chunk count - taken from a
manifest with no run open. A refreshed mtime does not change it; any change of rows does.

**Crash safety**: a cache is written into a temporary folder, every file synced, then renamed
to ``search-<key>`` in one step, so a folder with that name is always complete; a crash leaves
only a temporary folder, which nothing reads and the next write removes. A reader that finds
no folder for the current key (or one it cannot read) loads the table instead. While a run
that stopped before its end (killed, or its folder full or read-only: issue 31) leaves
``runOpen`` set, readers use the newest complete cache (:func:`last_complete_key`): the last
complete index, where the table may hold a half-updated file. Only two
writers exist: the index run, under the writer lock, after its last commit; and a searcher
that loaded the table, which writes only when the manifest did not change while it read (an
index run saves the manifest, run open, before it touches a row).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from seek.retrieve.bm25 import Postings
from seek.retrieve.search_data import SearchData
from seek.retrieve.symbols import refresh_hit_symbols
from seek.retrieve.wordsets import WordSets
from seek.store.manifest import Manifest
from seek.store.memory import release_free_memory
from seek.store.private import PRIVATE_DIR, private_opener

log = logging.getLogger(__name__)

CACHE_FORMAT = 1
PREFIX = "search-"
STALE_TEMP_S = 600.0
"""A temporary folder this old is a crashed writer's (writing takes seconds)."""


def cache_key(manifest: Manifest) -> str | None:
    """The key of the rows ``manifest`` describes; None while a run is open (rows and stamps
    may disagree) or when there is no index."""
    if manifest.run_open or not manifest.has_index:
        return None
    digest = hashlib.sha1()
    head = [CACHE_FORMAT, manifest.format, manifest.model, manifest.dimensions,
            asdict(manifest.chunking) if manifest.chunking else None, manifest.table]  # fmt: skip
    digest.update(json.dumps(head).encode())
    for path in sorted(manifest.files):
        stamp = manifest.files[path]
        line = f"{path}\0{stamp.hash}\0{stamp.chunks}\0{stamp.skip}\n"
        digest.update(line.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:24]


def cache_dir(index_dir: Path, key: str) -> Path:
    return index_dir / f"{PREFIX}{key}"


def last_complete_key(index_dir: Path) -> str | None:
    """The key of the newest complete cache in ``index_dir`` (None: none). A run that
    stopped before its end (a write fault: issue 31) leaves ``runOpen`` set and no key for
    its manifest; this cache is then the last complete index, as the last run that finished
    wrote it."""
    newest: tuple[int, str] | None = None
    try:
        entries = list(os.scandir(index_dir))
    except OSError:
        return None
    for entry in entries:
        if not entry.name.startswith(PREFIX):
            continue
        try:
            meta = json.loads((Path(entry.path) / "meta.json").read_bytes())
            found = (int(meta["written"]), str(meta["key"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if found[1] == entry.name[len(PREFIX) :] and (newest is None or found > newest):
            newest = found
    return newest[1] if newest else None


def has_cache(index_dir: Path, manifest: Manifest) -> bool:
    key = cache_key(manifest)
    return key is not None and (cache_dir(index_dir, key) / "meta.json").is_file()


def _save_npz(folder: Path, name: str, **arrays: np.ndarray) -> None:
    with open(folder / name, "wb", opener=private_opener) as fh:
        np.savez(fh, **arrays)


def _write_bytes(path: Path, data: bytes) -> None:
    with open(path, "wb", opener=private_opener) as fh:
        fh.write(data)


TEXT_PIECE = 1024
"""Chunks joined and encoded at a time when ``contents.txt`` is written: one string of a
whole index's text, and its bytes, were ~50 MB at the peak of a cold index of abseil-cpp
(one character outside Latin-1 makes the joined string 4 bytes a character). The bytes
are the same: ``surrogatepass`` encodes each code point on its own."""


def _write_text(path: Path, texts: list[str]) -> None:
    with open(path, "wb", opener=private_opener) as fh:
        for i in range(0, len(texts), TEXT_PIECE):
            fh.write("".join(texts[i : i + TEXT_PIECE]).encode("utf-8", "surrogatepass"))


def _sync_files(folder: Path) -> None:
    """fsync every file of ``folder`` at once, then the folder: one journal commit or two
    instead of one per file (8 files took 17-35 ms one after the other here, 6-9 ms
    together; a small folder's whole index run is ~0.1 s). The folder is renamed into place
    only after this, so the crash safety is as with a sync per file."""

    def sync(name: str) -> None:
        fd = os.open(folder / name, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    names = os.listdir(folder)
    with ThreadPoolExecutor(max_workers=len(names) or 1, thread_name_prefix="seek-sync") as pool:
        list(pool.map(sync, names))
    _fsync_dir(folder)


def table_files(table_dir: Path) -> dict[str, int]:
    """Every file of a table folder and its size."""
    found: dict[str, int] = {}
    for parent, _, names in os.walk(table_dir):
        for name in names:
            path = os.path.join(parent, name)
            try:
                found[os.path.relpath(path, table_dir)] = os.stat(path).st_size
            except OSError:
                continue
    return found


def write_cache(index_dir: Path, key: str, data: SearchData, table_dir: Path) -> Path:
    """Write the cache of ``key`` (see the module's crash-safety notes); returns its folder.
    Other caches of the index are removed (a searcher that mapped one keeps its pages)."""
    final = cache_dir(index_dir, key)
    if not (final / "meta.json").is_file():
        tmp = index_dir / f".{PREFIX}{key}.{os.getpid()}.{threading.get_ident()}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(mode=PRIVATE_DIR, parents=True)  # the index's text: the user's alone (issue 43)
        try:
            _write_folder(tmp, key, data, table_dir)
            try:
                os.rename(tmp, final)
            except OSError:  # another process wrote the same cache first
                if not (final / "meta.json").is_file():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        _fsync_dir(index_dir)
    _remove_others(index_dir, final)
    return final


def _write_folder(folder: Path, key: str, data: SearchData, table_dir: Path) -> None:
    unique_paths = list(dict.fromkeys(data.paths))
    path_index = {p: i for i, p in enumerate(unique_paths)}
    offsets = np.zeros(len(data.contents) + 1, dtype=np.int64)
    np.cumsum([len(c) for c in data.contents], out=offsets[1:])
    with open(folder / "vectors.npy", "wb", opener=private_opener) as fh:
        np.save(fh, np.ascontiguousarray(data.vectors, dtype=np.float32))
    _save_npz(folder, "chunks.npz",
              path=np.array([path_index[p] for p in data.paths], dtype=np.int32),
              number=np.asarray(data.chunk_numbers, dtype=np.int32),
              start=np.array(data.starts, dtype=np.int32),
              end=np.array(data.ends, dtype=np.int32),
              first_row=np.asarray(data.chunk_first_row, dtype=np.int64),
              text=offsets)  # fmt: skip
    _write_text(folder / "contents.txt", data.contents)
    p = data.postings
    _save_npz(folder, "keywords.npz", starts=p.starts, docs=p.docs, freqs=p.freqs,
              lengths=p.lengths)  # fmt: skip
    w = data.word_sets
    if w is None:  # only a corpus question's pool lacks them, and a pool is never cached
        raise ValueError("search data without word sets cannot be cached")
    _save_npz(folder, "words.npz", starts=w.starts, ids=w.ids)
    strings = {"paths": unique_paths, "terms": list(p.terms), "words": list(w.words)}
    _write_bytes(folder / "strings.json", json.dumps(strings).encode("utf-8", "surrogatepass"))
    _write_bytes(folder / "table.json", json.dumps(table_files(table_dir)).encode())
    meta = {"format": CACHE_FORMAT, "key": key, "chunks": len(data.paths),
            "rows": int(len(data.vectors)), "written": int(time.time() * 1000)}  # fmt: skip
    _write_bytes(folder / "meta.json", json.dumps(meta).encode())
    _sync_files(folder)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove_others(index_dir: Path, keep: Path) -> None:
    now = time.time()
    for entry in index_dir.iterdir():
        name = entry.name
        if name.startswith(PREFIX) and entry != keep:
            shutil.rmtree(entry, ignore_errors=True)
        elif name.startswith(f".{PREFIX}") and name.endswith(".tmp"):
            try:
                old = now - entry.stat().st_mtime > STALE_TEMP_S
            except OSError:
                continue
            if old:
                shutil.rmtree(entry, ignore_errors=True)


# numpy reads each array's header with ``ast.literal_eval``; CPython 3.11 keeps the AST
# converter's recursion depth in one place for all threads, so two threads loading caches at
# once (two workspaces opening in a server, a search while a rebuild replaces the searcher)
# can fail with "SystemError: AST constructor recursion depth mismatch" (seen in
# tests/test_rebuild_during_search.py). Reads are milliseconds: one at a time.
_READING = threading.Lock()


def load_cache(index_dir: Path, key: str | None) -> SearchData | None:
    """The cache of ``key``, or None when it is missing, of another format or unreadable."""
    if key is None:
        return None
    folder = cache_dir(index_dir, key)
    try:
        meta = json.loads((folder / "meta.json").read_bytes())
        if meta.get("format") != CACHE_FORMAT or meta.get("key") != key:
            return None
        with _READING:
            return _read_folder(folder, int(meta["chunks"]), int(meta["rows"]))
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        log.info("search cache %s unreadable (%s); reading the table", folder, exc)
        return None


def _read_folder(folder: Path, n_chunks: int, n_rows: int) -> SearchData:
    strings = json.loads((folder / "strings.json").read_bytes().decode("utf-8", "surrogatepass"))
    with np.load(folder / "chunks.npz") as chunks:
        path, number = chunks["path"], chunks["number"]
        start, end, first_row, offsets = (
            chunks["start"], chunks["end"], chunks["first_row"], chunks["text"]
        )  # fmt: skip
    vectors = np.load(folder / "vectors.npy", mmap_mode="r")
    if len(path) != n_chunks or len(vectors) != n_rows or len(offsets) != n_chunks + 1:
        raise ValueError("the cache's arrays disagree with its meta.json")
    text = (folder / "contents.txt").read_bytes().decode("utf-8", "surrogatepass")
    if len(text) != int(offsets[-1]):
        raise ValueError("contents.txt has the wrong length")
    bounds = offsets.tolist()
    unique_paths = strings["paths"]
    with np.load(folder / "keywords.npz") as kw:
        postings = Postings(strings["terms"], kw["starts"], kw["docs"], kw["freqs"], kw["lengths"])
    with np.load(folder / "words.npz") as ws:
        word_sets = WordSets(strings["words"], ws["starts"], ws["ids"])
    return SearchData(
        paths=[unique_paths[i] for i in path.tolist()],
        chunk_numbers=number,
        starts=start.tolist(),
        ends=end.tolist(),
        contents=[text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)],
        vectors=vectors,
        chunk_first_row=first_row,
        postings=postings,
        word_sets=word_sets,
    )


def table_unchanged(index_dir: Path, manifest: Manifest) -> bool | None:
    """Whether the table's files are exactly those the current cache saw, with their sizes
    (None: no cache to compare with). The cache was derived by reading every row of that
    table when its rows matched the manifest, so an unchanged set of files is a sound table
    (damage that keeps every size is not seen; the same trade as :func:`seek.store.health.check`'s
    memo). A deleted, truncated or replaced file, and any write since (every LanceDB commit
    adds a version file), shows without opening LanceDB."""
    key = cache_key(manifest)
    if key is None:
        return None
    try:
        recorded = json.loads((cache_dir(index_dir, key) / "table.json").read_bytes())
    except (OSError, ValueError):
        return None
    return bool(recorded) and table_files(index_dir / "lancedb" / f"{manifest.table}.lance") == (
        recorded
    )


@dataclass
class BuiltRows:
    """The search data of the rows a run wrote to a table it created, built before the run's
    manifest is final (:func:`build_written`), for :func:`refresh_search_cache`."""

    table: str
    chunks: int
    """Its chunks (rows of part 0), to compare with the manifest's."""
    data: SearchData


def build_written(written: dict[str, Any]) -> BuiltRows:
    """:class:`SearchData` of ``written`` (as :func:`refresh_search_cache` takes it, handed
    over): a run whose code graph is still being extracted on its worker builds it while it
    waits (seek.index.graph_worker), rather than after."""
    release_free_memory()  # see refresh_search_cache
    chunks = sum(1 for part in written["part"] if part == 0)
    return BuiltRows(written["table"], chunks, SearchData.from_rows(written, consume=True))


def refresh_search_cache(
    index_dir: Path, written: dict[str, Any] | BuiltRows | None = None
) -> None:
    """After an index run's last commit (under the writer lock): write the cache of the
    current manifest unless it exists. A failure costs speed, never the run: the next search
    reads the table and tries again.

    ``written``: every row of a table, as the run that created it wrote them (in
    :meth:`ChunkTable.load_all`'s form, plus the ``table`` name), so a cold index need not
    read its table back (a scan that cost a small folder's run ~20 MB of LanceDB's query
    code and an Arrow copy of every row; issue 14), or their search data already built
    (:func:`build_written`). Used only when that table is the manifest's (a cancelled
    rebuild keeps the old one) and its chunks add up to the manifest's."""
    from seek.store import ChunkTable, load_manifest

    manifest = load_manifest(index_dir)
    key = cache_key(manifest)
    refresh_hit_symbols(index_dir, manifest)  # each hit's enclosing symbol, kept beside
    if key is None or (cache_dir(index_dir, key) / "meta.json").is_file():
        return
    table = ChunkTable(index_dir, manifest.table)
    expected = sum(stamp.chunks for stamp in manifest.files.values())
    if isinstance(written, BuiltRows):
        usable = written.table == manifest.table and written.chunks == expected
        built, written = (written.data if usable else None), None
    else:
        built = None
        if written is not None and (
            written.get("table") != manifest.table
            or sum(1 for part in written["part"] if part == 0) != expected
        ):
            written = None
    # An index run's writes (its writer thread, LanceDB's threads) leave freed memory in
    # heaps this thread does not allocate from, which the cache built next would add to
    # instead of reusing (issue 14): ~70 MB on abseil-cpp without the trim after each write
    # (seek.index.indexer), ~20 MB with it.
    release_free_memory()
    try:
        data = (
            built
            if built is not None
            else SearchData.from_rows(
                table.load_all() if written is None else written, consume=True
            )
        )
        write_cache(index_dir, key, data, table.db_dir / f"{table.name}.lance")
    except Exception as exc:  # lance reports damage as many error types
        log.warning("could not write the search cache of %s: %s", index_dir, exc)
