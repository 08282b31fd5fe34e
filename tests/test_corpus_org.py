"""Who in the organisation uses this (issue 45): `seek corpus refs|callers|dependents` across
a corpus's repositories, on real code: the installed `requests` and `urllib3` (this venv's
packages) as two repositories of one corpus, `requests` importing `urllib3`. Real
tree-sitter and LanceDB, in-process corpus runs (the corpus tests' way)."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from corpus_helpers import add_repos, index

import seek.cli.corpus_cmd  # noqa: F401 - registers `seek corpus`
from seek.cli import cli
from seek.corpus.location import CorpusLocation
from seek.corpus.org import cross_lookup
from seek.settings import Settings, load_settings
from seek.store.corpus_links import PROVIDES, CorpusLinks
from seek.store.corpus_table import CorpusTable


def installed(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None, f"{name} is a dependency of the tests"
    return Path(spec.origin).parent


def as_repository(package: str, folder: Path) -> Path:
    """An installed package's sources as a checkout: ``src/<package>`` and a pyproject."""
    shutil.copytree(installed(package), folder / "src" / package,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so"))  # fmt: skip
    (folder / "pyproject.toml").write_text(f'[project]\nname = "{package}"\nversion = "0"\n')
    return folder


def settings_in(home: Path) -> Settings:
    home.mkdir(exist_ok=True)
    return load_settings(None, overrides={"home": str(home)}, env={},
                         user_config=home / "no-user-config.toml")  # fmt: skip


def make_corpus(base: Path) -> tuple[CorpusLocation, dict[str, Path], Path]:
    """urllib3 and requests as two repositories of a corpus under ``base``, indexed; and
    the seek home it was indexed with."""
    repos = {
        "urllib3": as_repository("urllib3", base / "urllib3"),
        "requests": as_repository("requests", base / "requests"),
    }
    location = CorpusLocation(str(base / "corpus"))
    add_repos(location, repos)
    home = base / "home"
    index(location, settings_in(home))
    return location, repos, home


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("org"))


def line_of(path: Path, pattern: str) -> int:
    """The first line of ``path`` matching ``pattern`` (1-based)."""
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if re.search(pattern, text):
            return number
    raise AssertionError(f"{pattern!r} not in {path}")


def uses_in(root: Path, name: str) -> set[tuple[str, int]]:
    """Lines of ``root``'s Python files that name ``name`` outside comments and strings
    (a plain reading, for the test's expectations)."""
    found = set()
    for file in root.rglob("*.py"):
        for number, text in enumerate(file.read_text().splitlines(), 1):
            code = text.split("#", 1)[0]
            if re.search(rf"\b{name}\b", re.sub(r"(\"[^\"]*\"|'[^']*'|``[^`]*``)", "", code)):
                found.add((file.relative_to(root).as_posix(), number))
    return found


def test_what_each_repository_provides_is_stored(corpus):
    location, _, _ = corpus
    links = CorpusLinks(CorpusTable(location))
    provided = {(r[2], r[3], r[5]) for r in links.of_repo("urllib3", PROVIDES)}
    assert ("python", "urllib3", "src/urllib3") in provided
    assert {r[3] for r in links.of_repo("requests", PROVIDES)} == {"requests"}


def test_refs_of_a_definition_list_its_uses_in_the_repositories_that_import_it(corpus):
    location, repos, _ = corpus
    retry = repos["urllib3"] / "src/urllib3/util/retry.py"
    line = line_of(retry, r"^class Retry\b")
    result = cross_lookup(location, "urllib3", "refs", f"src/urllib3/util/retry.py:{line}", 1000)
    assert result.subject is not None and result.subject["name"] == "Retry"
    assert result.subject["repo"] == "urllib3"
    rows = result.rows
    theirs = {(r["path"], r["line"]) for r in rows if r["repo"] == "requests"}
    adapters = repos["requests"] / "src/requests/adapters.py"
    # the import, the annotation and both constructions in requests' adapters
    expected = {("src/requests/adapters.py", n) for _, n in uses_in(adapters.parent, "Retry")
                if _ == "adapters.py"}  # fmt: skip
    assert expected and expected <= theirs
    assert all(r["path"].startswith("src/requests/") for r in rows if r["repo"] == "requests")
    # urllib3's own uses come first, then requests'; each row's text is its line
    assert [r["repo"] for r in rows] == sorted(
        (r["repo"] for r in rows), key=lambda r: r != "urllib3"
    )
    assert any(r["repo"] == "urllib3" for r in rows)
    for row in rows:
        source = (repos[row["repo"]] / row["path"]).read_text().splitlines()[row["line"] - 1]
        assert row["text"] == source.strip()[: len(row["text"])] and "Retry" in row["text"]


def test_this_repo_keeps_the_answer_inside_the_repository(corpus):
    location, repos, _ = corpus
    line = line_of(repos["urllib3"] / "src/urllib3/util/retry.py", r"^class Retry\b")
    result = CliRunner().invoke(
        cli,
        ["corpus", "refs", location.uri, f"src/urllib3/util/retry.py:{line}", "--repo",
         "urllib3", "--json", "-n", "1000", "--this-repo"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["rows"]
    assert rows and {r["repo"] for r in rows} == {"urllib3"}


def test_callers_across_repositories_name_the_importing_functions(corpus):
    location, repos, _ = corpus
    poolmanager = repos["urllib3"] / "src/urllib3/poolmanager.py"
    line = line_of(poolmanager, r"^def proxy_from_url\b")
    result = CliRunner().invoke(
        cli,
        ["corpus", "callers", location.uri, f"src/urllib3/poolmanager.py:{line}", "--repo",
         "urllib3", "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["rows"]
    # requests' HTTPAdapter.proxy_manager_for calls proxy_from_url
    assert ("requests", "proxy_manager_for") in {(r["repo"], r["name"]) for r in rows}


def test_dependents_name_the_importing_repositories_and_what_they_use(corpus):
    location, _, _ = corpus
    result = CliRunner().invoke(cli, ["corpus", "dependents", location.uri, "--repo", "urllib3",
                                      "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["rows"]
    assert [r["repo"] for r in rows] == ["requests"]
    assert rows[0]["files"] >= 3 and rows[0]["uses"] >= 10
    assert {"Retry", "PoolManager"} <= {n.rpartition(".")[2] for n in rows[0]["names"]}
    # and the other way round, nobody imports requests here
    assert cross_lookup(location, "requests", "dependents", "").rows == []
    text = CliRunner().invoke(cli, ["corpus", "dependents", location.uri, "--repo", "urllib3"])
    assert text.exit_code == 0 and text.output.startswith("requests  ")


def test_refs_across_repositories_follow_an_imports_alias(corpus):
    """requests imports `ProxyError as _ProxyError` and `Timeout as TimeoutSauce` (from
    urllib3.util, which re-exports it) and spells its uses by the alias."""
    location, repos, _ = corpus
    adapters = repos["requests"] / "src/requests/adapters.py"
    for path, pattern, alias in [
        ("src/urllib3/exceptions.py", r"^class ProxyError\b", "_ProxyError"),
        ("src/urllib3/util/timeout.py", r"^class Timeout\b", "TimeoutSauce"),
    ]:
        line = line_of(repos["urllib3"] / path, pattern)
        result = cross_lookup(location, "urllib3", "refs", f"{path}:{line}", 1000)
        theirs = {(r["path"], r["line"]) for r in result.rows if r["repo"] == "requests"}
        spelt = {("src/requests/adapters.py", n) for p, n in uses_in(adapters.parent, alias)
                 if p == "adapters.py"}  # fmt: skip
        assert len(spelt) >= 3 and spelt <= theirs, (alias, spelt - theirs)
