"""Kept only for bench/graph_oracle.py and bench/graph_cost.py, which another change owns:
the data paths live in :mod:`bench.common`. Delete this once those two import it."""

from bench.common import REPO_ROOT, REPOS_JSON

__all__ = ["REPO_ROOT", "REPOS_JSON"]
