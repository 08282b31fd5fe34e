"""Harnesses for the change tools (issue 44): `seek tests` against per-test coverage."""
