"""Every source of a setting (file, ``SEEK_*``, flag, the page's ``checked``) refuses
non-finite numbers, out-of-range numbers and unsavable text, naming the key (issue 27,
finding 4)."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from seek.errors import SettingsError
from seek.settings import Settings, checked, load_settings, setting_names


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rerank_threshold = nan\n", "rerank_threshold in .* must be a finite number, not nan"),
        ("rerank_threshold = inf\n", "rerank_threshold in .* must be a finite number, not inf"),
        ("rerank_threshold = -1.0\n", r"rerank_threshold must be >= 0 and <= 1, not -1.0"),
        ("snippets = -5\n", r"snippets must be >= 0 and <= 30, not -5 \(from .*config.toml\)"),
        ("snippets = 1e308\n", "snippets must be >= 0 and <= 30, not 1000000000"),
        ("snippets = 2.5\n", "snippets in .* must be an integer, not 2.5"),
        ("snippets = nan\n", "snippets in .* must be an integer, not nan"),
        ("prompt_budget_chars = 9223372036854775807\n", "prompt_budget_chars must be >= 0"),
        ("embed_timeout_s = 0\n", r"embed_timeout_s must be > 0 and <= 3600"),
        ("team_timeout_s = 1e400\n", "team_timeout_s in .* must be a finite number"),
        ('chat_url = "http://a\\u0000b"\n', "chat_url in .* must be text without NUL"),
        ("chat_model = true\n", "chat_model in .* must be a string, not True"),
    ],
)
def test_a_bad_value_in_a_file_is_named(tmp_path, text, message):
    user = tmp_path / "config.toml"
    user.write_text(text)
    with pytest.raises(SettingsError, match=message):
        load_settings(None, env={}, user_config=user)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SEEK_RERANK_THRESHOLD": "NaN"}, "env SEEK_RERANK_THRESHOLD must be a finite number"),
        ({"SEEK_EMBED_TIMEOUT_S": "-inf"}, "env SEEK_EMBED_TIMEOUT_S must be a finite number"),
        ({"SEEK_SNIPPETS": "1e308"}, "snippets in env SEEK_SNIPPETS must be an integer"),
        ({"SEEK_SNIPPETS": "31"}, r"snippets must be >= 0 and <= 30, not 31 \(from env"),
        ({"SEEK_CHAT_MODEL": "llama\udcff"}, "chat_model in env SEEK_CHAT_MODEL must be text"),
        ({"SEEK_IGNORED_GLOBS": "a,\udcff"}, "ignored_globs in env SEEK_IGNORED_GLOBS must"),
    ],
)
def test_a_bad_environment_value_is_named(tmp_path, env, message):
    with pytest.raises(SettingsError, match=message):
        load_settings(None, env=env, user_config=tmp_path / "none.toml")


def test_a_bad_flag_is_named(tmp_path):
    with pytest.raises(
        SettingsError, match=r"merge_chars must be >= 0 and <= 10000000, not 10+ \("
    ):
        load_settings(None, overrides={"merge_chars": 10**30}, env={},
                      user_config=tmp_path / "none.toml")  # fmt: skip
    with pytest.raises(SettingsError, match="rrf_k in flag must be an integer"):
        load_settings(None, overrides={"rrf_k": float("inf")}, env={},
                      user_config=tmp_path / "none.toml")  # fmt: skip


def test_a_long_bad_value_is_cut_short_in_the_message():
    with pytest.raises(SettingsError) as caught:
        checked({"snippets": "9" * 100_000}, "the test")
    assert len(str(caught.value)) < 200 and str(caught.value).endswith("...")


def test_checked_returns_the_values_in_their_types():
    assert checked({"snippets": 3.0, "rerank_threshold": 1, "ignored_globs": ["a/"]}, "x") == {
        "snippets": 3, "rerank_threshold": 1.0, "ignored_globs": ("a/",)}  # fmt: skip
    with pytest.raises(SettingsError, match="unknown setting 'nope' in x"):
        checked({"nope": 1}, "x")


def test_every_number_setting_has_a_range_and_its_default_is_in_it():
    """A new numeric setting cannot skip the range check (``_validate`` looks them up)."""
    from seek.settings import _RANGES

    hints = typing.get_type_hints(Settings)
    numeric = {n for n in setting_names() if hints[n] in (int, float)}
    assert numeric == set(_RANGES)
    defaults = Settings()
    for name in numeric:  # the bound itself is accepted, one step past it is not
        allowed = _RANGES[name]
        assert allowed.holds(getattr(defaults, name)), name
        kind = hints[name]
        if name != "window_overlap_chars":  # which must stay below window_chars
            dataclasses.replace(defaults, **{name: kind(allowed.high)})
        with pytest.raises(SettingsError, match=name):
            dataclasses.replace(defaults, **{name: kind(allowed.high) * 2 + 1})
