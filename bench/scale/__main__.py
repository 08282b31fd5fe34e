"""``python -m bench.scale``: the scale harness (bench/scale/scale.py)."""

import sys

from bench.scale.scale import main

sys.exit(main())
