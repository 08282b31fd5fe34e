"""What an import asks of another repository (issue 45, deliver 1): seek.corpus.import_names
on the ``Import.target`` strings seek's real tree-sitter extraction stores, so a change in
their shape (seek.graph.imports) shows here."""

from __future__ import annotations

import pytest

from seek.corpus.import_names import ecosystem_of, import_keys
from seek.graph.extract import extract

SOURCES = {
    "a.py": (
        "import urllib3.util.retry\n"
        "from . import sibling\n"
        "from ..pkg import up\n"
        "import os.path as osp\n"
        "from requests.adapters import HTTPAdapter\n"
    ),
    "a.ts": (
        "import { z } from 'zod';\n"
        "import { initTRPC } from '@trpc/server/unstable-core-do-not-import';\n"
        "import './local';\n"
        "import fs from 'node:fs';\n"
        "import path from 'path';\n"
        "export * from '../up';\n"
        "const fp = require('lodash/fp');\n"
        "import conf from '#internal/conf';\n"
    ),
    "a.go": (
        'package a\n\nimport (\n\t"fmt"\n\t"net/http"\n'
        '\t"github.com/spf13/pflag/sub"\n\ty "gopkg.in/yaml.v3"\n)\n'
    ),
    "a.rs": (
        "use serde::de::Deserialize;\n"
        "use crate::x::Y;\n"
        "use std::io;\n"
        "use super::z;\n"
        "mod m;\n"
        "use tokio::{net::TcpStream, io::AsyncReadExt};\n"
        "use ::anyhow::Result;\n"
    ),
    "A.java": (
        "package p;\n"
        "import com.google.gson.Gson;\n"
        "import java.util.List;\n"
        "import javax.inject.Inject;\n"
        "import com.google.gson.reflect.*;\n"
    ),
    "A.cs": (
        "using System;\n"
        "using System.Text;\n"
        "using Newtonsoft.Json.Linq;\n"
        "using Microsoft.Extensions.Logging;\n"
    ),
    "a.rb": "require_relative 'helper'\n",
}
EXPECTED = {
    "a.py": {
        "urllib3.util.retry": ("python", ("urllib3",)),
        ".": None,
        "..pkg": None,
        "os.path": ("python", ("os",)),
        "requests.adapters": ("python", ("requests",)),
    },
    "a.ts": {
        "zod": ("npm", ("zod",)),
        "@trpc/server/unstable-core-do-not-import": ("npm", ("@trpc/server",)),
        "./local": None,
        "node:fs": None,
        "path": None,  # a Node builtin without its prefix
        "../up": None,
        "lodash/fp": ("npm", ("lodash",)),
        "#internal/conf": None,  # the package's own `imports` map
    },
    "a.go": {
        "fmt": None,
        "net/http": None,
        "github.com/spf13/pflag/sub": (
            "go", ("github.com/spf13/pflag/sub", "github.com/spf13/pflag", "github.com/spf13"),
        ),
        "gopkg.in/yaml.v3": ("go", ("gopkg.in/yaml.v3",)),
    },
    "a.rs": {
        "serde::de": ("cargo", ("serde",)),
        "crate::x": None,
        "std": None,
        "super": None,
        "mod m": None,
        "tokio::net": ("cargo", ("tokio",)),
        "tokio::io": ("cargo", ("tokio",)),
        "::anyhow": ("cargo", ("anyhow",)),
    },
    "A.java": {
        "com.google.gson.Gson": (
            "java", ("com.google.gson.Gson", "com.google.gson", "com.google", "com"),
        ),
        "java.util.List": None,
        "javax.inject.Inject": None,
        "com.google.gson.reflect": (  # the wildcard import names its package
            "java", ("com.google.gson.reflect", "com.google.gson", "com.google", "com"),
        ),
    },
    "A.cs": {
        "System": None,
        "System.Text": None,
        "Newtonsoft.Json.Linq": (
            "csharp", ("Newtonsoft.Json.Linq", "Newtonsoft.Json", "Newtonsoft"),
        ),
        "Microsoft.Extensions.Logging": (  # Microsoft.* is third-party code too
            "csharp", ("Microsoft.Extensions.Logging", "Microsoft.Extensions", "Microsoft"),
        ),
    },
    "a.rb": {"./helper": None},
}  # fmt: skip


@pytest.mark.parametrize("path", sorted(SOURCES))
def test_the_targets_seek_extracts_give_their_keys(path):
    facts = extract(path, SOURCES[path].encode())
    assert facts is not None
    found = {i.target: import_keys(facts.grammar, i.target) for i in facts.imports}
    assert found == EXPECTED[path]


@pytest.mark.parametrize(
    ("grammar", "target", "keys"),
    [
        # targets of readers seek.graph.imports does not have yet: as the language writes them
        ("kotlin", "kotlinx.coroutines.launch", ("java", ("kotlinx.coroutines.launch",
                                                          "kotlinx.coroutines", "kotlinx"))),
        ("kotlin", "kotlin.math.max", None),
        ("ruby", "rack/utils", ("ruby", ("rack",))),
        ("ruby", "json", ("ruby", ("json",))),
        ("elixir", "Plug.Conn", ("elixir", ("Plug.Conn", "Plug"))),
        ("php", "Monolog\\Handler\\StreamHandler",
         ("php", ("Monolog\\Handler\\StreamHandler", "Monolog\\Handler", "Monolog"))),
        ("typescript", "@scope", None),
        ("typescript", "https://esm.sh/zod", None),
        ("go", "./local", None),
        ("python", "", None),
        ("c", "stdio.h", None),
        ("cpp", "vector", None),
        ("markdown", "anything", None),
    ],
)  # fmt: skip
def test_keys_of_written_targets(grammar, target, keys):
    assert import_keys(grammar, target) == keys


def test_ecosystems_of_grammars():
    assert {g: ecosystem_of(g) for g in ("python", "tsx", "go", "rust", "scala", "c")} == {
        "python": "python",
        "tsx": "npm",
        "go": "go",
        "rust": "cargo",
        "scala": "java",
        "c": None,
    }
