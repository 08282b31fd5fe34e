"""Benchmarks for seek (not part of the installed package). See bench/README.md."""
