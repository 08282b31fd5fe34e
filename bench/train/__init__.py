"""The trainers of seek's shipped models: the file ranker and the chunk stage
(bench/README.md, "Training")."""
