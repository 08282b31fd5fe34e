"""Storage: the LanceDB chunk table, the manifest, the index location and the writer lock,
behind the :class:`IndexStore` protocol (:mod:`.protocol`)."""

from seek.store.location import index_dir_for, seek_home
from seek.store.lock import WriterLock, describe_holder, is_locked
from seek.store.manifest import ChunkingSpec, Manifest, Stamp, load_manifest, save_manifest
from seek.store.protocol import IndexStore, LocalIndexStore
from seek.store.table import ChunkTable, RowBatch, StoredChunk

__all__ = [
    "ChunkTable",
    "ChunkingSpec",
    "IndexStore",
    "LocalIndexStore",
    "Manifest",
    "RowBatch",
    "Stamp",
    "StoredChunk",
    "WriterLock",
    "describe_holder",
    "index_dir_for",
    "is_locked",
    "load_manifest",
    "save_manifest",
    "seek_home",
]
