"""Is the index of a workspace current? The check a search makes before it answers
(seek.md §4: "a search brings the index up to date first"), without opening LanceDB.

The index is current when no run is open or running, the settings still fit it (model, chunk
settings, format), its search cache exists (:mod:`seek.retrieve.search_cache`), and a scan of
the workspace finds every file with the size and modification time its stamp records and no
file gone. Then the search reads the cache and nothing is written (not even the manifest);
otherwise :func:`seek.index.indexer.index_workspace` runs as before and writes the cache after its
last commit. Damage to the table is not looked for here: the search does not read the table
(``seek status`` and ``seek index`` check it).
"""

from __future__ import annotations

from pathlib import Path

from seek.embed import model_id_for
from seek.retrieve.search_cache import has_cache
from seek.scan import scan_workspace
from seek.settings import Settings
from seek.store import index_dir_for, is_locked, load_manifest
from seek.store.graph_table import graph_exists


def is_current(root: Path, settings: Settings) -> bool:
    """True when a search may skip the index run (see the module's docstring)."""
    from seek.index.rules import chunking_spec, is_stale, rebuild_reason

    index_dir = index_dir_for(root, settings)
    manifest = load_manifest(index_dir)
    if not has_cache(index_dir, manifest) or is_locked(index_dir):
        return False
    if rebuild_reason(manifest, model_id_for(settings), chunking_spec(settings)):
        return False
    if manifest.has_index and not graph_exists(index_dir, manifest.table):
        return False  # an index stored before the code graph: the run adds it
    scan = scan_workspace(
        root,
        max_file_bytes=settings.max_file_bytes,
        ignored_globs=settings.ignored_globs,
        exclude_dirs=(index_dir,),
    )
    stamps = manifest.files
    if len(scan.files) != len(stamps):
        return False
    return not any(is_stale(stamps.get(f.rel), f) for f in scan.files)
