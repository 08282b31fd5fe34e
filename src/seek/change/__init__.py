"""What a change touches (issue 44): the definitions a diff added, modified, removed,
renamed or moved (:mod:`.definitions`), from the code graph's definitions of both sides."""
