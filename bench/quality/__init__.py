"""Retrieval quality: NDCG@10 against semble's benchmark and the line-level sets, context recall
(bench/README.md, "Quality")."""
