"""TypeScript's and JavaScript's declared types, read as graph.types reads Go's and
Python's (issue 44, deliver 1): the rules of the ES languages in one place.

What the source writes down, no inference: parameter, variable and field annotations,
constructor parameter properties (`constructor(private db: Db)`), `this.x = value` in a
class's methods, the return types of functions, methods and interface method signatures
(`min(): this` is the declaring type), `extends` / `implements` clauses as bases, a type
parameter as its constraint (`<T extends Schema>`; none: no member is known), `new C()`,
`x as T`, `x!`, `x satisfies T`, `await` and calls, `this` inside a class's methods and
arrow functions (a `function` expression rebinds it: unknown), and the parameters of a
callback declared as a function type (`const h: Handler = (req) => ...`: Handler's first).
Written types: `A | null` is A, `A | B` both, `Partial<A>`-like wrappers are A, `ns.A` is
A of the namespace ns, `typeof v` is v's type, builtins and literal types are `!` (no
workspace member).  JavaScript has no annotations: only its values (`new C()`, calls,
`this`) and class bases are read.
"""

from __future__ import annotations

import bisect

import tree_sitter

from seek.graph.types import AWAITED, EXTERNAL, PARAM, TYPE_MARK, TypeFacts, _text

JS_GRAMMARS = frozenset(("typescript", "tsx", "javascript"))

# Utility types whose members are their argument's (a subset or a modifier of them).
_WRAPPERS = frozenset(("Partial", "Required", "Readonly", "NonNullable", "Pick", "Omit"))
_NO_MEMBERS = frozenset(("null", "undefined", "literal_type"))
# Written types with no workspace member: builtins, literal, function, tuple and array types.
_OUTSIDE_TYPES = frozenset(
    ("predefined_type", "literal_type", "template_literal_type", "function_type",
     "array_type", "tuple_type", "constructor_type", "readonly_type", "index_type_query")
)  # fmt: skip
_VALUE_LITERALS = frozenset(
    ("string", "number", "template_string", "array", "regex", "true", "false", "null",
     "undefined", "binary_expression", "unary_expression", "update_expression")
)  # fmt: skip
_JOINS = frozenset(("union_type", "intersection_type"))
_SIGNATURES = frozenset(
    ("function_type", "call_signature", "method_signature", "construct_signature",
     "abstract_method_signature", "function_signature")
)  # fmt: skip
_DECLARES = frozenset(("type_alias_declaration", "interface_declaration"))

_ES_VALUES = """
(assignment_expression left: (member_expression object: (this) @object
  property: (property_identifier) @attr) right: (_) @value)
"""
_TS = (
    _ES_VALUES
    + """
(variable_declarator name: (identifier) @name !type value: (_) @value)
(required_parameter pattern: (identifier) @name type: (type_annotation) @type)
(optional_parameter pattern: (identifier) @name type: (type_annotation) @type)
(required_parameter (accessibility_modifier) pattern: (identifier) @prop
  type: (type_annotation) @type)
(variable_declarator name: (identifier) @name type: (type_annotation) @type)
(public_field_definition name: (property_identifier) @defined type: (type_annotation) @type)
(public_field_definition name: (property_identifier) @defined !type value: (_) @value)
(property_signature name: (property_identifier) @defined type: (type_annotation) @type)
(method_signature name: (property_identifier) @defined return_type: (type_annotation) @type)
(abstract_method_signature name: (property_identifier) @defined
  return_type: (type_annotation) @type)
(method_definition name: (property_identifier) @defined return_type: (type_annotation) @type)
(function_declaration name: (identifier) @defined return_type: (type_annotation) @type)
(function_signature name: (identifier) @defined return_type: (type_annotation) @type)
(class_heritage (extends_clause value: (_) @base))
(class_heritage (implements_clause (_) @base))
(extends_type_clause type: (_) @base)
(type_alias_declaration name: (type_identifier) @alias value: (_) @value)
(variable_declarator type: (type_annotation) @context
  value: [(arrow_function) (function_expression)] @callback)
(type_parameter name: (type_identifier) @tparam constraint: (constraint (_) @type))
(type_parameter name: (type_identifier) @tparam !constraint)
"""
)
_JS = (
    _ES_VALUES
    + """
(variable_declarator name: (identifier) @name value: (_) @value)
(field_definition property: (property_identifier) @defined value: (_) @value)
(class_heritage (_) @base)
"""
)
_QUERIES = {"typescript": _TS, "tsx": _TS, "javascript": _JS}
# anonymous functions, and constructors (not definitions in the tags: their parameters and
# `this.x = ...` assignments need a scope of their own)
_FUNCTIONS = """[(arrow_function) (function_expression)] @fn
((method_definition name: (property_identifier) @constructor) @fn
 (#eq? @constructor "constructor"))"""


def query_texts(grammar: str) -> tuple[str, str]:
    """(declarations, anonymous functions) of an ES grammar, as types.query_texts."""
    return _QUERIES.get(grammar, ""), _FUNCTIONS if grammar in _QUERIES else ""


class JsTypeFacts(TypeFacts):
    """:class:`seek.graph.types.TypeFacts` with the ES languages' rules (module docstring)."""

    def __init__(self, grammar: str, bound: dict[str, set[str]] | None = None) -> None:
        super().__init__(grammar, bound)
        self._tparams: dict[str, list[tuple[int, int, str | None]]] = {}
        # (start, end, qualified) of classes and interfaces, in file order (set by the caller:
        # ``kinds`` keeps one kind per name, and an interface and a constant may share one)
        self.class_spans: list[tuple[int, int, str]] = []
        self._class_starts: list[int] = []
        self._rebinding: set[int] = set()  # start bytes of `function` expressions
        self.modules: set[str] = set()  # local names of imported modules (set by the caller)

    def read(self, matches, found, qualified_at, spans, kinds) -> None:
        self._class_starts = [s[0] for s in self.class_spans]
        self._rebinding = {n.start_byte for n in found if n.type == "function_expression"}
        self._spans, self._starts = spans, [s[0] for s in spans]
        rest, attrs, callbacks = [], [], []
        for caps in matches:
            if "tparam" in caps:  # a type parameter is its constraint where it is declared
                node = caps["tparam"][0]
                scope = node.parent.parent.parent if node.parent.parent else None
                if scope is not None:
                    constraint = caps.get("type", [None])[0]
                    expr = self.type_of(constraint) if constraint is not None else EXTERNAL
                    self._tparams.setdefault(_text(node), []).append(
                        (scope.start_byte, scope.end_byte, expr)
                    )
            elif "defined" in caps:  # a member's or function's own type: definitions only
                if caps["defined"][0].start_byte in qualified_at:
                    rest.append({**caps, "name": caps["defined"]})
            elif "callback" in caps:
                callbacks.append(caps)
            elif "name" in caps and "type" in caps and _signature_of(caps["name"][0]):
                self._signature_param(caps["name"][0], caps["type"][0], qualified_at)
                rest.append(caps)  # and a name in the scope around (see _signature_param)
            elif "alias" in caps:  # `type A = B | C & D`: B, C and D are A's bases
                self._alias(qualified_at.get(caps["alias"][0].start_byte), caps["value"][0])
            elif "prop" in caps:  # `constructor(private db: Db)`: a field of the class
                node = caps["prop"][0]
                cls = self._class_at(node.start_byte)
                expr = self.type_of(caps["type"][0])
                if cls and expr:
                    self.types.setdefault(f"{cls}.{_text(node)}", expr)
            elif "attr" in caps:
                attrs.append(caps)
            else:
                rest.append(caps)
        for caps in callbacks:  # `const f: Handler = (req) => ...`: req is Handler's first
            written = self.type_of(caps["context"][0])
            function = caps["callback"][0]
            params = function.child_by_field_name("parameters")
            if not written or written == EXTERNAL or params is None or "|" in written:
                continue
            for i, param in enumerate(params.named_children):
                name = param.child_by_field_name("pattern")
                if (
                    name is not None
                    and name.type == "identifier"
                    and param.child_by_field_name("type") is None
                ):
                    self._bind(f"@{function.start_byte}", _text(name), f"{written}{PARAM}{i}")
        super().read(rest, found, qualified_at, spans, kinds)
        for caps in attrs:  # `this.x = v` in a class's constructor or methods types C.x
            cls, value = self._this(caps["object"][0]), caps["value"][0]
            if cls is None:
                continue
            key = f"{cls}.{_text(caps['attr'][0])}"
            expr = self.value_of(value, self._literal_at(value.start_byte) or self._method(value))
            if key in self.types and self.types[key] != expr:
                self.types[key] = ""  # assigned different things: unknown
            elif expr:
                self.types.setdefault(key, expr)

    def _method(self, node: tree_sitter.Node) -> str | None:
        """The method whose body holds ``node`` (locals live there), else None."""
        i = bisect.bisect_right(self._starts, node.start_byte) - 1
        while i >= 0:
            start, end, qualified = self._spans[i]
            if start <= node.start_byte < end:
                return qualified
            i -= 1
        return None

    def _signature_param(self, name, written, qualified_at) -> None:
        """A parameter of a function type or a call signature: the type of parameter i of
        a type alias's function type or of an interface's call signature is kept as `T@i`,
        what a callback declared as a T takes.  (Its name is also bound, as any annotated
        parameter, in the scope around the signature, the file's for an interface: an
        untyped parameter of that name there takes the type.  Measured on zod, where
        `(payload) => ...` callbacks implement `check(payload: ParsePayload)`: precision
        0.728 without it, 0.743 with it.)"""
        params = name.parent.parent
        owner = params.parent
        declared = owner.parent
        if owner.type == "call_signature" and declared is not None:
            declared = declared.parent  # interface_body < interface_declaration
        if declared is None or declared.type not in _DECLARES:
            return
        defined = qualified_at.get(declared.child_by_field_name("name").start_byte)
        expr = self.type_of(written)
        if defined and expr:
            index = params.named_children.index(name.parent)
            self.types[f"{defined}{PARAM}{index}"] = expr

    def _alias(self, alias: str | None, value: tree_sitter.Node) -> None:
        """A type alias's bases: the types it joins or names; "" (unknown) for a type the
        graph cannot read (conditional, mapped, indexed); none for an object type, whose
        members the graph does not define."""
        if alias is None or value.type == "object_type":
            return
        parts = _union_parts(value) if value.type in _JOINS else [value]
        exprs = [self.type_of(p) for p in parts if p.type not in _NO_MEMBERS]
        if all(exprs):
            self.bases[alias] = tuple(e for e in exprs if e and e != EXTERNAL)
        else:
            self.bases[alias] = ("",)

    def _class_span(self, byte: int) -> tuple[int, str] | None:
        """(start, qualified name) of the innermost class or interface holding ``byte``."""
        i = bisect.bisect_right(self._class_starts, byte) - 1
        while i >= 0:
            start, end, qualified = self.class_spans[i]
            if start <= byte < end:
                return start, qualified
            i -= 1
        return None

    def _class_at(self, byte: int) -> str | None:
        found = self._class_span(byte)
        return found[1] if found else None

    def _this(self, node: tree_sitter.Node) -> str | None:
        """The class `this` means at ``node``: that of the class whose body holds it, unless
        a `function` expression inside the class rebinds it."""
        found = self._class_span(node.start_byte)
        if found is None:
            return None
        i = self._literal_index(node.start_byte)
        while i >= 0 and self._literals[i][0] > found[0]:
            if self._literals[i][0] in self._rebinding:
                return None
            i = self._literal_parent[i]
        return found[1]

    def _names_module(self, where, owner) -> bool:
        """``owner`` is a namespace import's or a `require`'s local name (a module)."""
        return (
            owner.type == "identifier"
            and _text(owner) in self.modules
            and self._module_like(where, owner)
        )

    # -- written types --------------------------------------------------------------------

    def type_of(self, node: tree_sitter.Node | None) -> str | None:
        if node is None:
            return None
        kind = node.type
        if kind in ("type_annotation", "parenthesized_type", "constraint"):
            inner = node.named_children
            return self.type_of(inner[-1]) if inner else None
        if kind == "type_identifier":
            name = _text(node)
            for start, end, expr in self._tparams.get(name, ()):
                if start <= node.start_byte < end:
                    return expr
            return _type_name(name)
        if kind == "identifier":  # `extends Base` in a class heading: a value
            return _type_name(_text(node))
        if kind in ("nested_type_identifier", "member_expression"):
            return _type_name("".join(_text(node).split()))
        if kind == "generic_type":
            base = node.child_by_field_name("name")
            args = node.child_by_field_name("type_arguments")
            if base is not None and _text(base) in _WRAPPERS and args and args.named_children:
                return self.type_of(args.named_children[0])
            return self.type_of(base)
        if kind == "union_type":  # `A | null | undefined`: A; `A | B`: "A|B"
            parts = [self.type_of(c) for c in _union_parts(node) if c.type not in _NO_MEMBERS]
            known = [p for p in parts if p and p != EXTERNAL]
            if not parts or None in parts or any("|" in p or ">" in p for p in known):
                return None
            return "|".join(dict.fromkeys(known)) if known else EXTERNAL
        if kind == "this_type":
            cls = self._class_at(node.start_byte)
            return _type_name(cls) if cls else None
        if kind == "type_query":  # `typeof v`
            inner = node.named_children
            return f"${_text(inner[0])}" if inner and inner[0].type == "identifier" else None
        if kind in _OUTSIDE_TYPES:
            return EXTERNAL
        return None

    # -- values ---------------------------------------------------------------------------

    def value_of(
        self, node: tree_sitter.Node | None, where: str | None, depth: int = 0
    ) -> str | None:
        if node is None or depth > 8:
            return None
        kind = node.type
        if kind in _VALUE_LITERALS:
            return EXTERNAL
        if kind == "this":
            return self._this(node)
        if kind == "new_expression":
            made = node.child_by_field_name("constructor")
            if made is not None and made.type in ("identifier", "member_expression"):
                return _type_name("".join(_text(made).split()))
            return None
        if kind == "as_expression":
            return self.type_of(node.named_children[-1]) if node.named_children else None
        if kind in ("non_null_expression", "satisfies_expression", "parenthesized_expression"):
            inner = node.named_children
            return self.value_of(inner[0], where, depth + 1) if inner else None
        if kind == "member_expression":
            return self._member(node, where, depth, call=False)
        if kind == "await_expression":  # what an outside promise gives is outside too
            inner = node.named_children
            head = self.value_of(inner[0], where, depth + 1) if inner else None
            return self._step(head, AWAITED) if head else None
        if kind in ("object", "arrow_function", "function_expression", "class"):
            return None  # their members are not declared anywhere the graph reads
        return super().value_of(node, where, depth)

    def _call_head(self, node, where, depth: int = 0) -> str | None:
        function = node.child_by_field_name("function")
        if function is None:
            return None
        if function.type == "identifier":
            name = _text(function)
            if self.local(where, name) is not None or self._shadowed(where, name):
                return None  # calling a local: unknown
            return f"{name}()"
        if function.type == "member_expression":
            return self._member(function, where, depth, call=True)
        return None

    def _member(self, node, where, depth: int, call: bool) -> str | None:
        """`owner.field` as a value, or called (`owner.field()`): a module's member by its
        name (a value written ``$module.field``), else one step from the owner's type."""
        owner = node.child_by_field_name("object")
        field = node.child_by_field_name("property")
        if owner is None or field is None:
            return None
        step = _text(field) + ("()" if call else "")
        if self._names_module(where, owner):
            return f"{'' if call else '$'}{_text(owner)}.{step}"
        return self._step(self.value_of(owner, where, depth + 1), step)

    def _step(self, head: str | None, step: str) -> str | None:
        # what a type declared outside the workspace holds or returns is declared outside
        # too (as in Go; resolved at binding time, graph.resolve)
        if head == EXTERNAL:
            return EXTERNAL
        return f"{head}>{step}" if head else None


def _signature_of(name: tree_sitter.Node) -> bool:
    """Whether a parameter's name belongs to a signature without a body (a function type,
    an interface's call or method signature), whose parameters bind nothing."""
    param = name.parent
    params = param.parent if param is not None else None
    owner = params.parent if params is not None else None
    return owner is not None and owner.type in _SIGNATURES


def _type_name(name: str) -> str:
    """A type's name as a type expression: one spelt with a leading `$` (zod's `$ZodType`)
    is marked, since a leading `$` there means a value (graph.types)."""
    return TYPE_MARK + name if name.startswith("$") else name


def _union_parts(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """The types a union (or an intersection) joins, nested ones flattened."""
    out = []
    for child in node.named_children:
        out.extend(_union_parts(child) if child.type == node.type else [child])
    return out
