"""``python -m bench.soak``: the soak harness (bench/soak/soak.py)."""

import sys

from bench.soak.soak import main

sys.exit(main())
