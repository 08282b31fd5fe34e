"""Is there room for this run? Checked before a run writes its first row (issue 31; README
"Reliability"), so that a disk too small is refused in one line with the numbers, rather
than found full halfway.

The estimate is rows x bytes per row:

- **rows**: each changed file's size over the source bytes per chunk (at least one chunk a
  file);
- **bytes per row**: the existing index's own, measured on disk (its table folders - the
  chunks and their graph - and its search cache over its chunks, so the workspace's
  language, the model's dimensions and the windows per chunk are all in it); before the
  first run, ``FIRST_RUN_*`` below;
- **what is written**: the new rows' table bytes ``TABLE_MARGIN`` times and, for an update
  in place, the kept rows' once more (its compaction rewrites the whole table: see
  ``TABLE_MARGIN``); the whole search cache once (a new cache is written beside the old one,
  which is removed only after), and ``FIXED_BYTES``. tests/test_room.py measures what runs
  really write against it, from both sides (issue 47).
"""

from __future__ import annotations

import errno
import math
from pathlib import Path

from seek.errors import IndexUnwritableError
from seek.retrieve.search_cache import PREFIX
from seek.retrieve.symbols import SIDECAR
from seek.scan import ScannedFile
from seek.store import Manifest
from seek.store.faults import free_bytes, unwritable_error
from seek.store.files import folder_size
from seek.store.graph_table import graph_table_name

FIRST_RUN_SOURCE_BYTES_PER_CHUNK = 900
"""Source bytes per chunk before an index exists: 895 measured on seek's own ``src`` (126
files, 1,626,324 bytes, 1,817 chunks with the default chunk settings)."""
FIRST_RUN_BYTES_PER_CHUNK = 1_700
FIRST_RUN_TABLE_BYTES_PER_SOURCE_BYTE = 2.3
FIRST_RUN_CACHE_BYTES_PER_SOURCE_BYTE = 3.6
"""Before an index exists, a chunk costs a fixed part in the table and again in the search
cache (its first window's vector: 384 float32 dimensions, and its row's columns) plus a part
that grows with its text (more windows, the text and its keywords). Fitted on that same
index: 1,817 x 1,700 + 1,626,324 x 2.3 = 6.83 MB for a 6,731,183-byte table, and
1,817 x 1,700 + 1,626,324 x 3.6 = 8.94 MB for an 8,938,074-byte cache; a folder of 41
two-line files (2.5 kB) is estimated at 0.15 MB for 0.17 MB on disk. A model with more
dimensions writes more; from the second run the index's own bytes per chunk are used."""
TABLE_MARGIN = 2.0
"""A run's rows are written once; an update in place then compacts the table, and LanceDB
writes the merged fragments before it deletes the old ones. It merges every fragment under
its target size (a million rows, so every table but the largest): the new rows a second
time, and the kept rows once (issue 47: a 3-file update of a 60-file index wrote its whole
table again). A table the run creates is not compacted
(:meth:`seek.index.indexer.Indexer._finish_table`): its rows once, no kept row rewritten."""
TABLE_VARIATION = 0.05
"""What LanceDB writes for the same rows varies from run to run (how its threads cut the
fragments): an update's table writes were seen up to 2.3 % apart (3.11 and 3.18 MB for the
same 3-file update of a 60-file index), more than ``FIXED_BYTES`` covers at that size. The
measured table part is counted 5 % larger."""
FIXED_BYTES = 64 << 10
"""LanceDB's version and transaction files, the writer's note and the progress file. What
LanceDB writes for the same rows varies by some 15 kB from run to run (how its threads cut
the fragments): this covers that too (tests/test_room.py)."""
MANIFEST_BYTES_PER_FILE = 200
"""The manifest is written whole at each save, beside the old one until the rename: ~150
bytes a file (a path, a hash, a size, a time and a count), rounded up."""


def estimate_bytes(
    index_dir: Path, manifest: Manifest, changed: list[ScannedFile], target: Manifest | None = None
) -> int:
    """Bytes a run writing ``changed`` needs free: ``manifest`` is the index measured (the
    current one), ``target`` the one the run writes into when it is another (a rebuild's
    new table, which keeps none of the current rows)."""
    chunks = sum(stamp.chunks for stamp in manifest.files.values())
    source = sum(stamp.size for stamp in manifest.files.values() if stamp.chunks)
    table = _table_bytes(index_dir, manifest.table) if chunks else 0
    cache = _cache_bytes(index_dir) if chunks else 0
    names = {f.rel for f in changed}
    into = target or manifest
    kept_files = [s for p, s in into.files.items() if p not in names]
    kept = sum(s.chunks for s in kept_files)  # 0 for a new table
    fresh = not kept_files  # a first run or a rebuild: a new table, never compacted
    margin = 1.0 if fresh else TABLE_MARGIN
    fixed = FIXED_BYTES + MANIFEST_BYTES_PER_FILE * (len(into.files) + len(changed))
    fixed += _file_bytes(index_dir / SIDECAR)  # each hit's symbol: rewritten whole too
    if chunks and table and cache:  # the index's own bytes per chunk
        source_per_chunk = max(1.0, source / chunks)
        rows = sum(max(1, math.ceil(f.size / source_per_chunk)) for f in changed)
        new_table = (margin * rows + kept) * table / chunks * (1 + TABLE_VARIATION)
        whole_cache = (kept + rows) * cache / chunks  # also when files were only removed
        return int(new_table + whole_cache) + fixed
    # Before the first run, or an index without a search cache (its write failed, or it was
    # deleted): the fitted figures, for the kept rows' text too (the cache holds every row).
    rows = sum(max(1, math.ceil(f.size / FIRST_RUN_SOURCE_BYTES_PER_CHUNK)) for f in changed)
    text = sum(f.size for f in changed)
    kept_text = sum(s.size for s in kept_files if s.chunks)
    new_table = margin * _first_run(rows, text, FIRST_RUN_TABLE_BYTES_PER_SOURCE_BYTE) + (
        _first_run(kept, kept_text, FIRST_RUN_TABLE_BYTES_PER_SOURCE_BYTE)
    )
    whole_cache = _first_run(kept + rows, kept_text + text, FIRST_RUN_CACHE_BYTES_PER_SOURCE_BYTE)
    return int(new_table + whole_cache) + fixed


def _first_run(chunks: int, source: int, per_source_byte: float) -> float:
    return chunks * FIRST_RUN_BYTES_PER_CHUNK + source * per_source_byte


def _file_bytes(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _table_bytes(index_dir: Path, table: str) -> int:
    """The chunk table's folder and its graph's: a run writes and compacts both."""
    lance = index_dir / "lancedb"
    return folder_size(lance / f"{table}.lance") + folder_size(
        lance / f"{graph_table_name(table)}.lance"
    )


def _cache_bytes(index_dir: Path) -> int:
    try:
        folders = [p for p in index_dir.iterdir() if p.name.startswith(PREFIX)]
    except OSError:
        return 0
    return max((folder_size(p) for p in folders), default=0)


def check_room(index_dir: Path, needed: int) -> None:
    """Refuse a run that needs more than the free space of ``index_dir``'s file system."""
    try:
        free = free_bytes(index_dir)
    except OSError:
        return  # no answer is no refusal: a real fault shows at the first write
    if needed > free:
        raise not_enough_room(index_dir, needed, free)


def not_enough_room(index_dir: Path, needed: int, free: int) -> IndexUnwritableError:
    return unwritable_error(
        errno.ENOSPC, index_dir,
        f"this run needs about {_mb(needed)} and {_mb(free)} is free (no row was written)",
    )  # fmt: skip


def _mb(num: int) -> str:
    return f"{num / 1e6:.1f} MB" if num >= 100_000 else f"{num / 1e3:.0f} kB"
