"""What real repositories provide (issue 45, deliver 1): the venv's installed requests,
urllib3 and idna laid out as their repositories lay them out, and npm's own bundled packages
as the packages of a workspace, read by seek.corpus.provides.read_provides."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from test_provides import indexed, provided, write

from seek.corpus.provides import Provided, read_provides


def _installed(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"{name} is not installed in this environment")
    return Path(next(iter(spec.submodule_search_locations)))


def test_real_python_packages_in_their_repositories_layouts(tmp_path):
    """requests and urllib3 keep their package under src/ (requests declares it to
    setuptools, urllib3 lets hatch find it), idna at the top with a setup.py."""
    layouts = {
        "requests": ("src/requests", "[project]\nname = \"requests\"\n[tool.setuptools]\n"
                     "package-dir = {\"\" = \"src\"}\npackages = [\"requests\"]\n"),
        "urllib3": ("src/urllib3", "[project]\nname = \"urllib3\"\n[tool.hatch.build]\n"),
        "idna": ("idna", None),
    }  # fmt: skip
    # a declared package names its manifest; one the layout shows, its __init__.py
    sources = {"requests": "pyproject.toml", "urllib3": "src/urllib3/__init__.py",
               "idna": "setup.py"}  # fmt: skip
    for name, (where, pyproject) in layouts.items():
        root = tmp_path / name
        shutil.copytree(_installed(name), root / where, ignore=shutil.ignore_patterns("*.pyc"))
        write(root, {"pyproject.toml": pyproject} if pyproject else {
            "setup.py": "from setuptools import setup, find_packages\n"
                        "setup(name='idna', packages=find_packages(exclude=['tests']))\n",
            "tests/test_idna.py": "import idna\n",
        })  # fmt: skip
        assert read_provides(root, indexed(root)) == [
            Provided("python", name, where, sources[name])
        ]


def _npm_install_folder() -> Path:
    npm = shutil.which("npm")
    folder = Path(npm).resolve().parent if npm else None
    while folder is not None and folder != folder.parent:
        manifest = folder / "package.json"
        if manifest.is_file() and json.loads(manifest.read_text()).get("name") == "npm":
            return folder
        folder = folder.parent
    pytest.skip("npm is not installed: no real npm packages to read")


def test_real_npm_packages_as_a_workspace(tmp_path):
    """npm's own bundled packages (real package.json files, with exports and conditions),
    copied as the packages of a workspace."""
    installed = _npm_install_folder()
    bundled = sorted(p for p in (installed / "node_modules").glob("*/package.json"))[:25]
    scoped = sorted((installed / "node_modules").glob("@*/*/package.json"))[:10]
    root = write(tmp_path, {"package.json": json.dumps({"name": "ws", "workspaces": ["p/*"]})})
    expected = {("npm", "ws", "")}
    for i, manifest in enumerate(bundled + scoped):
        folder = root / "p" / f"pkg{i}"
        folder.mkdir(parents=True)
        shutil.copy(manifest, folder / "package.json")
        for js in sorted(manifest.parent.glob("**/*.js"))[:3]:
            shutil.copy(js, folder / js.name)
        name = json.loads(manifest.read_text()).get("name")
        if isinstance(name, str) and name:
            expected.add(("npm", name, f"p/pkg{i}"))
    assert len(expected) > 20
    assert provided(root) == expected
