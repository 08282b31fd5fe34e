"""Which file names are worth indexing (reference §1.4), judged on the lower-cased basename."""

from __future__ import annotations

SKIP_NAMES = frozenset(
    {
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lockb",
        "composer.lock",
        "gemfile.lock",
        "poetry.lock",
        "cargo.lock",
        "go.sum",
        "flake.lock",
        "packages.lock.json",
    }
)

SKIP_SUFFIXES = (".min.js", ".min.css", ".map", ".snap", ".lock", ".svg")

WHOLE_NAMES = frozenset(
    {
        "makefile",
        "gnumakefile",
        "dockerfile",
        "containerfile",
        "vagrantfile",
        "rakefile",
        "gemfile",
        "podfile",
        "brewfile",
        "procfile",
        "justfile",
        "cmakelists.txt",
        "build",
        "workspace",
        "readme",
        "license",
        "licence",
        "changelog",
        "authors",
        "contributing",
        "codeowners",
        "jenkinsfile",
        ".gitignore",
        ".gitattributes",
        ".editorconfig",
        ".dockerignore",
        ".npmrc",
        ".nvmrc",
        ".prettierrc",
        ".eslintrc",
        ".babelrc",
    }
)

EXTENSIONS = frozenset(
    {
        # web
        "js",
        "mjs",
        "cjs",
        "jsx",
        "ts",
        "mts",
        "cts",
        "tsx",
        "vue",
        "svelte",
        "astro",
        "html",
        "htm",
        "css",
        "scss",
        "sass",
        "less",
        "styl",
        # systems
        "c",
        "h",
        "cc",
        "cpp",
        "cxx",
        "hh",
        "hpp",
        "hxx",
        "m",
        "mm",
        "rs",
        "go",
        "zig",
        "d",
        "nim",
        "swift",
        "cu",
        "cuh",
        # JVM / .NET
        "java",
        "kt",
        "kts",
        "scala",
        "groovy",
        "gradle",
        "cs",
        "fs",
        "fsx",
        "vb",
        # scripting
        "py",
        "pyi",
        "rb",
        "php",
        "pl",
        "pm",
        "lua",
        "r",
        "jl",
        "sh",
        "bash",
        "zsh",
        "fish",
        "ps1",
        "psm1",
        "bat",
        "cmd",
        "tcl",
        "awk",
        # functional / other
        "ex",
        "exs",
        "erl",
        "hrl",
        "hs",
        "lhs",
        "ml",
        "mli",
        "clj",
        "cljs",
        "cljc",
        "edn",
        "elm",
        "dart",
        "sol",
        "v",
        "sv",
        "vhd",
        "vhdl",
        "wat",
        # data / config
        "json",
        "jsonc",
        "json5",
        "jsonl",
        "yaml",
        "yml",
        "toml",
        "ini",
        "cfg",
        "conf",
        "properties",
        "xml",
        "xaml",
        "plist",
        "csv",
        "tsv",
        "graphql",
        "gql",
        "proto",
        "thrift",
        "avsc",
        "tf",
        "tfvars",
        "hcl",
        "nix",
        "cmake",
        "mk",
        "ninja",
        "bazel",
        "bzl",
        "sql",
        "prisma",
        # docs
        "md",
        "mdx",
        "markdown",
        "rst",
        "adoc",
        "txt",
        "text",
        "org",
        "tex",
        "bib",
        # misc text
        "diff",
        "patch",
        "editorconfig",
        "gitattributes",
        "dockerignore",
        "npmrc",
        "nvmrc",
        "prettierrc",
        "eslintrc",
        "babelrc",
    }
)

WRAPPER_EXTENSIONS = frozenset({"bak", "example", "sample", "template", "dist", "orig"})


def _extension(name: str) -> str:
    """Node's ``path.extname`` without the dot, with the reference's dotfile rule."""
    if name.startswith(".") and name.count(".") == 1:
        return name[1:]  # ".eslintrc" -> "eslintrc"
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem.strip("."):
        return ""  # no dot, or a leading-dot name such as ".env"
    return ext


def is_indexable_name(basename: str) -> bool:
    """True when a file with this basename belongs in the index."""
    name = basename.lower()
    if name in SKIP_NAMES or name.endswith(SKIP_SUFFIXES):
        return False
    if name in WHOLE_NAMES:
        return True
    ext = _extension(name)
    if not ext:
        return False
    if ext in EXTENSIONS:
        return True
    if ext in WRAPPER_EXTENSIONS:
        inner = _extension(name[: -len(ext) - 1])
        return inner in EXTENSIONS
    return False
