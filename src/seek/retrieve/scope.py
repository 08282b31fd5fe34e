"""What a search may return: files under some paths, of some kind of content (issue 15,
``seek search --content`` and ``seek search QUERY PATH...``).

Content kinds, by file name (the same judgement as the ranker's non-code penalty):

- ``docs``: prose: ``md mdx markdown rst adoc txt text org tex bib``, and names without an
  extension that are not build files (README, LICENSE, CHANGELOG, ...);
- ``config``: configuration and data: ``json jsonc json5 jsonl yaml yml toml ini cfg conf
  properties xml xaml plist csv tsv diff patch``, dotfiles (``.env``, ``.editorconfig``) and
  build files without an extension (Makefile, Dockerfile, Jenkinsfile, ...);
- ``code``: everything else (the default of ``seek search``); ``all``: every file.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

CONTENT_KINDS = ("code", "docs", "config", "all")
DOC_EXTENSIONS = frozenset("md mdx markdown rst adoc txt text org tex bib".split())
BUILD_NAMES = frozenset(
    "makefile gnumakefile dockerfile containerfile jenkinsfile gemfile rakefile procfile "
    "vagrantfile brewfile podfile justfile build workspace".split()
)


@lru_cache(maxsize=16384)
def content_kind(path: str) -> str:
    """``code``, ``docs`` or ``config`` for a workspace-relative path."""
    from seek.retrieve.signals.penalties import is_non_code

    if not is_non_code(path):
        return "code"
    name = path.rpartition("/")[2]
    if name.startswith("."):
        return "config"
    if "." not in name:
        return "config" if name.lower() in BUILD_NAMES else "docs"
    return "docs" if name.rsplit(".", 1)[1].lower() in DOC_EXTENSIONS else "config"


@dataclass(frozen=True)
class Scope:
    """Files a search may return: under one of ``prefixes`` (workspace-relative files or
    folders; none means the whole workspace) and of the ``content`` kind."""

    prefixes: tuple[str, ...] = ()
    content: str = "all"

    def __post_init__(self) -> None:
        if self.content not in CONTENT_KINDS:
            raise ValueError(f"content must be one of {', '.join(CONTENT_KINDS)}")

    @property
    def everything(self) -> bool:
        return not self.prefixes and self.content == "all"

    def keeps(self, path: str) -> bool:
        if self.content != "all" and content_kind(path) != self.content:
            return False
        if not self.prefixes:
            return True
        return any(path == p or path.startswith(p.rstrip("/") + "/") for p in self.prefixes)


EVERYTHING = Scope()
