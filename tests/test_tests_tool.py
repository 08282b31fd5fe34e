"""`seek tests SUBJECT` and `seek tests --changed [REF] [--staged]` (issue 44 deliver 3 and
7) on a real git repository, through the library facade, the CLI, MCP and HTTP. Real git,
tree-sitter and LanceDB."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import anyio
import httpx
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
    # removed: the tests still calling its name (bound to nothing now) are the ones to run
    prices.write_text(FILES["app/prices.py"].split("\n\n\ndef discount")[0] + "\n")
    removed = library.tests(repo, changed="HEAD")
    assert [(r["name"], r["depth"], r["via"]["line"]) for r in removed.rows] == [
        ("test_discount", 1, 5)]  # fmt: skip


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


def test_the_cli_prints_text_json_jsonl_vimgrep_and_a_command(repo, seek_home):
    env = {**os.environ, "SEEK_HOME": str(seek_home), "XDG_CONFIG_HOME": str(seek_home / "c")}
    seek = [sys.executable, "-m", "seek", "-C", str(repo)]

    def run(*args):
        return subprocess.run([*seek, *args], env=env, capture_output=True, text=True)

    assert run("index").returncode == 0
    done = run("tests", "price_of", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["tool"] == "tests" and data["subject"]["name"] == "price_of"
    assert [r["id"] for r in data["rows"]] == [
        "tests/test_cart.py::test_total",
        "tests/test_cart.py::TestCart::test_empty",
    ]
    lines = run("tests", "price_of", "--format", "jsonl").stdout.splitlines()
    assert [json.loads(line)["name"] for line in lines] == ["test_total", "TestCart.test_empty"]
    vim = run("tests", "app/prices.py:1", "--format", "vimgrep").stdout.splitlines()
    assert vim[0].endswith("tests/test_cart.py:4:5:def test_total():")
    text = run("tests", "total").stdout
    assert "1  tests/test_cart.py:4  test_total  (pytest)  calls total at 5" in text
    assert text.rstrip().endswith("run: python -m pytest tests/test_cart.py::test_total "
                                  "tests/test_cart.py::TestCart::test_empty")  # fmt: skip
    assert run("tests", "discount", "--command").stdout == (
        "python -m pytest tests/test_prices.py::test_discount\n"
    )
    prices = repo / "app/prices.py"
    prices.write_text(prices.read_text().replace("item.cost * 2", "item.cost * 4"))
    changed = run("tests", "--changed", "--command")
    assert changed.stdout == (
        "python -m pytest tests/test_cart.py::test_total tests/test_cart.py::TestCart::test_empty\n"
    ), changed.stderr
    assert run("tests", "--changed", "HEAD", "--staged", "--json").returncode == 0
    for bad, message in ((("tests",), "not both"), (("tests", "x", "--changed"), "not both"),
                         (("tests", "x", "--staged"), "--staged goes with --changed"),
                         (("tests", "no_such", "--command"), "no test found")):  # fmt: skip
        done = run(*bad)
        assert done.returncode != 0 and message in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_the_mcp_tool_and_the_http_route_answer(repo, seek_home):
    from seek_server import running
    from test_changed import post
    from test_graph_tools import mcp_calls, text_of

    from seek.serving.config import ServeConfig

    (repo / "app/prices.py").write_text(FILES["app/prices.py"].replace("* rate", "* rate * 2"))
    tools, found, since, bad = anyio.run(
        mcp_calls, repo, seek_home,
        [("tests", {"target": "app/prices.py:1"}), ("tests", {"changed": "HEAD"}),
         ("tests", {"target": "total", "changed": "HEAD"})],
    )  # fmt: skip
    described = {t.name: t.description for t in tools.tools}
    assert "instead of grepping test files" in described["tests"]
    assert text_of(found).splitlines()[:2] == [
        "tests of app/prices.py:1-2  function  price_of",
        "2  tests/test_cart.py:4  test_total  (pytest)  calls total at 5",
    ]
    assert text_of(since).splitlines()[0].startswith("1  tests/test_prices.py:4  test_discount")
    assert bad.is_error and "not both" in text_of(bad)
    config = ServeConfig(workspaces=(repo,), overrides={"home": str(seek_home)})
    with running(config) as url:
        answer = post(url, "tests", {"name": "price_of", "depth": 2})
        assert answer.status_code == 200, answer.text
        data = answer.json()
        assert set(data) >= {"tool", "query", "rows", "notes", "truncated", "subject"}
        assert [r["name"] for r in data["rows"]] == ["test_total", "TestCart.test_empty"]
        assert data["subject"]["name"] == "price_of" and data["rows"][0]["framework"] == "pytest"
        at = post(url, "tests", {"file": "app/cart.py", "line": 4}).json()
        assert [r["depth"] for r in at["rows"]] == [1, 1]
        whole = post(url, "tests", {"file": "app/prices.py", "limit": 1}).json()
        assert len(whole["rows"]) == 1 and whole["truncated"]
        since = post(url, "tests", {"changed": "HEAD", "staged": False}).json()
        assert [r["name"] for r in since["rows"]] == ["test_discount"]
        for body in ({}, {"name": "total", "changed": "HEAD"}, {"changed": ""},
                     {"changed": "HEAD", "staged": "yes"}, {"name": "total", "depth": 0},
                     {"file": "../a.py", "line": 1}, {"changed": "no-such-branch"}):  # fmt: skip
            bad = post(url, "tests", body)
            assert 400 <= bad.status_code < 500 and set(bad.json()) == {"error"}, body
        paths = httpx.get(f"{url}/v1/openapi.json").json()["paths"]
        assert "/v1/tests" in paths
