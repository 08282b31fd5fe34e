"""TypeScript's and JavaScript's members bound through declared types (issue 44, deliver 1;
graph/types_js.py, graph/resolve.py): small real sources, real tree-sitter."""

from __future__ import annotations

from seek.graph import build_graph

MODELS = b"""export interface Base {
  id: number;
  close(): void;
}

export interface Db extends Base {
  save(): void;
  self(): this;
}

export class Cache {
  save(): void {}
  close(): void {}
}

export type Either = Db | Cache;
export type Both = Db & Extra;

export interface Extra {
  flush(): void;
}

export interface $Schema {
  parse(): void;
}
"""

USE = b"""import { Db, Cache, Either, Both, $Schema } from "./models";
import * as ext from "outside-package";

export function make(): Db {
  return null as any;
}

export class Service {
  cache: Cache;
  constructor(private db: Db, other: Cache) {
    this.cache = other;
  }
  run(d: Db | null, e: Either, b: Both, s: $Schema) {
    d.save();
    this.db.save();
    this.cache.save();
    make().save();
    make().self().save();
    e.save();
    b.flush();
    b.close();
    s.parse();
    const c = new Cache();
    c.save();
    const v = e as Cache;
    v.save();
  }
  later() {
    const f = () => this.cache.save();
    const g = function () {
      return this.cache.save();
    };
  }
}

export function generic<T extends Db>(t: T) {
  t.save();
}

export function outside() {
  ext.make().save();
  JSON.parse("{}").save();
  for (const item of [new Cache()]) {
    item.save();
  }
}
"""


def _bound(graph, path, line, name):
    """What the member use of ``name`` on ``line`` binds to, as (path, qualified name)."""
    refs = [r for r in graph.files[path].references if r.line == line and r.name == name]
    assert len(refs) == 1, refs
    return sorted((d.path, d.qualified) for d in graph.candidates(refs[0]))


DB_SAVE = [("models.ts", "Db.save")]
CACHE_SAVE = [("models.ts", "Cache.save")]


def test_annotations_fields_constructor_properties_and_return_types_pick_the_member():
    """Both Db and Cache have `save`: a parameter's annotation (`Db | null` is Db), a class
    field, a constructor parameter property, a function's return type (and a method's
    `this` return type), `new C()` and `x as C` each pick one."""
    graph = build_graph({"models.ts": MODELS, "use.ts": USE})
    assert _bound(graph, "use.ts", 14, "save") == DB_SAVE
    assert _bound(graph, "use.ts", 15, "save") == DB_SAVE  # constructor(private db: Db)
    assert _bound(graph, "use.ts", 16, "save") == CACHE_SAVE  # cache: Cache
    assert _bound(graph, "use.ts", 17, "save") == DB_SAVE  # make(): Db
    assert _bound(graph, "use.ts", 18, "save") == DB_SAVE  # self(): this
    assert _bound(graph, "use.ts", 24, "save") == CACHE_SAVE  # new Cache()
    assert _bound(graph, "use.ts", 26, "save") == CACHE_SAVE  # e as Cache


def test_unions_intersections_bases_and_constraints_are_followed():
    """A union alias binds each of its types' members, an intersection its parts', an
    interface its bases' (`close` of Base through Db), a type parameter its constraint's,
    and a type named `$Schema` is a type (a leading `$` is no value there)."""
    graph = build_graph({"models.ts": MODELS, "use.ts": USE})
    assert _bound(graph, "use.ts", 19, "save") == sorted(DB_SAVE + CACHE_SAVE)
    assert _bound(graph, "use.ts", 20, "flush") == [("models.ts", "Extra.flush")]
    assert _bound(graph, "use.ts", 21, "close") == [("models.ts", "Base.close")]
    assert _bound(graph, "use.ts", 22, "parse") == [("models.ts", "$Schema.parse")]
    assert _bound(graph, "use.ts", 37, "save") == DB_SAVE  # <T extends Db>


def test_this_is_the_class_in_arrows_and_unknown_in_function_expressions():
    graph = build_graph({"models.ts": MODELS, "use.ts": USE})
    assert _bound(graph, "use.ts", 29, "save") == CACHE_SAVE
    # a `function` rebinds `this`: unknown, so the use binds by name (both saves)
    assert _bound(graph, "use.ts", 31, "save") == sorted(DB_SAVE + CACHE_SAVE)


def test_what_outside_modules_and_globals_give_binds_nothing_and_loop_variables_are_locals():
    graph = build_graph({"models.ts": MODELS, "use.ts": USE})
    assert _bound(graph, "use.ts", 41, "save") == []  # ext.make(): outside the workspace
    assert _bound(graph, "use.ts", 42, "save") == []  # JSON: a global
    # `for (const item of ...)` binds item: neither a global nor a use of a definition
    assert not [r for r in graph.files["use.ts"].references if r.name == "item"]
    assert _bound(graph, "use.ts", 44, "save") == sorted(DB_SAVE + CACHE_SAVE)


SCHEMAS = b"""export interface ZodType {
  _zod: Internals;
}
export interface Internals {
  def: number;
}
export interface ZodString extends ZodType {
  _zod: StringInternals;
}
export interface StringInternals extends Internals {
  minLength: number;
}
export const ZodString = make("ZodString", (inst, def) => {
  inst._zod.def;
  inst.check = (x) => inst.minLength;
});
function make(name: string, init: (inst: any, def: any) => void) {}
"""


def test_an_unknown_owners_member_binds_the_first_declaration_of_a_redeclared_member():
    """`inst` is inferred (a checker's work): its `_zod` means ZodType's, which ZodString
    redeclares, not both; the callback's parameters are locals of the constant although
    an interface shares its name, also inside `inst.check = ...`."""
    graph = build_graph({"schemas.ts": SCHEMAS})
    assert _bound(graph, "schemas.ts", 14, "_zod") == [("schemas.ts", "ZodType._zod")]
    bare = [r for r in graph.files["schemas.ts"].references if not r.member]
    assert not [r for r in bare if r.name in ("inst", "def")]


BARREL = {
    "core/schema.ts": b"export interface Schema { parse(): void }\n"
    b"export function string(): Schema { return null as any }\n",
    "core/api.ts": b"export function _min() {}\n",
    "core/other.ts": b"export class Other { parse() {} }\n",
    "core/checks.ts": b'export { _min as min } from "./api"\n',
    "core/index.ts": b'export * from "./schema"\nexport * as checks from "./checks"\n',
    "index.ts": b'import * as z from "./core/index"\nexport { z }\n',
    "test.ts": b'import { z } from "./index"\nz.string().parse()\n',
}


def test_barrels_namespaces_imported_by_name_and_export_aliases():
    """`import { z }` of a module that does `import * as z` and `export { z }` is that
    namespace: `z.string()` follows `export *` to its function and its return type;
    `export { _min as min }` is a use of _min at `min` too."""
    graph = build_graph(BARREL)
    assert _bound(graph, "test.ts", 2, "parse") == [("core/schema.ts", "Schema.parse")]
    mins = [(r.line, r.column) for r in graph.files["core/checks.ts"].references]
    assert (1, 9) in mins and (1, 17) in mins
    _min = graph.defs("_min")[0]
    assert [u.column for g in graph.refs(_min) for u in g.uses] == [9, 17]


JS = b"""const { Router } = require("./router");

class App extends Router {
  constructor() {
    super();
    this.engine = new Engine();
  }
  render() {
    this.engine.render();
    this.route();
  }
}

class Engine {
  render() {}
}
"""
JS_ROUTER = b"class Router {\n  route() {}\n}\nmodule.exports = { Router };\n"


def test_javascript_reads_values_and_class_bases():
    """No annotations: `this.engine = new Engine()` types the field, and `this.route()`
    finds Router's method through `extends`."""
    graph = build_graph({"app.js": JS, "router.js": JS_ROUTER})
    assert _bound(graph, "app.js", 9, "render") == [("app.js", "Engine.render")]
    assert _bound(graph, "app.js", 10, "route") == [("router.js", "Router.route")]


CTOR = b"""import { Db, Cache } from "./models";

export class Store {
  constructor(db: Db) {
    this.inner = db;
    this.other = new Cache();
  }
  save() {
    this.inner.save();
    this.other.save();
  }
}

export class Other {
  constructor(db: Cache) {
    this.inner = db;
  }
  use(shape: Shape, plain: Plain) {
    this.inner.save();
    shape.area();
    plain.save();
  }
}

export interface Shape {
  area(): number;
}
export const Shape = 1;
export interface Plain {}
export class Square {
  area(): number { return 4; }
}
"""


def test_typescript_constructor_assigned_properties_take_the_assigned_values_types():
    """`this.inner = db` in a constructor (no definition of its own in the tags): the
    property has the parameter's declared type; `this.other = new Cache()` Cache."""
    graph = build_graph({"models.ts": MODELS, "store.ts": CTOR})
    assert _bound(graph, "store.ts", 9, "save") == DB_SAVE
    assert _bound(graph, "store.ts", 10, "save") == CACHE_SAVE
    # each constructor's parameters are its own, though both are named db
    assert _bound(graph, "store.ts", 19, "save") == CACHE_SAVE


def test_a_type_name_means_its_type_and_a_member_the_type_does_not_show_binds_by_name():
    """`Shape` is an interface and a constant: as a parameter's type it is the interface;
    Plain declares no `save` (a member the graph cannot see, e.g. of a generic's instance):
    the use binds by name as if the type were unknown."""
    graph = build_graph({"models.ts": MODELS, "store.ts": CTOR})
    assert _bound(graph, "store.ts", 20, "area") == [("store.ts", "Shape.area")]
    assert _bound(graph, "store.ts", 21, "save") == [("store.ts", "Store.save")]


AWAIT = b"""import * as ext from "outside-package";
import { make } from "./use";

export async function load() {
  const r = await ext.fetch();
  r.save();
  const mine = await make();
  mine.save();
}
"""


def test_what_an_outside_promise_gives_is_outside_and_a_workspace_one_is_unknown():
    graph = build_graph({"models.ts": MODELS, "use.ts": USE, "load.ts": AWAIT})
    assert _bound(graph, "load.ts", 6, "save") == []
    assert _bound(graph, "load.ts", 8, "save") == sorted(DB_SAVE + CACHE_SAVE)


CALLBACK = b"""import { Db, Cache } from "./models";

export type Handler<T extends Db = Db> = (item: T, other: Cache) => void;
export interface Mapper {
  (row: Cache): void;
}

export const handle: Handler = (it, o) => {
  it.save();
  o.save();
};
export const map: Mapper = function (r) {
  r.save();
};
"""


def test_a_callback_declared_as_a_function_type_takes_its_parameters_types():
    """`const handle: Handler = (it, o) => ...`: the parameters have the types of the
    function type's (a type parameter's constraint for T), or of an interface's call
    signature, whatever their names."""
    graph = build_graph({"models.ts": MODELS, "cb.ts": CALLBACK})
    assert _bound(graph, "cb.ts", 9, "save") == DB_SAVE
    assert _bound(graph, "cb.ts", 10, "save") == CACHE_SAVE
    assert _bound(graph, "cb.ts", 13, "save") == CACHE_SAVE
