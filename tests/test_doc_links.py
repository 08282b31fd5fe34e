"""The docs hold together (issue 29, "docs that teach"): every relative link in README.md,
MODELS.md, docs/ and bench/README.md names a file of the repository (and, for a markdown
file, a heading that is there), and the reader-facing docs name no development machine's
folder."""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path
from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[1]


def documents() -> list[Path]:
    found = [ROOT / "README.md", ROOT / "MODELS.md", ROOT / "bench" / "README.md"]
    found += sorted((ROOT / "docs").rglob("*.md"))
    return [path for path in found if path.is_file()]


def _tokens(path: Path):
    """Every token of the document, inline children included (code spans and fenced blocks
    are their own tokens, so a link written inside code is not a link)."""
    for token in MarkdownIt("commonmark").parse(path.read_text(encoding="utf-8")):
        yield token
        yield from token.children or ()


def links(path: Path) -> list[str]:
    found = []
    for token in _tokens(path):
        if token.type == "link_open":
            found.append(str(token.attrs["href"]))
        elif token.type == "image":
            found.append(str(token.attrs["src"]))
    return found


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    tokens = list(MarkdownIt("commonmark").parse(path.read_text(encoding="utf-8")))
    found: set[str] = set()
    counts: dict[str, int] = {}
    for opening, inline in pairwise(tokens):
        if opening.type == "heading_open":
            base = slug("".join(child.content for child in inline.children or ()))
            count = counts.get(base, 0)
            counts[base] = count + 1
            found.add(f"{base}-{count}" if count else base)  # GitHub numbers repeats
    return found


def broken_links(path: Path) -> list[str]:
    broken = []
    for href in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", href, re.I) or href.startswith("//"):
            continue  # a URL (https:, mailto:): not a file of the repository
        target, _, anchor = href.partition("#")
        where = (path.parent / unquote(target)).resolve() if target else path
        if not where.exists() or not where.is_relative_to(ROOT):
            broken.append(f"{href} (no such file)")
        elif anchor and where.suffix == ".md" and unquote(anchor) not in anchors(where):
            broken.append(f"{href} (no such heading)")
    return broken


@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path):
    assert broken_links(path) == []


def test_the_check_sees_a_broken_link_and_a_broken_heading(tmp_path, monkeypatch):
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    (tmp_path / "other.md").write_text("# A `code` heading (here)\n\n## Twice\n\n## Twice\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#a-code-heading-here) [ok2](other.md#twice-1) [web](https://x.org/a)\n"
        "[gone](missing.md) [bad](other.md#nowhere) ![img](pic.png) `[code](no.md)`\n\n"
        "```\n[fenced](no.md)\n```\n"
    )
    assert broken_links(page) == [
        "missing.md (no such file)",
        "other.md#nowhere (no such heading)",
        "pic.png (no such file)",
    ]


MACHINE_PATH = re.compile(r"/root/|/work/|/home/[a-z]|~/bench|\.\./shared/")


def test_the_docs_name_no_development_machine_folder():
    """README, MODELS, docs/, scripts/ and the models' READMEs say where things are with
    arguments and environment variables, never with the folders of the machine they were
    written on."""
    paths = [ROOT / "README.md", ROOT / "MODELS.md", *(ROOT / "docs").rglob("*.md")]
    paths += [*(ROOT / "scripts").glob("*.py"), *(ROOT / "src/seek/models").glob("*/README.md")]
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in paths
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if MACHINE_PATH.search(line)
    ]
    assert found == []
