"""Experiments that were measured and not shipped (issue 13's rounds); kept runnable so their
numbers in docs/research/ can be reproduced (bench/README.md, "Experiments")."""
