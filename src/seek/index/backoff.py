"""How long to wait before trying a failed index update again (issue 31): when the index
folder cannot be written (a full disk, a read-only folder), a server (:mod:`seek.workspace.live`)
and ``seek watch`` (:mod:`seek.index.watch`) try again after ``RETRY_FIRST_S``, then twice as
long after each failure up to ``RETRY_MAX_S``."""

from __future__ import annotations

RETRY_FIRST_S = 5.0
"""A failed update (the folder cannot be written) is tried again after this long..."""
RETRY_MAX_S = 300.0
"""...doubling after each failure up to this: a full disk is not freed in seconds, and each
try scans the workspace; five minutes is the longest a freed disk waits to be used."""


def retry_wait(failures: int) -> float:
    """Seconds before the next try after ``failures`` failed ones in a row (``failures >= 1``)."""
    return min(RETRY_MAX_S, RETRY_FIRST_S * 2 ** (failures - 1))
