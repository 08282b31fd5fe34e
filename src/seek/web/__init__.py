"""The HTTP front-ends: ``seek serve``'s JSON API (:mod:`.api`) and ``seek ui``'s browser page
(:mod:`.ui`, issue 16), one guarded Starlette app (:mod:`seek.serving`)."""
