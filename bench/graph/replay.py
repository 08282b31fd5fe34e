"""What an agent is handed until a question is answered: the counting and covering rules of
``bench.graph.tokens`` (issue 28, deliver 6), and its grep + read baseline.

A replay delivers pieces of text one tool output at a time; each piece has a character count
and the workspace lines it puts in hand (``Hit`` spans, 1-based inclusive; a whole file read
is one span over all its lines).  The question is **covered** once every relevant target
overlaps a delivered span, judged exactly as ``bench.quality``'s context recall judges a
context's blocks (:func:`bench.quality.scoring.covers`: paths match by suffix, a span target
needs a line overlap, a whole-file target any delivered line of its file).  Characters are
counted until covered; a replay whose characters pass the cap before that is not covered
(its characters count as the cap).

The baseline greps the question's words: :func:`question_words` (identifier-shaped words,
lower-cased, English stop words out, the same for every question), one
``grep -rniwI --exclude-dir=.git -e WORD .`` per word in the folder seek indexes; files are
ordered by how many of the words they match (ties: more matching lines first, then path)
and read whole in that order.  Two ways to count the grep step:

* ``counts``: what ``grep -rciw`` without the zero lines (``rg -ciw WORD``) prints, one
  ``path:count`` line per matching file and word;
* ``lines``: every matching line as ``grep -rniw`` prints it (``./path:line:text``).

Listings (grep's output, like ``seek search``'s hit list in ``bench.graph.tokens``) point at
lines but put none in hand: only reading (a file, a hit's lines, ``seek context``'s blocks)
covers a target, the same rule for every arm.  (Letting a listing's lines count would let a
single matching line "cover" a 70-line span target.)
"""

from __future__ import annotations

import re
import subprocess
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.quality.scoring import Hit, Target, covers

DEFAULT_CAP = 60_000
"""Characters after which a replay stops, not covered."""

CHARS_PER_TOKEN = 4
"""The usual rough rate for code and English text; tokens are only ever derived from chars."""

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
STOP_WORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    either else ever every few for from further get gets got had has have having he her here
    hers how however i if in into is it its itself just let lets like may me might more most
    much must my no nor not now of off on once one only or other our out over own same shall
    she should so some such than that the their theirs them then there these they this those
    through thus to too under until up upon us very via was we were what when where whether
    which while who whom whose why will with within without would yet you your""".split()
)


def question_words(question: str) -> list[str]:
    """The words the baseline greps: identifier-shaped tokens of the question, lower-cased,
    stop words and one-letter words out, first occurrence order."""
    out: list[str] = []
    for word in _WORD.findall(question):
        word = word.lower()
        if len(word) > 1 and word not in STOP_WORDS and word not in out:
            out.append(word)
    return out


@dataclass
class Replay:
    """Characters and lines delivered so far for one question, and whether it is covered."""

    targets: Sequence[Target]
    cap: int = DEFAULT_CAP
    chars: int = 0
    calls: int = 0
    covered: bool = False
    covered_by: str | None = None
    """The step that completed the answer (``None``: not covered)."""
    over_cap: bool = False
    spans: list[Hit] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.covered or self.over_cap

    def deliver(self, step: str, chars: int, spans: Iterable[Hit]) -> bool:
        """One tool output of ``chars`` characters putting ``spans`` in hand; True when the
        replay is over (covered now or before, or past the cap)."""
        if self.done:
            return True
        self.calls += 1
        self.chars += chars
        if self.chars > self.cap:  # the answer did not arrive within the budget
            self.chars, self.over_cap = self.cap, True
            return True
        self.spans.extend(spans)
        if self.targets and all(any(covers(h, t) for h in self.spans) for t in self.targets):
            self.covered, self.covered_by = True, step
        return self.done

    def summary(self) -> dict:
        return {
            "covered": self.covered,
            "chars": self.chars,
            "calls": self.calls,
            "covered_by": self.covered_by,
        }


# -- reading files ------------------------------------------------------------------------


class Files:
    """Workspace files as a read tool returns them (text, undecodable bytes replaced), each
    read from disk once per folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._text: dict[str, str] = {}

    def text(self, rel: str) -> str:
        if rel not in self._text:
            try:
                self._text[rel] = (self.folder / rel).read_bytes().decode("utf-8", "replace")
            except OSError:
                self._text[rel] = ""
        return self._text[rel]

    def whole(self, rel: str) -> tuple[int, list[Hit]]:
        """Reading ``rel`` whole: its characters and one span over all its lines."""
        text = self.text(rel)
        return len(text), [Hit(rel, 1, max(1, text.count("\n") + 1))]

    def lines(self, rel: str, start: int, end: int) -> tuple[int, list[Hit]]:
        """Reading lines ``start``-``end`` (1-based, inclusive) of ``rel``."""
        rows = self.text(rel).split("\n")[start - 1 : end]
        return len("\n".join(rows)) + 1, [Hit(rel, start, end)]


# -- the grep + read baseline -------------------------------------------------------------


@dataclass
class GrepWord:
    """One word's ``grep -rniw`` output: its characters and the matching lines."""

    word: str
    chars: int
    matches: list[tuple[str, int]]  # (path, line), in grep's order

    def count_chars(self) -> int:
        """Characters of the ``path:count`` lines ``rg -ciw WORD`` prints for this word."""
        per_file: dict[str, int] = defaultdict(int)
        for path, _ in self.matches:
            per_file[path] += 1
        return sum(len(f"{path}:{n}\n") for path, n in per_file.items())


def grep_word(folder: Path, word: str) -> GrepWord:
    run = subprocess.run(
        ["grep", "-rniwI", "--exclude-dir=.git", "-e", word, "."],
        cwd=folder,
        capture_output=True,
    )
    text = run.stdout.decode("utf-8", "replace")
    matches = []
    for raw in text.splitlines():
        path, _, rest = raw.partition(":")
        line, _, _ = rest.partition(":")
        if line.isdigit():
            matches.append((path.removeprefix("./"), int(line)))
    return GrepWord(word, len(text), matches)


def file_order(greps: Sequence[GrepWord]) -> list[str]:
    """Files by how many of the words they match, then matching lines, then path."""
    words: dict[str, set[str]] = defaultdict(set)
    lines: dict[str, int] = defaultdict(int)
    for g in greps:
        for path, _ in g.matches:
            words[path].add(g.word)
            lines[path] += 1
    return sorted(words, key=lambda p: (-len(words[p]), -lines[p], p))


def grep_and_read(
    folder: Path,
    targets: Sequence[Target],
    words: Sequence[str],
    mode: str,
    cap: int = DEFAULT_CAP,
    files: Files | None = None,
    greps: Sequence[GrepWord] | None = None,
) -> Replay:
    """The baseline for one question: grep each word (``mode`` ``counts`` or ``lines``, see
    the module docstring), then read whole files in :func:`file_order` until covered."""
    files = files or Files(folder)
    greps = list(greps) if greps is not None else [grep_word(folder, w) for w in words]
    replay = Replay(targets, cap)
    for g in greps:  # a listing points at lines; it does not put them in hand
        if replay.deliver(f"grep {g.word}", g.count_chars() if mode == "counts" else g.chars, ()):
            return replay
    for path in file_order(greps):
        chars, spans = files.whole(path)
        if replay.deliver(f"read {path}", chars, spans):
            break
    return replay
