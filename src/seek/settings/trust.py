"""Workspace trust (seek.md §3, issue 43): what a workspace's own config file may set, and the
user's record of the files they trusted.

**An untrusted workspace may only tighten.** A cloned repository's ``.seek.toml`` (or
``[tool.seek]`` in its ``pyproject.toml``) is untrusted input, so each setting it may set
without the user's say-so (:data:`WORKSPACE_SAFE`) has a side that reads less, returns less or
does less work, and the file may move it only that way from the user's own value (their
``config.toml``, else the default): :func:`tighten` applies each setting's :class:`Rule`, here
and nowhere else. ``max_file_bytes``, counts and budgets are capped at the user's value;
``ignored_globs`` adds to the user's list, never replaces it. Every other setting (anything
that sends data to an address, names an environment variable, chooses a model, a program or
a file to load, or points outside the workspace, and any setting added later) applies only
once the user ran ``seek trust``; once trusted, the file's values apply as written (the user
reviewed them), except that ``ignored_globs`` still only adds and :data:`USER_ONLY` never
comes from a workspace. The environment (``SEEK_*``) and ``--set`` are the user: they are
never capped.

``seek trust`` records the path of the one file in force (``.seek.toml`` shadows
``pyproject.toml``) and the SHA-256 of its exact content in ``trust.json`` beside the user's
``config.toml``, one file per workspace folder. An edit changes the hash, and a switch to the
other file (``.seek.toml`` deleted, bringing a never-reviewed ``[tool.seek]`` into force) is
not the file recorded: either needs trusting again (direnv's ``allow`` and mise's ``trust``
work the same way).

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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from seek.errors import SettingsError

TRUST_FILE = "trust.json"
"""The record of trusted files, in the folder of the user's ``config.toml``."""
TRUST_COMMAND = "seek trust"
CONFIG_NAMES = (".seek.toml", "pyproject.toml")
"""A workspace's settings files, the one that applies first."""
MAX_CONFIG_BYTES = 1 << 20
"""A settings file is a few lines; a bigger one (a link to a huge file) is refused unread."""
USER_ONLY = frozenset({"serve_hosts", "serve_origins", "mcp_roots"})
"""Settings that widen who may reach seek: a workspace's own file cannot set them even when
trusted (a cloned repository must not open the server to a web page)."""


class Rule(NamedTuple):
    """How a workspace's value of a setting meets the user's: the only ways it may tighten."""

    says: str
    """The rule in words (``docs/security.md``'s table and the warnings)."""
    merge: Callable[[Any, Any], Any]
    """(workspace's value, user's value) -> the value that applies."""
    narrows: bool = True
    """A result other than the workspace's value means the workspace asked for more than it
    may (a warning says so); False for a merge, where both count by design."""


AT_MOST = Rule("at most yours", min)
AT_LEAST = Rule("at least yours", max)
HALF_TO_YOURS = Rule(
    "between half of yours and yours", lambda ours, yours: min(yours, max(ours, (yours + 1) // 2))
)
"""For block sizes: smaller blocks return less, but blocks far smaller multiply the rows to
embed and store (``chunk_max_chars = 1`` made 600 times as many), so not below half."""
OFF_ONLY = Rule("may turn it off, never on", lambda ours, yours: ours and yours)
ADDED = Rule(
    "added to yours, never replacing them",
    lambda ours, yours: yours + tuple(g for g in ours if g not in yours),
    narrows=False,
)
ANY = Rule("any value in its range", lambda ours, yours: ours, narrows=False)
NARROWING = (AT_MOST, AT_LEAST, HALF_TO_YOURS)
"""The rules for numbers that keep a workspace within the user's value."""

_SAFE_GROUPS: dict[str, dict[str, Rule]] = {
    # Each reason says why a repository may set these without the user's say-so, and each
    # rule keeps it to the side that costs less.
    "how files are cut into blocks: smaller blocks and less overlap change what a block "
    "holds, never where it goes": {
        "chunk_max_chars": HALF_TO_YOURS, "window_chars": HALF_TO_YOURS,
        "chunk_min_chars": AT_MOST, "chunk_overlap_chars": AT_MOST,
        "window_overlap_chars": AT_MOST,
    },
    "which of the workspace's own files are read, and how: its .gitignore and .seekignore "
    "can already leave files out": {
        "max_file_bytes": AT_MOST, "binary_sniff_bytes": AT_MOST, "ignored_globs": ADDED,
        # fewer, larger writes; memory stays bounded by the rows per write
        "flush_every_files": AT_LEAST,
    },
    "result counts, budgets and ranker numbers: the size and order of answers, computed on "
    "this machine": {
        "retrieve_k": AT_MOST, "focus_k": AT_MOST, "focus_files": AT_MOST,
        "rerank_top": AT_MOST, "near_misses": AT_MOST, "snippets": AT_MOST,
        "prompt_budget_chars": AT_MOST, "widen_chars": AT_MOST, "imports_chars": AT_MOST,
        "merge_chars": AT_MOST,
        "rerank_threshold": AT_LEAST,  # a higher bar lets fewer blocks through
        "rrf_k": ANY,  # the fusion constant: changes the order, not how much
    },
    "how the embedding server the user chose is called (batch size, patience, requests at "
    "once), never which server or which key": {
        "embed_batch_size": AT_MOST, "embed_timeout_s": AT_MOST, "embed_concurrency": AT_MOST,
    },
    "when the index is kept current: less often, never more": {
        "update_on_save": OFF_ONLY, "watch_debounce_s": AT_LEAST,
    },
    "how much a team server is asked for and how long it is waited for; the server itself "
    "(team_url) needs trust": {"team_k": AT_MOST, "team_timeout_s": AT_MOST},
}  # fmt: skip
WORKSPACE_SAFE: Mapping[str, str] = MappingProxyType(
    {name: reason for reason, rules in _SAFE_GROUPS.items() for name in rules}
)
"""Setting -> why a workspace file may set it untrusted (within its :data:`RULES`). Not here,
so trust needed: provider, model, base_url, api_key_env (where code is sent, with which
secret); chat_* and team_url, team_token_env (where questions and code go, with which
secret); ranker_model and reranker_model (a file or model to load); home (where indexes are
written, outside the workspace); and any setting added later until it is judged and listed
here."""
RULES: Mapping[str, Rule] = MappingProxyType(
    {name: rule for rules in _SAFE_GROUPS.values() for name, rule in rules.items()}
)
"""Setting -> how an untrusted workspace's value of it meets the user's."""


def tighten(name: str, ours: Any, yours: Any, trusted: bool) -> Any:
    """The value of ``name`` that applies when a workspace file sets ``ours`` and the user's
    own value (config file, else default) is ``yours``: the one place the rule is enforced.
    Trusted, the file's value applies as written, but a list of ignores still only adds."""
    rule = RULES[name]
    if trusted and rule is not ADDED:
        return ours
    return rule.merge(ours, yours)


def widened(name: str, ours: Any, applied: Any) -> bool:
    """Whether the workspace asked for more than :func:`tighten` let it have."""
    return RULES[name].narrows and applied != ours


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
    return [p for p in (root / name for name in CONFIG_NAMES) if p.is_file()]


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


def _folder_keys(key: str) -> list[str]:
    """The record's keys for the settings files of the folder of ``key`` (a file's key)."""
    folder = os.path.dirname(key)
    return [os.path.join(folder, name) for name in CONFIG_NAMES]


def trust(store: Path, config: WorkspaceConfig) -> None:
    """Record ``config``'s exact content as the trusted file of its folder (replacing an
    older hash of it, and the other settings file of that folder: one file per workspace, so
    a switch to the other one is never trusted in advance, issue 43 finding 3)."""
    entries = read_store(store, strict=True)
    key = config.key()
    for other in _folder_keys(key):
        entries.pop(other, None)
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
"""A file's trust state; ``changed``: trusted once, edited since, or not the file the user
trusted in its folder (needs trusting again)."""


def trusted_entry(config: WorkspaceConfig, entries: Mapping[str, Trusted]) -> Trusted | None:
    """The record's entry for ``config``'s folder: the file trusted there, whichever it is.
    A record written before issue 43 may name both files of a folder (``seek trust`` then
    recorded every settings file, though only ``.seek.toml`` was in force and shown for
    review): the ``.seek.toml`` entry is the one that was reviewed."""
    for key in _folder_keys(config.key()):
        if key in entries:
            return entries[key]
    return None


def state_of(config: WorkspaceConfig, store: Path) -> str:
    entry = trusted_entry(config, read_store(store))
    if entry is None:
        return UNTRUSTED
    return TRUSTED if (entry.path, entry.sha256) == (config.key(), config.sha256) else CHANGED


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
