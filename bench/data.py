"""Where the benchmark data lives and which repositories the dev set names (shared by the
speed and quality harnesses)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_BENCH = next(
    (d / "shared" / "bench" for d in REPO_ROOT.parents if (d / "shared" / "bench").is_dir()),
    REPO_ROOT.parent / "shared" / "bench",
)
"""``../shared/bench`` of the main checkout, found from a worktree too (``/work/wt/NAME``)."""
SHARED = SHARED_BENCH / "semble"
DEV_REPOS = SHARED / "dev-repos.txt"
REPOS_JSON = SHARED / "repos.json"
ANNOTATIONS = SHARED / "annotations"
BUILTIN_MODEL = "minilm-code"
"""seek's default model (``seek.embed.local.BUILTIN_MODEL_NAME``); semble is run with it too."""


SPANS = SHARED_BENCH / "spans"
"""The hand-written dev set with line-level targets (issue 13)."""
SPANS_OWN = REPO_ROOT / "bench" / "spans-own"
"""This project's own hand-written line-level set (validation only, never fitted on)."""


@dataclass(frozen=True)
class BenchSet:
    """A benchmark folder: ``repos.json`` (name, language, url, revision, benchmark_root),
    ``annotations/<name>.json`` and, optionally, ``dev-repos.txt`` naming its default repos
    (without one, every repository of ``repos.json`` is the default)."""

    folder: Path

    @property
    def repos_json(self) -> Path:
        return self.folder / "repos.json"

    @property
    def annotations(self) -> Path:
        return self.folder / "annotations"

    @property
    def name(self) -> str:
        return self.folder.name

    def specs(self) -> dict[str, dict]:
        import json

        return {entry["name"]: entry for entry in json.loads(self.repos_json.read_text())}

    def default_names(self) -> list[str]:
        dev = self.folder / "dev-repos.txt"
        return read_repo_list(dev) if dev.is_file() else list(self.specs())


SEMBLE_SET = BenchSet(SHARED)


def builtin_model_dir() -> Path:
    """The built-in Model2Vec folder, found without importing seek (the harness's parent
    process stays light): the checkout's copy, else the installed package's."""
    folder = REPO_ROOT / "src" / "seek" / "models" / BUILTIN_MODEL
    if folder.is_dir():
        return folder
    from seek.embed.local import BUILTIN_MODELS_DIR

    return BUILTIN_MODELS_DIR / BUILTIN_MODEL


def read_repo_list(path: Path = DEV_REPOS) -> list[str]:
    """Repository names, one a line; ``#`` starts a comment."""
    names = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line)
    return names
