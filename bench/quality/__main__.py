"""``python -m bench.quality``: the quality harness (bench/quality/quality.py)."""

import sys

from bench.quality.quality import main

sys.exit(main())
