"""Workspace trust (seek.md §3): which settings a workspace's own config file may set, and
the user's record of the files they trusted.

A cloned repository's ``.seek.toml`` (or ``[tool.seek]`` in its ``pyproject.toml``) is
untrusted input. From it only the settings in :data:`WORKSPACE_SAFE` apply; every other
one (anything that sends data to an address, names an environment variable, chooses a model
or a file to load, or points outside the workspace, and any setting added later) applies
only once the user ran ``seek trust``, which records the file's path and the SHA-256 of its
exact content in ``trust.json`` beside the user's ``config.toml``. An edit changes the hash,
so the file needs trusting again (direnv's ``allow`` and mise's ``trust`` work the same way).

Nothing but ``seek trust`` writes the record: servers, the MCP server and the watcher only
read it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from seek.errors import SettingsError

TRUST_FILE = "trust.json"
"""The record of trusted files, in the folder of the user's ``config.toml``."""
TRUST_COMMAND = "seek trust"
MAX_CONFIG_BYTES = 1 << 20
"""A settings file is a few lines; a bigger one (a link to a huge file) is refused unread."""
USER_ONLY = frozenset({"serve_hosts", "serve_origins", "mcp_roots"})
"""Settings that widen who may reach seek: a workspace's own file cannot set them even when
trusted (a cloned repository must not open the server to a web page)."""

_SAFE_GROUPS: dict[str, tuple[str, ...]] = {
    # Each reason says why a repository may set these without the user's say-so.
    "how files are cut into blocks: changes what a block holds, never where it goes": (
        "chunk_max_chars", "chunk_min_chars", "chunk_overlap_chars", "window_chars",
        "window_overlap_chars",
    ),
    "which of the workspace's own files are read: its .gitignore and .seekignore can "
    "already say as much": (
        "max_file_bytes", "binary_sniff_bytes", "ignored_globs", "flush_every_files",
    ),
    "result counts, budgets and ranker numbers: the size and order of answers, computed on "
    "this machine": (
        "retrieve_k", "focus_k", "focus_files", "rrf_k", "rerank_top", "rerank_threshold",
        "near_misses", "snippets", "prompt_budget_chars", "widen_chars", "imports_chars",
        "merge_chars",
    ),
    "how the embedding server the user chose is called (batch size, patience, requests at "
    "once), never which server or which key": (
        "embed_batch_size", "embed_timeout_s", "embed_concurrency",
    ),
    "when the index is kept current": ("update_on_save", "watch_debounce_s"),
    "how much a team server is asked for and how long it is waited for; the server itself "
    "(team_url) needs trust": ("team_k", "team_timeout_s"),
}  # fmt: skip
WORKSPACE_SAFE: Mapping[str, str] = MappingProxyType(
    {name: reason for reason, names in _SAFE_GROUPS.items() for name in names}
)
"""Setting -> why a workspace file may set it untrusted. Not here, so trust needed: provider,
model, base_url, api_key_env (where code is sent, with which secret); chat_* and team_url,
team_token_env (where questions and code go, with which secret); ranker_model and
reranker_model (a file or model to load); home (where indexes are written, outside the
workspace); and any setting added later until it is judged and listed here."""


@dataclass(frozen=True, slots=True)
class WorkspaceConfig:
    """A workspace's own settings file, read once: the hash and the settings come from the
    same bytes, so what was trusted is what applies."""

    path: Path
    """The file, absolute (not resolved: a server loads settings for every request)."""
    label: str
    """Where its settings come from, for ``seek config`` (``.../pyproject.toml [tool.seek]``)."""
    sha256: str
    data: Mapping[str, Any]
    """Its seek settings as written (names not yet checked)."""

    def key(self) -> str:
        """The file's entry in the trust record: its real folder, so every path to the
        workspace (a link, ``..``) names the same entry."""
        return str(self.path.parent.resolve() / self.path.name)

    def needs_trust(self) -> list[str]:
        """The settings it sets that apply only once it is trusted (file order)."""
        return [
            key
            for key in self.data
            if (name := key.replace("-", "_")) not in WORKSPACE_SAFE and name not in USER_ONLY
        ]


def _parse(path: Path) -> tuple[str, dict[str, Any]]:
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror}") from exc
    if len(raw) > MAX_CONFIG_BYTES:
        raise SettingsError(f"{path} is over {MAX_CONFIG_BYTES >> 20} MiB: not a settings file")
    try:
        return hashlib.sha256(raw).hexdigest(), tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"cannot parse {path}: {exc}") from exc


def config_files(workspace: Path) -> list[Path]:
    """The workspace's settings files that exist, the one that applies first."""
    root = workspace.absolute()
    return [p for p in (root / ".seek.toml", root / "pyproject.toml") if p.is_file()]


def read_config(path: Path) -> WorkspaceConfig | None:
    """``path`` (a ``.seek.toml``, or a ``pyproject.toml``: its ``[tool.seek]`` table) read
    for its settings; None for a ``pyproject.toml`` without that table."""
    path = path.absolute()
    digest, data = _parse(path)
    if path.name != "pyproject.toml":
        return WorkspaceConfig(path, str(path), digest, data)
    tool = data.get("tool")
    section = tool.get("seek") if isinstance(tool, dict) else None
    if not isinstance(section, dict):
        return None
    return WorkspaceConfig(path, f"{path} [tool.seek]", digest, section)


def workspace_config(workspace: Path) -> WorkspaceConfig | None:
    """The settings file seek reads in ``workspace``: ``.seek.toml``, else ``[tool.seek]``
    in ``pyproject.toml``; None when there is neither."""
    for path in config_files(workspace):
        if path.name == ".seek.toml":
            return read_config(path)
        if (found := read_config(path)) is not None:
            return found
    return None


def store_path(user_config: Path) -> Path:
    """The trust record beside the user's ``config.toml``."""
    return user_config.parent / TRUST_FILE


@dataclass(frozen=True, slots=True)
class Trusted:
    path: str
    sha256: str
    trusted_at: float
    """Seconds since the epoch."""


def read_store(store: Path, *, strict: bool = False) -> dict[str, Trusted]:
    """The trusted files by path. A missing record trusts nothing; so does a damaged one
    (fail closed), unless ``strict`` (``seek trust`` must not write over it)."""
    try:
        data = json.loads(store.read_text(encoding="utf-8"))
        entries = data["trusted"]
        return {
            e["path"]: Trusted(str(e["path"]), str(e["sha256"]), float(e.get("trusted_at", 0)))
            for e in entries
        }
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        if strict:
            raise SettingsError(
                f"cannot read {store} ({type(exc).__name__}); fix or delete it, then run "
                f"`{TRUST_COMMAND}` again"
            ) from exc
        return {}


def _write_store(store: Path, entries: dict[str, Trusted]) -> None:
    """Replace the record atomically (a crash leaves the old one or the new one)."""
    store.parent.mkdir(parents=True, exist_ok=True)
    body = {
        "version": 1,
        "trusted": [
            {"path": e.path, "sha256": e.sha256, "trusted_at": e.trusted_at}
            for e in sorted(entries.values(), key=lambda e: e.path)
        ],
    }
    fd, tmp = tempfile.mkstemp(prefix=".trust-", suffix=".tmp", dir=store.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(body, fh, indent=2)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, store)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def trust(store: Path, config: WorkspaceConfig) -> None:
    """Record ``config``'s exact content as trusted (replacing an older hash of it)."""
    entries = read_store(store, strict=True)
    key = config.key()
    entries[key] = Trusted(key, config.sha256, time.time())
    _write_store(store, entries)


def revoke(store: Path, paths: list[Path]) -> list[str]:
    """Forget ``paths`` (keyed as :meth:`WorkspaceConfig.key`); returns those that were
    trusted."""
    entries = read_store(store, strict=True)
    keys = [str(p.absolute().parent.resolve() / p.name) for p in paths]
    gone = [key for key in keys if entries.pop(key, None) is not None]
    if gone:
        _write_store(store, entries)
    return gone


TRUSTED, UNTRUSTED, CHANGED = "trusted", "untrusted", "changed"
"""A file's trust state; ``changed``: trusted once, edited since (needs trusting again)."""


def state_of(config: WorkspaceConfig, store: Path) -> str:
    entry = read_store(store).get(config.key())
    if entry is None:
        return UNTRUSTED
    return TRUSTED if entry.sha256 == config.sha256 else CHANGED


def describe(workspace: Path, user_config: Path) -> dict[str, Any] | None:
    """The trust state of ``workspace``'s settings file, as ``seek config`` and ``seek
    status`` show it (None: the workspace has none): ``path``, ``sha256``, ``state``,
    ``needs_trust`` (what it sets that needs trust) and ``ignored`` (those left out now)."""
    if not workspace.is_dir() or (config := workspace_config(workspace)) is None:
        return None
    store = store_path(user_config)
    state = state_of(config, store)
    held = config.needs_trust()
    return {
        "path": config.key(),
        "sha256": config.sha256,
        "state": state,
        "needs_trust": held,
        "ignored": held if state != TRUSTED else [],
    }


def describe_line(info: dict[str, Any] | None) -> str:
    """:func:`describe` as one line of text output."""
    from seek.untrusted import printable

    if info is None:
        return "no .seek.toml or [tool.seek] in the workspace"
    head = f"{printable(info['path'])}: {info['state']}"
    if not info["needs_trust"]:
        return f"{head} (every setting it sets is safe without trust)"
    if info["state"] == TRUSTED:
        return f"{head} (applies {', '.join(info['needs_trust'])})"
    then = f"review it, then `{TRUST_COMMAND} {printable(str(Path(info['path']).parent))}`"
    return f"{head}, ignoring {', '.join(info['ignored'])} ({then})"
