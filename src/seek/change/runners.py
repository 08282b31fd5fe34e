"""The id a test runner takes for one test, and one command line for a selection (issue 44
deliver 3, `seek tests` and `seek tests --command`): pytest node ids, ``go test -run``,
vitest/jest ``FILE -t NAME``, cargo test paths, JUnit ``Class#method``, RSpec and ExUnit
``file:line``, minitest ``FILE -n NAME``, ``dotnet test --filter``.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterable, Mapping
from typing import Any, Protocol


class Selected(Protocol):
    """What a command needs of a selected test (:class:`seek.change.tests.SelectedTest`,
    named by its fields so that this module, which the test catalog imports for ids, does
    not import the selection back)."""

    path: str
    name: str
    id: str
    framework: str


_SPECIAL = re.compile(r"([.^$*+?{}\[\]\\|()])")  # a -t pattern is a regular expression


def test_id(framework: str, path: str, name: str, line: int) -> str:
    """The runner's id of the test ``name`` (its qualified name, parts joined by ``.``;
    a block test's by spaces) at ``path``:``line``."""
    if framework in ("pytest", "unittest"):
        return "::".join((path, *name.split(".")))
    if framework == "go":
        return f"go test -run {shlex.quote(_anchored([name]))} {_go_package(path)}"
    if framework in ("vitest", "jest", "mocha"):
        return f"{path} -t {shlex.quote(name)}"
    if framework == "cargo":
        return _rust_path(path, name)
    if framework == "junit":
        container, _, method = name.rpartition(".")
        return f"{container.rpartition('.')[2] or container}#{method}"
    if framework == "minitest":
        return f"{path} -n {name.rpartition('.')[2]}"
    if framework == "dotnet":
        return name
    return f"{path}:{line}"  # rspec, exunit, and any runner that takes a file and a line


def command(selected: Iterable[Selected | Mapping[str, Any]]) -> str | None:
    """One command line that runs the ``selected`` tests (or ``seek tests``' rows) when they
    share one framework that has one (None for a mixed or an empty selection)."""
    tests = [_Row(t) if isinstance(t, Mapping) else t for t in selected]
    frameworks = {t.framework for t in tests}
    if len(frameworks) != 1:
        return None
    framework = frameworks.pop()
    quote = shlex.quote
    if framework in ("pytest", "unittest"):
        return "python -m pytest " + " ".join(quote(t.id) for t in _unique(tests))
    if framework == "go":
        packages = sorted({_go_package(t.path) for t in tests})
        names = sorted({t.name.partition(".")[0] for t in tests})
        return f"go test -run {quote(_anchored(names))} {' '.join(packages)}"
    if framework in ("vitest", "jest"):
        files = sorted({t.path for t in tests})
        pattern = "|".join(_SPECIAL.sub(r"\\\1", t.name) for t in _unique(tests))
        runner = "npx vitest run" if framework == "vitest" else "npx jest"
        return f"{runner} {' '.join(quote(f) for f in files)} -t {quote(pattern)}"
    if framework == "cargo":
        if len(tests) == 1:
            return f"cargo test {quote(tests[0].id)} -- --exact"
        return "cargo test"  # cargo takes one filter: the whole suite, still one command
    if framework == "junit":
        return "mvn test -Dtest=" + quote(",".join(t.id for t in _unique(tests)))
    if framework in ("rspec", "exunit"):
        runner = "bundle exec rspec" if framework == "rspec" else "mix test"
        return f"{runner} " + " ".join(quote(t.id) for t in _unique(tests))
    if framework == "dotnet":
        names = "|".join(f"FullyQualifiedName~{t.id}" for t in _unique(tests))
        return f"dotnet test --filter {quote(names)}"
    return None


class _Row:
    """A row read as a selected test (the fields a command needs)."""

    def __init__(self, row: Mapping[str, Any]) -> None:
        self.path, self.name = row["path"], row["name"]
        self.id, self.framework = row["id"], row["framework"]


def _unique(tests: list[Any]) -> list[Any]:
    return list({t.id: t for t in tests}.values())


def _anchored(names: list[str]) -> str:
    return f"^{names[0]}$" if len(names) == 1 else f"^({'|'.join(names)})$"


def _go_package(path: str) -> str:
    folder = posixpath.dirname(path)
    return f"./{folder}" if folder else "."


def _rust_path(path: str, name: str) -> str:
    """``module::path::test`` as cargo's filter matches it: the file's module path under
    ``src/`` (lib.rs, main.rs and mod.rs name their folder), then the test's own path; an
    integration test under ``tests/`` runs as its own crate (``--test NAME``)."""
    parts = path.split("/")
    test = name.replace(".", "::")
    if "tests" in parts[:-1] and "src" not in parts:
        crate = parts[-1].removesuffix(".rs") if parts[-2] == "tests" else parts[-2]
        return f"--test {crate} {test}"
    if "src" in parts:
        parts = parts[len(parts) - parts[::-1].index("src") :]
    module = [p.removesuffix(".rs") for p in parts]
    if module and module[-1] in ("lib", "main", "mod"):
        module.pop()
    return "::".join((*module, test))
