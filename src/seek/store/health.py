"""Is a stored chunk table sound? (seek.md §4 "Indexing": a damaged table makes the next run
a rebuild; issue 20: asking costs nothing while its files are unchanged.)

:func:`check` answers "" or what is wrong, on one short line. Every update check and ``seek
status`` asks, once a second per workspace in a busy server, and the full check
(:func:`read_check`) reads every data file. A table found sound is not read again while its
files (names, sizes, modification times) stay as they were: reading it once a second was most
of the LanceDB work of an idle server, a new connection each time, and the steady file
operations that kept LanceDB's blocking threads from ever ending (issue 20). Damage that keeps
a file's size and time is not seen until the next change.
"""

from __future__ import annotations

import threading
from pathlib import Path

from seek.errors import failure_line as one_line
from seek.store.files import files_state
from seek.store.table import KEYWORD_COLUMN, ChunkTable, needs_keyword_index
from seek.store.threads import reads_lance

SOUND_TABLES_KEPT = 256
_SOUND: dict[tuple[Path, str], tuple[int | None, frozenset]] = {}
"""Per table, the files it had when :func:`check` last found it sound."""
_SOUND_GUARD = threading.Lock()


def check(table: ChunkTable, expected_chunks: int | None) -> str:
    """What is wrong with ``table`` ("" when nothing is): :func:`read_check`, unless it was
    found sound with the files it has now."""
    key = (table.db_dir, table.name)
    files = files_state(table.db_dir / f"{table.name}.lance")
    if files and _SOUND.get(key) == (expected_chunks, files):
        return ""
    problem = read_check(table, expected_chunks)
    with _SOUND_GUARD:
        if problem or not files:
            _SOUND.pop(key, None)
        else:
            if len(_SOUND) >= SOUND_TABLES_KEPT:  # tables replaced by rebuilds
                _SOUND.clear()
            _SOUND[key] = (expected_chunks, files)
    return problem


@reads_lance
def read_check(table: ChunkTable, expected_chunks: int | None) -> str:
    """What is wrong with ``table`` ("" when nothing is): it must exist, be readable (every
    data file's ``part`` column is read, so a truncated or missing file shows), hold the
    chunks the manifest counts and, when it is large enough to need one
    (:func:`~seek.store.table.needs_keyword_index`), have a readable keyword index (one it has
    anyway must be readable too). With ``expected_chunks=None`` (a run was interrupted: rows
    and stamps may differ, and the keyword index is built last) only existence and
    readability are checked. One read under the LanceDB gate, so no write lands midway."""
    if not table.exists():
        missing = expected_chunks is not None and expected_chunks > 0
        return f"table {table.name} is missing" if missing else ""
    try:
        opened = table._open()
        chunks = table.count_chunks()
        if expected_chunks is not None and chunks != expected_chunks:
            return f"the table holds {chunks} chunks, the manifest {expected_chunks}"
        if not chunks:
            return ""
        assert opened is not None
        opened.scan(["part"])
        if expected_chunks is None:  # an interrupted run: its keyword index comes last
            return ""
        if not table.has_keyword_index():
            return "the keyword index is missing" if needs_keyword_index(chunks) else ""
        package_table = table._package_table()
        query = package_table.search("index", query_type="fts", fts_columns=KEYWORD_COLUMN)
        query.limit(1).to_list()
    except Exception as exc:  # lance reports damage as many error types
        return f"the table cannot be read ({one_line(exc)})"
    return ""
