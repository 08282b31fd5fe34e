"""Storage: the LanceDB chunk table (:mod:`.table`, through :mod:`.lance`; its health check
in :mod:`.health`), the corpus's table (:mod:`.corpus_table`), the manifest, the index
location, the writer lock, the store's files on disk (:mod:`.files`) and its one event loop
(:mod:`.event_loop`), behind the :class:`IndexStore` protocol (:mod:`.protocol`).

The names below load on first use: the location and the manifest are read by light commands
(``seek --help``, ``seek status``) that must not pay for numpy and the table module."""

from __future__ import annotations

from seek import lazy_names

_LAZY = {
    "ChunkTable": "seek.store.table",
    "ChunkingSpec": "seek.store.manifest",
    "IndexStore": "seek.store.protocol",
    "LocalIndexStore": "seek.store.protocol",
    "Manifest": "seek.store.manifest",
    "RowBatch": "seek.store.table",
    "Stamp": "seek.store.manifest",
    "StoredChunk": "seek.store.table",
    "WriterLock": "seek.store.lock",
    "describe_holder": "seek.store.lock",
    "index_dir_for": "seek.store.location",
    "is_locked": "seek.store.lock",
    "load_manifest": "seek.store.manifest",
    "needs_keyword_index": "seek.store.table",
    "save_manifest": "seek.store.manifest",
    "seek_home": "seek.store.location",
}


__getattr__, __dir__ = lazy_names("seek.store", _LAZY, globals())

__all__ = sorted(_LAZY)
