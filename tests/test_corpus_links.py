"""The corpus's links between repositories (issue 45, deliver 1 and 2): written per
repository by a corpus run, current after one repository is indexed again alone, a name two
repositories claim kept for both and reported, bad rows dropped on read, a killed run or a
damaged table mended by the next run. Small hand-written repositories (test_corpus_org.py
has the real ones); real tree-sitter and LanceDB, in-process runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from corpus_helpers import add_repos, index

import seek.cli.corpus_cmd  # noqa: F401 - registers `seek corpus`
import seek.corpus.build as build
from seek.cli import cli
from seek.corpus.build import CorpusIndexer
from seek.corpus.fanout import LocalRunner
from seek.corpus.links import checked, provided_by, providers
from seek.corpus.location import CorpusLocation
from seek.corpus.org import cross_lookup
from seek.store.corpus_links import IMPORTS, LINKS_TABLE, PROVIDES, CorpusLinks
from seek.store.corpus_table import CorpusTable

SHARED = {
    "pyproject.toml": '[project]\nname = "acme-utils"\n',
    "src/acme_utils/__init__.py": "from .text import slugify\n",
    "src/acme_utils/text.py": "def slugify(title):\n    return title.lower()\n\n\n"
    "def shout(title):\n    return title.upper()\n",
}
SERVICE = {
    "pyproject.toml": '[project]\nname = "billing"\n',
    "billing/__init__.py": "",
    "billing/views.py": "from acme_utils import slugify\nfrom acme_utils.text import shout\n\n\n"
    "def page(title):\n    return slugify(title) + shout(title)\n",
    "billing/local.py": "import utils\n\n\ndef helper():\n    return utils.slugify('x')\n",
    "billing/utils.py": "def slugify(x):\n    return x\n",
    "billing/plugins.py": "import importlib\n\n\ndef load(name):\n"
    "    return importlib.import_module(name)\n",
}


def stored(location: CorpusLocation) -> CorpusLinks:
    """The links table as a new reader sees it (an opened table stays at its version)."""
    return CorpusLinks(CorpusTable(location))


def index_only(location: CorpusLocation, settings, name: str) -> None:
    CorpusIndexer(location, settings, LocalRunner()).run([name])


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture
def corpus(tmp_path, settings_for):
    repos = {"acme": write(tmp_path / "acme", SHARED), "billing": write(tmp_path / "billing",
                                                                        SERVICE)}  # fmt: skip
    location = CorpusLocation(str(tmp_path / "corpus"))
    add_repos(location, repos)
    index(location, settings_for())
    return location, repos


def slugify_uses(location: CorpusLocation) -> set[tuple[str, str, int]]:
    result = cross_lookup(location, "acme", "refs", "src/acme_utils/text.py:1", 100)
    return {(r["repo"], r["path"], r["line"]) for r in result.rows}


def test_imports_of_another_repository_bind_and_its_own_modules_stay_its_own(corpus):
    location, _ = corpus
    imported = {(r[4], r[3]) for r in stored(location).of_repo("billing", IMPORTS)}
    # what billing imports from outside itself: acme_utils (twice) and the standard library's
    # importlib, not its own utils; and that plugins.py loads modules by a computed name
    assert imported == {("billing/views.py", "acme_utils"), ("billing/plugins.py", "importlib"),
                        ("billing/plugins.py", "*")}  # fmt: skip
    assert slugify_uses(location) == {
        ("acme", "src/acme_utils/__init__.py", 1),
        ("billing", "billing/views.py", 1),
        ("billing", "billing/views.py", 6),
    }
    # what a module loaded by a computed name does cannot be known: the answer says so
    notes = cross_lookup(location, "acme", "refs", "slugify", 10).notes
    assert "run time are not followed: billing (billing/plugins.py)." in " ".join(notes)


def test_one_repository_indexed_again_alone_brings_the_edges_current(corpus, settings_for):
    location, repos = corpus
    before = stored(location).of_repo("acme", PROVIDES)
    (repos["billing"] / "billing/report.py").write_text(
        "import acme_utils\n\n\ndef title(x):\n    return acme_utils.slugify(x)\n"
    )
    rewritten = []
    real = build.keep_current

    def spy(links, graph, repo, provided):
        written = real(links, graph, repo, provided)
        rewritten.append((repo, written))
        return written

    build.keep_current = spy
    try:
        index_only(location, settings_for(), "billing")
    finally:
        build.keep_current = real
    assert rewritten == [("billing", True)]  # acme's rows were not read or written
    assert stored(location).of_repo("acme", PROVIDES) == before
    assert ("billing", "billing/report.py", 5) in slugify_uses(location)
    # and a run with nothing changed reads no provides and writes no links
    rewritten.clear()
    build.keep_current = spy
    try:
        index(location, settings_for())
    finally:
        build.keep_current = real
    assert rewritten == []


def test_a_name_two_repositories_provide_is_kept_for_both_and_binds_to_neither(
    corpus, tmp_path, settings_for
):
    location, _ = corpus
    fork = write(tmp_path / "fork", SHARED)
    add_repos(location, {"fork": fork})
    index_only(location, settings_for(), "fork")
    claims = providers(stored(location), "python", ["acme_utils"])
    assert sorted(c.repo for c in claims) == ["acme", "fork"]
    result = cross_lookup(location, "acme", "refs", "src/acme_utils/text.py:1", 100)
    assert {r["repo"] for r in result.rows} == {"acme"}
    assert any("provided by acme and by fork" in n for n in result.notes)
    assert any("billing imports 'acme_utils'" in n and "not bound" in n for n in result.notes)


def test_bad_rows_are_dropped_on_read(corpus):
    location, _ = corpus
    rows = [
        ("../etc", PROVIDES, "python", "x", "pyproject.toml", "x"),  # a bad repository name
        ("acme", "owns", "python", "x", "a", "x"),  # an unknown kind
        ("acme", PROVIDES, "cobol", "x", "a", "x"),  # an unknown ecosystem
        ("acme", PROVIDES, "python", "x\x1b[2J", "a", "x"),  # a control character
        ("acme", PROVIDES, "python", "x", "/etc/passwd", "x"),  # an absolute path
        ("acme", PROVIDES, "python", "x", "a", "src/../../etc"),  # a root out of the repository
        ("acme", PROVIDES, "python", "", "a", "x"),  # no name
        ("acme", PROVIDES, "python", "ok", "pyproject.toml", "src/ok"),
    ]
    assert [link.name for link in checked(rows)] == ["ok"]
    assert {p.name for p in provided_by(stored(location), "acme")} == {"acme_utils"}


def test_a_killed_run_or_a_damaged_table_is_mended_by_the_next_run(
    corpus, settings_for, monkeypatch
):
    location, repos = corpus
    (repos["billing"] / "billing/more.py").write_text("from acme_utils import shout\n")

    def killed(*args, **kwargs):
        raise RuntimeError("the machine went away")

    monkeypatch.setattr(build, "keep_current", killed)
    with pytest.raises(RuntimeError):
        index_only(location, settings_for(), "billing")
    monkeypatch.undo()
    assert not stored(location).has_links("billing")  # unmarked when its files began to change
    index(location, settings_for())
    assert stored(location).has_links("billing")
    imported = stored(location).of_repo("billing", IMPORTS)
    assert ("billing/more.py", "acme_utils") in {(r[4], r[3]) for r in imported}
    # a links table whose data files are cut short is dropped and written again
    folder = Path(location.uri) / "lancedb" / f"{LINKS_TABLE}.lance"
    for data in (folder / "data").iterdir():
        data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])
    index(location, settings_for())
    assert stored(location).has_links("acme") and stored(location).has_links("billing")
    assert ("billing", "billing/views.py", 6) in slugify_uses(location)
    shutil.rmtree(folder)


def test_hostile_rows_in_a_shared_corpus_are_dropped_and_never_printed_raw(corpus):
    """Whoever can write a shared corpus can write its links: a claim to provide a name
    with a terminal escape in it, or rooted outside the claiming repository, is dropped on
    read (it makes no clash and binds nothing), and nothing raw reaches the terminal."""
    location, _ = corpus
    stored(location).replace_repo(
        "billing",
        [
            ("billing", PROVIDES, "python", "acme_utils\x1b]0;pwned\x07", "pyproject.toml", "x"),
            ("billing", PROVIDES, "python", "acme_utils", "pyproject.toml", "../../etc"),
            ("billing", IMPORTS, "python", "acme_utils", "billing/views.py", ""),
        ],
    )
    result = CliRunner().invoke(
        cli, ["corpus", "refs", location.uri, "src/acme_utils/text.py:1", "--repo", "acme"]
    )
    assert result.exit_code == 0, result.output
    printed = result.output + result.stderr
    assert "\x1b" not in printed and "\x07" not in printed
    assert "provided by" not in printed  # no clash: both claims were dropped
    assert "billing:\n  billing/views.py" in printed  # billing's uses still bound to acme
