"""Context for a chat model (reference §6.5-§6.7 and §8): candidates -> scores -> threshold
and near misses -> widening to the enclosing syntax node -> imports blocks -> merging ->
snippet limit -> character budget -> labelled prompt blocks and a one-line report.

Scores are the learned ranker's calibrated probabilities (:mod:`.ranker`, on by default),
or those of the cross-encoder that ``reranker_model`` names, a folder or a model pulled with
``seek models pull`` (:func:`seek.rerank.hub.resolve_reranker`, :mod:`seek.rerank`). When neither
can score they fall back to retrieval order, ``1 - i/n``, and the note says so (§6.7).

Each code block names its enclosing symbol (issue 28 deliver 2), by the rule and from the
source search hits are named by (:mod:`.symbols`), for the block's final lines: widened,
merged and trimmed. A deviation from §8.4: the heading ``path (lines a-b)`` is followed by
`` · Class.method`` when the block has one. Naming changes no block's lines or content and
the budget counts content only, so the blocks chosen are those chosen without names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from seek.chunk.languages import grammar_for_path, parser_for
from seek.chunk.packing import LineSizes
from seek.errors import RerankerUnavailable
from seek.rerank.hub import resolve_reranker
from seek.rerank.local import cross_encoder
from seek.retrieve.types import Hit, SearchResult, SpanSymbols, Symbol
from seek.scan.beneath import ESCAPES, read_beneath
from seek.settings import Settings
from seek.untrusted import printable

RERANKER_UNAVAILABLE = "The reranker is unavailable, so scores are retrieval order."
CROSS_ENCODER_UNAVAILABLE = (
    "The cross-encoder is unavailable, so scores are the learned ranker's probabilities."
)
IMPORT_NODE_WORDS = ("import", "use_declaration", "preproc_include")
_BACKTICKS = re.compile(r"`+")


@dataclass(frozen=True, slots=True)
class Block:
    path: str
    start: int
    """0-based first line."""
    end: int
    """0-based last line, inclusive."""
    content: str
    score: float
    kind: str = "code"
    """``code``, ``imports`` or ``team``."""
    symbol: Symbol | None = None
    """The innermost definition holding more than half of the block's lines (a code block,
    and a team block whose server named one; None for imports and file-level code)."""


@dataclass(slots=True)
class ContextResult:
    query: str
    blocks: list[Block]
    candidates: int
    threshold: float
    near_misses: list[Block] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    over_budget: list[Block] = field(default_factory=list)
    """Blocks above the threshold that did not fit the character budget."""
    budget: int = 0

    def to_json(self) -> dict[str, object]:
        def block(b: Block) -> dict[str, object]:
            return {"path": b.path, "start_line": b.start + 1, "end_line": b.end + 1,
                    "score": round(b.score, 4), "kind": b.kind, "content": b.content,
                    "symbol": None if b.symbol is None else b.symbol.to_json()}  # fmt: skip

        return {
            "query": self.query,
            "prompt": self.prompt(),
            "blocks": [block(b) for b in self.blocks],
            "near_misses": [block(b) for b in self.near_misses],
            "candidates": self.candidates,
            "threshold": self.threshold,
            "notes": self.notes,
            "context_line": self.context_line(),
        }

    def prompt(self) -> str:
        """The labelled blocks (§8.4), separated by blank lines."""
        return "\n\n".join(format_block(block) for block in self.blocks)

    def context_line(self) -> str:
        """The one-line report (§8.5): query, candidates, each hit's score, near misses."""
        files = len({b.path for b in self.blocks})
        parts = [f"query: {self.query!r}", f"weighed {self.candidates} candidates"]
        if self.blocks:
            chunk_word = "chunk" if len(self.blocks) == 1 else "chunks"
            file_word = "one file" if files == 1 else f"{files} files"
            parts.append(f"{len(self.blocks)} {chunk_word} from {file_word}")
            parts.append(", ".join(
                f"{printable(b.path)}:{b.start + 1}-{b.end + 1} {b.score:.2f}"
                + (" (imports)" if b.kind == "imports" else "")
                for b in self.blocks
            ))  # fmt: skip
        elif not self.over_budget:
            parts.append(f"nothing scored above {self.threshold:g}")
        if self.over_budget:
            sizes = ", ".join(
                f"{printable(b.path)}:{b.start + 1}-{b.end + 1} {b.score:.2f} "
                f"({len(b.content):,} chars)"
                for b in self.over_budget
            )
            parts.append(f"left out for the {self.budget:,}-character budget: {sizes}")
        if self.near_misses:
            parts.append("closest of the rest: " + ", ".join(
                f"{printable(b.path)}:{b.start + 1}-{b.end + 1} {b.score:.2f}"
                for b in self.near_misses
            ))  # fmt: skip
        parts.extend(self.notes)
        return " · ".join(parts)


def language_tag(path: str) -> str:
    name = path.rpartition("/")[2]
    return name.rsplit(".", 1)[1].lower() if "." in name.lstrip(".") else ""


def format_block(block: Block) -> str:
    """``path (lines a-b)``, `` · Class.method`` when the block names a symbol (escaped like
    the path: workspace text), then a fence longer than any backtick run inside (at least 3)."""
    longest = max((len(run) for run in _BACKTICKS.findall(block.content)), default=0)
    fence = "`" * max(3, longest + 1)
    heading = f"{printable(block.path)} (lines {block.start + 1}-{block.end + 1})"
    if block.symbol is not None:
        heading += f" · {printable(block.symbol.qualified)}"
    return f"{heading}\n{fence}{language_tag(block.path)}\n{block.content}\n{fence}"


# -- widening and imports (§8.1-§8.2) -------------------------------------------------------


def _last_row(node, line_count: int) -> int:  # tree_sitter.Node
    row = node.end_point[0]
    if node.end_point[1] == 0 and row > node.start_point[0]:
        row -= 1  # a node ending with a newline ends on the line before
    return max(0, min(row, line_count - 1))


def enclosing_range(
    root,  # tree_sitter.Node
    sizes: LineSizes,
    line_count: int,
    start: int,
    end: int,
    max_chars: int,
) -> tuple[int, int] | None:
    """The widest syntax node that contains the hit, is larger than it, and fits."""
    node = root
    while node is not None:
        first, last = node.start_point[0], _last_row(node, line_count)
        if (first < start or last > end) and sizes.chars(first, last) <= max_chars:
            return first, last
        node = next(
            (c for c in node.children
             if c.start_point[0] <= start and _last_row(c, line_count) >= end),
            None,
        )  # fmt: skip
    return None


def imports_range(
    root,  # tree_sitter.Node
    sizes: LineSizes,
    line_count: int,
    max_chars: int,
) -> tuple[int, int] | None:
    """The run of import nodes at the top of the file (comments allowed inside), if it fits."""
    first = last = None
    for child in root.children:
        kind = child.type
        if any(word in kind for word in IMPORT_NODE_WORDS):
            if first is None:
                first = child.start_point[0]
            last = _last_row(child, line_count)
        elif "comment" in kind and first is not None:
            continue
        elif first is not None:
            break
    if first is None or last is None or sizes.chars(first, last) > max_chars:
        return None
    return first, last


@dataclass(slots=True)
class _File:
    lines: list[str]
    sizes: LineSizes
    tree: object | None


class _Escaped(Exception):
    """The indexed path is now a symlink or not a regular file (see :mod:`seek.scan.beneath`)."""


def _read(root: Path, path: str) -> _File | None:
    """The file as it is now (None when it is gone: the indexed lines are used); raises
    :class:`_Escaped` when reading it would follow a link out of the file."""
    try:
        source = read_beneath(root, path)
    except OSError as exc:
        if exc.errno in ESCAPES:
            raise _Escaped(path) from exc
        return None
    lines = source.decode("utf-8", "replace").split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    tree = None
    grammar = grammar_for_path(path)
    parser = parser_for(grammar) if grammar else None
    if parser is not None:
        try:
            tree = parser.parse(source)
        except Exception:  # a parse failure leaves hits unwidened
            tree = None
    return _File(lines, LineSizes(lines), tree)


# -- the whole pipeline -------------------------------------------------------------------------


def build_context(
    root: Path,
    search_result: SearchResult,
    settings: Settings,
    *,
    budget: int | None = None,
    snippets: int | None = None,
    threshold: float | None = None,
) -> ContextResult:
    """Turn a search (its top ``rerank_top`` hits) into labelled, budgeted prompt blocks."""
    budget = settings.prompt_budget_chars if budget is None else budget
    snippets = settings.snippets if snippets is None else snippets
    threshold = settings.rerank_threshold if threshold is None else threshold
    # The chunk stage's context order when there is one (more parts of the likely files).
    ranked = search_result.context_hits or search_result.hits
    local = [h for h in ranked if not h.path.startswith("team:")]
    team = [h for h in search_result.hits if h.path.startswith("team:")]
    candidates = local[: settings.rerank_top]
    n = len(candidates)
    scores, note = rerank_scores(settings, search_result, candidates)
    scored = [
        Block(h.path, h.start_line - 1, h.end_line - 1, h.content, score, symbol=h.symbol)
        for h, score in zip(candidates, scores, strict=True)
    ]
    notes = list(search_result.notes) + ([note] if note else [])
    hits = sorted((b for b in scored if b.score >= threshold), key=lambda b: -b.score)
    near = sorted((b for b in scored if b.score < threshold), key=lambda b: -b.score)
    files: dict[str, _File | None] = {}
    for path in sorted({b.path for b in hits}):
        try:
            files[path] = _read(root, path)
        except _Escaped:
            notes.append(f"{printable(path)} was left out: it is no longer a regular file in the "
                         "workspace (a symlink?); run `seek index`.")  # fmt: skip
    hits = [b for b in hits if b.path in files]
    for block in hits:  # a file edited since it was indexed: its hits stay as indexed
        if not _still_holds(files.get(block.path), block):
            files[block.path] = None
    widened = [_widen(b, files.get(b.path), settings.widen_chars) for b in hits]
    merged = sorted(_merge(widened, files, settings.merge_chars), key=lambda b: -b.score)
    code = [_named(_without_blank_edges(b), search_result.symbols) for b in merged[:snippets]]
    imports = _imports_blocks(code, files, settings.imports_chars)
    kept, left, skipped = [], budget, []
    for block in [*code, *imports]:
        if len(block.content) <= left:  # skip, do not stop: a smaller one may still fit
            kept.append(block)
            left -= len(block.content)
        else:
            skipped.append(block)
    # Team hits follow, outside the limit and the budget (§9.1).
    kept += [
        Block(h.path, h.start_line - 1, h.end_line - 1, h.content, h.score, "team", h.symbol)
        for h in team
    ]
    return ContextResult(
        search_result.query,
        kept,
        n,
        threshold,
        near[: settings.near_misses],
        notes,
        over_budget=skipped,
        budget=budget,
    )


def rerank_scores(
    settings: Settings, result: SearchResult, hits: list[Hit]
) -> tuple[list[float], str]:
    """Probabilities for the hits: from the cross-encoder when one is configured (passage =
    path + newline + chunk), else the learned ranker's (the hits' scores); without either,
    the retrieval-order fallback ``1 - i/n`` and its note."""
    if not hits:
        return [], ""
    if result.calibrated:
        fallback = [h.score for h in hits]
        unavailable = CROSS_ENCODER_UNAVAILABLE
    else:
        fallback = [1.0 - i / len(hits) for i in range(len(hits))]
        unavailable = RERANKER_UNAVAILABLE
    try:
        folder = resolve_reranker(settings)  # a folder, or the name of a pulled model
        if folder is None:
            missing = bool(settings.reranker_model)
            return fallback, unavailable if missing or not result.calibrated else ""
        reranker = cross_encoder(str(folder))
        return reranker.score(result.query, [f"{h.path}\n{h.content}" for h in hits]), ""
    except RerankerUnavailable:
        return fallback, unavailable


def _still_holds(file: _File | None, block: Block) -> bool:
    """True when the file as read now has the block's indexed text at its lines. The index
    may be a second behind the disk, or a save half-written: widening, merging and imports
    from such a file would mix versions or fall off its end (the soak's IndexError)."""
    if file is None or block.end >= len(file.lines):
        return False
    return block.content in "\n".join(file.lines[block.start : block.end + 1])


def _without_blank_edges(block: Block) -> Block:
    """The block without its leading and trailing blank lines (a chunk that ends between two
    definitions carries the gap; the heading's line numbers follow the trim)."""
    lines = block.content.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return block
    last = max(i for i, line in enumerate(lines) if line.strip())
    if first == 0 and last == len(lines) - 1:
        return block
    content = "\n".join(lines[first : last + 1])
    return replace(block, start=block.start + first, end=block.start + last, content=content)


def _named(block: Block, symbols: SpanSymbols | None) -> Block:
    """The block with the symbol of its lines as they are shown (widening and merging
    change them); None when the hits were not named by a searcher."""
    symbol = symbols.span(block.path, block.start + 1, block.end + 1) if symbols else None
    return replace(block, symbol=symbol)


def _widen(block: Block, file: _File | None, max_chars: int) -> Block:
    if file is None or file.tree is None:
        return block
    line_count = len(file.lines)
    end = min(block.end, line_count - 1)
    root = file.tree.root_node
    wider = enclosing_range(root, file.sizes, line_count, block.start, end, max_chars)
    if wider is None:
        return block
    first, last = wider
    return replace(block, start=first, end=last, content="\n".join(file.lines[first : last + 1]))


def _merge(blocks: list[Block], files: dict[str, _File | None], max_chars: int) -> list[Block]:
    out: list[Block] = []
    for path in dict.fromkeys(b.path for b in blocks):
        mine = sorted((b for b in blocks if b.path == path), key=lambda b: b.start)
        file = files.get(path)
        current = mine[0]
        for nxt in mine[1:]:
            end = max(current.end, nxt.end)
            if (
                file is not None
                and nxt.start <= current.end + 1
                and file.sizes.chars(current.start, end) <= max_chars
            ):
                current = Block(
                    path, current.start, end, "\n".join(file.lines[current.start : end + 1]),
                    max(current.score, nxt.score),
                    current.kind if current.kind == nxt.kind else "code",
                )  # fmt: skip
            else:
                out.append(current)
                current = nxt
        out.append(current)
    return out


def _imports_blocks(
    code: list[Block], files: dict[str, _File | None], max_chars: int
) -> list[Block]:
    blocks = []
    for path in dict.fromkeys(b.path for b in code):
        file = files.get(path)
        if file is None or file.tree is None:
            continue
        found = imports_range(file.tree.root_node, file.sizes, len(file.lines), max_chars)
        if found is None:
            continue
        first, last = found
        mine = [b for b in code if b.path == path]
        if any(b.start <= first and b.end >= last for b in mine):
            continue  # a code block already shows the imports
        content = "\n".join(file.lines[first : last + 1])
        blocks.append(Block(path, first, last, content, max(b.score for b in mine), "imports"))
    return blocks
