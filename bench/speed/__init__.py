"""Speed and memory: indexing, whole CLI processes, query CPU, keeping current
(bench/README.md, "Speed")."""
