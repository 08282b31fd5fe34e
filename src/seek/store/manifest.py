"""``manifest.json``: what the index holds and how it was built (reference §4.1 + seek.md §4).

Shape (``format`` is seek's index format; ``version`` the reference's manifest version)::

    {"version": 3, "format": 1, "model": "local/minilm-code", "dimensions": 384,
     "chunking": {"max": 1000, "min": 100, "overlap": 100, "window": 600, "window_overlap": 80},
     "files": {"src/a.py": {"hash": "<sha1>", "size": 12, "mtimeNs": 1, "chunks": 3}},
     "skipped": {"too_big": 2}, "skippedExamples": {"too_big": ["big.json"]},
     "updatedAt": 1767000000000, "runOpen": false,
     "table": "chunks_1a2b3c4d5e6f", "retired": {"chunks_0f1e2d3c4b5a": 1767000000000}}

A stamp with ``"skip": "binary"`` or ``"no_chunks"`` marks a file that was read and holds
no rows, so it is not read again until it changes. ``runOpen`` is true while a run may have
written rows the stamps do not describe yet (a crash leaves it set; the next run then
removes rows of files without a stamp).

``table`` names the LanceDB table holding the rows (``chunks`` when absent: indexes written
before tables had names). A rebuild writes a new table and saves this file naming it only
once the table is complete, so a reader always finds a complete index; the table it
replaced is listed in ``retired`` with the time, and dropped by a later run once no reader
can still be using it.

Saving is atomic (write a temporary file, fsync, rename). A missing, unreadable or
unparsable manifest, or one of another version, reads as empty, which makes the next run
a full rebuild.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from seek.store.files import write_atomically

log = logging.getLogger(__name__)

MANIFEST_VERSION = 3
# 2: no phantom line after a final newline, keywords on part 0 only;
# 3: files with lines over 4,000 characters are split as prose (no tree-sitter).
INDEX_FORMAT = 3
MANIFEST_NAME = "manifest.json"
DEFAULT_TABLE = "chunks"


@dataclass(slots=True)
class Stamp:
    hash: str
    size: int
    mtime_ns: int
    chunks: int
    skip: str = ""
    """``binary`` or ``no_chunks`` when the file holds no rows on purpose."""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "hash": self.hash,
            "size": self.size,
            "mtimeNs": self.mtime_ns,
            "chunks": self.chunks,
        }
        if self.skip:
            data["skip"] = self.skip
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Stamp:
        return cls(
            hash=str(data["hash"]),
            size=int(data["size"]),
            mtime_ns=int(data["mtimeNs"]),
            chunks=int(data["chunks"]),
            skip=str(data.get("skip", "")),
        )


@dataclass(frozen=True, slots=True)
class ChunkingSpec:
    max: int
    min: int
    overlap: int
    window: int
    window_overlap: int


@dataclass(slots=True)
class Manifest:
    model: str = ""
    dimensions: int = 0
    chunking: ChunkingSpec | None = None
    format: int = INDEX_FORMAT
    files: dict[str, Stamp] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_examples: dict[str, list[str]] = field(default_factory=dict)
    updated_at: int | None = None
    run_open: bool = False
    table: str = DEFAULT_TABLE
    retired: dict[str, int] = field(default_factory=dict)
    """Tables replaced by a rebuild -> when (ms since the epoch)."""

    @property
    def has_index(self) -> bool:
        return bool(self.files)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": MANIFEST_VERSION,
            "format": self.format,
            "model": self.model,
            "dimensions": self.dimensions,
            "chunking": asdict(self.chunking) if self.chunking else None,
            "files": {path: stamp.to_json() for path, stamp in sorted(self.files.items())},
            "skipped": dict(sorted(self.skipped.items())),
            "skippedExamples": self.skipped_examples,
            "updatedAt": self.updated_at,
            "runOpen": self.run_open,
            "table": self.table,
            "retired": dict(sorted(self.retired.items())),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Manifest:
        """Raises KeyError, TypeError, ValueError or AttributeError on a malformed shape
        (``"files": null`` included)."""
        chunking = data.get("chunking")
        table = data.get("table", DEFAULT_TABLE)
        if not isinstance(table, str) or not table.replace("_", "").isalnum():
            raise ValueError(f"bad table name {table!r}")
        return cls(
            model=str(data.get("model", "")),
            dimensions=int(data.get("dimensions", 0)),
            chunking=ChunkingSpec(**chunking) if chunking else None,
            format=int(data.get("format", 0)),
            files={p: Stamp.from_json(s) for p, s in data.get("files", {}).items()},
            skipped={k: int(v) for k, v in data.get("skipped", {}).items()},
            skipped_examples={k: list(v) for k, v in data.get("skippedExamples", {}).items()},
            updated_at=data.get("updatedAt"),
            run_open=bool(data.get("runOpen", False)),
            table=table,
            retired={str(k): int(v) for k, v in data.get("retired", {}).items()},
        )


def load_manifest(index_dir: Path) -> Manifest:
    """The stored manifest, or an empty one when it is missing, unreadable or outdated."""
    path = index_dir / MANIFEST_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Manifest()
    except (OSError, ValueError) as exc:
        log.warning("manifest %s is unreadable (%s); the index will be rebuilt", path, exc)
        return Manifest()
    if not isinstance(data, dict) or data.get("version") != MANIFEST_VERSION:
        log.warning("manifest %s has another version; the index will be rebuilt", path)
        return Manifest()
    try:
        return Manifest.from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        log.warning("manifest %s is malformed (%s); the index will be rebuilt", path, exc)
        return Manifest()


def save_manifest(index_dir: Path, manifest: Manifest, name: str = MANIFEST_NAME) -> None:
    """Write atomically: readers see the old or the new manifest, never half of one."""
    data = json.dumps(manifest.to_json(), separators=(",", ":")).encode("utf-8")
    write_atomically(index_dir / name, data)


_UPDATED_AT = re.compile(rb'"updatedAt":(?:null|-?\d+)')


def contents_stamp(manifest: Path) -> str:
    """A digest of the manifest without ``updatedAt`` ("" when there is none): it changes when
    the index's rows may have, not when an update check found nothing to do."""
    try:
        data = manifest.read_bytes()
    except FileNotFoundError:
        return ""
    return hashlib.sha1(_UPDATED_AT.sub(b"", data)).hexdigest()
