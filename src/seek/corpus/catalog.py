"""A corpus's repositories and their manifests (issue 17, "Corpus: many repositories").

``corpus.json`` lists the repositories (name -> source: a folder, or a git URL cloned into
seek's cache on the indexing machine) and the model every row was embedded with;
``manifests/<repo>.json`` is each repository's :class:`seek.store.Manifest` (stamps of its
files, chunk settings, ``runOpen`` while a run may have written rows it does not describe
yet). Edits of ``corpus.json`` happen under a lock object of their own.

Whoever can write a shared bucket's ``corpus.json`` must not control this machine (issue 27,
finding 7), so every entry is checked by :func:`check_entry` each time it is read, the same
check ``seek corpus add`` makes: a name of letters, digits, ``.``, ``_`` and ``-`` (it names
the manifest, the lock and the clone folder, so no path is ever built from an unchecked
one) and a source that is a git URL (``https://``, ``http://``, ``ssh://``, ``git://``,
``git@host:path``) or an absolute folder path. A bad entry is logged with its name and
skipped; the others are used.

A folder source is a path on the machine that indexes, so :meth:`Catalog.select` honours
one only when this machine's operator vouched for it: the corpus is a folder on this
machine whose ``corpus.json`` only this user can write (whoever wrote the entry could read
the folder already), or the folder was passed to this run (``seek corpus index --folder
PATH``). Otherwise the repository is skipped with a warning saying how to index it. Git
sources are cloned into seek's cache, which holds nothing but clones.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from platformdirs import user_cache_dir

from seek.corpus.location import (
    CONFIG_OBJECT,
    CORPUS_LOCK,
    CorpusError,
    CorpusLocation,
    check_repo_name,
    shown,
)
from seek.redact import one_line
from seek.settings.programs import find_program
from seek.store.manifest import MANIFEST_VERSION, Manifest

log = logging.getLogger(__name__)

GIT_URL = re.compile(r"^(https?://|git@|ssh://|git://)")
_GIT_HOST = re.compile(r"^(?:[a-z]+://|git@)(?:[^@/]*@)?([^/:]*)")
MAX_SOURCE_CHARS = 4096


def check_source(source: object) -> str:
    """A git URL of a form git treats as a remote, or an absolute folder path."""
    if (
        not isinstance(source, str)
        or not source
        or len(source) > MAX_SOURCE_CHARS
        or any(ord(c) < 32 or ord(c) == 127 for c in source)
    ):
        raise CorpusError(f"bad source {shown(source)}: a folder path or a git URL")
    if GIT_URL.match(source):
        host = _GIT_HOST.match(source)
        if host is None or not host.group(1) or host.group(1).startswith("-"):
            raise CorpusError(f"bad git URL {shown(source)}: no host")
        return source
    if "://" in source or "::" in source or not os.path.isabs(source):
        raise CorpusError(
            f"bad source {shown(source)}: an absolute folder path or a git URL "
            "(https://, ssh://, git://, git@host:path)"
        )
    return source


def check_entry(name: object, source: object) -> RepoEntry:
    """The one check of a repository entry, for ``corpus add`` and every read."""
    return RepoEntry(check_repo_name(name), check_source(source))


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
        folder = (cache or Path(user_cache_dir("seek")) / "corpus-clones") / check_repo_name(
            self.name
        )
        git = find_program("git", (folder,))  # never one a clone holds (issue 43)
        if git is None:
            raise CorpusError(f"repository {self.name}: git is not installed (not on PATH)")
        if (folder / ".git").is_dir():
            command = [git, "-C", str(folder), "pull", "--ff-only", "--quiet"]
        else:
            folder.parent.mkdir(parents=True, exist_ok=True)
            source = check_source(self.source)
            command = [git, "clone", "--depth", "1", "--quiet", "--", source, str(folder)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=3600)
        if done.returncode:
            raise CorpusError(f"repository {self.name}: git failed: {one_line(done.stderr)}")
        return folder


class Catalog:
    """``corpus.json`` and the manifests of one corpus."""

    def __init__(self, location: CorpusLocation) -> None:
        self.location = location

    def _config(self) -> dict:
        return self.location.read_json(CONFIG_OBJECT) or {"repos": {}, "model": ""}

    def entries(self) -> tuple[dict[str, RepoEntry], list[str]]:
        """The repositories whose entries pass :func:`check_entry`, and one line for each
        that does not."""
        repos: Any = self._config().get("repos", {})
        if not isinstance(repos, dict):
            raise CorpusError(f"{self.location.uri}/{CONFIG_OBJECT}: repos is not an object")
        good: dict[str, RepoEntry] = {}
        bad: list[str] = []
        for name, source in sorted(repos.items()):
            try:
                good[name] = check_entry(name, source)
            except CorpusError as exc:
                bad.append(f"{CONFIG_OBJECT}: repository {shown(name)} skipped: {exc}")
        return good, bad

    def repos(self) -> dict[str, RepoEntry]:
        """The valid repositories (each bad entry is logged with its name and skipped)."""
        good, bad = self.entries()
        for line in bad:
            log.warning("%s", line)
        return good

    def model(self) -> str:
        return str(self._config().get("model", ""))

    def set_model(self, model_id: str) -> None:
        with self.location.lock(CORPUS_LOCK, "seek corpus"):
            config = self._config()
            config["model"] = model_id
            self.location.write_json(CONFIG_OBJECT, config)

    def add(self, source: str, name: str | None = None) -> RepoEntry:
        if not GIT_URL.match(source):
            folder = Path(source).expanduser()
            if not folder.is_dir():
                raise CorpusError(f"{source} is not a folder (nor a git URL)")
            source = str(folder.resolve())
        entry = check_entry(name or default_name(source), source)
        with self.location.lock(CORPUS_LOCK, "seek corpus add"):
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
        with self.location.lock(CORPUS_LOCK, "seek corpus remove"):
            config = self._config()
            if name not in config.get("repos", {}):
                raise CorpusError(f"the corpus has no repository {name}")
            del config["repos"][name]
            self.location.write_json(CONFIG_OBJECT, config)

    def select(
        self, names: list[str] | tuple[str, ...] | None, folders: Iterable[str | Path] = ()
    ) -> list[RepoEntry]:
        """The repositories to index (all, or ``names``), less those whose folder source
        this machine's operator did not vouch for (``folders``: the ``--folder`` paths;
        see the module docstring)."""
        repos = self.repos()
        missing = [n for n in names or () if n not in repos]
        if missing:
            raise CorpusError(f"the corpus has no repository {', '.join(missing)}")
        chosen = [repos[n] for n in names] if names else list(repos.values())
        if self._config_is_private():
            return chosen
        vouched = {os.path.realpath(Path(f).expanduser()) for f in folders}
        out = []
        for entry in chosen:
            if entry.is_git or os.path.realpath(entry.source) in vouched:
                out.append(entry)
            else:
                log.warning(
                    "repository %s skipped: its source %s is a folder of this machine, named "
                    "by %s/%s; to index it, pass `--folder %s` to `seek corpus index`",
                    entry.name, entry.source, self.location.uri, CONFIG_OBJECT, entry.source,
                )  # fmt: skip
        return out

    def _config_is_private(self) -> bool:
        """Whether ``corpus.json`` is a file of this machine that only this user can write."""
        if self.location.is_s3 or not hasattr(os, "getuid"):
            return False
        try:
            stat = os.stat(Path(self.location.uri) / CONFIG_OBJECT)
        except OSError:
            return False
        return stat.st_uid == os.getuid() and not stat.st_mode & 0o022

    # -- manifests ---------------------------------------------------------------------
    @staticmethod
    def manifest_name(repo: str) -> str:
        return f"manifests/{check_repo_name(repo)}.json"

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
