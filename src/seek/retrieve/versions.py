"""Current code before its older copies (issue 13, "symbols": current vs legacy).

A workspace often keeps an older copy of the same API next to the current one: ``src/v3/``
beside ``src/v4/``, or a ``deprecated/`` folder. Both define the
same names and say the same words, and the ranker has no way to tell them apart; a developer
asking about ``ZodError`` or "how errors are formatted" means the current one unless they
name the old one. So a file under such a folder is *older*:

* a version folder ``vN`` whose parent also holds a ``vM`` with ``M > N`` (the newest one is
  current; a lone ``v1/`` is just a name);
* a folder named ``deprecated``, ``obsolete`` or ``old``.

(``compat/`` and ``legacy/`` folders are already demoted before the ranker, by
``path_penalties`` in :mod:`.signals`, which the ranker's features carry; they are not
demoted twice.)

An older file keeps ``OLDER_FACTOR`` of its probability, unless the question names the folder
(``v3 errors``, "the deprecated helpers"): then it is what was asked for. Only folders
count: a file named ``old.py`` is part of the current code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

OLDER_FACTOR = 0.5
"""The same demotion as ``non_code_penalty``: an older copy still shows, below the current one."""
OLD_FOLDERS = frozenset(("deprecated", "obsolete", "old"))
_VERSION = re.compile(r"v(\d+)")
_WORD = re.compile(r"[a-z0-9]+")


def older_copies(paths: Iterable[str]) -> dict[str, str]:
    """``path -> folder`` for each path under an older copy (the folder that makes it one)."""
    paths = list(paths)
    newest: dict[str, int] = {}  # parent folder -> highest vN among its child folders
    for path in paths:
        parts = path.split("/")[:-1]
        for i, part in enumerate(parts):
            match = _VERSION.fullmatch(part.lower())
            if match:
                parent = "/".join(parts[:i])
                newest[parent] = max(newest.get(parent, -1), int(match.group(1)))
    out: dict[str, str] = {}
    for path in paths:
        parts = path.split("/")[:-1]
        for i, part in enumerate(parts):
            lower = part.lower()
            match = _VERSION.fullmatch(lower)
            older = lower in OLD_FOLDERS or (
                match is not None and int(match.group(1)) < newest["/".join(parts[:i])]
            )
            if older:
                out[path] = lower
                break
    return out


def named_in(folder: str, query: str) -> bool:
    """The question asks for this folder: a word of it is the version (``v3``, not ``v30``)
    or starts with the folder's name (``deprecated``; ``older`` for ``old``)."""
    words = _WORD.findall(query.lower())
    if _VERSION.fullmatch(folder):
        return folder in words
    return any(word.startswith(folder) for word in words)


def demote_older(
    query: str, files: Sequence[str], probabilities: np.ndarray, older: dict[str, str]
) -> np.ndarray:
    """``probabilities`` with each older file's scaled by ``OLDER_FACTOR`` (unless asked for)."""
    if not older:
        return probabilities
    factors = np.array(
        [
            OLDER_FACTOR if path in older and not named_in(older[path], query) else 1.0
            for path in files
        ]
    )
    return probabilities * factors
