"""``seek related``, the search scopes (``--content``, several PATHs) and the output formats
(``--format text|json|jsonl|vimgrep``, ``--max-lines``), in process with the built-in model
(issue 15)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from click.testing import CliRunner

import seek.cli.search_cmd  # noqa: F401 - registers the commands
from seek.cli import cli
from seek.cli.output import snippet, vimgrep_line
from seek.index.indexer import index_workspace
from seek.retrieve import Searcher
from seek.retrieve.related import chunk_at, related
from seek.retrieve.scope import Scope, content_kind
from seek.retrieve.types import Hit

INVOICE = '''"""Invoices."""


def total_with_tax(items, rate):
    """The invoice total: price times quantity, plus tax, rounded to cents."""
    subtotal = 0.0
    for item in items:
        subtotal += item.price * item.quantity
    return round(subtotal * (1 + rate), 2)


def invoice_number(year, sequence):
    return f"INV-{year}-{sequence:05d}"
'''
CART = '''"""The shopping cart."""


def cart_total(products, tax_rate):
    """Sum of price times quantity for every product, with tax, rounded to cents."""
    amount = 0.0
    for product in products:
        amount += product.price * product.quantity
    return round(amount * (1 + tax_rate), 2)
'''
FILES = {
    "src/billing/invoice.py": INVOICE,
    "src/shop/cart.py": CART,
    "src/net/retry.py": (
        "import time\n\n\ndef retry(call, attempts=3, delay=0.5):\n"
        "    for attempt in range(attempts):\n        try:\n            return call()\n"
        "        except OSError:\n            time.sleep(delay * 2**attempt)\n"
        "    raise RuntimeError('gave up')\n"
    ),
    "src/text/slug.py": (
        "import re\n\n\ndef slugify(title):\n"
        "    return re.sub(r'[^a-z0-9]+', '-', title.lower()).strip('-')\n"
    ),
    "docs/billing.md": "# Billing\n\nThe invoice total is price times quantity plus tax.\n",
    "config/billing.toml": "[billing]\ntax_rate = 0.2\ncurrency = 'EUR'\n",
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture
def env(workspace, tmp_path, monkeypatch):
    monkeypatch.setenv("SEEK_HOME", str(tmp_path / "seek-home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.chdir(workspace)
    return workspace


def run(*args: str, code: int = 0):
    result = CliRunner().invoke(cli, ["-C", ".", *args] if args[0] != "-C" else list(args))
    assert result.exit_code == code, result.output
    return result


def test_related_finds_the_near_duplicate_first(workspace, settings_for):
    settings = settings_for()
    index_workspace(workspace, settings)
    searcher = Searcher.open(workspace, settings)
    line = INVOICE.splitlines().index("    subtotal = 0.0") + 1
    source = chunk_at(searcher, "src/billing/invoice.py", line)
    assert "total_with_tax" in searcher.index.contents[source]
    result = related(searcher, "src/billing/invoice.py", line, k=5)
    assert result.hits[0].path == "src/shop/cart.py"
    assert all(h.path != "src/billing/invoice.py" for h in result.hits)  # own file left out
    assert result.query.startswith("src/billing/invoice.py:")


def test_related_command_and_its_errors(env):
    found = run("related", "src/billing/invoice.py:7", "--format", "jsonl")
    first = json.loads(found.output.splitlines()[0])
    assert first["path"] == "src/shop/cart.py"
    assert "nope.py does not exist" in run("related", "nope.py:3", code=2).output
    # without -C: the workspace is the current folder (not a git repository here), not the
    # file's own folder
    plain = CliRunner().invoke(cli, ["related", "src/billing/invoice.py:7", "--format", "jsonl"])
    assert plain.exit_code == 0, plain.output
    assert json.loads(plain.output.splitlines()[0])["path"] == "src/shop/cart.py"
    bad = run("related", "src/billing/invoice.py", code=2)
    assert "expected PATH:LINE" in bad.output


def test_content_kinds():
    kinds = {p: content_kind(p) for p in ("a.py", "README", "docs/x.md", "c.yaml", "Makefile",
                                          ".env", "x.csv", "notes.txt")}  # fmt: skip
    assert kinds == {"a.py": "code", "README": "docs", "docs/x.md": "docs", "c.yaml": "config",
                     "Makefile": "config", ".env": "config", "x.csv": "config",
                     "notes.txt": "docs"}  # fmt: skip
    scope = Scope(("src/shop", "src/net/retry.py"), "code")
    assert scope.keeps("src/shop/cart.py") and scope.keeps("src/net/retry.py")
    assert not scope.keeps("src/shopping/x.py") and not scope.keeps("src/shop/notes.md")


def paths_of(output: str) -> list[str]:
    return [json.loads(line)["path"] for line in output.splitlines()]


def test_content_filter_and_several_paths(env):
    everything = paths_of(run("search", "invoice total tax", "--content", "all",
                              "--format", "jsonl").output)  # fmt: skip
    assert {"docs/billing.md", "config/billing.toml"} <= set(everything)
    code = paths_of(run("search", "invoice total tax", "--format", "jsonl").output)
    assert code and all(p.endswith(".py") for p in code)  # the default is --content code
    docs = paths_of(run("search", "invoice total tax", "--content", "docs",
                        "--format", "jsonl").output)  # fmt: skip
    assert docs == ["docs/billing.md"]
    scoped = paths_of(run("search", "total", "src/shop", "src/net/retry.py",
                          "--format", "jsonl").output)  # fmt: skip
    assert set(scoped) == {"src/shop/cart.py", "src/net/retry.py"}
    outside = run("search", "total", "/", code=2)
    assert "outside the workspace" in outside.output


def test_a_path_in_a_repository_searched_from_outside_any_searches_that_repository(
    tmp_path, monkeypatch
):
    """From a folder in no git repository (a home folder), ``seek search Q proj/src``
    searches the repository ``proj`` with the path as its limit, and indexes nothing else
    of the current folder; a folder in no repository is still searched inside the current
    folder's workspace (README, ``seek search``)."""
    monkeypatch.setenv("SEEK_HOME", str(tmp_path / "seek-home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    home = tmp_path / "home"
    for rel, text in {"proj/src/cart.py": CART, "proj/src/slug.py": FILES["src/text/slug.py"],
                      "notes/billing.py": INVOICE}.items():  # fmt: skip
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text)
    subprocess.run(["git", "init", "-q", str(home / "proj")], check=True)
    monkeypatch.chdir(home)
    found = CliRunner().invoke(cli, ["search", "total with tax", "proj/src", "--format", "jsonl"])
    assert found.exit_code == 0, found.output
    assert paths_of(found.output)[0] == "src/cart.py"  # relative to the repository
    assert not list((tmp_path / "seek-home").glob("home-*"))  # the home folder: not indexed
    plain = CliRunner().invoke(cli, ["search", "invoice total", "notes", "--format", "jsonl"])
    assert plain.exit_code == 0, plain.output
    assert paths_of(plain.output) == ["notes/billing.py"]  # the current folder's workspace


def test_formats_and_max_lines(env):
    text = run("search", "cart_total", "-k", "1", "--max-lines", "1").output.splitlines()
    assert re.match(r" 1  src/shop/cart\.py:1-9  0\.\d{4}  cart_total$", text[0])  # its symbol
    assert text[1:] == ['      """The shopping cart."""']
    data = json.loads(run("search", "cart_total", "-k", "1", "--json", "--max-lines", "2").output)
    assert data["hits"][0]["content"] == '"""The shopping cart."""\n'
    as_format = json.loads(run("search", "cart_total", "-k", "1", "--format", "json").output)
    as_flag = json.loads(run("search", "cart_total", "-k", "1", "--json").output)
    assert as_format["hits"] == as_flag["hits"] and as_format["hits"][0]["end_line"] == 9


def parse_vimgrep(line: str) -> tuple[str, int, int, str]:
    path, row, column, text = re.fullmatch(r"([^:]+):(\d+):(\d+):(.*)", line).groups()
    return path, int(row), int(column), text


def test_vimgrep_lines_point_at_the_text(env):
    out = run("related", "src/billing/invoice.py:7", "--format", "vimgrep").output
    for line in out.splitlines():
        path, row, column, text = parse_vimgrep(line)
        source = (env / path).read_text().splitlines()[row - 1]
        assert source[column - 1 :].rstrip() == text and text


def test_a_glance_at_a_hit_starts_at_its_first_line_with_a_word(tmp_path):
    """A chunk that opens with the end of the code before it (``}``, ``});``) is shown, and
    pointed at, from its own first line of code; one of punctuation only from its first
    non-blank line."""
    content = (
        "    }\n\n  });\n    def retry(policy):\n        return policy\n\n        x = 1\n    y\n"
    )
    assert snippet(content) == ["    def retry(policy):", "        return policy", "        x = 1"]
    assert snippet(content, 1) == ["    def retry(policy):"]
    assert snippet("\n  }\n);\n") == ["  }", ");"]
    hit = Hit("src/a.py", 10, 16, 0.5, content)
    assert vimgrep_line(tmp_path, hit) == f"{tmp_path / 'src/a.py'}:13:5:def retry(policy):"
    assert vimgrep_line(tmp_path, Hit("b.py", 4, 5, 0.5, "\n  }\n")).endswith("b.py:5:3:}")


@pytest.mark.skipif(shutil.which("vim") is None, reason="vim is not installed")
def test_vimgrep_output_loads_into_vims_quickfix_list(env, tmp_path):
    out = run("search", "cart_total", "-k", "2", "--format", "vimgrep").output
    errors = tmp_path / "hits.txt"
    errors.write_text(out)
    listing = tmp_path / "quickfix.txt"
    script = (
        f"cfile {errors}\n"
        f"call writefile(map(getqflist(), "
        f"{{_, e -> bufname(e.bufnr) . ':' . e.lnum . ':' . e.col . ':' . e.valid}}), "
        f"'{listing}')\nqa!\n"
    )
    (tmp_path / "script.vim").write_text(script)
    subprocess.run(["vim", "-N", "-u", "NONE", "-es", "-S", str(tmp_path / "script.vim")],
                   cwd=env, timeout=30, check=False)  # fmt: skip
    entries = listing.read_text().splitlines()
    expected = [":".join(map(str, parse_vimgrep(line)[:3])) + ":1" for line in out.splitlines()]
    assert entries == expected and entries


@pytest.mark.slow
def test_mcp_related_tool(workspace, seek_home):
    import anyio
    from test_mcp import session_calls, text_of

    tools, found, bad_line, elsewhere = anyio.run(
        session_calls, workspace, seek_home,
        [
            ("related", {"path": "src/billing/invoice.py", "line": 7}),
            ("related", {"path": "src/billing/invoice.py", "line": 0}),
            ("related", {"path": "/etc/passwd", "line": 1}),
        ],
    )  # fmt: skip
    assert "related" in {tool.name for tool in tools.tools}
    assert not found.is_error
    assert text_of(found).startswith("1. src/shop/cart.py:1-9 (score ")
    assert "src/billing/invoice.py" not in text_of(found)
    assert bad_line.is_error and "line numbers start at 1" in text_of(bad_line)
    assert elsewhere.is_error and "is not in the workspace" in text_of(elsewhere)
