"""Load on `seek serve`, with and without faults (bench/README.md, "Serving")."""
