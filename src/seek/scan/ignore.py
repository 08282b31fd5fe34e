"""Ignore rules (seek.md §4) with git's semantics: nested ``.gitignore`` files,
``.git/info/exclude``, ``.seekignore``, and the ``ignored_globs`` setting.

Precedence, highest first (the first source with a matching rule decides, and inside one
source the last matching rule wins, negations included):

1. ``ignored_globs`` (so a user glob beats a ``!negation`` in a ``.gitignore``),
2. the ``.seekignore`` and ``.gitignore`` files of the deepest folder, then their parents
   (``.seekignore`` wins over the ``.gitignore`` beside it),
3. ``.git/info/exclude``.

Paths are tested relative to the folder that holds the rules file; folders get a trailing
``/`` so ``build/`` patterns match them. An ignored folder is never entered, so (as in git)
nothing inside it can be re-included.

Matching runs on RE2 (linear in the path's length), never on Python's backtracking ``re``:
pathspec's translation of a hostile line such as ``a*a*a*a*a*a*a*a*a*a*b`` takes exponential
time in ``re`` against a long name, so a cloned repository's ``.gitignore`` could hang
indexing (issue 27 finding 2). pathspec still translates each line; the verdict is the one its
own Python-``re`` matcher gives (tests/test_fuzz.py compares the two).
"""

from __future__ import annotations

import errno
import logging
from dataclasses import dataclass
from pathlib import Path

import re2  # google-re2: matching in linear time
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from seek.scan.beneath import read_beneath

log = logging.getLogger(__name__)

RULE_FILES = (".gitignore", ".seekignore")  # later in the tuple wins in the same folder
EXCLUDE_FILE = ".git/info/exclude"
MAX_RULES_BYTES = 1 << 20
"""An ignore file is lines of patterns (a big monorepo's is tens of KB); a bigger one is left
out with a warning rather than read (a committed multi-GB file, issue 43 finding 4)."""
_ABSENT = frozenset({errno.ENOENT, errno.ENOTDIR})
"""No such file: nothing to read, nothing to say (``.git`` is a file in a git worktree)."""


# pathspec's regex for a pattern ends in a directory mark: "/" there means the pattern matched
# a folder above the path (a weaker verdict, see ``_Matcher.decide``), "$" the path itself.
_DIR_MARK = "(?P<ps_d>/)"
_DIR_MARK_OR_END = f"(?:{_DIR_MARK}|$)"


def _re2_options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # a rejected line is reported once by ``_warn``, not on stderr
    options.never_capture = True  # sets cannot use groups
    return options


def _literal_brackets_in_classes(regex: str) -> str:
    """``regex`` with every ``[`` inside a character class escaped. Python's ``re`` reads such
    a ``[`` as a literal (pathspec copies a bracket expression such as ``[[:alpha:]]`` as is),
    RE2 as the start of a POSIX class; escaping makes RE2 read it as ``re`` does."""
    out: list[str] = []
    i, n = 0, len(regex)
    in_class = False
    class_start = 0
    while i < n:
        char = regex[i]
        if char == "\\":
            out.append(regex[i : i + 2])
            i += 2
            continue
        if in_class:
            if char == "[":
                out.append("\\[")
                i += 1
                continue
            if char == "]" and i > class_start:  # a "]" first in the class is a literal
                in_class = False
        elif char == "[":
            in_class = True
            out.append(char)
            i += 1
            if i < n and regex[i] == "^":
                out.append("^")
                i += 1
            class_start = i
            continue
        out.append(char)
        i += 1
    return "".join(out)


@dataclass(frozen=True, slots=True)
class _Regex:
    line: int  # later lines win
    include: bool  # False for a "!negation"
    folder_mark: bool  # matched a folder above the path, not the path itself


class _Matcher:
    """pathspec's gitignore verdict for some lines, computed with RE2 sets."""

    __slots__ = ("_sets", "_regexes")

    def __init__(self, lines: list[str], source: str) -> None:
        regexes: list[tuple[str, _Regex]] = []
        parsed = re2.Set.SearchSet(_re2_options())  # only parses: cheaper than compiling each
        for number, line in enumerate(lines, 1):
            variants = _translate(line, parsed)
            if variants is None:
                _warn(source, number, line)
                continue
            regexes += [(regex, _Regex(number, include, mark)) for regex, include, mark in variants]
        self._regexes = [meta for _, meta in regexes]
        self._sets = self._compile([regex for regex, _ in regexes], 0)

    @staticmethod
    def _compile(regexes: list[str], offset: int) -> list[tuple[re2.Set, int]]:
        """One RE2 set, or several when one would pass RE2's memory budget (thousands of
        lines): halves until each compiles."""
        if not regexes:
            return []
        regex_set = re2.Set.SearchSet(_re2_options())  # pathspec searches (only "^" anchors)
        for regex in regexes:
            regex_set.Add(regex)
        try:
            regex_set.Compile()
        except re2.error:
            if len(regexes) == 1:  # each regex parsed in __init__: cannot happen
                return []
            half = len(regexes) // 2
            first = _Matcher._compile(regexes[:half], offset)
            return first + _Matcher._compile(regexes[half:], offset + half)
        return [(regex_set, offset)]

    def decide(self, path: str) -> bool | None:
        """The same verdict as pathspec's own matcher: the last pattern that matches the path
        itself decides; failing that, the last one that matches a folder above it."""
        text = path.encode("utf-8", "surrogateescape")
        best: _Regex | None = None
        for regex_set, offset in self._sets:
            for found in regex_set.Match(text) or ():
                regex = self._regexes[offset + found]
                if (
                    best is None
                    or (best.folder_mark and not regex.folder_mark)
                    or (best.folder_mark == regex.folder_mark and regex.line > best.line)
                ):
                    best = regex
        return None if best is None else best.include


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The patterns of one source, anchored at ``base`` (a workspace-relative folder)."""

    base: str
    matcher: _Matcher

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """True = ignored, False = re-included by a negation, None = no rule matched."""
        if self.base:
            if not rel.startswith(self.base + "/"):
                return None
            rel = rel[len(self.base) + 1 :]
        return self.matcher.decide(rel + "/" if is_dir else rel)


_warned: set[tuple[str, int, str]] = set()


def _warn(source: str, number: int, line: str) -> None:
    """Git skips a malformed line ("!", "foo\\", a reversed range such as "[z-a]"): it matches
    nothing, and so it does here, with one warning per file and line for the life of the
    process (servers re-read rules on every update)."""
    if (source, number, line) not in _warned:
        _warned.add((source, number, line))
        log.warning("%s line %d: ignoring the malformed pattern %r", source, number, line)


def _translate(line: str, parsed: re2.Set) -> list[tuple[str, bool, bool]] | None:
    """(RE2 regex, include, folder mark) for each form of the line (none for a blank line or
    a comment), or None when the line is malformed. pathspec translates; ``parsed`` checks
    that RE2 reads the result (it refuses what ``re`` would, such as a reversed range)."""
    if not line:
        return []
    try:
        regex, include = GitIgnoreSpecPattern.pattern_to_regex(line)
    except ValueError:
        return None
    if regex is None or include is None:
        return []
    regex = _literal_brackets_in_classes(regex)
    if regex.endswith(_DIR_MARK_OR_END):
        base = regex[: -len(_DIR_MARK_OR_END)]
        variants = [(base + "/", include, True), (base + "$", include, False)]
    elif _DIR_MARK in regex:
        variants = [(regex.replace(_DIR_MARK, "/"), include, True)]
    else:
        variants = [(regex, include, False)]
    try:
        for variant, _, _ in variants:
            parsed.Add(variant)
    except (re2.error, UnicodeEncodeError):
        return None
    return variants


def rules_from_lines(lines: list[str], base: str, source: str = "ignored_globs") -> RuleSet | None:
    # Only a "#" in the first column starts a comment (" #x" is a pattern, as in git).
    cleaned = [line.rstrip("\r\n") for line in lines]
    if not any(line.strip() and not line.startswith("#") for line in cleaned):
        return None
    return RuleSet(base, _Matcher(cleaned, source))


_unreadable: set[tuple[str, str]] = set()


def read_rules(root: Path, rel: str, base: str) -> RuleSet | None:
    """Rules of the ignore file ``root/rel``, opened as every workspace file is
    (:func:`seek.scan.beneath.read_beneath`, issue 43 finding 4): no link followed anywhere on
    the path, a regular file only (a link to ``/dev/zero`` or a FIFO is never read), at most
    :data:`MAX_RULES_BYTES`. One that cannot be read contributes nothing, with one warning
    per file and reason for the life of the process (git, too, refuses a linked
    ``.gitignore`` with a warning)."""
    try:
        data = read_beneath(root, rel, MAX_RULES_BYTES)
    except OSError as exc:
        said = (str(root / rel), str(exc.strerror))
        if exc.errno not in _ABSENT and said not in _unreadable:
            _unreadable.add(said)
            log.warning("cannot read ignore file %s: %s", *said)
        return None
    return rules_from_lines(data.decode("utf-8", "replace").splitlines(), base, str(root / rel))


class IgnoreRules:
    """An immutable stack of rule sets; ``child`` adds a folder's own files."""

    __slots__ = ("_root", "_top", "_stack")

    def __init__(self, root: Path, top: tuple[RuleSet, ...], stack: tuple[RuleSet, ...]) -> None:
        self._root = root  # the workspace: every ignore file is read beneath it
        self._top = top  # ignored_globs: always decide first
        self._stack = stack  # deepest last

    @classmethod
    def for_root(cls, root: Path, ignored_globs: tuple[str, ...]) -> IgnoreRules:
        top = rules_from_lines(list(ignored_globs), "")
        exclude = read_rules(root, EXCLUDE_FILE, "")
        base = cls(root, (top,) if top else (), (exclude,) if exclude else ())
        return base.child("")

    def child(self, rel: str, names: set[str] | None = None) -> IgnoreRules:
        """Rules in force inside the workspace folder ``rel`` (its own ignore files added on
        top); ``names``: those of its entries that are ignore files, when already listed."""
        added: list[RuleSet] = []
        for name in RULE_FILES:
            if names is not None and name not in names:
                continue
            rules = read_rules(self._root, f"{rel}/{name}" if rel else name, rel)
            if rules:
                added.append(rules)
        if not added:
            return self
        return IgnoreRules(self._root, self._top, self._stack + tuple(added))

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
