"""Harnesses of the change tools (issue 44): impact, tests, changed, review context."""
