"""Does a change keep seek's answers and its index? Dump-and-compare checks run on two versions
(bench/README.md, "Checks")."""
