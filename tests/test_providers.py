"""The open provider registry (issue 18): providers registered in process or installed as
``seek.embedders`` entry points are validated, offered and used like the built-ins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from conftest import SMALL_PROJECT

from seek.embed import provider_names
from seek.errors import SettingsError
from seek.index.indexer import index_workspace
from seek.workspace import search

PLUGIN = """
import hashlib

import numpy as np


class WordEmbedder:
    model_id = "acme/words"

    def embed(self, texts):
        out = np.zeros((len(texts), 8), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = np.frombuffer(hashlib.sha256(text.encode()).digest()[:8], np.uint8) / 255
        return out


def make(settings):
    return WordEmbedder()
"""


def test_a_registered_provider_is_a_valid_setting_and_indexes(hash_provider, make_tree,
                                                              settings_for):  # fmt: skip
    root = make_tree(SMALL_PROJECT)
    settings = settings_for(root, provider=hash_provider)
    assert hash_provider in provider_names()
    report = index_workspace(root, settings)
    assert report.embedded == len(SMALL_PROJECT)
    assert search(root, "configure_retries", settings, k=1).hits[0].path == "src/retry.py"


def test_an_unknown_provider_names_the_ones_there_are(settings_for):
    with pytest.raises(SettingsError, match=r"provider must be one of local, ollama, openai"):
        settings_for(None, provider="cloud")


def test_a_provider_installed_as_an_entry_point_is_listed_and_indexes(tmp_path, make_tree):
    """A third-party package on the path (its dist-info declares the entry point, as pip
    would install it): ``seek config`` lists it and ``seek --provider acme index`` uses it."""
    site = tmp_path / "site"
    (site / "acme_seek").mkdir(parents=True)
    (site / "acme_seek" / "__init__.py").write_text(textwrap.dedent(PLUGIN))
    info = site / "acme_seek-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-seek\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[seek.embedders]\nacme = acme_seek:make\n")
    root = make_tree(SMALL_PROJECT)
    env = {**os.environ, "PYTHONPATH": str(site), "SEEK_HOME": str(tmp_path / "home"),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}  # fmt: skip

    def seek(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "seek", *args], capture_output=True,
                              text=True, env=env, cwd=root, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout + done.stderr

    assert "# embedding providers: acme, local, ollama, openai" in seek("config")
    assert "5 files embedded" in seek("--provider", "acme", "index")
    found = seek("--provider", "acme", "search", "--json", "-k", "1", "configure_retries")
    assert json.loads(found)["hits"][0]["path"] == "src/retry.py"
