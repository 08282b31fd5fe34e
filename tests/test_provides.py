"""What a repository provides (issue 45, deliver 1): seek.corpus.provides.read_provides on
checkouts written into tmp_path for every ecosystem (monorepos too), hostile ones (links out
of the checkout, oversized and malformed manifests, names no lookup may use), (real code:
tests/test_provides_real.py). The file list is what seek's scanner
indexes, so manifests seek does not index (go.mod, *.csproj, *.gemspec) must be found
beside the indexed files."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from seek.corpus import provides as provides_module
from seek.corpus import provides_checkout
from seek.corpus.provides import read_provides
from seek.scan.walk import scan_workspace


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return root


def indexed(root: Path) -> list[str]:
    return [f.rel for f in scan_workspace(root, max_file_bytes=1 << 20).files]


def provided(root: Path, paths: list[str] | None = None) -> set[tuple[str, str, str]]:
    found = read_provides(root, indexed(root) if paths is None else paths)
    return {(p.ecosystem, p.name, p.root) for p in found}


PYTHON = {
    # a src/ layout whose pyproject declares no packages: the layout says them
    "layout/pyproject.toml": '[project]\nname = "acme-dist"\n[tool.hatch.build]\n',
    "layout/src/acme/__init__.py": "",  # empty: not indexed, still a package
    "layout/src/acme/core.py": "def f(): pass\n",
    "layout/src/acme_single.py": "X = 1\n",
    "layout/src/nsroot/part/mod.py": "X = 1\n",  # a namespace package under src/
    "layout/tests/__init__.py": "X = 1\n",
    "layout/dummyserver/__init__.py": "X = 1\n",  # beside a src/ layout: not shipped
    "layout/docs/conf.py": "X = 1\n",
    # package-dir and an explicit list of packages (a subpackage names its top one)
    "pkgdir/pyproject.toml": (
        '[project]\nname = "pkgdir-dist"\n[tool.setuptools]\npackages = ["alpha", "alpha.sub"]\n'
        'py-modules = ["solo"]\n[tool.setuptools.package-dir]\n"" = "lib"\n'
    ),
    "pkgdir/lib/alpha/__init__.py": "X = 1\n",
    "pkgdir/lib/alpha/sub/__init__.py": "X = 1\n",
    "pkgdir/lib/solo.py": "X = 1\n",
    "pkgdir/lib/undeclared/__init__.py": "X = 1\n",
    # setup.py: find_packages and py_modules, read by ast, never run
    "setuppy/setup.py": (
        "import sys\nfrom setuptools import setup, find_packages\n"
        "raise SystemExit('setup.py must never run')\n"
        "setup(name='dist-name', package_dir={'': 'src'},\n"
        "      packages=find_packages(where='src'), py_modules=['six'])\n"
    ),
    "setuppy/src/beta/__init__.py": "X = 1\n",
    "setuppy/src/six.py": "X = 1\n",
    "setuppy/src/notapkg/readme.txt": "no __init__",
    # setup.cfg
    "cfg/setup.cfg": (
        "[metadata]\nname = cfg-dist\n[options]\npackage_dir =\n    =src\npackages = find:\n"
        "[options.packages.find]\nwhere = src\n"
    ),
    "cfg/src/gamma/__init__.py": "X = 1\n",
    # poetry
    "poetry/pyproject.toml": (
        '[tool.poetry]\nname = "poetry-dist"\npackages = [{include = "delta", from = "source"}]\n'
    ),
    "poetry/source/delta/__init__.py": "X = 1\n",
    # no manifest at the top: the flat layout at the top still counts
    "toplevel/__init__.py": "X = 1\n",
    "_private/__init__.py": "X = 1\n",
    "tests/__init__.py": "X = 1\n",
    "examples/__init__.py": "X = 1\n",
    "node_modules/pkg/setup.py": "from setuptools import setup\nsetup(packages=['nm'])\n",
    "node_modules/pkg/nm/__init__.py": "X = 1\n",
}


def test_python_import_names_from_manifests_and_layouts(tmp_path):
    found = provided(write(tmp_path, PYTHON))
    assert found == {
        ("python", "acme", "layout/src/acme"),
        ("python", "acme_single", "layout/src/acme_single.py"),
        ("python", "nsroot", "layout/src/nsroot"),
        ("python", "alpha", "pkgdir/lib/alpha"),
        ("python", "solo", "pkgdir/lib/solo.py"),
        ("python", "beta", "setuppy/src/beta"),
        ("python", "six", "setuppy/src/six.py"),
        ("python", "gamma", "cfg/src/gamma"),
        ("python", "delta", "poetry/source/delta"),
        ("python", "toplevel", "toplevel"),
    }  # no distribution names, no tests/docs/_private/examples, nothing in node_modules


GO = {
    "go.mod": "// the root module\nmodule example.com/mono\n\ngo 1.22\n",
    "main.go": "package main\n",
    "internal/x/x.go": "package x\n",
    "sub/go.mod": 'module "example.com/mono/sub" // quoted\n',
    "sub/pkg/p.go": "package pkg\n",
    "_examples/rest/go.mod": "module rest-example\n",
    "_examples/rest/main.go": "package main\n",
    "testdata/go.mod": "module example.com/fixture\n",
    "testdata/f.go": "package f\n",
    "vendor/github.com/x/y/go.mod": "module github.com/x/y\n",
    "vendor/github.com/x/y/y.go": "package y\n",
}


def test_go_modules_of_a_multi_module_repository(tmp_path):
    root = write(tmp_path, GO)
    assert "go.mod" not in indexed(root)  # seek does not index it: found beside the Go files
    assert provided(root) == {
        ("go", "example.com/mono", ""),
        ("go", "example.com/mono/sub", "sub"),
    }


NPM = {
    "package.json": json.dumps(
        {"name": "mono-root", "private": True, "workspaces": ["packages/*"]}
    ),  # fmt: skip
    "packages/core/package.json": json.dumps({"name": "@acme/core", "main": "dist/index.js"}),
    "packages/core/src/index.ts": "export const a = 1;\n",
    "packages/util/package.json": json.dumps({"type": "module"}),  # a stub: no name
    "packages/util/index.js": "export const b = 2;\n",
    # a package whose own .gitignore leaves its package.json out of the index (zod does)
    "packages/hidden/.gitignore": "package.json\n",
    "packages/hidden/package.json": json.dumps({"name": "hidden-pkg"}),
    "packages/hidden/src/index.ts": "export const c = 3;\n",
    "tools/cli/package.json": json.dumps({"name": "acme-cli"}),  # outside the workspaces
    "examples/demo/package.json": json.dumps({"name": "demo-app"}),
    "examples/demo/index.js": "",
    "node_modules/left-pad/package.json": json.dumps({"name": "left-pad"}),
    "node_modules/left-pad/index.js": "",
    "test/fixtures/pkg/package.json": json.dumps({"name": "fixture-pkg"}),
}


def test_npm_packages_of_a_workspace(tmp_path):
    root = write(tmp_path, NPM)
    assert "packages/hidden/package.json" not in indexed(root)
    assert provided(root) == {
        ("npm", "mono-root", ""),
        ("npm", "@acme/core", "packages/core"),
        ("npm", "hidden-pkg", "packages/hidden"),
        ("npm", "acme-cli", "tools/cli"),
    }


CARGO = {
    "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\n',
    "crates/my-crate/Cargo.toml": '[package]\nname = "my-crate"\nversion = "0.1.0"\n',
    "crates/my-crate/src/lib.rs": "pub fn f() {}\n",
    "crates/my-crate/src/main.rs": "fn main() {}\n",
    "crates/tool/Cargo.toml": '[package]\nname = "tool"\n',
    "crates/tool/src/main.rs": "fn main() {}\n",
    "crates/custom/Cargo.toml": '[package]\nname = "custom"\n[lib]\nname = "custom_name"\n'
    'path = "source/root.rs"\n',
    "crates/custom/source/root.rs": "pub fn g() {}\n",
    "crates/empty/Cargo.toml": '[package]\nname = "empty"\n',
    "crates/empty/README.md": "no sources",
    "examples/demo/Cargo.toml": '[package]\nname = "demo"\n',
    "examples/demo/src/main.rs": "fn main() {}\n",
}


def test_cargo_crates_of_a_workspace(tmp_path):
    assert provided(write(tmp_path, CARGO)) == {
        ("cargo", "my_crate", "crates/my-crate/src/lib.rs"),
        ("cargo", "tool", "crates/tool/src/main.rs"),
        ("cargo", "custom_name", "crates/custom/source/root.rs"),
    }


JVM = {
    "lib/src/main/java/com/acme/util/Strings.java": (
        "/*\n * Copyright. This package fake.pkg is not one.\n */\n"
        "// package commented.out;\npackage com.acme.util;\n\npublic class Strings {}\n"
    ),
    "lib/src/main/java/com/acme/util/Zed.java": "package com.acme.other;\n",  # one per folder
    "lib/src/test/java/com/acme/util/StringsTest.java": "package com.acme.util.test;\n",
    "lib/src/main/kotlin/com/acme/kt/Ext.kt": (
        '@file:JvmName("Ext")\n\npackage com.acme.kt\n\nfun f() = 1\n'
    ),
    "lib/src/jvmTest/kotlin/com/acme/kt/ExtTest.kt": "package com.acme.kt.tests\n",
    "lib/src/main/scala/acme/data/Chain.scala": "package acme\npackage data\n\nobject Chain\n",
    "lib/pom.xml": (
        "<project><!-- <groupId>commented</groupId> -->\n"
        "  <parent><groupId>com.acme</groupId><artifactId>acme-parent</artifactId></parent>\n"
        "  <artifactId>acme-lib</artifactId>\n"
        "  <dependencies><dependency><groupId>junit</groupId>\n"
        "    <artifactId>junit</artifactId></dependency></dependencies>\n"
        "</project>\n"
    ),
    "gradle/settings.gradle.kts": 'rootProject.name = "acme-gradle"\ninclude(":core")\n',
    "gradle/gradle.properties": "group=com.acme.gradle\nversion=1.0\n",
    "gradle/core/build.gradle.kts": 'plugins { kotlin("jvm") }\n',
    "gradle/core/src/main/kotlin/com/acme/g/G.kt": "package com.acme.g\n",
}


def test_jvm_packages_and_maven_gradle_coordinates(tmp_path):
    assert provided(write(tmp_path, JVM)) == {
        ("java", "com.acme.util", "lib/src/main/java/com/acme/util"),
        ("java", "com.acme.kt", "lib/src/main/kotlin/com/acme/kt"),
        ("java", "acme.data", "lib/src/main/scala/acme/data"),
        ("java", "com.acme.g", "gradle/core/src/main/kotlin/com/acme/g"),
        ("maven", "com.acme:acme-lib", "lib"),
        ("maven", "com.acme.gradle:acme-gradle", "gradle"),
        ("maven", "com.acme.gradle:core", "gradle/core"),
    }


DOTNET = {
    "Src/Acme.Core/Acme.Core.csproj": (
        "<Project><PropertyGroup><PackageId>Acme.Core.Pkg</PackageId></PropertyGroup></Project>"
    ),
    "Src/Acme.Core/Thing.cs": "using System;\nnamespace Acme.Core\n{\n  class Thing {}\n}\n",
    "Src/Acme.Core/Linq/Query.cs": "namespace Acme.Core.Linq;\nclass Query {}\n",
    "Src/Acme.Core/Linq/More.cs": "namespace Acme.Extra { class More {} }\n",
    "Src/Acme.Plain/Acme.Plain.csproj": "<Project></Project>",
    "Src/Acme.Plain/P.cs": "namespace Acme.Plain { }\n",
    "Src/Acme.Core.Tests/Acme.Core.Tests.csproj": "<Project></Project>",
    "Src/Acme.Core.Tests/T.cs": "namespace Acme.Core.Tests { }\n",
}


def test_csharp_namespaces_and_nuget_ids(tmp_path):
    root = write(tmp_path, DOTNET)
    assert not any(p.endswith(".csproj") for p in indexed(root))
    assert provided(root) == {
        ("csharp", "Acme.Core", "Src/Acme.Core"),
        ("csharp", "Acme.Core.Linq", "Src/Acme.Core/Linq"),
        ("csharp", "Acme.Extra", "Src/Acme.Core/Linq"),
        ("csharp", "Acme.Plain", "Src/Acme.Plain"),
        ("nuget", "Acme.Core.Pkg", "Src/Acme.Core"),
        ("nuget", "Acme.Plain", "Src/Acme.Plain"),
    }


RUBY_ELIXIR_PHP = {
    "rack.gemspec": 'Gem::Specification.new do |spec|\n  spec.name = "rack"\nend\n',
    "lib/rack.rb": "module Rack; end\n",
    "lib/rack/utils.rb": "module Rack::Utils; end\n",
    "lib/rack_ext/more.rb": "# more\n",
    "spec/fixtures/lib/evil.rb": "",
    "sub/sub.gemspec": "Gem::Specification.new 'sub-gem', '1.0' do |s|\nend\n",
    "sub/lib/sub_gem.rb": "# sub\n",
    "plug/mix.exs": (
        "defmodule Plug.MixProject do\n  def project do\n    [app: :plug]\n  end\nend\n"
    ),
    "plug/lib/plug/conn.ex": (
        'defmodule Plug.Conn do\n  @moduledoc """\n  defmodule MyApp.Router do\n  end\n  """\n'
        "  defmodule Nested do\n  end\nend\n"
    ),
    "plug/lib/mix/tasks/plug.routes.ex": "defmodule Mix.Tasks.Plug.Routes do\nend\n",
    "php/composer.json": json.dumps(
        {
            "name": "acme/logger",
            "autoload": {
                "psr-4": {"Acme\\Logger\\": "src/", "Acme\\Util\\": ["util/", "more/"]},
                "psr-0": {"Legacy\\": "lib/"},
            },
            "autoload-dev": {"psr-4": {"Acme\\Tests\\": "tests/"}},
        }
    ),  # fmt: skip
    "php/src/Logger.php": "<?php namespace Acme\\Logger;\n",
}


def test_ruby_elixir_and_php_names(tmp_path):
    root = write(tmp_path, RUBY_ELIXIR_PHP)
    assert not any(p.endswith(".gemspec") for p in indexed(root))
    assert provided(root) == {
        ("rubygems", "rack", ""),
        ("ruby", "rack", "lib"),
        ("ruby", "rack_ext", "lib"),
        ("rubygems", "sub-gem", "sub"),
        ("ruby", "sub_gem", "sub/lib"),
        ("hex", "plug", "plug"),
        ("elixir", "Plug", "plug/lib"),
        ("composer", "acme/logger", "php"),
        ("php", "Acme\\Logger", "php/src"),
        ("php", "Acme\\Util", "php/util"),
        ("php", "Acme\\Util", "php/more"),
        ("php", "Legacy", "php/lib/Legacy"),
    }


def test_each_entry_names_the_file_that_declared_it(tmp_path):
    root = write(tmp_path, {**GO, **{f"js/{k}": v for k, v in NPM.items()}})
    found = {(p.name, p.source) for p in read_provides(root, indexed(root))}
    assert ("example.com/mono/sub", "sub/go.mod") in found
    assert ("@acme/core", "js/packages/core/package.json") in found
    listed = read_provides(root, indexed(root))
    assert listed == sorted(listed, key=lambda p: (p.ecosystem, p.name, p.root, p.source))


def test_hostile_manifests_are_refused_and_the_rest_still_read(tmp_path):
    outside = write(tmp_path / "outside", {
        "package.json": json.dumps({"name": "claimed-by-link"}),
        "go.mod": "module github.com/victim/lib\n",
        "proj/Victim.csproj": "<Project><PackageId>Victim.Pkg</PackageId></Project>",
        "proj/A.cs": "namespace Victim.Core { }\n",
    })  # fmt: skip
    root = write(tmp_path / "repo", {
        "linked/index.js": "",
        "huge/package.json": b'{"name": "huge-pkg", "pad": "' + b"x" * (5 << 20) + b'"}',
        "huge/index.js": "",
        "bad/package.json": "{not json",
        "bad/index.js": "",
        "nl/package.json": json.dumps({"name": "bad\nname"}),
        "space/Cargo.toml": '[package]\nname = "two words"\n',
        "space/src/lib.rs": "",
        "broken/pyproject.toml": "[tool.setuptools\npackages = [",
        "broken/src/okpkg/__init__.py": "",
        "ctl/composer.json": json.dumps({"name": "acme/\u0007bell"}),
        "gomod/x.go": "package x\n",
        "good/package.json": json.dumps({"name": "good-pkg"}),
    })  # fmt: skip
    (root / "linked" / "package.json").symlink_to(outside / "package.json")
    (root / "gomod" / "go.mod").symlink_to(outside / "go.mod")
    (root / "cs").symlink_to(outside / "proj", target_is_directory=True)  # a linked folder
    paths = sorted(
        str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() or p.is_symlink()
    ) + ["cs/A.cs"]  # the links and the huge file listed as if indexed: reads must refuse them
    assert {"linked/package.json", "gomod/go.mod", "huge/package.json"} <= set(paths)
    assert provided(root, paths) == {
        ("npm", "good-pkg", "good"),
        ("python", "okpkg", "broken/src/okpkg"),  # the malformed pyproject: the layout
    }


def test_paths_outside_the_checkout_are_never_read(tmp_path):
    write(tmp_path / "outside", {"go.mod": "module github.com/victim/lib\n", "x.go": ""})
    root = write(tmp_path / "repo", {"a.go": "package a\n"})
    assert provided(root, ["../outside/x.go", "/etc/passwd", "a.go"]) == set()


def test_totals_are_bounded_and_logged_once(tmp_path, monkeypatch, caplog):
    files = {f"lib/name{i:02d}.rb": "# n\n" for i in range(12)}
    files |= {f"src/p{i:02d}/A.java": f"package p{i:02d};\n" for i in range(12)}
    root = write(tmp_path, files)
    monkeypatch.setattr(provides_checkout, "MAX_OPENED", 5)
    with caplog.at_level(logging.WARNING, logger="seek.corpus.provides"):
        found = read_provides(root, indexed(root))
    assert [p.name for p in found if p.ecosystem == "java"] == [f"p{i:02d}" for i in range(5)]
    monkeypatch.setattr(provides_module, "MAX_PROVIDED", 7)
    with caplog.at_level(logging.WARNING, logger="seek.corpus.provides"):
        found = read_provides(root, indexed(root))
    assert [(p.ecosystem, p.name) for p in found] == [("java", f"p{i:02d}") for i in range(5)] + [
        ("ruby", "name00"),
        ("ruby", "name01"),
    ]
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 3, messages  # opened twice (a run each), provided once


@pytest.mark.timeout(60)
def test_pathological_manifests_are_read_in_linear_time(tmp_path):
    """Manifests read by regular expressions: unclosed blocks and comments, and long runs of
    blank lines, must not make a pattern rescan the text from every position (each would
    take hours at 1 MiB)."""
    root = write(tmp_path, {
        "pom.xml": "<project><groupId>com.acme</groupId><artifactId>ok</artifactId>"
                   + "<build><!--<dependencies>" * 36000,
        "g/build.gradle": "\n" * 900_000 + "group",
        "g/settings.gradle": 'rootProject.name = "g"\n',
        "c/Sln.csproj": "<PackageId>" + " " * 900_000,
        "c/A.cs": "\n" * 8000 + "namespace Acme.Deep;\n",
    })  # fmt: skip
    assert provided(root) == {
        ("maven", "com.acme:ok", ""),
        ("nuget", "Sln", "c"),
        ("csharp", "Acme.Deep", "c"),
    }
