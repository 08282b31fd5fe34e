"""`seek changed [REF] [--staged]` (issue 44 deliver 4) on a real git repository: the
definitions a working tree or a staged change added, modified, removed, renamed or moved,
with signature changes flagged and the callers each reaches, through the library facade and
the CLI; bad input is one clear error. Real git, tree-sitter and LanceDB."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import anyio
import httpx
import pytest
from seek_server import running

from seek.errors import SeekError
from seek.serving.config import ServeConfig

FILES = {
    "app/prices.py": (
        "def price_of(item):\n    return item.cost * 2\n\n\n"
        "def discount(item, rate):\n    return item.cost * rate\n\n\n"
        "def legacy(item):\n    return item.cost\n"
    ),
    "app/cart.py": (
        "from app.prices import price_of, legacy\n\n\n"
        "def total(items):\n    return sum(price_of(i) for i in items)\n\n\n"
        "def old_total(items):\n    return sum(legacy(i) for i in items)\n"
    ),
    "web/format.ts": "export function formatPrice(cents: number): string {\n"
    "  return (cents / 100).toFixed(2);\n}\n",
    "README.md": "# shop\n",
}


def git(root, *args):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


@pytest.fixture
def repo(make_tree):
    root = make_tree(FILES)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    return root


def edit(root):
    """A body edited, a signature widened, a function removed (still called), one added, a
    file added untracked, whitespace changed in another."""
    prices = root / "app/prices.py"
    text = prices.read_text()
    text = text.replace("item.cost * 2", "item.cost * 3")
    text = text.replace("def discount(item, rate):", "def discount(item, rate, floor=0):")
    text = text.replace("def legacy(item):\n    return item.cost\n", "")
    prices.write_text(text + "\n\ndef rebate(item):\n    return 1\n")
    (root / "app/new.py").write_text("def fresh():\n    return 0\n")
    fmt = root / "web/format.ts"
    fmt.write_text(fmt.read_text().replace("(cents / 100)", "( cents  /  100 )"))


def post(url, route, body):
    return httpx.post(f"{url}/v1/{route}", json=body, timeout=120)


def rows_by_name(result):
    return {row["name"]: row for row in result.rows}


def test_the_working_tree_against_head_through_the_facade(repo, library):
    library.index(repo)
    edit(repo)
    found = library.changed(repo)
    rows = rows_by_name(found)
    assert {n: r["change"] for n, r in rows.items()} == {
        "price_of": "modified", "discount": "modified", "legacy": "removed",
        "rebate": "added", "fresh": "added",
    }  # fmt: skip
    assert (rows["price_of"]["signature_changed"], rows["discount"]["signature_changed"]) == (
        False, True)  # fmt: skip
    assert rows["price_of"]["callers"] == 1  # total()
    assert rows["legacy"]["callers"] == 1  # old_total() still calls it: it breaks
    assert rows["legacy"]["path"] == "app/prices.py" and rows["legacy"]["line"] == 9
    assert rows["fresh"]["path"] == "app/new.py"
    assert found.to_json()["tool"] == "changed"
    text = found.to_text()
    assert "modified  app/prices.py:5-6  function  discount  (signature changed)" in text


def test_staged_changes_and_an_older_ref(repo, library):
    library.index(repo)
    git(repo, "mv", "app/cart.py", "app/basket.py")
    edit(repo)
    git(repo, "add", "app/prices.py")
    staged = rows_by_name(library.changed(repo, staged=True))
    # staged: the prices edits and the move, not the untracked file
    assert {n: r["change"] for n, r in staged.items()} == {
        "price_of": "modified", "discount": "modified", "legacy": "removed",
        "rebate": "added", "total": "moved", "old_total": "moved",
    }  # fmt: skip
    assert staged["total"]["old"]["path"] == "app/cart.py"
    git(repo, "commit", "-q", "-m", "second")
    # committed: left are the untracked file and the whitespace-only edit (nothing)
    assert [(r["change"], r["name"]) for r in library.changed(repo).rows] == [("added", "fresh")]
    since_first = rows_by_name(library.changed(repo, "HEAD~1"))
    assert since_first["discount"]["change"] == "modified" and "fresh" in since_first


@pytest.mark.parametrize(
    "ref, message",
    [("--output=/tmp/x", "not a git revision"), ("no-such-branch", "is not a commit"),
     ("HEAD\nrm", "not a git revision")],
)  # fmt: skip
def test_a_bad_ref_is_one_clear_error(repo, library, ref, message):
    with pytest.raises(SeekError, match=message):
        library.changed(repo, ref)


def test_outside_a_git_work_tree_is_one_clear_error(make_tree, library):
    root = make_tree({"a.py": "def a():\n    pass\n"}, "plain")
    with pytest.raises(SeekError, match="not in a git work tree"):
        library.changed(root)


def test_the_cli_prints_text_and_json(repo, seek_home):
    env = {**os.environ, "SEEK_HOME": str(seek_home), "XDG_CONFIG_HOME": str(seek_home / "c")}
    seek = [sys.executable, "-m", "seek", "-C", str(repo)]
    subprocess.run([*seek, "index"], env=env, check=True, capture_output=True)
    edit(repo)
    done = subprocess.run([*seek, "changed", "--json"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]
    assert {(r["change"], r["name"]) for r in rows} >= {("removed", "legacy"), ("added", "fresh")}
    text = subprocess.run([*seek, "changed"], env=env, capture_output=True, text=True).stdout
    assert "removed   app/prices.py:9-10  function  legacy  1 caller" in text
    bad = subprocess.run([*seek, "changed", "nope"], env=env, capture_output=True, text=True)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "'nope' is not a commit" in bad.stderr
    shaped = subprocess.run([*seek, "history", "app/prices.py:1", "--json"], env=env,
                            capture_output=True, text=True)  # fmt: skip
    assert shaped.returncode == 0, shaped.stderr
    data = json.loads(shaped.stdout)
    assert data["subject"]["name"] == "price_of" and data["rows"][0]["subject"] == "first"
    vim = subprocess.run([*seek, "history", "total", "--format", "vimgrep"], env=env,
                         capture_output=True, text=True)  # fmt: skip
    assert vim.returncode != 0 and "commits have no sites" in vim.stderr


@pytest.mark.slow
def test_the_mcp_tool_and_the_http_route_answer(repo, seek_home):
    from test_graph_tools import mcp_calls, text_of

    edit(repo)
    tools, found, bad, shaped, reach = anyio.run(
        mcp_calls, repo, seek_home,
        [("changed", {}), ("changed", {"ref": "-p"}), ("history", {"subject": "total"}),
         ("impact", {"target": "app/prices.py:1", "depth": 1})],
    )  # fmt: skip
    assert "instead of grepping" in {t.name: t.description for t in tools.tools}["impact"]
    assert text_of(reach).splitlines()[:2] == [
        "impact of app/prices.py:1-2  function  price_of",
        "1  app/cart.py:4-5  function  total  calls price_of at 5:16",
    ]
    described = {t.name: t.description for t in tools.tools}
    assert "instead of `git diff`" in described["changed"]
    assert "instead of `git log -L`" in described["history"]
    assert text_of(shaped).startswith("history of app/cart.py:4-5  function  total\n")
    assert text_of(shaped).splitlines()[1].endswith("  t  first")
    assert "removed   app/prices.py:9-10  function  legacy  1 caller" in text_of(found)
    assert bad.is_error and "not a git revision" in text_of(bad)
    config = ServeConfig(workspaces=(repo,), overrides={"home": str(seek_home)})
    with running(config) as url:
        answer = post(url, "changed", {"ref": "HEAD"})
        assert answer.status_code == 200, answer.text
        rows = {r["name"]: r for r in answer.json()["rows"]}
        assert rows["discount"]["signature_changed"] and rows["fresh"]["change"] == "added"
        for body in ({"ref": 3}, {"ref": ""}, {"staged": "yes"}, {"ref": "x" * 201},
                     {"ref": "no-such-branch"}):  # fmt: skip
            bad = post(url, "changed", body)
            assert 400 <= bad.status_code < 500 and set(bad.json()) == {"error"}, body
        reach = post(url, "impact", {"name": "price_of", "depth": 2}).json()
        assert [r["name"] for r in reach["rows"]] == ["total"] and reach["importers"]
        for body in ({}, {"name": "legacy", "depth": 0}, {"file": "../a.py", "line": 1}):
            assert post(url, "impact", body).status_code == 400, body
        shaped = post(url, "history", {"subject": "app/prices.py", "patch": True}).json()
        assert [r["subject"] for r in shaped["rows"]] == ["first"] and shaped["rows"][0]["patch"]
        for body in ({}, {"subject": "/etc/passwd"}, {"subject": "../x.py"},
                     {"subject": "total", "patch": 1}):  # fmt: skip
            bad = post(url, "history", body)
            assert bad.status_code == 400 and set(bad.json()) == {"error"}, body
        paths = httpx.get(f"{url}/v1/openapi.json").json()["paths"]
        assert {"/v1/impact", "/v1/changed", "/v1/history"} <= set(paths)


# -- seek history (issue 44 deliver 6) -----------------------------------------------------


def commit_all(root, message, author="t"):
    git(root, "add", "-A")
    git(root, "-c", f"user.name={author}", "commit", "-q", "-m", message, "--author",
        f"{author} <a@example.com>")  # fmt: skip


def test_history_follows_a_definitions_lines_as_of_head(repo, library):
    prices = repo / "app/prices.py"
    prices.write_text(prices.read_text().replace("item.cost * 2", "item.cost * 5"))
    commit_all(repo, "price_of: five")
    prices.write_text(prices.read_text().replace("item.cost * rate", "item.cost * rate / 2"))
    commit_all(repo, "discount: halve", author="Evil\x1b]0;x\x07")
    # an uncommitted edit above the function shifts its lines in the working tree only
    prices.write_text("import os\n\n\n" + prices.read_text())
    library.index(repo)
    found = library.history(repo, "price_of")
    assert [r["subject"] for r in found.rows] == ["price_of: five", "first"]
    assert found.subject["name"] == "price_of"
    assert len(found.rows[0]["hash"]) == 40 and found.rows[0]["date"][:4].isdigit()
    by_line = library.history(repo, "app/prices.py:9")  # discount in the working tree
    assert [r["subject"] for r in by_line.rows] == ["discount: halve", "first"]
    assert "\x1b" not in by_line.to_text() and "Evil" in by_line.to_text()
    patched = library.history(repo, "price_of", limit=1, patch=True)
    assert patched.truncated and "+    return item.cost * 5" in patched.rows[0]["patch"]
    whole = library.history(repo, "app/prices.py")
    assert [r["subject"] for r in whole.rows] == ["discount: halve", "price_of: five", "first"]
    assert whole.subject is None


def test_history_of_what_head_does_not_have_says_so(repo, library):
    (repo / "app/later.py").write_text("def later():\n    return 1\n")
    library.index(repo)
    found = library.history(repo, "later")
    assert found.rows == [] and any("not in HEAD" in note for note in found.notes)
    missing = library.history(repo, "no_such_function")
    assert missing.rows == [] and any("No definition" in note for note in missing.notes)


# -- seek impact (issue 44 deliver 2) ------------------------------------------------------

CHAIN = {
    "app/prices.py": "def price_of(item):\n    return item.cost * 2\n",
    "app/cart.py": (
        "from app.prices import price_of\n\n\n"
        "def total(items):\n    return sum(price_of(i) for i in items)\n\n\n"
        "def count(items):\n    return len(items)\n"
    ),
    "app/checkout.py": (
        "from app.cart import total\n\n\n"
        "def pay(items):\n    return total(items) + 1\n\n\n"
        "DEFAULT = total([])\n"
    ),
    "tests/test_pay.py": "from app.checkout import pay\n\n\ndef test_pay():\n    assert pay([])\n",
    "app/unrelated.py": "import app.prices\n\n\ndef other():\n    return 3\n",
    "app/boot.py": "from app.prices import price_of\n\nprint(price_of(1))\n",
}


def test_impact_walks_users_of_users_with_tests_apart(make_tree, library):
    root = make_tree(CHAIN, "chain")
    library.index(root)
    found = library.impact(root, "price_of")
    rows = [(r["depth"], r["kind"], r["name"], r["test"]) for r in found.rows]
    assert rows == [
        (1, "function", "total", False),
        (1, "file", "app/boot.py", False),  # its top level calls it
        (2, "function", "pay", False),  # used by the test: first among depth 2
        (2, "constant", "DEFAULT", False),
        (3, "function", "test_pay", True),  # tests apart, after the code
    ]
    first = found.rows[0]
    assert first["through"] == "price_of" and first["via"]["line"] == 5
    assert first["via"]["text"] == "return sum(price_of(i) for i in items)"
    # unrelated.py imports the module without naming price_of
    assert found.to_json()["importers"] == ["app/boot.py", "app/cart.py"]
    assert found.subject["path"] == "app/prices.py"
    text = found.to_text()
    assert "impact of app/prices.py:1-2  function  price_of" in text
    assert "tests:\n3  tests/test_pay.py:4-5  function  test_pay  calls pay at 5:12" in text
    assert "imported by: app/boot.py, app/cart.py" in text
    direct = library.impact(root, "app/cart.py:5", depth=1)  # a use line: the callee
    assert [r["name"] for r in direct.rows] == ["total", "app/boot.py"]
    with pytest.raises(SeekError, match="depth"):
        library.impact(root, "price_of", depth=0)
    nothing = library.impact(root, "nothing_like_it")
    assert nothing.rows == [] and any("No definition" in n for n in nothing.notes)
