"""Current code before its older copies (issue 13: current vs legacy/deprecated copies)."""

import numpy as np
import pytest
from conftest import HashEmbedder

from seek.index.indexer import index_workspace
from seek.retrieve import Searcher
from seek.retrieve.versions import OLDER_FACTOR, demote_older, named_in, older_copies


def test_older_copies_are_superseded_version_folders_and_old_named_folders():
    paths = [
        "packages/zod/src/v3/types.ts",
        "packages/zod/src/v4/core/api.ts",
        "api/v1/routes.go",  # a lone v1: just a name
        "lib/Deprecated/loader.py",
        "src/old/Shim.cs",
        "src/v4/classic/old.ts",  # a file named old is current code
        "lib/legacy/x.py",  # compat/legacy: path_penalties already demotes them
    ]
    assert older_copies(paths) == {
        "packages/zod/src/v3/types.ts": "v3",
        "lib/Deprecated/loader.py": "deprecated",
        "src/old/Shim.cs": "old",
    }


def test_a_question_that_names_the_old_folder_keeps_it():
    assert named_in("v3", "v3 compatibility error types")
    assert named_in("deprecated", "which helpers are deprecated")
    assert not named_in("v3", "how are errors formatted")
    assert not named_in("v3", "the v30 release notes")
    files = ["src/v3/errors.ts", "src/v4/errors.ts"]
    older = older_copies(files)
    p = np.array([0.6, 0.4])
    assert demote_older("how are errors formatted", files, p, older).tolist() == pytest.approx(
        [0.6 * OLDER_FACTOR, 0.4]
    )
    assert demote_older("errors in v3", files, p, older).tolist() == [0.6, 0.4]


ERRORS = (
    "export class ZodError extends Error {\n"
    "  format(issues) {\n    return issues.map((issue) => issue.message).join('; ');\n  }\n}\n"
)


def test_search_puts_the_current_copy_first(make_tree, settings_for):
    root = make_tree({"src/v3/errors.ts": ERRORS, "src/v4/errors.ts": ERRORS})
    embedder = HashEmbedder()
    index_workspace(root, settings_for(), embedder=embedder)
    searcher = Searcher.open(root, settings_for(), embedder=embedder)

    def scores(query: str, disabled: frozenset[str] = frozenset()) -> dict[str, float]:
        return {h.path: h.score for h in searcher.search(query, k=5, disabled=disabled).hits}

    question = "how are the issues of a ZodError formatted"
    on, off = scores(question), scores(question, frozenset({"older_copies"}))
    assert max(on, key=on.get) == "src/v4/errors.ts"
    assert on["src/v3/errors.ts"] == pytest.approx(OLDER_FACTOR * off["src/v3/errors.ts"], rel=1e-4)
    assert on["src/v4/errors.ts"] == pytest.approx(off["src/v4/errors.ts"], rel=1e-4)
    asked = "how are the issues of a v3 ZodError formatted"
    assert scores(asked) == pytest.approx(scores(asked, frozenset({"older_copies"})), rel=1e-4)
