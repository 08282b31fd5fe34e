"""``seek ui``: the browser page (index panel, settings, search, ask) served by the same
guarded Starlette app as ``seek serve`` (issue 16)."""
