import dataclasses

import pytest

from seek.errors import SettingsError
from seek.settings import Settings, effective_chunk_sizes, load_settings


def test_defaults_match_the_reference():
    s = Settings()
    assert (s.chunk_max_chars, s.chunk_min_chars, s.chunk_overlap_chars) == (1000, 100, 100)
    assert (s.window_chars, s.window_overlap_chars) == (600, 80)
    assert s.max_file_bytes == 524_288 and s.binary_sniff_bytes == 8_000
    assert (s.embed_batch_size, s.embed_timeout_s, s.flush_every_files) == (16, 60.0, 500)
    assert (s.rerank_threshold, s.snippets, s.prompt_budget_chars) == (0.01, 10, 12_000)
    assert (s.rrf_k, s.rerank_top, s.retrieve_k, s.focus_k) == (60, 20, 20, 6)
    assert s.provider == "local" and s.ignored_globs == () and s.update_on_save is True


def test_settings_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Settings().chunk_max_chars = 5  # type: ignore[misc]


def test_sources_later_wins(tmp_path):
    user = tmp_path / "config.toml"
    user.write_text('chunk_max_chars = 800\nsnippets = 5\nignored_globs = ["a/"]\n')
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "pyproject.toml").write_text("[tool.seek]\nsnippets = 4\nrrf_k = 30\n")
    env = {"SEEK_RRF_K": "40", "SEEK_RERANK_THRESHOLD": "0.2", "SEEK_UPDATE_ON_SAVE": "no"}
    s = load_settings(ws, overrides={"rerank_threshold": "0.3"}, env=env, user_config=user)
    assert s.chunk_max_chars == 800 and s.source_of("chunk_max_chars") == str(user)
    assert s.ignored_globs == ("a/",)
    # A workspace may tighten (4 under the user's 5; issue 43: never above it).
    assert s.snippets == 4 and s.source_of("snippets").endswith("pyproject.toml [tool.seek]")
    assert s.rrf_k == 40 and s.source_of("rrf_k") == "env SEEK_RRF_K"
    assert s.rerank_threshold == 0.3 and s.source_of("rerank_threshold") == "flag"
    assert s.update_on_save is False
    assert s.source_of("window_chars") == "default"


def test_seek_toml_wins_over_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.seek]\nsnippets = 4\n")
    (tmp_path / ".seek.toml").write_text("snippets = 5\n")
    s = load_settings(tmp_path, env={}, user_config=tmp_path / "none.toml")
    assert s.snippets == 5


def test_env_list_is_comma_separated(tmp_path):
    s = load_settings(env={"SEEK_IGNORED_GLOBS": "a/, *.gen.py"}, user_config=tmp_path / "x")
    assert s.ignored_globs == ("a/", "*.gen.py")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("chunk_max_chars = 'big'\n", "chunk_max_chars"),
        ("no_such_setting = 1\n", "unknown setting 'no_such_setting'"),
        ("chunk_max_chars = 0\n", "must be > 0"),
        ("chunk_max_chars = [\n", "cannot parse"),
    ],
)
def test_bad_values_are_clear_errors(tmp_path, text, message):
    (tmp_path / ".seek.toml").write_text(text)
    with pytest.raises(SettingsError, match=message):
        load_settings(tmp_path, env={}, user_config=tmp_path / "none.toml")


def test_bad_provider_is_a_clear_error(tmp_path):
    # provider needs trust in a workspace file (tests/test_trust.py): the user's file sets it
    (tmp_path / "config.toml").write_text("provider = 'cloud'\n")
    with pytest.raises(SettingsError, match="provider must be"):
        load_settings(tmp_path, env={}, user_config=tmp_path / "config.toml")


def test_chunk_clamps():
    s = Settings(chunk_max_chars=100, chunk_min_chars=500, chunk_overlap_chars=90)
    assert effective_chunk_sizes(s) == (100, 100, 50)


WORKSPACE_FILES = {
    ".seek.toml": lambda body: body,
    "pyproject.toml": lambda body: '[project]\nname = "cloned"\n\n[tool.seek]\n' + body,
}


@pytest.mark.parametrize("file_name", sorted(WORKSPACE_FILES))
def test_a_workspace_file_cannot_set_who_may_reach_seek(tmp_path, caplog, file_name):
    """``[tool.seek]`` in ``pyproject.toml`` is a workspace file like ``.seek.toml``
    (seek.md §3): a cloned repository's ``serve_hosts``, ``serve_origins`` and ``mcp_roots``
    are ignored with a warning naming them, the user's own values stand, and the file's other
    settings still count (issue 27). Mutation this pins (settings.py): the pyproject branch's
    ``workspace_file=True`` dropped (a repository's pyproject opened the server)."""
    user = tmp_path / "config.toml"
    user.write_text('serve_hosts = ["seek.team.example"]\n')
    ws = tmp_path / "ws"
    ws.mkdir()
    body = ('serve_hosts = ["evil.example"]\nserve_origins = ["http://evil.example"]\n'
            'mcp_roots = ["/"]\nchunk_max_chars = 800\n')  # fmt: skip
    (ws / file_name).write_text(WORKSPACE_FILES[file_name](body))
    with caplog.at_level("WARNING", logger="seek.settings"):
        s = load_settings(ws, env={}, user_config=user)
    assert s.serve_hosts == ("seek.team.example",) and s.source_of("serve_hosts") == str(user)
    assert s.serve_origins == () and s.mcp_roots == ()
    assert s.source_of("serve_origins") == s.source_of("mcp_roots") == "default"
    assert s.chunk_max_chars == 800 and file_name in s.source_of("chunk_max_chars")
    warned = " ".join(r.getMessage() for r in caplog.records if r.levelname == "WARNING")
    for name in ("serve_hosts", "serve_origins", "mcp_roots"):
        assert name in warned
    assert file_name in warned and "ignored" in warned
