"""Ignore rules with git's semantics: nested ``.gitignore`` files, ``.git/info/exclude``,
``.seekignore``, and the ``ignored_globs`` setting.

Precedence, highest first (the first source with a matching rule decides, and inside one
source the last matching rule wins, negations included):

1. ``ignored_globs`` (so a user glob beats a ``!negation`` in a ``.gitignore``),
2. the ``.seekignore`` and ``.gitignore`` files of the deepest folder, then their parents
   (``.seekignore`` wins over the ``.gitignore`` beside it),
3. ``.git/info/exclude``.

Paths are tested relative to the folder that holds the rules file; folders get a trailing
``/`` so ``build/`` patterns match them. An ignored folder is never entered, so (as in git)
nothing inside it can be re-included.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

import pathspec

log = logging.getLogger(__name__)

RULE_FILES = (".gitignore", ".seekignore")  # later in the tuple wins in the same folder


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The patterns of one source, anchored at ``base`` (a workspace-relative folder)."""

    base: str
    spec: pathspec.GitIgnoreSpec

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """True = ignored, False = re-included by a negation, None = no rule matched."""
        if self.base:
            if not rel.startswith(self.base + "/"):
                return None
            rel = rel[len(self.base) + 1 :]
        return self.spec.check_file(rel + "/" if is_dir else rel).include


_warned: set[tuple[str, int, str]] = set()


def _valid_lines(lines: list[str], source: str) -> list[str]:
    """Lines pathspec can compile. Git skips a malformed line ("!", "foo\\", a reversed
    range such as "[z-a]"): it matches nothing, and so it does here, with one warning per
    file and line for the life of the process (servers re-read rules on every update)."""
    valid = []
    for number, line in enumerate(lines, 1):
        try:
            pathspec.GitIgnoreSpec.from_lines([line])
        except (ValueError, re.error):
            if (source, number, line) not in _warned:
                _warned.add((source, number, line))
                log.warning("%s line %d: ignoring the malformed pattern %r", source, number, line)
            continue
        valid.append(line)
    return valid


def rules_from_lines(lines: list[str], base: str, source: str = "ignored_globs") -> RuleSet | None:
    # Only a "#" in the first column starts a comment (" #x" is a pattern, as in git).
    cleaned = [line.rstrip("\r\n") for line in lines]
    if not any(line.strip() and not line.startswith("#") for line in cleaned):
        return None
    try:
        spec = pathspec.GitIgnoreSpec.from_lines(cleaned)
    except (ValueError, re.error):
        spec = pathspec.GitIgnoreSpec.from_lines(_valid_lines(cleaned, source))
    return RuleSet(base, spec)


def read_rules(path: Path, base: str) -> RuleSet | None:
    """Rules of one ignore file; a file that cannot be read contributes nothing (logged)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        log.warning("cannot read ignore file %s: %s", path, exc.strerror)
        return None
    return rules_from_lines(text.splitlines(), base, str(path))


class IgnoreRules:
    """An immutable stack of rule sets; ``child`` adds a folder's own files."""

    __slots__ = ("_top", "_stack")

    def __init__(self, top: tuple[RuleSet, ...], stack: tuple[RuleSet, ...]) -> None:
        self._top = top  # ignored_globs: always decide first
        self._stack = stack  # deepest last

    @classmethod
    def for_root(cls, root: Path, ignored_globs: tuple[str, ...]) -> IgnoreRules:
        top = rules_from_lines(list(ignored_globs), "")
        stack: list[RuleSet] = []
        exclude = (
            read_rules(root / ".git" / "info" / "exclude", "")
            if (root / ".git" / "info" / "exclude").is_file()
            else None
        )
        if exclude:
            stack.append(exclude)
        base = cls((top,) if top else (), tuple(stack))
        return base.child(root, "")

    def child(self, folder: Path, rel: str, names: set[str] | None = None) -> IgnoreRules:
        """Rules in force inside ``folder`` (its own ignore files added on top)."""
        added: list[RuleSet] = []
        for name in RULE_FILES:
            if names is not None and name not in names:
                continue
            path = folder / name
            if names is None and not path.is_file():
                continue
            rules = read_rules(path, rel)
            if rules:
                added.append(rules)
        if not added:
            return self
        return IgnoreRules(self._top, self._stack + tuple(added))

    def is_ignored(self, rel: str, is_dir: bool) -> bool:
        for rules in self._top:
            verdict = rules.decide(rel, is_dir)
            if verdict is not None:
                return verdict
        for rules in reversed(self._stack):
            verdict = rules.decide(rel, is_dir)
            if verdict is not None:
                return verdict
        return False
