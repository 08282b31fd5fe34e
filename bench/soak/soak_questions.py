"""Distinct, realistic questions about real workspaces, for the soak benchmark.

The vocabulary is the workspaces' own: identifiers found in their source files (the most
frequent ``VOCABULARY`` of each) and the words they split into. Questions are drawn from
templates a developer would type (identifier lookups, qualified names, "how does X handle
Y" sentences) by a seeded generator, so a run is repeatable; every question is distinct
(a duplicate draw is redrawn) and the generator is bounded: it yields exactly ``count``.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from seek.text import split_identifier

VOCABULARY = 4_000
"""Identifiers kept per workspace: enough for millions of distinct questions."""
CODE_SUFFIXES = frozenset(
    ".py .go .js .ts .tsx .jsx .rb .rs .java .kt .php .c .h .cc .cpp .cs .swift .ex .scala .lua"
    .split()
)  # fmt: skip
MAX_FILE_BYTES = 400_000
_IDENTIFIER = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{3,30}\b")
KEYWORDS = frozenset(
    "self this that None True False null true false return import from class def func function "
    "const static public private protected void string bool int else elif while with pass "
    "package export default async await yield struct interface type nil".split()
)

VERBS = (
    "handle", "parse", "validate", "register", "close", "retry", "cache", "serialize",
    "load", "create", "render", "resolve", "dispatch", "encode", "decode", "match", "route",
    "stream", "configure", "reset", "merge", "wrap", "check", "convert", "send", "read",
)  # fmt: skip
NL_TEMPLATES = (
    "how does {a} {verb} {w1} {w2}",
    "where is {w1} {w2} {verb}d",
    "what happens when {a} fails to {verb} the {w1}",
    "which function calls {a} with a {w1} {w2}",
    "how is the {w1} {w2} configured for {a}",
    "why does {a} {verb} {w1} before {b}",
    "where do we {verb} {w1} in {a}",
    "what does {a} return when the {w1} is missing",
    "how are {w1} and {w2} passed to {a}",
    "show the code that {verb}s {w1} {w2} in {b}",
)  # fmt: skip
SYMBOL_TEMPLATES = ("{a}", "{a}.{b}", "{a} {b}", "{a}::{b}")


def harvest(root: Path, limit: int = VOCABULARY) -> tuple[list[str], list[str]]:
    """The ``limit`` most frequent identifiers of the workspace's code, and their words."""
    counts: Counter[str] = Counter()
    for path in sorted(root.rglob("*")):
        if path.suffix not in CODE_SUFFIXES or not path.is_file() or ".git" in path.parts:
            continue
        if path.stat().st_size > MAX_FILE_BYTES:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        counts.update(t for t in _IDENTIFIER.findall(text) if t.lower() not in KEYWORDS)
    identifiers = [name for name, _ in counts.most_common(limit)]
    words = sorted(
        {w for name in identifiers for w in split_identifier(name) if len(w) > 2} - KEYWORDS
    )
    return identifiers, words


class QuestionSource:
    """Distinct questions for each workspace, drawn from its vocabulary."""

    def __init__(self, roots: list[Path], seed: int = 20) -> None:
        self.rng = random.Random(seed)
        self.vocab = {root: harvest(root) for root in roots}
        self.seen: set[int] = set()  # hashes: 100,000 questions cost a few MB in the client

    def question(self, root: Path, symbol_share: float = 0.3) -> str:
        """A question about ``root`` never returned before."""
        identifiers, words = self.vocab[root]
        for _ in range(1_000):
            a, b = self.rng.sample(identifiers, 2)
            if self.rng.random() < symbol_share:
                text = self.rng.choice(SYMBOL_TEMPLATES).format(a=a, b=b)
            else:
                w1, w2 = self.rng.sample(words, 2)
                verb = self.rng.choice(VERBS)
                template = self.rng.choice(NL_TEMPLATES)
                text = template.format(a=a, b=b, w1=w1, w2=w2, verb=verb)
            key = hash(text)
            if key not in self.seen:
                self.seen.add(key)
                return text
        raise RuntimeError(f"the vocabulary of {root} is too small for distinct questions")

    def questions(self, root: Path, count: int) -> Iterator[str]:
        for _ in range(count):
            yield self.question(root)
