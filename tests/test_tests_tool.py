"""`seek tests SUBJECT` and `seek tests --changed [REF] [--staged]` (issue 44 deliver 3 and
7) on a real git repository, through the library facade, the CLI, MCP and HTTP. Real git,
tree-sitter and LanceDB."""

from __future__ import annotations

import pytest
from test_changed import git

from seek.errors import SeekError

FILES = {
    "app/prices.py": (
        "def price_of(item):\n    return item.cost * 2\n\n\n"
        "def discount(item, rate):\n    return item.cost * rate\n"
    ),
    "app/cart.py": (
        "from app.prices import price_of\n\n\n"
        "def total(items):\n    return sum(price_of(i) for i in items)\n"
    ),
    "tests/test_cart.py": (
        "from app.cart import total\n\n\n"
        "def test_total():\n    assert total([]) == 0\n\n\n"
        "class TestCart:\n    def test_empty(self):\n        assert not total([])\n"
    ),
    "tests/test_prices.py": (
        "from app.prices import discount\n\n\ndef test_discount():\n    assert discount\n"
    ),
}


@pytest.fixture
def repo(make_tree):
    root = make_tree(FILES)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    return root


def test_the_tests_of_a_definition_through_the_facade(repo, library):
    library.index(repo)
    found = library.tests(repo, "price_of")
    assert [(r["depth"], r["name"], r["id"]) for r in found.rows] == [
        (2, "test_total", "tests/test_cart.py::test_total"),
        (2, "TestCart.test_empty", "tests/test_cart.py::TestCart::test_empty"),
    ]
    row = found.rows[0]
    assert (row["kind"], row["framework"], row["through"]) == ("test", "pytest", "total")
    assert row["via"]["text"] == "assert total([]) == 0" and row["line"] == 4
    assert found.subject["name"] == "price_of" and found.to_json()["tool"] == "tests"
    text = found.to_text()
    assert text.splitlines()[:3] == [
        "tests of app/prices.py:1-2  function  price_of",
        "2  tests/test_cart.py:4  test_total  (pytest)  calls total at 5",
        "      tests/test_cart.py::test_total",
    ]
    by_line = library.tests(repo, "app/prices.py:5", depth=1)
    assert [r["name"] for r in by_line.rows] == ["test_discount"]
    whole_file = library.tests(repo, "app/prices.py", limit=1)
    assert len(whole_file.rows) == 1 and whole_file.truncated


def test_the_tests_of_what_changed_since_a_ref(repo, library):
    library.index(repo)
    prices = repo / "app/prices.py"
    prices.write_text(prices.read_text().replace("item.cost * rate", "item.cost * rate / 2"))
    found = library.tests(repo, changed="HEAD")
    assert [r["name"] for r in found.rows] == ["test_discount"]
    assert found.query == "--changed HEAD" and found.subject is None
    assert library.tests(repo, changed="HEAD", staged=True).rows == []
    git(repo, "add", "app/prices.py")
    staged = library.tests(repo, changed="HEAD", staged=True)
    assert [r["name"] for r in staged.rows] == ["test_discount"]


def test_bad_calls_are_one_clear_error(repo, library):
    library.index(repo)
    with pytest.raises(SeekError, match="not both"):
        library.tests(repo, "price_of", changed="HEAD")
    with pytest.raises(SeekError, match="not both"):
        library.tests(repo)
    with pytest.raises(SeekError, match="not a git revision"):
        library.tests(repo, changed="--output=/tmp/x")
    with pytest.raises(SeekError, match="depth"):
        library.tests(repo, "price_of", depth=0)
    missing = library.tests(repo, "no_such_thing")
    assert missing.rows == [] and any("No definition" in n for n in missing.notes)
