"""Where the benchmark data lives and which repositories the dev set names (shared by the
speed and quality harnesses)."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = REPO_ROOT.parent / "shared" / "bench" / "semble"
DEV_REPOS = SHARED / "dev-repos.txt"
REPOS_JSON = SHARED / "repos.json"
ANNOTATIONS = SHARED / "annotations"


def read_repo_list(path: Path = DEV_REPOS) -> list[str]:
    """Repository names, one a line; ``#`` starts a comment."""
    names = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line)
    return names
