"""A corpus's repositories and their manifests (issue 17, "Corpus: many repositories").

``corpus.json`` lists the repositories (name -> source: a folder, or a git URL cloned into
seek's cache on the indexing machine) and the model every row was embedded with;
``manifests/<repo>.json`` is each repository's :class:`seek.store.Manifest` (stamps of its
files, chunk settings, ``runOpen`` while a run may have written rows it does not describe
yet). Edits of ``corpus.json`` happen under a lock object of their own.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from platformdirs import user_cache_dir

from seek.corpus.location import CONFIG_OBJECT, CorpusError, CorpusLocation
from seek.store.manifest import MANIFEST_VERSION, Manifest

REPO_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
GIT_URL = re.compile(r"^(https?://|git@|ssh://|git://)")


def check_repo_name(name: str) -> str:
    if not REPO_NAME.match(name):
        raise CorpusError(
            f"bad repository name {name!r}: letters, digits, '.', '_' and '-' only (max 128)"
        )
    return name


def default_name(source: str) -> str:
    tail = source.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    name = re.sub(r"[^A-Za-z0-9._-]", "-", tail.removesuffix(".git")).lstrip("._-")
    return name or "repo"


@dataclass(frozen=True, slots=True)
class RepoEntry:
    name: str
    source: str

    @property
    def is_git(self) -> bool:
        return bool(GIT_URL.match(self.source))

    def checkout(self, cache: Path | None = None) -> Path:
        """The folder to index: the source folder, or the git clone in the cache (cloned or
        fast-forwarded now; needs network)."""
        if not self.is_git:
            root = Path(self.source)
            if not root.is_dir():
                raise CorpusError(f"repository {self.name}: {root} is not a folder")
            return root
        folder = (cache or Path(user_cache_dir("seek")) / "corpus-clones") / self.name
        if (folder / ".git").is_dir():
            command = ["git", "-C", str(folder), "pull", "--ff-only", "--quiet"]
        else:
            folder.parent.mkdir(parents=True, exist_ok=True)
            command = ["git", "clone", "--depth", "1", "--quiet", self.source, str(folder)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=3600)
        if done.returncode:
            raise CorpusError(f"repository {self.name}: git failed: {done.stderr.strip()[:300]}")
        return folder


class Catalog:
    """``corpus.json`` and the manifests of one corpus."""

    def __init__(self, location: CorpusLocation) -> None:
        self.location = location

    def _config(self) -> dict:
        return self.location.read_json(CONFIG_OBJECT) or {"repos": {}, "model": ""}

    def repos(self) -> dict[str, RepoEntry]:
        repos = self._config().get("repos", {})
        return {name: RepoEntry(name, str(source)) for name, source in sorted(repos.items())}

    def model(self) -> str:
        return str(self._config().get("model", ""))

    def set_model(self, model_id: str) -> None:
        with self.location.lock("_corpus", "seek corpus"):
            config = self._config()
            config["model"] = model_id
            self.location.write_json(CONFIG_OBJECT, config)

    def add(self, source: str, name: str | None = None) -> RepoEntry:
        if not GIT_URL.match(source):
            folder = Path(source).expanduser()
            if not folder.is_dir():
                raise CorpusError(f"{source} is not a folder (nor a git URL)")
            source = str(folder.resolve())
        entry = RepoEntry(check_repo_name(name or default_name(source)), source)
        with self.location.lock("_corpus", "seek corpus add"):
            config = self._config()
            known = config.setdefault("repos", {})
            if known.get(entry.name, source) != source:
                raise CorpusError(
                    f"the corpus already has a repository {entry.name} ({known[entry.name]}); "
                    "choose another --name"
                )
            known[entry.name] = source
            self.location.write_json(CONFIG_OBJECT, config)
        return entry

    def remove(self, name: str) -> None:
        with self.location.lock("_corpus", "seek corpus remove"):
            config = self._config()
            if name not in config.get("repos", {}):
                raise CorpusError(f"the corpus has no repository {name}")
            del config["repos"][name]
            self.location.write_json(CONFIG_OBJECT, config)

    def select(self, names: list[str] | tuple[str, ...] | None) -> list[RepoEntry]:
        repos = self.repos()
        if not names:
            return list(repos.values())
        missing = [n for n in names if n not in repos]
        if missing:
            raise CorpusError(f"the corpus has no repository {', '.join(missing)}")
        return [repos[n] for n in names]

    # -- manifests ---------------------------------------------------------------------
    @staticmethod
    def manifest_name(repo: str) -> str:
        return f"manifests/{repo}.json"

    def load_manifest(self, repo: str) -> Manifest:
        """The repository's manifest; empty (a full index) when missing or of another
        version."""
        data = self.location.read_json(self.manifest_name(repo))
        if not data or data.get("version") != MANIFEST_VERSION:
            return Manifest()
        try:
            return Manifest.from_json(data)
        except (KeyError, TypeError, ValueError, AttributeError):
            return Manifest()

    def save_manifest(self, repo: str, manifest: Manifest) -> None:
        self.location.write_json(self.manifest_name(repo), manifest.to_json())

    def delete_manifest(self, repo: str) -> None:
        self.location.delete(self.manifest_name(repo))
