"""The page's settings form: what it shows (value and source, like ``seek config``) and how
it saves to the user config file, the one ``seek config`` reads first (issue 16).

Decision: the page writes only the user file, never a workspace's ``.seek.toml`` (that file
is shared with a team through git). When a workspace file or a ``--set`` outranks the saved
value, the answer says so instead of pretending it took effect.

Values are checked before anything is written (issue 27): :func:`check_changes` refuses a
wrong type, NaN, an out-of-range number or unsavable text with the setting's name, and
:func:`effective` keeps the form usable when the file on disk already holds a bad value
(a hand edit, an older seek), so the page can fix it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions

from seek.errors import SeekError, SettingsError
from seek.settings import Settings, checked, load_settings, user_config_path

EDITABLE = ("rerank_threshold", "snippets", "prompt_budget_chars", "ignored_globs",
            "chat_provider", "chat_model", "chat_url")  # fmt: skip
"""Saved from the page; they apply to the next question or index run."""
NEEDS_REBUILD = ("provider", "model", "chunk_max_chars", "chunk_min_chars", "chunk_overlap_chars")
"""Shown with "needs a rebuild": changing them re-embeds every file (``seek config`` edits)."""


def describe(settings: Settings) -> list[dict[str, Any]]:
    def shown(name: str) -> Any:
        value = getattr(settings, name)
        return list(value) if isinstance(value, tuple) else value

    return [{"name": n, "value": shown(n), "source": settings.source_of(n),
             "editable": n in EDITABLE, "needs_rebuild": n in NEEDS_REBUILD}
            for n in (*EDITABLE, *NEEDS_REBUILD)]  # fmt: skip


def check_changes(changes: dict[str, Any]) -> dict[str, Any]:
    """The page's changes in their settings' types, or a :class:`SettingsError` naming the
    first one that is not editable here or not valid."""
    unknown = sorted(set(changes) - set(EDITABLE))
    if unknown:
        raise SettingsError(f"these settings cannot be changed from the page: {unknown}")
    return checked(changes, "the page's changes")


def effective(workspace: Path, overrides: dict[str, object] | None) -> tuple[Settings, list[str]]:
    """The settings the form shows and notes to show with them. When only the user config
    keeps the settings from loading, the form shows them without it and says why: the form
    is where that file gets fixed."""
    try:
        return load_settings(workspace, overrides=overrides), []
    except SettingsError as exc:
        try:  # os.devnull is never a regular file: the user config is left out
            shown = load_settings(workspace, overrides=overrides, user_config=Path(os.devnull))
        except SettingsError:
            raise exc from None
        return shown, [f"{exc}; fix it here or in the file (the values below leave it out)"]


def save(changes: dict[str, Any], workspace: Path, overrides: dict[str, object]) -> list[str]:
    """Write ``changes`` (checked by :func:`check_changes`) to the user config (tomlkit keeps
    its comments and order); the whole file is checked by loading it before it replaces the
    old one. Returns notes about values another source outranks."""
    changes = check_changes(changes)
    path = user_config_path()
    try:
        doc = (
            tomlkit.parse(path.read_text(encoding="utf-8"))
            if path.is_file()
            else tomlkit.document()
        )
    except tomlkit.exceptions.TOMLKitError as exc:
        raise SettingsError(f"{path} is not valid TOML ({exc}); fix it first") from exc
    for name, value in changes.items():
        doc[name] = list(value) if isinstance(value, tuple) else value
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(tomlkit.dumps(doc), encoding="utf-8")
    try:  # another bad value in the file is refused here, with the settings module's message
        load_settings(None, user_config=tmp, env={})
    except SeekError as exc:
        tmp.unlink(missing_ok=True)
        raise SettingsError(str(exc).replace(str(tmp), str(path))) from None
    os.replace(tmp, path)
    effective = load_settings(workspace, overrides=overrides)
    return [f"{n} is saved, but {effective.source_of(n)} sets it and wins"
            for n in changes if effective.source_of(n) != str(path)]  # fmt: skip
