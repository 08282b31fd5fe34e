"""Storage: the LanceDB chunk table, the manifest, the index location and the writer lock,
behind the :class:`IndexStore` protocol (:mod:`.protocol`).

The names below load on first use: the location and the manifest are read by light commands
(``seek --help``, ``seek status``) that must not pay for numpy and the table module."""

from __future__ import annotations

import importlib

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
    "save_manifest": "seek.store.manifest",
    "seek_home": "seek.store.location",
}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module 'seek.store' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = sorted(_LAZY)
