"""The exception tree drawn in errors.py and ``seek.__all__`` are complete and true
(design "A documented exception tree, checked")."""

from __future__ import annotations

import inspect
import re
import tomllib
from pathlib import Path

import seek
from seek import errors

ROOT = Path(__file__).resolve().parents[1]


def error_classes() -> dict[str, type]:
    return {
        name: obj
        for name, obj in vars(errors).items()
        if inspect.isclass(obj) and issubclass(obj, Exception) and obj.__module__ == errors.__name__
    }


def drawn_tree() -> dict[str, str]:
    """Class -> parent as drawn in the docstring (indentation gives the parent)."""
    parents: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in errors.__doc__.splitlines():
        match = re.match(r"^([│ ]*(?:[├└]── )?)([A-Z][A-Za-z]+(?:Error|Unavailable))\b", line)
        if not match:
            continue
        depth = len(match.group(1))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parents[match.group(2)] = stack[-1][1] if stack else ""
        stack.append((depth, match.group(2)))
    return parents


def test_the_drawn_tree_is_the_real_tree():
    classes = error_classes()
    drawn = drawn_tree()
    assert set(drawn) == set(classes)
    for name, parent in drawn.items():
        real = classes[name].__bases__[0].__name__
        assert (parent or "Exception") == real, name


def test_every_error_is_a_seek_error_and_exported():
    for name, cls in error_classes().items():
        assert issubclass(cls, errors.SeekError)
        assert getattr(seek, name) is cls
        assert name in seek.__all__


def test_all_is_sorted_and_names_only_real_members():
    assert seek.__all__ == sorted(seek.__all__)
    for name in seek.__all__:
        assert hasattr(seek, name), name


def test_one_version_source():
    from seek._version import __version__

    assert seek.__version__ == __version__
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    written = [
        path.relative_to(ROOT)
        for path in (ROOT / "src").rglob("*.py")
        if re.search(r"__version__\s*=", path.read_text())
    ]
    assert written == [Path("src/seek/_version.py")]
