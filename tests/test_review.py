"""`seek context --diff [REF] [--staged]` (issue 44 deliver 5): review context for a change
on real git repositories (Python and Go): the changed definitions, the lines that use them,
the tests that reach them and what they call, as labelled blocks within a budget, through
the library facade, the CLI, MCP and HTTP. Real git, tree-sitter and LanceDB."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import anyio
import httpx
import pytest
from seek_server import running
from test_changed import git, post

from seek.errors import SeekError
from seek.serving.config import ServeConfig

SHOP = {
    "app/money.py": (
        'def round_cents(x):\n    """Round to whole cents."""\n    return round(x, 2)\n\n\n'
        'def clamp(x, low):\n    """x, at least low."""\n    return max(x, low)\n'
    ),
    "app/prices.py": (
        "from app.money import clamp, round_cents\n\n\n"
        "def price_of(item):\n    return round_cents(item.cost * 2)\n\n\n"
        "def discount(item, rate):\n    return round_cents(item.cost * rate)\n"
    ),
    "app/cart.py": (
        "from app.prices import discount, price_of\n\n\n"
        "def total(items):\n    return sum(price_of(i) for i in items)\n\n\n"
        "def checkout(items, rate):\n    return total(items) - discount(items[0], rate)\n\n\n"
        "def prices(items):\n    return [price_of(i) for i in items]\n\n\n"
        "def dearest(items):\n    return max(price_of(i) for i in items)\n"
    ),
    "tests/test_prices.py": (
        "from app.prices import discount\n\n\n"
        "def test_discount():\n    assert discount(Item(1), 0.5) == 0.5\n"
    ),
    "tests/test_cart.py": (
        "from app.cart import total\n\n\ndef test_total():\n    assert total([]) == 0\n"
    ),
    "docs/notes.md": "# shop\n",
}


def edit_shop(root):
    """discount's signature widened and a new call in it; price_of's body changed."""
    prices = root / "app/prices.py"
    text = prices.read_text().replace(
        "def discount(item, rate):\n    return round_cents(item.cost * rate)\n",
        "def discount(item, rate, floor=0):\n"
        "    return clamp(round_cents(item.cost * rate), floor)\n",
    )
    prices.write_text(text.replace("item.cost * 2", "item.cost * 3"))


def commit(root):
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    return root


@pytest.fixture
def shop(make_tree):
    return commit(make_tree(SHOP, "shop"))


def test_the_blocks_of_a_python_change(shop, library):
    library.index(shop)
    edit_shop(shop)
    found = library.review(shop)
    kinds = [(b.kind, b.title) for b in found.blocks]
    assert kinds == [
        ("changed", "discount · modified, signature changed, 2 uses"),
        ("uses", "uses of discount (2)"),
        ("changed", "price_of · modified, 3 uses"),  # more uses, but no signature change
        ("uses", "uses of price_of (3)"),
        ("tests", "tests that reach the change (2)"),
        ("calls", "what the change calls (2; new calls first)"),
    ]
    first = found.blocks[0]
    assert (first.path, first.start, first.end) == ("app/prices.py", 8, 9)
    assert first.content.startswith("def discount(item, rate, floor=0):\n    return clamp(")
    uses = found.blocks[1].content.splitlines()
    assert uses == [
        "app/cart.py:9 · checkout · return total(items) - discount(items[0], rate)",
        "tests/test_prices.py:5 · test_discount · assert discount(Item(1), 0.5) == 0.5",
    ]
    tests = found.blocks[4].content.splitlines()
    assert tests == [
        "tests/test_prices.py:4 · test_discount · depth 1, uses discount",
        "tests/test_cart.py:4 · test_total · depth 2, uses total",
    ]
    calls = found.blocks[5].content.splitlines()
    assert calls[0] == "app/money.py:6 · clamp · def clamp(x, low):  — x, at least low."
    assert calls[1].startswith("app/money.py:1 · round_cents")
    prompt = found.prompt()
    assert "app/prices.py (lines 8-9) · discount · modified, signature changed" in prompt
    assert "```py\ndef discount(item, rate, floor=0):" in prompt
    data = found.to_json()
    assert data["tool"] == "review" and data["changes"] == 2 and not data["left_out"]
    assert "2 changed definitions" in found.context_line()


def test_a_small_budget_keeps_the_most_useful_first(shop, library):
    library.index(shop)
    edit_shop(shop)
    whole = library.review(shop)
    size = sum(len(b.content) for b in whole.blocks)
    small = library.review(shop, budget=size - 60)
    assert sum(len(b.content) for b in small.blocks) <= size - 60 and not small.left_out
    # the code stays whole; every list keeps its first rows and says how many it left out
    code = [b for b in whole.blocks if b.kind == "changed"]
    assert [b for b in small.blocks if b.kind == "changed"] == code
    assert [b.title for b in small.blocks] == [b.title for b in whole.blocks]
    cut = [b for b in small.blocks if b.content.endswith(" more")]
    assert cut and all(b.content.split("\n")[0] in whole.prompt() for b in cut)
    nothing = library.review(shop, budget=0)
    assert nothing.blocks == () and len(nothing.left_out) == 6
    with pytest.raises(SeekError, match="budget"):
        library.review(shop, budget=-1)


def test_a_long_definition_shows_its_changed_lines(shop, library):
    body = "".join(f"    step_{i} = {i}\n" for i in range(200))
    (shop / "app/long.py").write_text(f"def long_one():\n{body}    return 0\n")
    users = "".join(f"def user_{i}():\n    return long_one() + {i}\n\n\n" for i in range(12))
    (shop / "app/users.py").write_text(f"from app.long import long_one\n\n\n{users}")
    (shop / "app/zed.py").write_text("from app.long import long_one\n\nLAST = long_one()\n")
    git(shop, "add", ".")
    git(shop, "commit", "-q", "-m", "long")
    library.index(shop)
    path = shop / "app/long.py"
    path.write_text(path.read_text().replace("step_150 = 150", "step_150 = -150"))
    whole = library.review(shop)
    code, uses = (b.content for b in whole.blocks)
    # the code would fit alone, but not with its uses: its changed lines leave them room
    found = library.review(shop, budget=len(code) + len(uses) - 100)
    assert found.blocks[1].content == uses and not found.left_out
    block = found.blocks[0]
    assert block.title == "long_one · modified, 13 uses (changed lines)"
    assert block.content.splitlines() == [
        "def long_one():", "…", "    step_148 = 148", "    step_149 = 149",
        "    step_150 = -150", "    step_151 = 151", "    step_152 = 152", "…",
    ]  # fmt: skip
    # a list cut short keeps the first use of each file before the second of any
    small = library.review(shop, budget=400)
    assert sum(len(b.content) for b in small.blocks) <= 400
    rows = next(b for b in small.blocks if b.kind == "uses").content.splitlines()
    assert rows[0].startswith("app/users.py:5 · user_0") and rows[-1] == "… and 5 more"
    assert rows[-2] == "app/zed.py:3 · LAST · LAST = long_one()"


def test_a_test_file_named_after_the_changed_file_is_listed(shop, library):
    # the test reaches round_cents through a string: no path in the graph, but its name
    (shop / "tests/test_money.py").write_text(
        "from app import money\n\n\ndef test_round():\n"
        '    assert getattr(money, "round_cents")(1.234) == 1.23\n'
    )
    (shop / "tests/unit").mkdir()
    (shop / "tests/unit/test_money.py").write_text("def test_other():\n    assert True\n")
    (shop / "lib").mkdir()
    (shop / "lib/test_money.py").write_text("def test_elsewhere():\n    assert True\n")
    git(shop, "add", ".")
    git(shop, "commit", "-q", "-m", "money tests")
    library.index(shop)
    money = shop / "app/money.py"
    money.write_text(money.read_text().replace("round(x, 2)", "round(x + 0.0, 2)"))
    tests = next(b for b in library.review(shop).blocks if b.kind == "tests")
    assert tests.content.splitlines() == [
        "tests/test_money.py · named after app/money.py",  # ranked with the direct tests
        "tests/unit/test_money.py · named after app/money.py",
        "tests/test_prices.py:4 · test_discount · depth 2, uses discount",
        "tests/test_cart.py:4 · test_total · depth 3, uses total",
    ]  # not lib/test_money.py: neither the changed file's folder nor a test folder


def test_a_changed_class_shows_its_methods_collapsed(shop, library):
    model = (
        'class Item:\n    """An item."""\n\n    tax = 0.1\n\n'
        "    def __init__(self, cost):\n        self.cost = cost\n\n"
        "    def net(self):\n        return self.cost * (1 + self.tax)\n"
    )
    (shop / "app/models.py").write_text(model)
    git(shop, "add", ".")
    git(shop, "commit", "-q", "-m", "models")
    library.index(shop)
    (shop / "app/models.py").write_text(model.replace("An item.", "A thing sold."))
    found = library.review(shop)
    block = found.blocks[0]
    assert (block.title, block.start, block.end) == ("Item · modified", 1, 10)
    assert block.content == (
        'class Item:\n    """A thing sold."""\n\n    tax = 0.1\n\n'
        "    def __init__(self, cost):\n        …\n\n    def net(self):\n        …"
    )


def test_staged_removed_and_nothing_changed(shop, library):
    library.index(shop)
    assert library.review(shop).blocks == ()
    prices = shop / "app/prices.py"
    prices.write_text(prices.read_text().replace(
        "def price_of(item):\n    return round_cents(item.cost * 2)\n", ""))  # fmt: skip
    git(shop, "add", "app/prices.py")
    edit_shop(shop)  # unstaged: discount's change is not in the index
    found = library.review(shop, staged=True)
    assert [(b.kind, b.title) for b in found.blocks] == [
        ("changed", "price_of · removed, 3 broken calls"),
        ("uses", "calls that break of price_of (3)"),
    ]
    assert found.blocks[1].content.splitlines() == [
        "app/cart.py:5 · total · return sum(price_of(i) for i in items)",
        "app/cart.py:13 · prices · return [price_of(i) for i in items]",
        "app/cart.py:17 · dearest · return max(price_of(i) for i in items)",
    ]
    with pytest.raises(SeekError, match="not a git revision"):
        library.review(shop, "--output=x")


GO = {
    "go.mod": "module example.com/calc\n\ngo 1.19\n",
    "calc/calc.go": (
        "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\n"
        "func Scale(x, k int) int {\n\treturn x * k\n}\n"
    ),
    "calc/calc_test.go": (
        'package calc\n\nimport "testing"\n\n'
        "func TestScale(t *testing.T) {\n\tif Scale(2, 3) != 6 {\n\t\tt.Fail()\n\t}\n}\n"
    ),
    "main.go": (
        'package main\n\nimport "example.com/calc/calc"\n\n'
        "func main() {\n\tprintln(calc.Scale(1, 2))\n}\n"
    ),
}


def test_a_go_change(make_tree, library):
    root = commit(make_tree(GO, "go"))
    library.index(root)
    path = root / "calc/calc.go"
    path.write_text(path.read_text().replace("return x * k", "return Add(x, 0) * k"))
    found = library.review(root)
    assert [b.kind for b in found.blocks] == ["changed", "uses", "tests", "calls"]
    assert found.blocks[0].title == "Scale · modified, 2 uses"
    assert found.blocks[1].content.splitlines() == [
        "main.go:6 · main · println(calc.Scale(1, 2))",
        "calc/calc_test.go:6 · TestScale · if Scale(2, 3) != 6 {",
    ]
    assert found.blocks[2].content == "calc/calc_test.go:5 · TestScale · depth 1, uses Scale"
    assert found.blocks[3].content == "calc/calc.go:4 · Add · func Add(a, b int) int {  — Add adds."
    assert "```go\nfunc Scale" in found.prompt()


def test_the_cli_prints_blocks_and_json(shop, seek_home):
    env = {**os.environ, "SEEK_HOME": str(seek_home), "XDG_CONFIG_HOME": str(seek_home / "c")}
    seek = [sys.executable, "-m", "seek", "-C", str(shop)]
    subprocess.run([*seek, "index"], env=env, check=True, capture_output=True)
    edit_shop(shop)
    done = subprocess.run([*seek, "context", "--diff"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        "app/prices.py (lines 8-9) · discount · modified, signature changed, 2 uses\n```py\n"
    )
    assert "uses of discount (2)\n```\napp/cart.py:9 · checkout" in done.stdout
    assert done.stderr.startswith("review of HEAD · 2 changed definitions · ")
    small = [*seek, "context", "--diff", "HEAD", "--json", "--budget", "100"]
    data = json.loads(subprocess.run(small, env=env, capture_output=True, text=True).stdout)
    assert data["budget"] == 100 and data["left_out"]
    assert sum(len(b["content"]) for b in data["blocks"]) <= 100
    git(shop, "add", "app/prices.py")
    staged = subprocess.run([*seek, "context", "--diff", "--staged", "--json"], env=env,
                            capture_output=True, text=True)  # fmt: skip
    assert json.loads(staged.stdout)["query"] == "HEAD --staged"
    for args, message in (
        (["--diff", "nope"], "'nope' is not a commit"),
        (["--diff", "--snippets", "2"], "are for questions"),
        ([], "Missing argument 'QUESTION'"),
    ):
        bad = subprocess.run([*seek, "context", *args], env=env, capture_output=True, text=True)
        assert bad.returncode != 0 and message in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.slow
def test_the_mcp_tool_and_the_http_route_answer(shop, seek_home):
    from test_graph_tools import mcp_calls, text_of

    edit_shop(shop)
    tools, found, small, bad = anyio.run(
        mcp_calls, shop, seek_home,
        [("review", {}), ("review", {"budget": 10}), ("review", {"ref": "-p"})],
    )  # fmt: skip
    described = {t.name: t.description for t in tools.tools}["review"]
    assert "before you review or commit" in described and "instead of `git diff`" in described
    text = text_of(found)
    assert text.startswith("app/prices.py (lines 8-9) · discount · modified, signature changed")
    assert "tests/test_cart.py:4 · test_total · depth 2, uses total" in text
    assert text.splitlines()[-1].startswith("review of HEAD · 2 changed definitions")
    assert "left out for the 10-character budget" in text_of(small)
    assert bad.is_error and "not a git revision" in text_of(bad)
    config = ServeConfig(workspaces=(shop,), overrides={"home": str(seek_home)})
    with running(config) as url:
        answer = post(url, "review", {"ref": "HEAD", "budget": 5000})
        assert answer.status_code == 200, answer.text
        data = answer.json()
        assert data["tool"] == "review" and data["workspace"] == "shop"
        assert [b["kind"] for b in data["blocks"]][:2] == ["changed", "uses"]
        assert data["blocks"][0]["path"] == "app/prices.py" and data["blocks"][0]["start_line"] == 8
        for body in ({"ref": 3}, {"budget": -1}, {"budget": True}, {"staged": "yes"},
                     {"ref": "no-such-branch"}, {"path": "/etc"}):  # fmt: skip
            bad = post(url, "review", body)
            assert 400 <= bad.status_code < 500 and set(bad.json()) == {"error"}, body
        paths = httpx.get(f"{url}/v1/openapi.json").json()["paths"]
        assert "/v1/review" in paths
