"""The code graph's records: definitions, references and imports of one file (seek.md §2, the
graph rows of `seek def` / `seek refs` / `seek outline`).

Plain frozen values, so that a file's facts can be built in a worker, pickled, stored and
merged into a workspace graph without the parser. A reference is a named tuple rather than a
frozen dataclass: a graph loads tens of thousands of them (zod: 96,000), and a tuple is built
in C, a frozen dataclass by a Python ``__init__`` that sets each field (0.32 s -> 0.14 s).
Lines are 1-based and inclusive, columns 0-based (tree-sitter's), as `seek search` reports
them.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple


@dataclass(frozen=True, slots=True)
class Definition:
    """A named definition: a function, method, class, type, module, constant, field..."""

    path: str
    name: str
    kind: str
    line: int
    end_line: int
    column: int  # of the name, so that an oracle or an editor can land on it
    container: str | None = None  # the qualified name of the enclosing definition
    signature: str = ""  # the definition's first source line, stripped
    doc: str = ""  # the first line of its doc comment or docstring

    @property
    def qualified(self) -> str:
        return f"{self.container}.{self.name}" if self.container else self.name


class Reference(NamedTuple):
    """One use of an identifier outside its own definition's name. A bare name that its
    enclosing function binds itself (a parameter, a local) is not one: it means no
    definition, and such uses were two fifths of a Go or Python repository's rows."""

    path: str
    name: str
    line: int
    column: int
    enclosing: str | None  # qualified name of the innermost enclosing definition
    call: bool = False  # the use is the callee of a call
    member: bool = False  # the use follows a `.`/`::`/`->` (an attribute, a method, a field)
    # the identifier before that `.`, e.g. `os` in `os.path`; a Go method's receiver is
    # written `self`, so that `r.field` inside `func (r *T)` reads as a member of T
    qualifier: str | None = None
    owner: str | None = None  # the type expression of a member's owner (graph.types)


@dataclass(frozen=True, slots=True)
class Import:
    """An import statement's target as written, and the workspace files it resolves to."""

    path: str
    line: int
    target: str  # module path, relative path or package path, as written
    names: tuple[str, ...] = ()  # the names it binds in the importing file ("*" for all)
    alias: str | None = None  # the local name of the imported module itself, when it has one
    files: tuple[str, ...] = ()  # resolved workspace files; empty when undecidable


@dataclass(slots=True)
class FileFacts:
    """Everything the graph knows about one file."""

    path: str
    grammar: str
    definitions: list[Definition] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    # declared types (graph.types): definition -> type expression, type -> its bases
    types: dict[str, str] = field(default_factory=dict)
    bases: dict[str, tuple[str, ...]] = field(default_factory=dict)


class LazyFacts(Mapping[str, FileFacts]):
    """A workspace's facts decoded as they are asked for: what a one-shot lookup reads from
    the index's stored rows (:class:`seek.index.graph_rows.StoredFacts`). Every file's
    definitions are at hand from the start (:attr:`definitions`, in file order: a graph
    indexes them all by name); a file's references, imports and types are decoded when the
    file is first asked for; and :meth:`mentioning` names the files whose facts may hold a
    name without decoding the others. Iterating its values decodes every file, so whatever
    needs the whole graph (PageRank, every use's count) sees it whole."""

    definitions: Mapping[str, list[Definition]]

    @abstractmethod
    def mentioning(self, names: Iterable[str]) -> Iterator[FileFacts]:
        """Every file whose facts may hold one of ``names`` (a superset, in file order)."""
