"""Every default and tunable of seek in one frozen object, with where each value came from.

Sources, later wins (seek.md §3):

1. built-in defaults (the reference's §10 numbers plus seek's own),
2. ``~/.config/seek/config.toml`` (``$XDG_CONFIG_HOME`` honoured),
3. ``<workspace>/.seek.toml``, else ``[tool.seek]`` in ``<workspace>/pyproject.toml``:
   until the user trusted the file (``seek trust``), only the settings of
   :data:`seek.settings.trust.WORKSPACE_SAFE`, each of which may only tighten the value before
   it (:func:`seek.settings.trust.tighten`, issue 43); never :data:`USER_ONLY`,
4. ``SEEK_<NAME>`` environment variables (``SEEK_CHUNK_MAX_CHARS=800``),
5. command-line flags (passed in as ``overrides``).

The environment and flags are the user's own word: they replace whatever came before,
workspace limits included, and are never capped.

Keys in files use the field names below (``chunk_max_chars = 800``). Unknown keys are an
error, so a typo never silently does nothing. Lists in environment variables are
comma-separated.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import math
import os
import tomllib
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

from seek.errors import SettingsError
from seek.settings import trust
from seek.settings.providers import provider_names
from seek.settings.ranges import RANGES as _RANGES
from seek.settings.trust import USER_ONLY, WORKSPACE_SAFE
from seek.untrusted import has_lone_surrogates, printable

log = logging.getLogger(__name__)

ENV_PREFIX = "SEEK_"
BUILTIN = "default"
_warned: set[tuple[str, ...]] = set()
"""Warnings already given (:func:`_warn_once`)."""


@dataclass(frozen=True, slots=True)
class Settings:
    """The effective settings. Build with :func:`load_settings`; never mutate."""

    # -- embeddings ------------------------------------------------------------
    provider: str = "local"
    """Embedding provider: ``local`` (built in), ``ollama``, ``openai`` or an installed one
    (the ``seek.embedders`` entry points: :mod:`seek.embed`)."""
    model: str = ""
    """Embedding model. Empty = the built-in local model; for ``local`` also a folder path."""
    base_url: str = ""
    """Embedding server URL (``ollama``/``openai``); empty = the provider's usual address."""
    api_key_env: str = ""
    """Name of the environment variable that holds the API key (the key is never stored)."""
    embed_batch_size: int = 16
    embed_timeout_s: float = 60.0
    embed_concurrency: int = 4
    """Requests in flight to an embedding server (the reference's 4 files at once; 1 for a
    shared gateway)."""

    # -- chunking (a change forces a rebuild) -----------------------------------
    chunk_max_chars: int = 1000
    chunk_min_chars: int = 100
    chunk_overlap_chars: int = 100
    window_chars: int = 600
    window_overlap_chars: int = 80

    # -- scanning ---------------------------------------------------------------
    max_file_bytes: int = 524_288
    binary_sniff_bytes: int = 8_000
    ignored_globs: tuple[str, ...] = ()
    """Extra gitignore-style patterns; they win over ``.gitignore`` negations."""
    flush_every_files: int = 500
    """At most this many files' embedded rows wait before they are written and their stamps
    saved (also bounded by ``seek.index.indexer.WRITE_ROWS`` rows): what a killed run can lose."""

    # -- retrieval and prompt (used by search/context) --------------------------
    retrieve_k: int = 20
    focus_k: int = 6
    focus_files: int = 8
    rrf_k: int = 60
    rerank_top: int = 20
    rerank_threshold: float = 0.01
    """The probability a block needs to reach ``seek context`` (MODELS.md: recall against
    noise on the dev sets; 0.08 until issue 13, 0.02 with 12 candidates in its first round)."""
    near_misses: int = 3
    ranker_model: str = ""
    """The learned ranker (a JSON file); empty = the built-in one, ``off`` = fused order."""
    reranker_model: str = ""
    """The cross-encoder: a folder, or the name of a model pulled with ``seek models pull``
    (:func:`seek.rerank.hub.resolve_reranker`); empty = the built-in one when it exists."""
    snippets: int = 10
    prompt_budget_chars: int = 12_000
    widen_chars: int = 3_000
    imports_chars: int = 1_200
    merge_chars: int = 4_000

    # -- keeping current ----------------------------------------------------------
    update_on_save: bool = True
    watch_debounce_s: float = 1.5

    # -- chat ------------------------------------------------------------------
    chat_provider: str = "ollama"
    """Chat server for ``seek ask``: ``ollama`` or ``openai`` (any OpenAI-compatible)."""
    chat_model: str = ""
    chat_url: str = ""
    chat_api_key_env: str = ""
    """Name of the environment variable holding the chat server's API key."""

    # -- team context -----------------------------------------------------------
    team_url: str = ""
    team_token_env: str = ""
    team_k: int = 6
    team_timeout_s: float = 8.0

    # -- who may reach the servers (user config, env or flags only) ------------------
    serve_hosts: tuple[str, ...] = ()
    """Extra names ``seek serve`` accepts in the ``Host`` header (``name`` or ``name:port``):
    a team DNS name or a reverse proxy's; loopback names and the bound address always work."""
    serve_origins: tuple[str, ...] = ()
    """Browser origins (``https://app.example``) allowed to call ``seek serve``; only they get
    CORS headers."""
    mcp_roots: tuple[str, ...] = ()
    """Folders ``seek mcp`` may index besides the folder it started in (when the client
    declares no MCP roots)."""

    # -- where indexes live -----------------------------------------------------
    home: str = ""
    """Folder holding every index; empty = ``$SEEK_HOME`` or the OS cache dir."""

    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    """Field name -> where its value came from (``default``, a file path, ``env SEEK_X``,
    ``flag``)."""

    def __post_init__(self) -> None:
        _validate(self)

    def source_of(self, name: str) -> str:
        return self.sources.get(name, BUILTIN)

    def values(self) -> dict[str, Any]:
        """The settings as plain data (no sources)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "sources"}


def setting_names() -> list[str]:
    return [f.name for f in fields(Settings) if f.name != "sources"]


def _validate(s: Settings) -> None:
    if s.provider not in (names := provider_names()):
        raise SettingsError(
            f"provider must be one of {', '.join(names)}, not {s.provider!r} "
            f"(from {s.source_of('provider')})"
        )
    for name, allowed in _RANGES.items():
        if not allowed.holds(value := getattr(s, name)):
            raise SettingsError(
                f"{name} must be {allowed.text()}, not {_shown(value)} (from {s.source_of(name)})"
            )
    texts = {n: v if isinstance(v := getattr(s, n), tuple) else (v,) for n in _text_fields()}
    if _unsavable("\n".join("\n".join(v) for v in texts.values())):  # one scan, then which
        name = next(n for n, v in texts.items() if any(map(_unsavable, v)))
        raise SettingsError(f"{name} {_UNSAVABLE} (from {s.source_of(name)})")
    if s.window_overlap_chars >= s.window_chars:
        raise SettingsError("window_overlap_chars must be smaller than window_chars")


@functools.cache
def _text_fields() -> tuple[str, ...]:
    """The settings holding text or lists of text (cached: comparing the types each time was
    most of ``_validate``'s cost, which every ``load_settings`` pays)."""
    return tuple(n for n, k in _field_types().items() if k is str or k == tuple[str, ...])


_UNSAVABLE = "must be text without NUL characters or lone surrogates (such as \\ud800)"


def _unsavable(text: str) -> bool:
    """Text no file, URL or environment accepts: a NUL or a lone surrogate (JSON's
    ``"\\ud800"``, undecodable bytes in ``SEEK_*``); writing it to TOML would fail midway."""
    return "\x00" in text or has_lone_surrogates(text)


def _shown(value: Any) -> str:
    """``value`` for an error message: its repr, cut short (a pasted megabyte stays out)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def effective_chunk_sizes(s: Settings) -> tuple[int, int, int]:
    """(max, min, overlap) after the reference's clamps (§2.1)."""
    max_chars = s.chunk_max_chars
    return max_chars, min(s.chunk_min_chars, max_chars), min(s.chunk_overlap_chars, max_chars // 2)


@functools.cache
def _field_types() -> Mapping[str, Any]:
    """Each setting's type. Cached: the class never changes, and resolving its string
    annotations cost ~2-3 ms of every ``load_settings`` (a server loads settings for every
    request: ~20 % of a search on a small workspace)."""
    hints = typing.get_type_hints(Settings)
    return MappingProxyType({name: hints[name] for name in setting_names()})


def _coerce(name: str, value: Any, kind: Any, origin: str) -> Any:
    """Turn a TOML, JSON or environment value into the field's type, or explain why not.

    Numbers must be finite (NaN and infinities from JSON, TOML ``nan``/``inf`` or
    ``SEEK_X=nan`` are refused) and an integer setting takes only whole numbers; text must
    be savable (:func:`_unsavable`). Ranges are :func:`_validate`'s."""
    try:
        if kind is bool:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        if kind is int:
            if isinstance(value, bool):
                raise ValueError(value)
            if isinstance(value, float):  # 3.0 from JSON is 3; 3.5, NaN and inf are not
                if not value.is_integer():
                    raise ValueError(value)
                return int(value)
            if not isinstance(value, int | str):
                raise ValueError(value)
            return int(value)
        if kind is float:
            if isinstance(value, bool) or not isinstance(value, int | float | str):
                raise ValueError(value)
            number = float(value)
            if not math.isfinite(number):
                raise SettingsError(f"{name} in {origin} must be a finite number, not {value!r}")
            return number
        if kind == tuple[str, ...]:
            if isinstance(value, str):
                items = tuple(part.strip() for part in value.split(",") if part.strip())
            elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
                items = tuple(value)
            else:
                raise ValueError(value)
            if any(map(_unsavable, items)):
                raise SettingsError(f"{name} in {origin} {_UNSAVABLE}")
            return items
        if kind is str:
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                raise ValueError(value)
            if isinstance(value, str) and _unsavable(value):
                raise SettingsError(f"{name} in {origin} {_UNSAVABLE}")
            return str(value)
    except (TypeError, ValueError, OverflowError):
        pass
    type_name = {tuple[str, ...]: "a list of strings", int: "an integer", float: "a number",
                 bool: "true or false", str: "a string"}.get(kind, str(kind))  # fmt: skip
    raise SettingsError(f"{name} in {origin} must be {type_name}, not {_shown(value)}")


def checked(values: Mapping[str, Any], origin: str) -> dict[str, Any]:
    """``values`` in their settings' types, validated as :func:`load_settings` would (types,
    finite numbers, ranges, savable text) before anyone writes them (the page's settings
    form, issue 27); a :class:`SettingsError` names the first bad one and ``origin``."""
    kinds = _field_types()
    coerced = {}
    for name, value in values.items():
        if name not in kinds:
            raise SettingsError(f"unknown setting {name!r} in {origin}")
        coerced[name] = _coerce(name, value, kinds[name], origin)
    Settings(**coerced, sources=dict.fromkeys(coerced, origin))
    return coerced


def _apply(
    values: dict[str, Any], sources: dict[str, str], data: Mapping[str, Any], origin: str
) -> None:
    """Fold the user's own file in."""
    kinds = _field_types()
    for key, raw in data.items():
        name = key.replace("-", "_")
        if name not in kinds:
            raise SettingsError(f"unknown setting {key!r} in {origin}")
        values[name] = _coerce(name, raw, kinds[name], origin)
        sources[name] = origin


@functools.cache
def _defaults() -> Mapping[str, Any]:
    return MappingProxyType({f.name: f.default for f in fields(Settings) if f.name != "sources"})


def _apply_workspace(
    values: dict[str, Any],
    sources: dict[str, str],
    found: trust.WorkspaceConfig,
    is_trusted: typing.Callable[[], bool],
) -> tuple[list[str], list[str]]:
    """Fold a workspace's own file in (seek.md §3, issue 43): what it may set only tightens
    the user's value (:func:`seek.settings.trust.tighten`), the rest waits for trust.
    ``is_trusted`` reads the trust record, asked only when it matters. Returns the names left
    out for want of trust and those kept from widening."""
    kinds = _field_types()
    held: list[str] = []
    narrowed: list[str] = []
    origin = found.label
    for key, raw in found.data.items():
        name = key.replace("-", "_")
        if name not in kinds:
            raise SettingsError(f"unknown setting {key!r} in {origin}")
        if name in USER_ONLY:
            _warn_once(("user-only", name, origin), "%s in %s is ignored: set it in your user "
                       "config", name, printable(origin))  # fmt: skip
            continue
        if name not in WORKSPACE_SAFE:
            if is_trusted():
                values[name] = _coerce(name, raw, kinds[name], origin)
                sources[name] = origin
            else:
                held.append(name)
            continue
        ours = _coerce(name, raw, kinds[name], origin)
        if name in _RANGES and not _RANGES[name].holds(ours):  # an error, never a clamp
            raise SettingsError(f"{name} must be {_RANGES[name].text()}, not {_shown(ours)} "
                                f"(from {origin})")  # fmt: skip
        yours = values.get(name, _defaults()[name])
        applied = trust.tighten(name, ours, yours, trusted=False)
        if trust.widened(name, ours, applied) and is_trusted():
            applied = trust.tighten(name, ours, yours, trusted=True)
        if trust.widened(name, ours, applied):
            narrowed.append(name)
        if applied != yours:  # else the value, and where it came from, stay the user's
            added = trust.RULES[name] is trust.ADDED and name in sources  # both lists count
            sources[name] = f"{sources[name]} + {origin}" if added else origin
            values[name] = applied
    return held, narrowed


def _warn_once(key: tuple[str, ...], message: str, *args: object) -> None:
    """Log a warning the first time ``key`` is seen in this process (a server loads settings
    for every request; its log says each thing once)."""
    if key not in _warned:
        _warned.add(key)
        log.warning(message, *args)


def _warn_untrusted(
    found: trust.WorkspaceConfig, state: str, held: list[str], narrowed: list[str]
) -> None:
    """One warning per file content: which settings were left out or kept from widening,
    and how to apply them."""
    why = "has changed since you trusted it" if state == trust.CHANGED else "is not trusted"
    said = []
    if held:
        said.append(f"ignoring {', '.join(held)} (a workspace file needs your trust to send "
                    "code or secrets to an address, load a model or file, or write outside "
                    "the workspace)")  # fmt: skip
    if narrowed:
        said.append(f"keeping {', '.join(narrowed)} within your own values (an untrusted "
                    "workspace may only tighten what seek reads and returns)")  # fmt: skip
    _warn_once(
        ("untrusted", str(found.path), found.sha256, state),
        "%s %s: %s; review it, then run `%s %s`",
        printable(found.label), why, "; ".join(said), trust.TRUST_COMMAND,
        printable(str(found.path.parent)),
    )  # fmt: skip


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"cannot parse {path}: {exc}") from exc
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror}") from exc


def user_config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "seek" / "config.toml"


def load_settings(
    workspace: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    user_config: Path | None = None,
) -> Settings:
    """Merge every source into one :class:`Settings` (later sources win)."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}

    config_file = user_config if user_config is not None else user_config_path(env)
    if config_file.is_file():
        _apply(values, sources, _read_toml(config_file), str(config_file))

    if workspace is not None and (found := trust.workspace_config(workspace)) is not None:
        state: list[str] = []  # the trust record is read only when something needs it

        def is_trusted() -> bool:
            if not state:
                state.append(trust.state_of(found, trust.store_path(config_file)))
            return state[0] == trust.TRUSTED

        held, narrowed = _apply_workspace(values, sources, found, is_trusted)
        if held or narrowed:
            _warn_untrusted(found, state[0], held, narrowed)

    kinds = _field_types()
    for name in kinds:
        var = ENV_PREFIX + name.upper()
        if var in env:
            values[name] = _coerce(name, env[var], kinds[name], f"env {var}")
            sources[name] = f"env {var}"
    if overrides:
        for name, value in overrides.items():
            if value is None:
                continue
            if name not in kinds:
                raise SettingsError(f"unknown setting {name!r}")
            values[name] = _coerce(name, value, kinds[name], "flag")
            sources[name] = "flag"
    return Settings(**values, sources=sources)


def replace(settings: Settings, **changes: Any) -> Settings:
    """A copy with some values changed (marked as coming from flags)."""
    sources = dict(settings.sources)
    sources.update({name: "flag" for name in changes})
    return dataclasses.replace(settings, **changes, sources=sources)
