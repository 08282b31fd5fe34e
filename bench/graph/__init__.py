"""The code graph (issue 28) against precise oracles, and what building it costs."""
