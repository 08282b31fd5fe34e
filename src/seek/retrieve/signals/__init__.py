"""Code-aware ranking signals (reference-ranking.md §1.6-§1.7), each a small pure function,
in one module per family:

- :mod:`.query`: what a question is (one identifier or a sentence) and how much the
  vector list weighs for it;
- :mod:`.names`: the words of questions, files and chunks (English stems, path parts,
  file stems);
- :mod:`.definitions`: whether a chunk defines a name, and the boosts of the chunks that
  define the question's symbol or its embedded identifiers;
- :mod:`.boosts`: file names that match the question, files with many candidates;
- :mod:`.penalties`: tests, examples and stubs, prose and configuration, a file's extra
  chunks.

Scores are ``dict[chunk_id, float]``; boosts are additive in units of the current best
score, penalties multiply. Every signal has a name below, in :data:`SIGNALS`, so a
benchmark can switch it off (ablation).
"""

from __future__ import annotations

FILE_COHERENCE = "file_coherence"
DEFINITION_BOOST = "definition_boost"
STEM_BOOST = "stem_boost"
EMBEDDED_IDENTIFIER_BOOST = "embedded_identifier_boost"
PATH_PENALTIES = "path_penalties"
NON_CODE_PENALTY = "non_code_penalty"
FILE_SATURATION = "file_saturation"
QUERY_TYPE_WEIGHTING = "query_type_weighting"
LEARNED_RANKER = "learned_ranker"
CHUNK_RANKER = "chunk_ranker"
OLDER_COPIES = "older_copies"
LEAD_IN = "lead_in"

SIGNALS: tuple[str, ...] = (
    QUERY_TYPE_WEIGHTING,
    FILE_COHERENCE,
    DEFINITION_BOOST,
    STEM_BOOST,
    EMBEDDED_IDENTIFIER_BOOST,
    PATH_PENALTIES,
    NON_CODE_PENALTY,
    FILE_SATURATION,
    LEARNED_RANKER,
    CHUNK_RANKER,
    OLDER_COPIES,
    LEAD_IN,
)
