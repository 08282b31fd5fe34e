"""A corpus of many repositories at 100k and 1M chunks (bench/README.md, "Scale")."""
