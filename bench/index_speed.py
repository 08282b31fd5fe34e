"""Kept only for bench/graph_cost.py (``python -m bench.index_speed --worker seek FOLDER``),
which another change owns: the harness is :mod:`bench.speed.index_speed`. Delete this once
graph_cost runs that module."""

import sys

from bench.speed.index_speed import main

if __name__ == "__main__":
    sys.exit(main())
