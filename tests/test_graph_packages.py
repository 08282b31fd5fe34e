"""JS/TS imports of a workspace package by its own name (issue 44, seek.graph.packages): a
test importing `zod/v4` reaches zod's source through the `exports` of its package.json;
real tree-sitter on small constructed workspaces, built by `build_graph` and by an index run
(rows carry the package, as a Go row carries its module)."""

from __future__ import annotations

import json

import pytest

from seek.change.tests import select_tests
from seek.graph import build_graph
from seek.graph.model import FileFacts
from seek.graph.packages import read_package
from seek.index.graph_rows import _row_package, assemble, decode, encode, file_facts, read_graph

CORE = {
    "name": "@acme/core",
    "main": "./dist/index.cjs",
    "exports": {
        "./package.json": "./package.json",
        # a condition seek cannot evaluate first, then build outputs
        ".": {"@acme/source": "./src/index.ts", "types": "./dist/index.d.ts",
              "import": "./dist/index.js"},
        # only build outputs: mapped to the source under src/
        "./v2": {"types": "./dist/v2/index.d.cts", "require": "./dist/v2/index.cjs"},
        "./locales/*": {"import": "./dist/locales/*.js"},
        "./plain": "./lib/plain.js",
    },
}  # fmt: skip
WORKSPACE = {
    "package.json": json.dumps({"name": "acme-root", "private": True}),
    "packages/core/package.json": json.dumps(CORE),
    "packages/core/src/index.ts": "export function parse(s: string) { return s.trim(); }\n",
    "packages/core/src/v2/index.ts": "export function parseV2(s: string) { return s; }\n",
    "packages/core/src/locales/en.ts": "export function english() { return 'en'; }\n",
    "packages/core/src/plain.ts": "export function plain() { return 1; }\n",
    "packages/core/src/links/chain.ts": "export function chain() { return 3; }\n",
    "packages/core/dist/index.d.ts": "export declare function parse(s: string): string;\n",
    # a package without exports: main names a build output
    "packages/util/package.json": json.dumps({"name": "util", "main": "lib/index.js"}),
    "packages/util/src/index.ts": "export function helper() { return 2; }\n",
    # a test of core importing core by name, and another package importing both
    "packages/core/test/parse.test.ts": (
        "import { parse } from '@acme/core';\n"
        "import { parseV2 } from '@acme/core/v2';\n"
        "import { english } from '@acme/core/locales/en';\n"
        "import { plain } from '@acme/core/plain';\n"
        "import { helper } from 'util';\n"
        "import { nothing } from '@acme/core/missing';\n"
        "import { chain } from '@acme/core/links/chain';\n"
        "test('parses', () => { parse(' a '); });\n"
        "test('parses v2', () => { parseV2('a'); english(); plain(); helper(); });\n"
    ),
}


def imports_of(graph, path):
    return {i.target: i.files for i in graph.files[path].imports}


def test_a_bare_specifier_resolves_through_the_workspace_package_json():
    graph = build_graph({k: v.encode() for k, v in WORKSPACE.items()})
    assert imports_of(graph, "packages/core/test/parse.test.ts") == {
        "@acme/core": ("packages/core/src/index.ts",),
        "@acme/core/v2": ("packages/core/src/v2/index.ts",),
        "@acme/core/locales/en": ("packages/core/src/locales/en.ts",),
        "@acme/core/plain": ("packages/core/src/plain.ts",),
        "util": ("packages/util/src/index.ts",),
        "@acme/core/missing": (),  # not exported
        # not exported either, but a source at that path (TypeScript `paths`; issue 45)
        "@acme/core/links/chain": ("packages/core/src/links/chain.ts",),
    }


def test_a_subpath_the_exports_do_not_name_resolves_to_the_file_there():
    """A monorepo's TypeScript `paths` mapping lets a test import a package's internals by
    a subpath its `exports` do not name (trpc's tests: `@trpc/client/internals/dataLoader`);
    the file under the package (or its `src/`) answers, a subpath with no file nothing."""
    data = {k: v.encode() for k, v in WORKSPACE.items()}
    data["packages/core/src/internals/loader.ts"] = b"export function loader() { return 1; }\n"
    data["packages/app/main.ts"] = (
        b"import { loader } from '@acme/core/internals/loader';\n"
        b"import { gone } from '@acme/core/internals/gone';\n"
        b"export const value = loader();\n"
    )
    graph = build_graph(data)
    assert imports_of(graph, "packages/app/main.ts") == {
        "@acme/core/internals/loader": ("packages/core/src/internals/loader.ts",),
        "@acme/core/internals/gone": (),
    }
    (definition,) = graph.defs("loader")
    assert [(u.path, u.line) for u in graph.uses(definition)] == [
        ("packages/app/main.ts", 1),
        ("packages/app/main.ts", 3),
    ]


def test_seek_tests_reaches_the_test_importing_the_package_by_name():
    data = {k: v.encode() for k, v in WORKSPACE.items()}
    graph = build_graph(data)
    found = select_tests(graph, graph.defs("parse"), read=data.get)
    assert [(t.path, t.name) for t in found] == [("packages/core/test/parse.test.ts", "parses")]
    found = select_tests(graph, graph.defs("parseV2"), read=data.get)
    assert [t.name for t in found] == ["parses v2"]


def test_an_index_rows_package_resolves_as_build_graph_does(make_tree):
    root = make_tree(WORKSPACE)
    rows = []
    for rel in WORKSPACE:
        encoded = file_facts(rel, (root / rel).read_bytes(), root)
        if encoded is not None:
            rows.append((rel, *encoded))
    assert _row_package(dict((p, r) for p, *r in rows)["packages/core/src/index.ts"][1])[1] == (
        "@acme/core"
    )
    clean = build_graph({k: v.encode() for k, v in WORKSPACE.items()})
    assert assemble(rows).files == clean.files
    assert dict(read_graph(rows).files) == clean.files


@pytest.mark.parametrize(
    "data",
    [b"{", b"[]", b'{"name": 3}', b'{"private": true}', b'{"name": ""}', b"\xff\xfe"],
)
def test_a_package_json_without_a_name_or_not_json_declares_no_package(data):
    assert read_package("x", data) is None


def test_a_target_outside_the_package_or_its_conditions_nested_deep_is_bounded():
    deep: object = "./src/deep.ts"
    for _ in range(50):
        deep = {"import": deep}
    manifest = {"name": "p", "exports": {".": "../outside/a.js", "./deep": deep}}
    files = {
        "pkg/package.json": json.dumps(manifest).encode(),
        "outside/a.ts": b"export const a = 1;\n",
        "pkg/src/deep.ts": b"export const d = 1;\n",
        "t.ts": b"import { a } from 'p';\nimport { d } from 'p/deep';\n",
    }
    assert imports_of(build_graph(files), "t.ts") == {"p": (), "p/deep": ()}


@pytest.mark.parametrize(
    "package, bases",
    [
        (None, {}),
        (("web", "w", [(".", ["./src/a"])], []), {}),
        (None, {"p": ("A", "B")}),  # a nested key named p: not the row's package
        (("web", "w", [(".", ["./src/a"])], []), {"p": ("A", "B")}),
        (('we"ird,"p":["x', "y", [], ['"]}']), {}),  # the marker inside a string is escaped
    ],
)
def test_a_js_rows_package_is_read_without_decoding_the_row(package, bases):
    row = encode(FileFacts("web/a.ts", "typescript", bases=bases), package=package)
    assert decode("web/a.ts", row)[0].bases == {k: tuple(v) for k, v in bases.items()}
    assert _row_package(row[1]) == package
