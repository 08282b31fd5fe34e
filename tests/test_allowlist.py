import pytest

from seek.scan.allowlist import EXTENSIONS, WHOLE_NAMES, is_indexable_name

INDEXED = [
    "index.ts",
    "types.d.ts",
    "app.test.tsx",
    "main.py",
    "README.md",
    "guide.rst",
    "settings.yaml",
    "schema.graphql",
    "Makefile",
    "Dockerfile",
    "LICENSE",
    ".gitignore",
    ".prettierrc",
    "config.yaml.example",
    "CMakeLists.txt",
    "README.md.bak",
    "foo.ts.txt",
]
SKIPPED = [
    "font.woff",
    "font.woff2",
    "font.ttf",
    "logo.png",
    "photo.JPG",
    "movie.mp4",
    "mod.wasm",
    "bundle.min.js",
    "bundle.js.map",
    "package-lock.json",
    "yarn.lock",
    "Cargo.lock",
    "thing.snap",
    "archive.tar.gz",
    "data.sqlite",
    "notes.pdf",
    "secrets.env",
    ".env",
    "noextension",
    ".env.example",
    "icon.svg",
    "style.min.css",
]


def test_list_sizes_match_the_reference():
    assert len(EXTENSIONS) == 137
    assert len(WHOLE_NAMES) == 31


@pytest.mark.parametrize("name", INDEXED)
def test_indexed_names(name):
    assert is_indexable_name(name)


@pytest.mark.parametrize("name", SKIPPED)
def test_skipped_names(name):
    assert not is_indexable_name(name)


@pytest.mark.parametrize(
    ("name", "indexed"),
    [
        # reference-workspace-index.md §2, rule 4: a dotfile with no further dot takes the
        # name without its leading dot as its extension ...
        (".py", True),
        (".toml", True),
        (".bashrc", False),  # "bashrc" is not an allowlisted extension
        # ... otherwise the last extension, so a leading-dot name such as `.env` has none.
        (".env", False),
        (".eslintrc.json", True),
        (".hidden.py", True),
        (".env.local", False),
    ],
)
def test_dotfiles_follow_the_references_extension_rule(name, indexed):
    assert is_indexable_name(name) is indexed
