"""The synthetic corpora of bench/org/scale.py (issue 45, deliver 5): a filler repository's
copy of real facts imports nothing of the library, and a plan names each repository once,
each providing a name of its own. Real tree-sitter facts, the corpus's own link rows."""

from __future__ import annotations

import orjson

from bench.org.scale_synth import (
    NAME,
    PROVIDED,
    VENDORED,
    Plan,
    Template,
    renamed_links,
    repos,
    vendored_facts,
)
from seek.corpus.links import link_rows
from seek.index.graph_rows import file_facts

SOURCE = b"""import os
import urllib3
import urllib3x
from urllib3.util.retry import Retry
from . import urllib3_compat


def make():
    return Retry(total=urllib3.util.Timeout(1))
"""


def imported(facts: str) -> list[str]:
    return [imp[1] for imp in orjson.loads(facts)["i"]]


def test_a_vendored_copy_imports_nothing_of_the_library():
    definitions, facts = file_facts("pkg/client.py", SOURCE)
    before = imported(facts)
    assert "urllib3" in before and "urllib3.util.retry" in before
    after = imported(vendored_facts(facts))
    renamed = {"urllib3": VENDORED, "urllib3.util.retry": f"{VENDORED}.util.retry"}
    assert after == [renamed.get(target, target) for target in before]
    names = {row[3] for row in link_rows("r", [("pkg/client.py", definitions, facts)], [])}
    vendored = {
        row[3]
        for row in link_rows("r", [("pkg/client.py", definitions, vendored_facts(facts))], [])
    }
    assert "urllib3" in names and "urllib3" not in vendored and VENDORED in vendored
    assert "urllib3x" in vendored  # another name that starts alike is left alone


def test_a_plan_names_each_repository_once_each_providing_its_own_name():
    plan = Plan(dependents=3, fillers=6)
    planned = list(repos(plan))
    names = [name for name, _, _ in planned]
    assert len(names) == len(set(names)) == 1 + 3 + 6
    assert planned[0] == ("urllib3", "urllib3", "urllib3")
    assert [kind for _, kind, _ in planned[1:4]] == ["requests"] * 3
    assert {kind for _, kind, _ in planned[4:]} == {
        "fill-urllib3",
        "fill-requests",
        "fill-idna",
        "fill-charset_normalizer",
    }
    provided = [p for _, _, p in planned]
    assert len(set(provided)) == len(provided)
    rows = [(NAME, "provides", "python", PROVIDED, "p.py", "pkg"),
            (NAME, "imports", "python", "urllib3", "p.py", "")]  # fmt: skip
    template = Template(None, [], rows, {})
    assert renamed_links(template, "requests-0001", "requests_0001") == [
        ("requests-0001", "provides", "python", "requests_0001", "p.py", "pkg"),
        ("requests-0001", "imports", "python", "urllib3", "p.py", ""),
    ]
