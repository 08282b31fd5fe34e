"""Declared types read from the syntax tree, so that a member use `x.m` can bind to the
members of x's type instead of every `m` (issue 28, deliver 3: receiver typing where
tree-sitter makes it decidable; seek.md §2 `seek refs`).

No inference: only what the source writes down.  Parameters with a type (Go, annotated
Python, TypeScript), a method's receiver or `self`, locals bound to a composite literal,
`new T()`, `&T{}` or a call, struct and class fields with a declared type, `self.x = ...`
in a method, and function results.  Types are kept as small expressions resolved later by
the lookup, since a name's definition may sit in another file:

    HEAD(>STEP)*   HEAD: `T` or `pkg.T` (a type), `f()` / `pkg.f()` (what calling f
                   gives; `f()#1` its second result), `$v` (the type of value v), `^`
                   (the enclosing class's bases: Python `super()`), `!` (a builtin or
                   literal type: no workspace member), `=$T` (a type named `$T`), `A|B`
                   (a TypeScript union: graph.types_js);  STEP: `m` (member m's type),
                   `m()` (what calling method m gives).
"""

from __future__ import annotations

import bisect

import tree_sitter

EXTERNAL = "!"
TYPE_MARK = "="  # before a type's name that starts with `$` (JavaScript allows it)
# the step of `await v`: outside stays outside; a workspace type has no such member, so
# what a workspace promise gives stays unknown
AWAITED = "~await"
PARAM = "@"  # `T@i`: parameter i of the function type T (graph.types_js)

_GO_PREDECLARED = {
    "any", "bool", "byte", "comparable", "complex64", "complex128", "error", "float32",
    "float64", "int", "int8", "int16", "int32", "int64", "rune", "string", "uint", "uint8",
    "uint16", "uint32", "uint64", "uintptr",
}  # fmt: skip
_PY_BUILTINS = {
    "bool", "bytearray", "bytes", "complex", "dict", "float", "frozenset", "int", "list",
    "object", "set", "str", "tuple", "type",
}  # fmt: skip
_LITERALS = {
    # Go
    "interpreted_string_literal", "raw_string_literal", "int_literal", "float_literal",
    "rune_literal", "func_literal", "true", "false", "nil", "binary_expression",
    # Python
    "string", "concatenated_string", "integer", "float", "dictionary", "list", "set", "tuple",
    "list_comprehension", "dictionary_comprehension", "set_comprehension", "none",
    "comparison_operator", "not_operator", "boolean_operator", "lambda",
    # TypeScript / JavaScript
    "number", "template_string", "array", "object", "arrow_function", "function_expression",
    "regex",
}  # fmt: skip

_QUERIES = {
    "go": """
(parameter_declaration name: (identifier) @name type: (_) @type)
(variadic_parameter_declaration name: (identifier) @external)
(short_var_declaration left: (expression_list . (identifier) @name)
  right: (expression_list . (_) @value))
(short_var_declaration left: (expression_list (identifier) . (identifier) @second .)
  right: (expression_list . (call_expression) @call .))
(var_spec name: (identifier) @name type: (_) @type)
(var_spec name: (identifier) @name !type value: (expression_list . (_) @value))
(field_declaration name: (field_identifier) @name type: (_) @type)
(field_declaration !name type: (_) @base)
(interface_type (type_elem (_) @base))
(function_declaration name: (identifier) @name result: (_) @type)
(method_declaration name: (field_identifier) @name result: (_) @type)
(method_elem name: (field_identifier) @name result: (_) @type)
""",
    "python": """
(typed_parameter (identifier) @name type: (type) @type)
(typed_default_parameter name: (identifier) @name type: (type) @type)
(list_splat_pattern (identifier) @external)
(dictionary_splat_pattern (identifier) @external)
(assignment left: (identifier) @name type: (type) @type)
(assignment left: (identifier) @name !type right: (_) @value)
(assignment left: (attribute object: (identifier) @object attribute: (identifier) @attr)
  right: (_) @value)
(function_definition name: (identifier) @name return_type: (type) @type)
(function_definition parameters: (parameters . (identifier) @self))
(class_definition superclasses: (argument_list (_) @base))
""",
}


_LITERALS_QUERY = {"go": "(func_literal) @fn"}


def query_texts(grammar: str) -> tuple[str, str]:
    """(declarations, anonymous functions): the two queries :meth:`TypeFacts.read` reads the
    matches of, run by the extractor in its one walk of the tree (extract._one_pass)."""
    return _QUERIES.get(grammar, ""), _LITERALS_QUERY.get(grammar, "")


def supported(grammar: str) -> bool:
    return grammar in _QUERIES


def _text(node: tree_sitter.Node) -> str:
    return node.text.decode("utf-8", "replace")


class TypeFacts:
    """One file's declared types: definition (qualified name) -> type expression, type ->
    its base / embedded type expressions, and each function's local names -> expressions."""

    def __init__(self, grammar: str, bound: dict[str, set[str]] | None = None) -> None:
        self.grammar = grammar
        self.bound = bound or {}  # function -> every name it binds (queries.LOCAL_BINDERS)
        self.types: dict[str, str] = {}
        self.bases: dict[str, tuple[str, ...]] = {}
        self.locals: dict[str | None, dict[str, str | None]] = {}
        self._pending: dict[str | None, dict[str, tree_sitter.Node]] = {}
        self._classes: dict[str, str] = {}  # method qualified -> its class, for `self`
        self._literals: list[tuple[int, int, str]] = []
        self._literal_starts: list[int] = []
        self._literal_parent: list[int] = []  # index of the literal around each, or -1
        self._parent: dict[str, str | None] = {}
        self._owners: dict[tuple[str | None, str], str | None] = {}  # see owner

    def _literal_at(self, byte: int) -> str | None:
        """The innermost anonymous function holding ``byte``."""
        i = self._literal_index(byte)
        return self._literals[i][2] if i >= 0 else None

    def _literal_index(self, byte: int) -> int:
        """The index of :meth:`_literal_at`'s literal, -1 for none: the last literal starting
        before ``byte``, or the innermost of those around that one (literals nest, so one that
        starts earlier and is not around it ends before ``byte``: only the enclosing chain is
        tried, not every earlier literal; this runs for every member use)."""
        i = bisect.bisect_right(self._literal_starts, byte) - 1
        while i >= 0:
            start, end, _ = self._literals[i]
            if start < byte < end:
                return i
            i = self._literal_parent[i]
        return -1

    def _up(self, where: str) -> str | None:
        if where in self._parent:
            return self._parent[where]
        return where.rpartition(".")[0] or None

    # -- reading ----------------------------------------------------------------------------

    def read(self, matches, found, qualified_at, spans, kinds) -> None:
        """``matches``: the captures of each match of the declarations query in the file, in
        the order found; ``found``: the anonymous functions' nodes (:func:`query_texts`);
        ``qualified_at``: definition name start byte -> qualified name; ``spans``: the
        sorted (start, end, qualified) definition spans; ``kinds``: qualified -> kind."""
        starts = [s[0] for s in spans]

        def enclosing(node) -> str | None:
            i = bisect.bisect_right(starts, node.start_byte) - 1
            while i >= 0:
                start, end, qualified = spans[i]
                if start <= node.start_byte < end:
                    return qualified
                i -= 1
            return None

        def def_scope(node) -> str | None:
            """The innermost enclosing function (locals live there), else None: the file."""
            owner = enclosing(node)
            while owner and kinds.get(owner) not in ("function", "method", "variable", "constant"):
                owner = owner.rpartition(".")[0] or None
            return owner

        # anonymous functions (Go `func(r Router) {...}`) are scopes of their own: keyed
        # "@START", each with its parent scope
        for node in sorted(found, key=lambda n: n.start_byte):
            key = f"@{node.start_byte}"
            around = self._literal_index(node.start_byte)
            self._parent[key] = self._literals[around][2] if around >= 0 else def_scope(node)
            self._literal_parent.append(around)
            self._literals.append((node.start_byte, node.end_byte, key))
            self._literal_starts.append(node.start_byte)

        def scope(node) -> str | None:
            return self._literal_at(node.start_byte) or def_scope(node)

        attrs: list[tuple[str, str, tree_sitter.Node, tree_sitter.Node]] = []
        for caps in matches:
            if "base" in caps:
                for node in caps["base"]:
                    owner = enclosing(node)
                    expr = self.type_of(node)
                    if owner and expr:
                        self.bases[owner] = (*self.bases.get(owner, ()), expr)
                continue
            if "self" in caps:
                node = caps["self"][0]
                method = enclosing(node)
                if method and kinds.get(method) == "method" and "." in method:
                    cls = method.rpartition(".")[0]
                    self._classes[method] = cls
                    self.locals.setdefault(method, {})[_text(node)] = cls
                continue
            if "external" in caps:
                node = caps["external"][0]
                self._bind(scope(node), _text(node), EXTERNAL)
                continue
            if "attr" in caps:
                attrs.append(
                    (
                        _text(caps["object"][0]),
                        _text(caps["attr"][0]),
                        caps["value"][0],
                        caps["attr"][0],
                    )
                )
                continue
            if "second" in caps:  # `v, err := f()`: err is f's second result
                node, call = caps["second"][0], caps["call"][0]
                head = self._call_head(call, scope(node))
                if head and ">" not in head and head.endswith("()"):
                    self._bind(scope(node), _text(node), head + "#1")
                continue
            names = caps.get("name", ())
            type_node = caps.get("type", [None])[0]
            value_node = caps.get("value", [None])[0]
            for name_node in names:
                defined = qualified_at.get(name_node.start_byte)
                if type_node is not None:
                    expr = self.type_of(type_node)
                    if defined is not None:
                        if expr:
                            self.types[defined] = expr
                    else:
                        self._bind(scope(name_node), _text(name_node), expr)
                elif value_node is not None:
                    if defined is not None:
                        expr = self.value_of(value_node, scope(name_node))
                        if expr:
                            self.types[defined] = expr
                    else:
                        where = scope(name_node)
                        self._pending.setdefault(where, {}).setdefault(_text(name_node), value_node)
        # values are read once every local is known: `x = f(); y = x.g()`
        for where, pending in self._pending.items():
            for name, node in pending.items():
                if name not in self.locals.get(where, {}):
                    self._bind(where, name, self.value_of(node, where))
        self._pending.clear()
        for obj, attr, value, node in attrs:  # `self.x = value` in a method of C
            where = scope(node)
            cls = self._classes.get(where or "")
            if cls and self.locals.get(where, {}).get(obj) == cls:
                key = f"{cls}.{attr}"
                expr = self.value_of(value, where)
                if key in self.types and self.types[key] != expr:
                    self.types[key] = ""  # assigned different things: unknown
                elif expr:
                    self.types.setdefault(key, expr)

    def _bind(self, where: str | None, name: str, expr: str | None) -> None:
        scope = self.locals.setdefault(where, {})
        if name in scope and scope[name] != expr:
            scope[name] = None  # bound to different things: unknown
        else:
            scope[name] = expr

    def local(self, enclosing: str | None, name: str) -> str | None:
        """The expression of a name bound in ``enclosing`` or a function around it."""
        where = enclosing
        while True:
            scope = self.locals.get(where)
            if scope is not None and name in scope:
                return scope[name]
            if not where:
                return None
            where = self._up(where)

    # -- type and value expressions ---------------------------------------------------------

    def type_of(self, node: tree_sitter.Node | None) -> str | None:
        """A written type as an expression (the first result of a Go result list)."""
        if node is None:
            return None
        kind = node.type
        if kind in ("type", "type_annotation", "pointer_type", "parenthesized_type"):
            inner = node.named_children
            return self.type_of(inner[-1]) if inner else None
        if kind == "parameter_list":  # Go results: "A,B"
            parts = [self.type_of(p.child_by_field_name("type")) or "" for p in node.named_children]
            return ",".join(parts) if any(parts) else None
        if kind in ("type_identifier", "identifier"):
            name = _text(node)
            if (self.grammar == "go" and name in _GO_PREDECLARED) or (
                self.grammar == "python" and name in _PY_BUILTINS
            ):
                return EXTERNAL
            return name
        if kind in ("qualified_type", "attribute", "nested_type_identifier"):
            return _text(node).replace(" ", "")
        if kind == "generic_type":  # Go `T[int]`, Python `Optional[T]` / `list[T]`
            base = node.child_by_field_name("type") or node.named_children[0]
            name = _text(base)
            if self.grammar == "python" and name == "Optional":
                params = [c for c in node.named_children[1:] for c in c.named_children]
                return self.type_of(params[0]) if params else None
            return self.type_of(base)
        if kind == "string" and self.grammar == "python":  # a forward reference "T"
            name = _text(node).strip("\"'")
            return name if name.replace(".", "").replace("_", "").isalnum() else None
        if kind == "binary_operator" and self.grammar == "python":  # `T | None`
            sides = [self.type_of(c) for c in node.named_children if c.type != "none"]
            return sides[0] if len(sides) == 1 else None
        if kind == "none":
            return EXTERNAL
        if kind in (
            "slice_type", "map_type", "array_type", "channel_type", "function_type",
            "predefined_type",
        ):  # fmt: skip
            return EXTERNAL
        return None

    def value_of(
        self, node: tree_sitter.Node | None, where: str | None, depth: int = 0
    ) -> str | None:
        """The type expression of a value expression, where it is written down."""
        if node is None or depth > 8:
            return None
        kind = node.type
        if kind in _LITERALS:
            return EXTERNAL
        if kind in ("identifier", "self"):
            name = _text(node)
            known = self.local(where, name)
            return (
                known
                if known is not None
                else (None if self._shadowed(where, name) else f"${name}")
            )
        if kind in ("parenthesized_expression", "expression_list"):
            inner = node.named_children
            return self.value_of(inner[0], where, depth + 1) if inner else None
        if kind == "composite_literal":
            return self.type_of(node.child_by_field_name("type"))
        if kind == "unary_expression" and _text(node).startswith("&"):
            return self.value_of(node.child_by_field_name("operand"), where, depth + 1)
        if kind == "type_assertion_expression":
            return self.type_of(node.child_by_field_name("type"))
        if kind in ("call_expression", "call"):
            return self._call_head(node, where, depth)
        if kind in ("selector_expression", "attribute"):
            owner, field = _owner_and_field(node)
            if owner is None or field is None:
                return None
            if self._names_module(where, owner):
                return f"${_text(owner)}.{_text(field)}"
            return self._step(self.value_of(owner, where, depth + 1), _text(field))
        return None

    def _names_module(self, where, owner) -> bool:
        """``owner`` (of ``owner.field``) is a name that stands for a module or package."""
        return owner.type in ("identifier", "package_identifier") and self._module_like(
            where, owner
        )

    def _call_head(self, node, where, depth: int = 0) -> str | None:
        function = node.child_by_field_name("function")
        if function is None:
            return None
        if function.type == "identifier":
            name = _text(function)
            if name == "new" and self.grammar == "go":
                args = node.child_by_field_name("arguments")
                return (
                    self.type_of(args.named_children[0]) if args and args.named_children else None
                )
            if name == "super" and self.grammar == "python":
                return "^"
            if self.grammar == "python" and name in _PY_BUILTINS:
                return EXTERNAL
            if self.local(where, name) is not None or self._shadowed(where, name):
                return None  # calling a local: unknown
            return f"{name}()"
        if function.type in ("selector_expression", "attribute"):
            owner, field = _owner_and_field(function)
            if owner is None or field is None:
                return None
            if self._names_module(where, owner):
                return f"{_text(owner)}.{_text(field)}()"
            return self._step(self.value_of(owner, where, depth + 1), _text(field) + "()")
        return None

    def _step(self, head: str | None, step: str) -> str | None:
        if head == EXTERNAL:
            # Go: what a type declared outside the module holds or returns is declared
            # outside too; Python: an outside call may hand back a workspace object
            return EXTERNAL if self.grammar == "go" else None
        return f"{head}>{step}" if head else None

    def _module_like(self, where, owner) -> bool:
        """An identifier that no local binds: a package, a module, a class or a global."""
        name = _text(owner)
        return self.local(where, name) is None and not self._shadowed(where, name)

    def _shadowed(self, where: str | None, name: str) -> bool:
        """Bound locally to something unknown (the two Nones of `local` differ here)."""
        probe = where
        while True:
            scope = self.locals.get(probe)
            if scope is not None and name in scope:
                return True
            pending = self._pending.get(probe)
            if pending is not None and name in pending:
                return True
            if probe and name in self.bound.get(probe, ()):
                return True
            if not probe:
                return False
            probe = self._up(probe)

    def owner(self, node: tree_sitter.Node, enclosing: str | None) -> str | None:
        """The type expression of a member use's owner node (`x` of `x.m`); called once the
        file is read, so a name's answer in a scope is kept (a receiver or a local is the
        owner of many uses in its function)."""
        enclosing = self._literal_at(node.start_byte) or enclosing
        if node.type == "identifier" or node.type == "package_identifier":
            key = (enclosing, _text(node))
            if key not in self._owners:
                self._owners[key] = self._name_owner(*key)
            return self._owners[key]
        return self.value_of(node, enclosing)

    def _name_owner(self, enclosing: str | None, name: str) -> str | None:
        known = self.local(enclosing, name)
        if known is not None:
            return known
        if self._shadowed(enclosing, name):
            return None
        return f"${name}"


def _owner_and_field(node):
    """(object, member) of a Go selector or a Python attribute (``owner.field``)."""
    owner = node.child_by_field_name("operand") or node.child_by_field_name("object")
    field = node.child_by_field_name("field") or node.child_by_field_name("attribute")
    return owner, field
