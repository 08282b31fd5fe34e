"""The files a lazily read graph says may name something (seek.index.graph_rows.StoredFacts.
mentioning; issue 44, a one-shot `seek impact` or `seek tests --changed` on 2,000 files):
after INDEX_AFTER searches of every row's text it answers from an index of the rows'
strings, and must answer as the search does, in the rows' order."""

from __future__ import annotations

from seek.graph import FileFacts, Import
from seek.index import graph_rows
from seek.index.graph_rows import StoredFacts, encode, file_facts

SOURCES = {
    "pkg/a.py": "from pkg.b import Größe, helper\n\nclass Base:\n    pass\n\n"
    "def use(x: Größe) -> None:\n    helper(x)\n",
    "pkg/b.py": "class Größe:\n    pass\n\ndef helper(v):\n    return v\n",
    "pkg/c.py": "from pkg.a import Base\n\nclass Child(Base):\n    def run(self):\n"
    "        return self\n",
    "web/odd.js": "import { render } from './render'\nimport { quiet } from './we\"ird\\\\path'\n"
    "export function $show(node) { return render(node) }\n",
    "web/page.js": "import { $show } from './odd'\nexport const page = () => $show(1)\n",
}
NAMES = ["Größe", "helper", "Base", "Child", "run", "render", "$show", "page", "use",
         "absent", "v", "node", "quiet"]  # fmt: skip


def rows():
    out = []
    for path, text in SOURCES.items():
        encoded = file_facts(path, text.encode())
        assert encoded is not None, path
        out.append((path, *encoded))
    # a row whose strings hold a quote before the only place a name is: an import's target
    # and the names it binds (facts as extract gives them, less the uses an import also has)
    facts = FileFacts("web/late.js", "javascript",
                      imports=[Import("web/late.js", 1, './we"ird', ("quiet",))])  # fmt: skip
    out.append(("web/late.js", *encode(facts)))
    return out


def answers(facts, names):
    return [[f.path for f in facts.mentioning(group)] for group in names]


def test_the_index_answers_as_the_search_of_every_row(monkeypatch):
    asked = [[n] for n in NAMES] + [["helper", "render"], ["page", "Base", "absent"]]
    searched = answers(StoredFacts(rows()), asked)
    assert searched[NAMES.index("helper")] == ["pkg/a.py"]  # its definition is in the other column
    assert searched[NAMES.index("$show")] == ["web/odd.js", "web/page.js"]
    assert searched[NAMES.index("render")] == ["web/odd.js"]  # after a string with a quote
    assert searched[NAMES.index("quiet")] == ["web/odd.js", "web/late.js"]
    assert searched[NAMES.index("absent")] == []
    monkeypatch.setattr(graph_rows, "INDEX_AFTER", 0)
    indexed = StoredFacts(rows())
    assert answers(indexed, asked) == searched
    assert indexed._strings is not None  # the answers above came from the index


def test_the_rows_are_searched_until_many_names_were_asked(monkeypatch):
    monkeypatch.setattr(graph_rows, "INDEX_AFTER", 3)
    facts = StoredFacts(rows())
    answers(facts, [["helper"], ["Base"], ["run"]])
    assert facts._strings is None  # a lookup of a name or two reads no index
    assert answers(facts, [["$show"]]) == [["web/odd.js", "web/page.js"]]
    assert facts._strings is not None
