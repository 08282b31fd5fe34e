"""The multi-repository slices of the cross-repository benchmark (issue 45, deliver 4).

A slice is a JSON file in ``bench/org/slices/``: a language and repositories named by GitHub
``owner/name`` and a pinned revision (commit or tag), each with the corpus name it gets and
whether it is a *library* (a repository others import: its definitions are the ones
sampled). ``subdir`` copies one folder of a repository out as a repository of its own (a
monorepo's package); ``workspace`` names files of the monorepo's root that the type checker
needs (its tsconfig) and that no corpus repository holds.

A slice is written under ``ROOT/<slice>/``: each repository at ``ROOT/<slice>/<subdir or
name>``, so that a type checker run at ``ROOT/<slice>`` sees every repository at once and a
path it reports names its repository by its leading folders (:func:`split_path`).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

SLICES_DIR = Path(__file__).resolve().parent / "slices"


@dataclass(frozen=True)
class Repo:
    name: str
    github: str
    revision: str
    library: bool
    subdir: str = ""

    @property
    def folder(self) -> str:
        """Where the repository lies under its slice's root."""
        return self.subdir or self.name


@dataclass(frozen=True)
class Slice:
    name: str
    language: str
    repos: tuple[Repo, ...]
    workspace: dict | None = None
    note: str = ""

    def repo(self, name: str) -> Repo:
        return next(r for r in self.repos if r.name == name)

    @property
    def libraries(self) -> list[str]:
        return [r.name for r in self.repos if r.library]


def load(path: Path) -> Slice:
    data = json.loads(path.read_text())
    repos = tuple(
        Repo(r["name"], r["github"], r["revision"], bool(r.get("library")), r.get("subdir", ""))
        for r in data["repos"]
    )
    return Slice(data["name"], data["language"], repos, data.get("workspace"), data.get("note", ""))


def load_all(names: list[str] | None = None) -> list[Slice]:
    found = {p.stem: p for p in sorted(SLICES_DIR.glob("*.json"))}
    return [load(found[n]) for n in (names or list(found))]


def split_path(slice_: Slice, path: str) -> tuple[str, str] | None:
    """A path under the slice's root as (repository, path inside it), or None when no
    repository holds it (the workspace's own files)."""
    best = None
    for repo in slice_.repos:
        prefix = repo.folder + "/"
        if path.startswith(prefix) and (best is None or len(prefix) > len(best[0].folder) + 1):
            best = (repo, path[len(prefix) :])
    return (best[0].name, best[1]) if best else None


def mirror_dir(mirrors: Path, github: str) -> Path:
    """The git directory the ``fetch`` tool leaves for ``owner/name``: MIRRORS/owner+name/repo."""
    return mirrors / github.replace("/", "+") / "repo"


def _archive(git_dir: Path, revision: str, dest: Path, paths: list[str]) -> str:
    commit = subprocess.run(
        ["git", "--git-dir", str(git_dir), "rev-parse", f"{revision}^{{commit}}"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.Popen(
        ["git", "--git-dir", str(git_dir), "archive", commit, *paths], stdout=subprocess.PIPE
    )
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise RuntimeError(f"git archive {git_dir} {revision} failed")
    return commit


def materialize(slice_: Slice, root: Path, mirrors: Path) -> dict[str, str]:
    """Write the slice's trees under ``root/<slice>`` (once: a repository whose folder exists
    is kept) and return each repository's commit."""
    base = root / slice_.name
    commits = {}
    for repo in slice_.repos:
        git_dir = mirror_dir(mirrors, repo.github)
        if not git_dir.is_dir():
            raise FileNotFoundError(f"no git dir for {repo.github} at {git_dir} (fetch it)")
        target = base / repo.folder
        if target.is_dir():
            commits[repo.name] = subprocess.run(
                ["git", "--git-dir", str(git_dir), "rev-parse", f"{repo.revision}^{{commit}}"],
                capture_output=True, text=True, check=True,
            ).stdout.strip()  # fmt: skip
            continue
        if repo.subdir:
            commits[repo.name] = _archive(git_dir, repo.revision, base, [repo.subdir])
        else:
            commits[repo.name] = _archive(git_dir, repo.revision, target, [])
    if slice_.workspace:
        ws = slice_.workspace
        git_dir = mirror_dir(mirrors, ws["github"])
        if not all((base / f).exists() for f in ws["files"]):
            _archive(git_dir, ws["revision"], base, list(ws["files"]))
    return commits
