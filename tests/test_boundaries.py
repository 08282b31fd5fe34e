"""The house's walls hold (issue 18, design "Boundaries"): retrieval is pure, only
:mod:`seek.remote` speaks HTTP, only ``store/`` imports lancedb."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "seek"


def imported_modules(statement: str) -> set[str]:
    code = f"import sys; {statement}; import json; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout))


def test_importing_retrieval_imports_no_indexer_team_or_http_client():
    loaded = imported_modules("import seek.retrieve, seek.retrieve.context, seek.retrieve.related")
    assert "seek.retrieve.searcher" in loaded  # the check itself sees what was imported
    forbidden = {
        "seek.index.indexer",
        "seek.index",
        "seek.workspace.team",
        "seek.workspace",
        "httpx",
    }
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


# -- the layering (issue 29) -----------------------------------------------------------------
# Each unit of src/seek (a top-level package, or a top-level module) sits in one layer and
# may import only from layers below its own: the basics, then the pipeline's stages, the
# facade, then the front-ends. docs/architecture.md draws the same picture.
LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(names.split())
    for names in (
        "_version errors",
        "seek text redact untrusted",  # seek: the package root (its lazy names)
        "remote settings",
        "scan chunk embed serving install",
        "store",
        "rerank graph",
        "retrieve change",
        "index",
        "workspace",
        "chat corpus",
        "mcp web",
        "cli",
        "__main__",
    )
)
LAYER_OF = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def module_names() -> dict[str, Path]:
    found = {}
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the seek modules it imports, anywhere in its body (a function-level import is
    an arrow too). ``from package import module`` is an arrow to the module, not the package."""
    modules = module_names()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        arrows = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                arrows |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                for alias in node.names:
                    arrows.add(
                        f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    )
        graph[name] = {a for a in arrows if a in modules and a != name}
    return graph


def unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "seek"


def test_every_unit_has_a_layer():
    units = {unit(m) for m in module_names()}
    assert units - LAYER_OF.keys() == set()


def test_no_unit_imports_its_own_layer_or_above():
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in import_graph().items()
        for target in targets
        if unit(target) != unit(module) and LAYER_OF[unit(target)] >= LAYER_OF[unit(module)]
    )
    assert upward == []


def test_there_is_no_import_cycle():
    graph = import_graph()
    done: set[str] = set()
    cycles = []

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            cycles.append(path[path.index(module) :] + [module])
            return
        if module in done:
            return
        for target in sorted(graph[module]):
            visit(target, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    assert cycles == []


def test_the_checks_see_an_upward_arrow_and_a_cycle(monkeypatch):
    """The two tests above can fail: a store module importing the facade is caught, and so
    is a cycle between two modules."""
    graph = import_graph()
    graph["seek.store.table"] = graph["seek.store.table"] | {"seek.workspace"}
    graph["seek.workspace"] = graph["seek.workspace"] | {"seek.store.table"}
    monkeypatch.setattr(sys.modules[__name__], "import_graph", lambda: graph)
    with pytest.raises(AssertionError):
        test_no_unit_imports_its_own_layer_or_above()
    with pytest.raises(AssertionError):
        test_there_is_no_import_cycle()


def test_src_seek_holds_at_most_eight_top_level_modules():
    assert len(list(SRC.glob("*.py"))) <= 8


def test_the_store_does_not_import_the_corpus_above_it():
    """Issue 29: the corpus's table lives in store/ and reads its location through
    ``seek.store.location.DatabaseLocation``; store/ never imports corpus/ (not even for
    types)."""
    assert {p for p in importers("seek.corpus") if p.startswith("store/")} == set()


# -- one door (issue 29, item 2) -------------------------------------------------------------
# The front-ends search, index, watch and report status through the facade
# (seek.workspace), never through the pipeline's run or search internals. What they may
# still name below it, and why:
FRONT_ENDS = ("cli", "mcp", "web")
PIPELINE = ("index", "retrieve", "store", "scan", "chunk", "embed", "graph", "rerank")
FRONT_END_ALLOWED = {
    # types the facade takes and returns: a search's scope, its hits, a run's report and
    # progress events (the CLI's bar, the page's panel)
    "seek.retrieve.scope": {"seek.cli.search_cmd"},
    "seek.retrieve.types": {"seek.cli.output", "seek.mcp"},
    "seek.index.report": {"seek.cli.index_cmd", "seek.web.adapter"},
    # process set-up, once at the start of a command: one BLAS thread for one-shot commands,
    # bounded native threads, malloc arenas and LanceDB loaded early for long-running ones
    "seek.store.threads": {"seek.cli", "seek.cli.serve_cmd", "seek.cli.watch_cmd"},
    "seek.store.memory": {"seek.cli.serve_cmd", "seek.cli.watch_cmd"},
    "seek.store.warm": {"seek.cli.serve_cmd", "seek.cli.watch_cmd"},
    # the token file a loopback `seek serve` writes when it starts (issue 43)
    "seek.store.token_file": {"seek.cli.serve_cmd"},
    # `seek models` lists, downloads and removes the optional cross-encoders' files: model
    # files on disk, not a search
    "seek.rerank.hub": {"seek.cli.models_cmd"},
    "seek.rerank.pull": {"seek.cli.models_cmd"},
}


def front_end_arrows(graph: dict[str, set[str]]) -> list[str]:
    """Arrows from a front-end module into the pipeline that the allowlist does not hold."""
    return sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        if unit(module) in FRONT_ENDS
        for target in targets
        if unit(target) in PIPELINE and module not in FRONT_END_ALLOWED.get(target, ())
    )


def test_front_ends_reach_the_pipeline_only_through_the_facade():
    assert front_end_arrows(import_graph()) == []


def test_the_door_check_sees_a_front_end_that_goes_around_the_facade():
    """It can fail: the page's adapter importing the indexer, or the CLI the searcher."""
    graph = import_graph()
    graph["seek.web.adapter"] = graph["seek.web.adapter"] | {"seek.index.indexer"}
    graph["seek.cli.search_cmd"] = graph["seek.cli.search_cmd"] | {"seek.retrieve.searcher"}
    assert front_end_arrows(graph) == [
        "seek.cli.search_cmd -> seek.retrieve.searcher",
        "seek.web.adapter -> seek.index.indexer",
    ]


# -- modules split along their ideas (issue 46) ------------------------------------------------
# A module that grew past its bound was split into the idea its users call and the part it
# rests on; the part never imports its user back (that would make the two one module again
# in all but name). Each entry: the lower part -> the modules it must not import.
SPLIT_PARTS: dict[str, frozenset[str]] = {
    # the rows arranged for search, apart from the files that cache them
    "seek.retrieve.search_data": frozenset({"seek.retrieve.search_cache"}),
    # the corpus table's maintenance (its indexes), apart from its rows
    "seek.store.corpus_upkeep": frozenset({"seek.store.corpus_table"}),
    # the reference pass (which leaves are uses), apart from the walk over definitions
    "seek.graph.uses": frozenset({"seek.graph.extract"}),
    # declared types' resolution at binding time, apart from the name rules
    "seek.graph.resolve": frozenset({"seek.graph.binding"}),
    # the lookups and their rows, apart from how the graph is read from the index
    "seek.workspace.code_graph": frozenset({"seek.workspace.stored_graph"}),
    # the facade's graph tools, apart from the facade that mixes them in
    "seek.workspace.graph_tools": frozenset({"seek.workspace"}),
}


def split_arrows(graph: dict[str, set[str]]) -> list[str]:
    """Arrows from a split's lower part back to the modules it must not import."""
    return sorted(
        f"{lower} -> {target}"
        for lower, forbidden in SPLIT_PARTS.items()
        for target in graph[lower] & forbidden
    )


def test_the_parts_of_a_split_module_import_one_way():
    graph = import_graph()
    assert set(SPLIT_PARTS) <= graph.keys()  # every part named here exists
    assert split_arrows(graph) == []


def test_the_split_check_sees_a_part_importing_its_user():
    graph = import_graph()
    graph["seek.store.corpus_upkeep"] = graph["seek.store.corpus_upkeep"] | {
        "seek.store.corpus_table"
    }
    assert split_arrows(graph) == ["seek.store.corpus_upkeep -> seek.store.corpus_table"]


def modules_over(bound: int) -> set[str]:
    return {
        path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*.py")
        if len(path.read_text(encoding="utf-8").splitlines()) > bound
    }


MAX_LINES = 450
# Modules over the bound, each waiting for its split: a ratchet, so the list only shrinks (an
# entry back under the bound fails the test until it is taken out). Empty since issue 46.
STILL_OVER: frozenset[str] = frozenset()


def test_no_module_of_src_seek_is_over_its_bound():
    """Issue 46: a module is one idea, and one idea fits in ``MAX_LINES`` lines."""
    over = modules_over(MAX_LINES)
    assert over - STILL_OVER == set()  # a module newly over the bound
    assert STILL_OVER - over == set()  # split since: take it off the list


def test_the_bound_check_sees_a_module_over_it():
    assert "store/corpus_table.py" in modules_over(400)  # 433 lines
