"""Writing an index: the pure per-file stage (:mod:`.stages`). The run itself (scan, embed,
store, manifest) is :mod:`seek.indexer`."""
