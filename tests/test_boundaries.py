"""The house's walls hold (issue 18, design "Boundaries"): retrieval is pure, only
:mod:`seek.remote` speaks HTTP, only ``store/`` imports lancedb."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "seek"


def imported_modules(statement: str) -> set[str]:
    code = f"import sys; {statement}; import json; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout))


def test_importing_retrieval_imports_no_indexer_team_or_http_client():
    loaded = imported_modules("import seek.retrieve, seek.retrieve.context, seek.retrieve.related")
    assert "seek.retrieve.searcher" in loaded  # the check itself sees what was imported
    forbidden = {"seek.indexer", "seek.index", "seek.team", "seek.workspace", "httpx"}
    assert not forbidden & loaded
    assert not [name for name in loaded if name.startswith(("seek.index.", "seek.web"))]


def importers(*modules: str) -> set[str]:
    """Source files (relative to src/seek) that import any of ``modules`` or a submodule."""
    found = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            else:
                continue
            if any(n == m or n.startswith(m + ".") for n in names for m in modules):
                found.add(path.relative_to(SRC).as_posix())
    return found


def test_only_the_http_boundary_imports_httpx():
    assert importers("httpx") == {"remote.py"}


def test_only_the_store_imports_lancedb():
    assert {p for p in importers("lancedb") if not p.startswith("store/")} == set()


def test_the_store_does_not_import_the_corpus_above_it():
    """Issue 29: the corpus's table lives in store/ and reads its location through
    ``seek.store.location.DatabaseLocation``; store/ never imports corpus/ (not even for
    types)."""
    assert {p for p in importers("seek.corpus") if p.startswith("store/")} == set()
