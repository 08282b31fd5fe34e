"""Long runs of `seek serve` and `seek mcp`: memory, files and threads (bench/README.md, "Soak")."""
