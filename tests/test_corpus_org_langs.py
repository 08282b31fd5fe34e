"""Who in the organisation uses this (issue 45, "tests on real repositories in at least 3
languages"), in Go and JavaScript: `seek corpus refs|callers|dependents` across two real
repositories whose sources Debian packages install, each copied into a corpus of its own.

- Go: spf13/pflag and spf13/cobra (golang-github-spf13-cobra-dev, which brings
  golang-github-spf13-pflag-dev), each with its go.mod; cobra imports pflag, some files
  under the alias `flag`, and calls `FlagSet` methods on what its own methods return.
- JavaScript: picomatch (shipped by node-anymatch) and micromatch (node-micromatch), each with
  its package.json; micromatch `require`s `picomatch` and `picomatch/lib/utils`, whose
  functions are `exports.name = ...` members.

The expected uses are read from the sources with a plain reading (grep-like, per file's
import alias), never written down. Each language is skipped, with the package to install,
where Debian's package is absent (the Python slice is tests/test_corpus_org.py).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from corpus_helpers import add_repos, index
from test_corpus_org import line_of, settings_in

import seek.cli.corpus_cmd  # noqa: F401 - registers `seek corpus`
from seek.cli import cli
from seek.corpus.location import CorpusLocation

GOCODE = Path("/usr/share/gocode/src/github.com/spf13")  # Debian's Go sources
NODEJS = Path("/usr/share/nodejs")  # Debian's Node.js packages

needs_go = pytest.mark.skipif(
    not ((GOCODE / "cobra/go.mod").is_file() and (GOCODE / "pflag/go.mod").is_file()),
    reason="Debian's Go sources of cobra and pflag are not installed "
    "(apt-get install golang-github-spf13-cobra-dev)",
)
needs_js = pytest.mark.skipif(
    not ((NODEJS / "micromatch/index.js").is_file() and (NODEJS / "picomatch/lib").is_dir()),
    reason="Debian's micromatch and picomatch are not installed (apt-get install "
    "node-micromatch, which brings node-anymatch with picomatch)",
)


def corpus_of(base: Path, sources: dict[str, Path]) -> tuple[CorpusLocation, dict[str, Path]]:
    repos = {}
    for name, source in sources.items():
        repos[name] = Path(shutil.copytree(source, base / name, symlinks=False))
    location = CorpusLocation(str(base / "corpus"))
    add_repos(location, repos)
    index(location, settings_in(base / "home"))
    return location, repos


def corpus_json(location: CorpusLocation, *args: str) -> dict:
    result = CliRunner().invoke(cli, ["corpus", args[0], location.uri, *args[1:], "--json",
                                      "-n", "1000"])  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def lines_matching(root: Path, pattern: str, glob: str, comment: str) -> set[tuple[str, int]]:
    """(path, line) of ``root``'s files whose code (before ``comment``) matches."""
    found = set()
    for file in sorted(root.rglob(glob)):
        for number, text in enumerate(file.read_text().splitlines(), 1):
            if re.search(pattern, text.split(comment, 1)[0]):
                found.add((file.relative_to(root).as_posix(), number))
    return found


def rows_of(answer: dict, repo: str) -> set[tuple[str, int]]:
    return {(r["path"], r["line"]) for r in answer["rows"] if r["repo"] == repo}


# -- Go: cobra imports pflag ------------------------------------------------------------


@pytest.fixture(scope="module")
def go_corpus(tmp_path_factory):
    base = tmp_path_factory.mktemp("org-go")
    return corpus_of(base, {"pflag": GOCODE / "pflag", "cobra": GOCODE / "cobra"})


def pflag_uses(cobra: Path, member: str) -> set[tuple[str, int]]:
    """Lines of cobra naming pflag's ``member`` through the file's import of pflag (plain or
    under an alias)."""
    found = set()
    for file in sorted(cobra.rglob("*.go")):
        text = file.read_text()
        alias = re.search(r'^\s*(\w+\s+)?"github\.com/spf13/pflag"$', text, re.M)
        if alias is None:
            continue
        name = (alias.group(1) or "pflag").strip()
        for number, line in enumerate(text.splitlines(), 1):
            if re.search(rf"\b{name}\.{member}\b", line.split("//", 1)[0]):
                found.add((file.relative_to(cobra).as_posix(), number))
    return found


@needs_go
def test_go_refs_of_a_pflag_method_are_cobras_calls_of_it(go_corpus):
    location, repos = go_corpus
    line = line_of(repos["pflag"] / "flag.go", r"^func \(f \*FlagSet\) AddFlagSet\(")
    answer = corpus_json(location, "refs", f"flag.go:{line}", "--repo", "pflag")
    assert answer["subject"]["name"] == "AddFlagSet" and answer["subject"]["repo"] == "pflag"
    # cobra defines no AddFlagSet of its own: each call of the name is a use of pflag's,
    # made on what cobra's own methods return (`c.Flags().AddFlagSet(...)`)
    expected = lines_matching(repos["cobra"], r"\.AddFlagSet\(", "*.go", "//")
    assert len(expected) >= 4
    assert rows_of(answer, "cobra") == expected
    assert rows_of(answer, "pflag")  # pflag's own uses come first
    assert [r["repo"] for r in answer["rows"]][0] == "pflag"
    own = corpus_json(location, "refs", f"flag.go:{line}", "--repo", "pflag", "--this-repo")
    assert {r["repo"] for r in own["rows"]} == {"pflag"}


@needs_go
def test_go_refs_of_a_pflag_type_follow_each_files_import_alias(go_corpus):
    location, repos = go_corpus
    answer = corpus_json(location, "refs", "FlagSet", "--repo", "pflag")
    expected = pflag_uses(repos["cobra"], "FlagSet")
    aliases = {p for p, _ in expected}
    assert len(expected) >= 10 and len(aliases) >= 2  # `flag.FlagSet` and `pflag.FlagSet`
    found = rows_of(answer, "cobra")
    assert expected <= found
    cobra_rows = [r for r in answer["rows"] if r["repo"] == "cobra"]
    assert all("FlagSet" in r["text"] for r in cobra_rows)


def defined_at(root: Path, pattern: str) -> str:
    """``path:line`` of the first line of ``root``'s Go files matching ``pattern``."""
    for file in sorted(root.glob("*.go")):
        for number, text in enumerate(file.read_text().splitlines(), 1):
            if re.search(pattern, text):
                return f"{file.name}:{number}"
    raise AssertionError(f"{pattern!r} not in {root}")


@needs_go
@pytest.mark.parametrize("method", ["Lookup", "SetAnnotation", "StringP"])
def test_go_uses_in_a_package_that_imports_pflag_in_other_files(go_corpus, method):
    """cobra's tests call pflag's methods on what cobra's methods return
    (`cmd.Flags().Lookup(...)`) without importing pflag: a Go package's files share one
    scope, so the files of a package where some file imports pflag are read too."""
    location, repos = go_corpus
    cobra = repos["cobra"]
    target = defined_at(repos["pflag"], rf"^func \(f \*FlagSet\) {method}\(")
    answer = corpus_json(location, "refs", target, "--repo", "pflag")
    importing = {p for p, _ in lines_matching(cobra, r'"github\.com/spf13/pflag"$', "*.go", "//")}
    elsewhere = {f.name for f in cobra.glob("*.go")} - importing  # cobra's package, root folder
    expected = {(p, n) for p, n in lines_matching(cobra, rf"\.{method}\(", "*.go", "//")
                if p in elsewhere}  # fmt: skip
    assert len(expected) >= 3
    assert expected <= rows_of(answer, "cobra")
    assert all(method in r["text"] for r in answer["rows"] if r["repo"] == "cobra")


@needs_go
def test_go_callers_and_dependents_name_cobra(go_corpus):
    location, repos = go_corpus
    line = line_of(repos["pflag"] / "flag.go", r"^func \(f \*FlagSet\) AddFlagSet\(")
    callers = corpus_json(location, "callers", f"flag.go:{line}", "--repo", "pflag")
    named = {(r["repo"], f"{r['container']}.{r['name']}") for r in callers["rows"]}
    assert {("cobra", "Command.mergePersistentFlags"),
            ("cobra", "Command.updateParentsPflags")} <= named  # fmt: skip
    dependents = corpus_json(location, "dependents", "--repo", "pflag")
    (row,) = dependents["rows"]
    importing = {p for p in lines_matching(repos["cobra"], r'"github\.com/spf13/pflag"$', "*.go",
                                           "//")}  # fmt: skip
    assert row["repo"] == "cobra" and row["files"] == len(importing)
    assert {"FlagSet", "Flag", "FlagSet.Lookup"} <= set(row["names"])  # the 20 most used
    assert corpus_json(location, "dependents", "--repo", "cobra")["rows"] == []


# -- JavaScript: micromatch requires picomatch -------------------------------------------


@pytest.fixture(scope="module")
def js_corpus(tmp_path_factory):
    base = tmp_path_factory.mktemp("org-js")
    return corpus_of(base, {"picomatch": NODEJS / "picomatch",
                            "micromatch": NODEJS / "micromatch"})  # fmt: skip


@needs_js
@pytest.mark.parametrize("name", ["isWindows", "toPosixSlashes", "isObject"])
def test_js_refs_of_an_exported_function_list_the_requiring_packages_calls(js_corpus, name):
    location, repos = js_corpus
    line = line_of(repos["picomatch"] / "lib/utils.js", rf"^exports\.{name} = ")
    answer = corpus_json(location, "refs", f"lib/utils.js:{line}", "--repo", "picomatch")
    assert answer["subject"]["name"] == name
    # micromatch reaches picomatch/lib/utils as `utils`: each `utils.NAME(` is a use
    expected = lines_matching(repos["micromatch"], rf"\butils\.{name}\(", "*.js", "//")
    assert expected and rows_of(answer, "micromatch") == expected
    own = lines_matching(repos["picomatch"], rf"\butils\.{name}\(", "*.js", "//")
    assert own <= rows_of(answer, "picomatch")


@needs_js
def test_js_dependents_and_callers_name_micromatch(js_corpus):
    location, repos = js_corpus
    dependents = corpus_json(location, "dependents", "--repo", "picomatch")
    (row,) = dependents["rows"]
    assert row["repo"] == "micromatch" and row["files"] == 1
    assert {"exports.isWindows", "picomatch.makeRe"} <= set(row["names"])
    line = line_of(repos["picomatch"] / "lib/picomatch.js", r"^picomatch\.makeRe = ")
    callers = corpus_json(location, "callers", f"lib/picomatch.js:{line}", "--repo", "picomatch")
    names = {(r["repo"], r["name"]) for r in callers["rows"]}
    calling = lines_matching(repos["micromatch"], r"\bpicomatch\.makeRe\(", "*.js", "//")
    assert len(calling) >= 2 and ("micromatch", "capture") in names
    assert corpus_json(location, "dependents", "--repo", "micromatch")["rows"] == []
