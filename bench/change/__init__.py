"""Harnesses of the change tools (issue 44): impact against history, the one-shot tools cold,
`seek tests` against per-test coverage."""
