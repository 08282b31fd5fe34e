"""A corpus: an organisation's repositories in one index, past one machine (issue 17;
design "A store addressed by URI", layout ``corpus/``).

- :mod:`.location`: the URI (a folder or ``s3://bucket/prefix``), its JSON objects, the
  per-repository writer lock, and what object storage guarantees;
- :mod:`.catalog`: ``corpus.json`` (the repositories) and each repository's manifest;
- :mod:`.work`: one task, a batch of files scanned -> chunked -> embedded;
- :mod:`.fanout`: where tasks run (Ray, imported lazily, or this process);
- :mod:`.build`: a run: locks, scans, tasks, bounded writers, manifests;
- :mod:`.search`: questions answered from LanceDB's indexes, ranked by seek on the pool;
- :mod:`.graph`: ``seek corpus def`` / ``refs``, one repository's stored code graph;
- :mod:`.provides`, :mod:`.import_names`: what a repository provides, what an import asks of
  another repository (issue 45);
- :mod:`.links`: those names per repository, written by a run and read back checked;
- :mod:`.joint`: several repositories read as one graph, imports bound across them;
- :mod:`.org`: ``seek corpus refs|callers`` across repositories and ``dependents``;
- :mod:`.serve`: ``seek serve --corpus``.

The tables themselves are :mod:`seek.store.corpus_table`, :mod:`seek.store.corpus_graph`
and :mod:`seek.store.corpus_links` (only ``store/`` touches LanceDB).
"""
