"""One file's definitions and references from its syntax tree (issue 28, deliver 1).

Definitions come from the tags query (queries.py); references are every identifier-like
leaf that is not a definition's own name nor a name its function binds itself (model.py's
Reference), found with one query per grammar built from the grammar's node kinds (so the
walk runs in C), each tied to its innermost enclosing definition by a sweep over the sorted
spans (uses.py).  Imports are read by imports.py, declared types by types.py.
"""

from __future__ import annotations

import bisect
from functools import cache

import tree_sitter

from seek.chunk.languages import grammar_for_path, load_language, parser_for
from seek.graph import types, types_js
from seek.graph.imports import query_text as import_query
from seek.graph.imports import read_imports
from seek.graph.model import Definition, FileFacts, Reference
from seek.graph.queries import locals_text, raw_texts, tags_text, used_only
from seek.graph.uses import ReferenceRow, first_of, references

# Leaf kinds that name something, beyond those spelt "*identifier".
_EXTRA_NAME_KINDS = {
    "ruby": ("constant",),
    "php": ("name",),
    "haskell": ("variable", "name", "constructor"),
    "elixir": ("alias",),
}
# Definitions whose span holds a scope of local names: functions, and a Go or JS variable
# whose initializer is a function literal (`var f = func(param T) {...}`).
_SCOPES = ("function", "method", "variable", "constant")
_CLASSES = ("class", "interface")
_TYPE_KINDS = {"class", "interface", "type", "struct", "enum", "trait", "module", "object"}
_MAX_LINE = 200  # characters of a signature line kept; long lines are minified code
# C and C++ declarators that wrap a function's `name(params)`: `*f(...)`, `&f(...)`, `(f)(...)`
_DECLARATOR_WRAPPERS = frozenset(
    ("pointer_declarator", "reference_declarator", "parenthesized_declarator",
     "attributed_declarator")
)  # fmt: skip


def _raw_name_text(grammar: str, language: tree_sitter.Language) -> str:
    """The query of identifier-like leaves, unchecked: the grammar's visible named kinds
    spelt "*identifier", plus the grammar's extra name kinds."""
    if grammar == "bash":
        return "(command_name (word) @id)"
    kinds = set(_EXTRA_NAME_KINDS.get(grammar, ()))
    for kind_id in range(language.node_kind_count):
        kind = language.node_kind_for_id(kind_id)
        if kind and language.node_kind_is_named(kind_id) and kind.endswith("identifier"):
            if language.node_kind_is_visible(kind_id):
                kinds.add(kind)
    return _alternation(sorted(kinds))


@cache
def _name_text(grammar: str) -> str | None:
    """:func:`_raw_name_text` without the kinds that cannot be queried (an alias, a
    supertype), or None when none can."""
    language = load_language(grammar)
    if language is None:
        return None
    raw = _raw_name_text(grammar, language)
    if not raw.startswith("[") or _kind_ok(language, raw, whole=True):  # the usual case
        return raw
    valid = [k for k in sorted(_alternation_kinds(raw)) if _kind_ok(language, k)]
    return _alternation(valid) if valid else None


def _alternation(kinds: list[str]) -> str:
    return "[" + " ".join(f"({k})" for k in kinds) + "] @id"


def _alternation_kinds(text: str) -> list[str]:
    return [part.strip("()") for part in text[1 : text.index("]")].split()]


@cache
def _one_pass(grammar: str) -> tuple[tree_sitter.Query, tuple[int, ...]] | None:
    """The tags, binder, declared-type, anonymous-function, import and name queries of a
    grammar joined into one, so that the tree is walked once rather than six times (a walk
    costs about as much as its matching): (query, the index of each section's first pattern
    after the tags: binders, types, anonymous functions, imports, names).  The tags patterns
    come first, so a tags pattern keeps the number it has alone (_scan prefers the lowest).
    Compiled once from the texts as written; when that fails, from the patterns that compile
    alone."""
    language = load_language(grammar)
    if language is None:
        return None
    tags, binders = raw_texts(grammar)
    declared, anonymous = _typing_module(grammar).query_texts(grammar)
    imports = import_query(grammar)
    sections = [tags, binders, declared, anonymous, imports, _raw_name_text(grammar, language)]
    try:
        query = tree_sitter.Query(language, "\n".join(t for t in sections if t))
    except Exception:  # a part does not compile for this grammar version: checked texts
        sections = [tags_text(grammar) or "", locals_text(grammar) or "", declared, anonymous,
                    imports, _name_text(grammar) or ""]  # fmt: skip
        if not any(sections):
            return None
        query = tree_sitter.Query(language, "\n".join(t for t in sections if t))
    used_only(query, sections[0])
    # a section's patterns start at or after its first byte in the joined text
    starts, offset = [], 0
    for text in sections:
        starts.append(offset)
        if text:
            offset += len(text.encode("utf-8")) + 1
    first = [query.pattern_count] * len(sections)
    for index in range(query.pattern_count - 1, -1, -1):
        begin = query.start_byte_for_pattern(index)
        for section in range(1, len(sections)):
            if sections[section] and begin >= starts[section]:
                first[section] = min(first[section], index)
    for section in range(len(sections) - 2, 0, -1):  # an empty section ends where the next begins
        first[section] = min(first[section], first[section + 1])
    return query, tuple(first[1:])


def _typing_module(grammar: str):
    """The module whose declared-type rules a grammar has (graph.types, graph.types_js)."""
    return types_js if grammar in types_js.JS_GRAMMARS else types


def _kind_ok(language: tree_sitter.Language, kind: str, whole: bool = False) -> bool:
    try:
        tree_sitter.Query(language, kind if whole else f"({kind}) @id")
        return True
    except Exception:  # a kind that is only an alias or a supertype cannot be queried
        return False


def extract(
    path: str,
    source: bytes,
    grammar: str | None = None,
    tree: tree_sitter.Tree | None = None,
) -> FileFacts | None:
    """The facts of one file, or None when no grammar covers it.

    ``tree``, when given, is ``source`` already parsed with ``grammar``'s parser (the tree the
    chunker parsed for its syntax breaks, chunk/syntax.py): it spares a second parse, a
    tenth of extraction's time.  It must be of these very bytes; it is only read.
    """
    found = extract_rows(path, source, grammar, tree)
    if found is None:
        return None
    facts, rows = found
    facts.references = [Reference(path, *row) for row in rows]
    return facts


def extract_rows(
    path: str,
    source: bytes,
    grammar: str | None = None,
    tree: tree_sitter.Tree | None = None,
) -> tuple[FileFacts, list[ReferenceRow]] | None:
    """:func:`extract`, with the references as plain rows beside facts that hold none.

    An indexer encodes the rows as they are (index/graph_rows.py): building a frozen
    Reference costs more than finding it, and there are tens of thousands per repository.
    """
    grammar = grammar or grammar_for_path(path)
    if grammar is None:
        return None
    parser = parser_for(grammar)
    if parser is None:
        return None
    if tree is None:
        tree = parser.parse(source)
    root = tree.root_node
    lines = source.split(b"\n")
    facts = FileFacts(path=path, grammar=grammar)
    scan = _scan(grammar, root)
    def_nodes, name_starts, call_starts, binders, names, declared, anonymous, imports = scan
    spans: list[tuple[int, int, str]] = []  # (start_byte, end_byte, qualified name)
    kinds: dict[str, str] = {}  # qualified name -> kind
    stack: list[tuple[int, str, str]] = []  # (end_byte, qualified, kind) of open definitions
    classes: list[tuple[int, int, str]] = []  # class and interface spans, for `this`
    lexical: dict[str, str] = {}  # definition -> the one around it, where its name differs
    for node, name_node, kind in def_nodes:
        while stack and stack[-1][0] <= node.start_byte:
            stack.pop()
        name = name_node.text.decode("utf-8", "replace")
        own = _own_container(grammar, node)
        container = own or (stack[-1][1] if stack else None)
        if kind == "function" and container and (not stack or stack[-1][2] in _TYPE_KINDS):
            kind = "method"  # a function defined in a class body (tags.scm says "function")
        definition = Definition(
            path=path,
            name=name,
            kind=kind,
            line=node.start_point.row + 1,
            end_line=node.end_point.row + 1,
            column=name_node.start_point.column,
            container=container,
            # the line that names it (a C function's return type may stand on the line above)
            signature=_line(lines, max(node.start_point.row, name_node.start_point.row)),
            doc=_doc(grammar, node, lines),
        )
        facts.definitions.append(definition)
        if own and stack and stack[-1][1] != own:  # `inst.check = () => ...` inside f
            lexical[definition.qualified] = stack[-1][1]
        stack.append((node.end_byte, definition.qualified, kind))
        spans.append((node.start_byte, node.end_byte, definition.qualified))
        if kinds.get(definition.qualified) not in _SCOPES:
            # a scope's kind wins: TypeScript's `interface Z` and `const Z = f((inst) =>
            # ...)` share a name, and the constant's span holds the function's locals
            kinds[definition.qualified] = kind
        if kind in _CLASSES:
            classes.append((node.start_byte, node.end_byte, definition.qualified))
    receivers = _receivers(grammar, def_nodes)
    bound = _locals(binders, name_starts, spans, kinds)
    for qualified, outer in lexical.items():
        # a definition named by its owner (`inst.check`) sees the locals of the function it
        # sits in, which its qualified name does not show (uses._visible walks names)
        seen = {qualified}
        while outer and outer not in seen:  # two `inst.check = ...` may nest: one name
            seen.add(outer)
            bound.setdefault(qualified, set()).update(bound.get(outer, ()))
            outer = lexical.get(outer) or outer.rpartition(".")[0]
    facts.imports = read_imports(path, grammar, root, imports)
    typing = None
    if grammar in types_js.JS_GRAMMARS:
        typing = types_js.JsTypeFacts(grammar, bound)
        typing.modules = {i.alias for i in facts.imports if i.alias}
        typing.class_spans = classes
    elif types.supported(grammar):
        typing = types.TypeFacts(grammar, bound)
    if typing is not None:
        qualified_at = {
            name.start_byte: q for (_, name, _), (_, _, q) in zip(def_nodes, spans, strict=True)
        }
        typing.read(declared, anonymous, qualified_at, spans, kinds)
        facts.types, facts.bases = typing.types, typing.bases
    rows = references(grammar, names, name_starts, call_starts, spans, receivers, bound, typing)
    return facts, rows


def _scan(grammar, root):
    """One walk of the tree (:func:`_one_pass`): (definition node, name node, kind) sorted by
    position, one per name node; the start bytes of definition names and of call names;
    the binder captures ({"local": [...], "global": [...]}); the identifier-like leaves;
    the declared-type matches' captures and the anonymous functions (types.query_texts); the
    import matches' captures (imports.query_text)."""
    found: dict[int, tuple[int, tree_sitter.Node, tree_sitter.Node, str]] = {}
    calls: set[int] = set()
    binders: dict[str, list[tree_sitter.Node]] = {"local": [], "global": []}
    leaves: list[tree_sitter.Node] = []
    declared: list[dict[str, list[tree_sitter.Node]]] = []
    anonymous: list[tree_sitter.Node] = []
    imports: list[dict[str, list[tree_sitter.Node]]] = []
    one = _one_pass(grammar)
    if one is not None:
        query, (first_binder, first_declared, first_anonymous, first_import, first_name) = one
        for pattern, captures in tree_sitter.QueryCursor(query).matches(root):
            if pattern >= first_name:
                leaves.extend(captures.get("id", ()))
                continue
            if pattern >= first_import:
                imports.append(captures)
                continue
            if pattern >= first_anonymous:
                anonymous.extend(captures.get("fn", ()))
                continue
            if pattern >= first_declared:
                declared.append(captures)
                continue
            if pattern >= first_binder:
                for capture, nodes in captures.items():
                    binders.setdefault(capture, []).extend(nodes)
                continue
            names = captures.get("name")
            if not names:
                continue
            name_node = names[0]
            for capture, nodes in captures.items():
                if capture.startswith("definition."):
                    kind = capture.split(".", 1)[1]
                    known = found.get(name_node.start_byte)
                    if known is None or pattern < known[0]:
                        node = _definition_extent(grammar, nodes[0])
                        found[name_node.start_byte] = (pattern, node, name_node, kind)
                elif capture == "reference.call":
                    calls.add(name_node.start_byte)
    ordered = sorted(found.values(), key=lambda f: (f[1].start_byte, -f[1].end_byte))
    definitions = [(node, name, kind) for _, node, name, kind in ordered]
    return definitions, set(found), calls, binders, leaves, declared, anonymous, imports


def _definition_extent(grammar: str, node: tree_sitter.Node) -> tree_sitter.Node:
    """The node whose span a definition has. C's and C++'s tags mark a function by its
    declarator (`name(params)`, one line), not by the definition around it: a function
    with a body spans its `function_definition`, so that the uses in its body are enclosed
    by it (callers, callees, a hit's symbol); a prototype keeps its declarator."""
    if grammar not in ("c", "cpp") or node.type != "function_declarator":
        return node
    outer = node.parent
    while outer is not None and outer.type in _DECLARATOR_WRAPPERS:
        outer = outer.parent
    return outer if outer is not None and outer.type == "function_definition" else node


def _receivers(grammar: str, def_nodes) -> list[tuple[int, int, str]]:
    """(start, end, name) of Go/Rust method receivers other than `self`: a use `r.x` inside
    is a member of the method's own type, as `self.x` is."""
    out = []
    if grammar == "go":
        for node, _, _ in def_nodes:
            receiver = (
                node.child_by_field_name("receiver") if node.type == "method_declaration" else None
            )
            param = (
                receiver.named_children[0]
                if receiver is not None and receiver.named_children
                else None
            )
            name = param.child_by_field_name("name") if param is not None else None
            if name is not None:
                out.append((node.start_byte, node.end_byte, name.text.decode("utf-8", "replace")))
    return out


def _locals(captures, name_starts, spans, kinds) -> dict[str, set[str]]:
    """Function (qualified name) -> the names it binds itself (``captures``: the binder
    patterns' nodes by capture, queries.LOCAL_BINDERS)."""
    if not spans:
        return {}
    starts = [s[0] for s in spans]
    out: dict[str, set[str]] = {}
    for node in captures.get("local", []):
        if node.start_byte in name_starts:
            continue
        owner = _enclosing(spans, starts, node.start_byte)
        if owner is not None and kinds.get(owner) in _SCOPES:
            out.setdefault(owner, set()).add(node.text.decode("utf-8", "replace"))
    for node in captures.get("global", []):  # Python `global x`: assignments reach the module
        owner = _enclosing(spans, starts, node.start_byte)
        out.get(owner, set()).discard(node.text.decode("utf-8", "replace"))
    return out


def _enclosing(spans, starts, byte: int) -> str | None:
    """The innermost definition span holding ``byte`` (spans are sorted by start, nested
    ones after their container, so the last containing one before ``byte`` is innermost)."""
    i = bisect.bisect_right(starts, byte) - 1
    best = None
    while i >= 0:
        start, end, qualified = spans[i]
        if start <= byte < end:
            best = qualified
            break
        i -= 1
    return best


def _own_container(grammar: str, node: tree_sitter.Node) -> str | None:
    """A container the nesting does not show: a Go method's receiver type, a Rust impl's type."""
    if grammar == "go" and node.type == "method_declaration":
        receiver = node.child_by_field_name("receiver")
        return first_of(receiver, "type_identifier")
    if grammar in ("javascript", "typescript", "tsx") and node.type == "assignment_expression":
        # `req.accepts = function () {}`: a member of req, not a name bound in the file
        left = node.child_by_field_name("left")
        owner = left.child_by_field_name("object") if left is not None else None
        if left is not None and left.type == "member_expression" and owner is not None:
            return "".join(owner.text.decode("utf-8", "replace").split())
    if grammar == "rust":
        parent = node.parent
        while parent is not None and parent.type not in ("impl_item", "trait_item", "source_file"):
            parent = parent.parent
        if parent is not None and parent.type == "impl_item":
            return first_of(parent.child_by_field_name("type"), "type_identifier")
    return None


def _line(lines: list[bytes], row: int) -> str:
    text = lines[row].decode("utf-8", "replace").strip() if row < len(lines) else ""
    return text[:_MAX_LINE]


def _doc(grammar: str, node: tree_sitter.Node, lines: list[bytes]) -> str:
    """The first line of a Python docstring, else of the comment block just above."""
    if grammar == "python":
        body = node.child_by_field_name("body")
        first = body.named_children[0] if body is not None and body.named_children else None
        if first is not None and first.type == "expression_statement":
            string = first.named_children[0] if first.named_children else None
            if string is not None and string.type == "string":
                return _first_text_line(string.text.decode("utf-8", "replace"))
    outer = node
    while outer.parent is not None and outer.parent.start_point.row == node.start_point.row:
        if outer.parent.type in ("program", "source_file", "module", "translation_unit"):
            break
        outer = outer.parent
    if outer.parent is not None and outer.parent.type == "decorated_definition":
        outer = outer.parent
    block: list[tree_sitter.Node] = []
    prev = outer.prev_named_sibling
    row = outer.start_point.row
    while prev is not None and "comment" in prev.type and prev.end_point.row >= row - 1:
        block.append(prev)
        row = prev.start_point.row
        prev = prev.prev_named_sibling
    for comment in reversed(block):
        text = _first_text_line(comment.text.decode("utf-8", "replace"))
        if text:
            return text
    return ""


def _first_text_line(text: str) -> str:
    for raw in text.splitlines():
        line = raw.strip().lstrip("/*#-;!").removesuffix("*/").strip().strip("\"'").strip()
        if line and line not in ('"""', "'''"):
            return line[:_MAX_LINE]
    return ""
