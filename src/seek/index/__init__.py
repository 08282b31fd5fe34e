"""Writing an index: the pure per-file stage (:mod:`.stages`) and what a run reports
(:mod:`.report`). The run itself (scan, embed, store, manifest) is :mod:`seek.index.indexer`."""
