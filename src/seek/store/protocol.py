"""What the indexer and the searchers need from storage (design "A store addressed by URI").

:class:`IndexStore` is the contract: the rows (a :class:`~seek.store.table.ChunkTable`), the
manifest with a *version token* (any value that changes whenever the manifest is saved; a
reader compares tokens to know its searcher is stale, without reading the manifest), and
the writer lock. :class:`LocalIndexStore` is today's implementation: a folder on a local
disk, the manifest replaced by ``os.replace``, its token the file's inode, modification time
and size, and a file lock. An object-storage store (the corpus) implements the same
protocol with an object's ETag or generation as the token and a conditional write as the
lock.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol, runtime_checkable

from seek.store.lock import WriterLock, is_locked
from seek.store.manifest import MANIFEST_NAME, Manifest, load_manifest, save_manifest
from seek.store.table import ChunkTable

NO_MANIFEST = 0
"""The version token of a store that holds no manifest yet."""


@runtime_checkable
class IndexStore(Protocol):
    location: str
    """Where the index lives, for messages (a folder, a URI)."""

    def table(self, name: str | None = None) -> ChunkTable:
        """The rows: the named table, by default the current manifest's."""
        ...

    def load_manifest(self) -> Manifest: ...

    def save_manifest(self, manifest: Manifest, name: str = MANIFEST_NAME) -> None: ...

    def manifest_token(self) -> object:
        """Changes whenever the current manifest is saved (:data:`NO_MANIFEST` before)."""
        ...

    def writer_lock(self, command: str) -> AbstractContextManager[object]:
        """Held by the one process writing the index (``command`` names it to others)."""
        ...

    def is_locked(self) -> bool: ...


class LocalIndexStore:
    """An index in a folder on this machine (``<home>/<workspace hash>/``)."""

    def __init__(self, index_dir: Path) -> None:
        self.index_dir = index_dir
        self.location = str(index_dir)

    def table(self, name: str | None = None) -> ChunkTable:
        return ChunkTable(self.index_dir, name) if name else ChunkTable(self.index_dir)

    def load_manifest(self) -> Manifest:
        return load_manifest(self.index_dir)

    def save_manifest(self, manifest: Manifest, name: str = MANIFEST_NAME) -> None:
        save_manifest(self.index_dir, manifest, name)

    def manifest_token(self) -> object:
        try:
            info = (self.index_dir / MANIFEST_NAME).stat()
        except FileNotFoundError:
            return NO_MANIFEST
        # Each save is a new file (os.replace): its inode, time and size together change
        # even when two saves fall within the file system's clock resolution.
        return (info.st_ino, info.st_mtime_ns, info.st_size)

    def writer_lock(self, command: str) -> WriterLock:
        return WriterLock(self.index_dir, command)

    def is_locked(self) -> bool:
        return is_locked(self.index_dir)
