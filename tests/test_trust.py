"""Workspace trust (issue 27 finding 1; seek.md §3; docs/security.md): a workspace's own
settings file sets only allowlisted settings until the user trusts its exact content."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import seek.cli.config_cmd  # noqa: F401 - registers the commands
import seek.cli.index_cmd  # noqa: F401
import seek.cli.trust_cmd  # noqa: F401
from seek.cli import cli
from seek.errors import SettingsError
from seek.settings import load_settings, setting_names
from seek.settings.trust import (
    HALF_TO_YOURS,
    NARROWING,
    RULES,
    USER_ONLY,
    WORKSPACE_SAFE,
    WorkspaceConfig,
    read_config,
    read_store,
    revoke,
    store_path,
    trust,
)

SENSITIVE = {
    "provider": "openai", "model": "evil-model", "base_url": "http://127.0.0.1:9/v1",
    "api_key_env": "MY_GITHUB_TOKEN", "team_url": "http://127.0.0.1:9",
    "team_token_env": "MY_GITHUB_TOKEN", "chat_provider": "openai", "chat_model": "m",
    "chat_url": "http://127.0.0.1:9", "chat_api_key_env": "MY_GITHUB_TOKEN",
    "home": "/tmp/elsewhere", "ranker_model": "/etc/passwd", "reranker_model": "/etc",
}  # fmt: skip
"""Every setting that sends data to an address, names a variable, loads a model or file, or
points outside the workspace, with a value an attacker would pick."""
SAFE = {"chunk_max_chars": 800, "snippets": 4, "ignored_globs": ["vendor/"]}


def toml(values: dict) -> str:
    return "".join(f"{name} = {json.dumps(value)}\n" for name, value in values.items())


def write_config(root: Path, variant: str, values: dict) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    if variant == "seek_toml":
        path = root / ".seek.toml"
        path.write_text(toml(values))
    else:
        path = root / "pyproject.toml"
        path.write_text(f'[project]\nname = "x"\n\n[tool.seek]\n{toml(values)}')
    return path


def load(root: Path, user: Path):
    return load_settings(root, env={}, user_config=user)


# -- the allowlist -----------------------------------------------------------------------


def test_the_allowlist_names_real_settings_each_with_a_reason():
    names = set(setting_names())
    assert set(WORKSPACE_SAFE) <= names and USER_ONLY <= names
    assert all(len(reason) > 20 for reason in WORKSPACE_SAFE.values())
    assert not set(WORKSPACE_SAFE) & (set(SENSITIVE) | USER_ONLY)
    assert set(SENSITIVE) <= names
    # Every setting is judged: safe, user-only, or needing trust (the sensitive ones).
    assert names == set(WORKSPACE_SAFE) | USER_ONLY | set(SENSITIVE)


def test_a_setting_nobody_judged_needs_trust():
    data = {"future_upload_url": "x", "snippets": 3, "mcp_roots": ["/"]}
    config = WorkspaceConfig(Path("/w/.seek.toml"), "/w/.seek.toml", "0" * 64, data)
    assert config.needs_trust() == ["future_upload_url"]


# -- loading -----------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["seek_toml", "pyproject"])
def test_an_untrusted_file_sets_only_safe_settings_with_one_warning(tmp_path, caplog, variant):
    root = tmp_path / "ws"
    config = write_config(root, variant, {**SENSITIVE, **SAFE})
    user = tmp_path / "config" / "config.toml"
    with caplog.at_level(logging.WARNING, logger="seek.settings"):
        first = load(root, user)
        again = load(root, user)  # a server loads settings for every request
    for settings in (first, again):
        for name in SENSITIVE:
            assert settings.source_of(name) == "default", name
        assert settings.chunk_max_chars == 800 and settings.snippets == 4
        assert settings.ignored_globs == ("vendor/",)
    warnings = [r.getMessage() for r in caplog.records if "not trusted" in r.getMessage()]
    assert len(warnings) == 1
    assert str(config) in warnings[0]
    assert ", ".join(SENSITIVE) in warnings[0]  # every one named, in the file's order
    assert f"run `seek trust {root.resolve()}`" in warnings[0]
    assert not store_path(user).exists()  # loading never trusts


@pytest.mark.parametrize("variant", ["seek_toml", "pyproject"])
def test_trust_applies_the_file_until_it_is_edited_or_revoked(tmp_path, caplog, variant):
    root = tmp_path / "ws"
    config = write_config(root, variant, {**SENSITIVE, **SAFE})
    user = tmp_path / "config" / "config.toml"
    store = store_path(user)
    found = read_config(config)
    assert found is not None
    trust(store, found)
    trusted = load(root, user)
    for name, value in SENSITIVE.items():
        assert getattr(trusted, name) == value and trusted.source_of(name) == found.label

    config.write_text(config.read_text() + "# edited\n")
    with caplog.at_level(logging.WARNING, logger="seek.settings"):
        edited = load(root, user)
    assert all(edited.source_of(name) == "default" for name in SENSITIVE)
    assert edited.chunk_max_chars == 800
    assert "has changed since you trusted it" in caplog.text

    trust(store, read_config(config))  # trusting again records the new content
    assert load(root, user).provider == "openai"
    assert revoke(store, [config]) == [str(config.resolve())]
    assert load(root, user).provider == "local"
    assert revoke(store, [config]) == []


def test_user_only_settings_never_come_from_a_workspace_file_even_trusted(tmp_path):
    root = tmp_path / "ws"
    config = write_config(root, "seek_toml",
                          {"serve_hosts": ["evil.example"], "serve_origins": ["http://evil.example"],
                           "mcp_roots": ["/"], "team_url": "http://127.0.0.1:9"})  # fmt: skip
    user = tmp_path / "config" / "config.toml"
    trust(store_path(user), read_config(config))
    settings = load(root, user)
    assert settings.team_url == "http://127.0.0.1:9"  # trusted, so this applies
    assert settings.serve_hosts == () and settings.serve_origins == () and settings.mcp_roots == ()


def test_trust_is_for_one_files_exact_content_and_place(tmp_path):
    user = tmp_path / "config" / "config.toml"
    store = store_path(user)
    one = write_config(tmp_path / "one", "seek_toml", {"team_url": "http://127.0.0.1:9"})
    two = write_config(tmp_path / "two", "seek_toml", {"team_url": "http://127.0.0.1:9"})
    trust(store, read_config(one))
    assert load(one.parent, user).team_url and not load(two.parent, user).team_url
    # The same folder reached through a link is the same file (keyed by the real folder).
    (tmp_path / "link").symlink_to(one.parent)
    assert load(tmp_path / "link", user).team_url == "http://127.0.0.1:9"
    # A pyproject.toml trusted as a whole: an edit outside [tool.seek] needs trust again.
    py = write_config(tmp_path / "py", "pyproject", {"team_url": "http://127.0.0.1:9"})
    trust(store, read_config(py))
    py.write_text(py.read_text().replace('name = "x"', 'name = "y"'))
    assert load(py.parent, user).team_url == ""


def test_the_record_is_replaced_whole_and_a_damaged_one_trusts_nothing(tmp_path):
    user = tmp_path / "config" / "config.toml"
    store = store_path(user)
    config = write_config(tmp_path / "ws", "seek_toml", {"team_url": "http://127.0.0.1:9"})
    trust(store, read_config(config))
    data = json.loads(store.read_text())
    assert data["version"] == 1 and data["trusted"][0]["path"] == str(config.resolve())
    assert [p.name for p in store.parent.iterdir()] == ["trust.json"]  # no temp file left
    assert store.stat().st_mode & 0o077 == 0  # the user's alone
    store.write_text('{"trusted": [')
    assert read_store(store) == {}
    assert load(config.parent, user).team_url == ""  # fail closed
    with pytest.raises(SettingsError, match="cannot read .*trust.json.*fix or delete it"):
        trust(store, read_config(config))
    assert store.read_text() == '{"trusted": ['  # not overwritten


# -- the commands ------------------------------------------------------------------------


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("SEEK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for name in [n for n in os.environ if n.startswith("SEEK_") and n != "SEEK_HOME"]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, (result.output, result.exception)
    return result.output


def test_seek_trust_list_revoke_and_what_config_and_status_show(isolated):
    root = isolated / "ws"
    config = write_config(root, "seek_toml", {"team_url": "http://127.0.0.1:9", "snippets": 4})
    real = str(config.resolve())
    shown = json.loads(run("-C", str(root), "config", "--json"))
    assert shown["workspace_config"]["state"] == "untrusted"
    assert shown["workspace_config"]["ignored"] == ["team_url"]
    assert shown["team_url"]["source"] == "default" and shown["snippets"]["value"] == 4
    text = run("-C", str(root), "config")
    assert f"# workspace config: {real}: untrusted, ignoring team_url" in text
    assert f"`seek trust {root.resolve()}`" in text
    assert "config      " in run("status", str(root))

    out = run("trust", str(root))
    assert out.startswith(f"Trusted {real} (sha256 ") and "its team_url now apply" in out
    # The record lives beside the user's config.toml, honouring XDG_CONFIG_HOME.
    assert (isolated / "xdg" / "seek" / "trust.json").is_file()
    listed = json.loads(run("trust", "--list", "--json"))["trusted"]
    assert [(e["path"], e["state"]) for e in listed] == [(real, "trusted")]
    assert "trusted   " in run("trust", "--list")
    status = json.loads(run("status", "--json", str(root)))["workspace_config"]
    assert status["state"] == "trusted" and status["ignored"] == []
    assert json.loads(run("-C", str(root), "config", "--json"))["team_url"]["source"] == real

    config.write_text(config.read_text() + "chat_url = 'http://127.0.0.1:9'\n")
    assert json.loads(run("trust", "--list", "--json"))["trusted"][0]["state"] == "changed"
    edited = json.loads(run("-C", str(root), "config", "--json"))["workspace_config"]
    assert edited["state"] == "changed" and edited["ignored"] == ["team_url", "chat_url"]

    assert run("trust", "--revoke", str(config)) == f"Revoked trust in {real}.\n"
    assert run("trust", "--list").startswith("No trusted files")
    assert "was not trusted" in run("trust", "--revoke", str(root))


def test_http_and_page_status_show_the_workspace_config_as_the_cli_does(isolated):
    """`GET /v1/status` and the page's status carry ``workspace_config``, the same object as
    `seek status --json`, so a client or the page can say which settings are ignored."""
    import httpx
    from seek_server import running

    from seek.serving.config import ServeConfig

    root = isolated / "ws"
    write_config(root, "seek_toml", {"team_url": "http://127.0.0.1:9", "snippets": 4})
    config = ServeConfig(workspaces=(root.resolve(),), ui=True)
    with running(config) as url, httpx.Client(base_url=url, timeout=30) as http:
        for state, ignored in (("untrusted", ["team_url"]), ("trusted", [])):
            cli_view = json.loads(run("status", "--json", str(root)))["workspace_config"]
            assert cli_view["state"] == state and cli_view["ignored"] == ignored
            for path in ("/v1/status", "/ui/api/status"):
                answer = http.get(path)
                assert answer.status_code == 200, answer.text
                assert answer.json()["workspace_config"] == cli_view, path
            run("trust", str(root))
        (root / ".seek.toml").unlink()
        assert http.get("/v1/status").json()["workspace_config"] is None


def test_seek_trust_with_nothing_to_trust_is_one_line(isolated):
    (isolated / "ws").mkdir()
    (isolated / "ws" / "notes.toml").write_text("x = 1\n")
    env = {**os.environ, "XDG_CONFIG_HOME": str(isolated / "xdg")}
    for args, message in (
        (["trust", str(isolated / "ws")], "nothing to trust"),
        (["trust", str(isolated / "ws" / "notes.toml")], "seek reads no other settings file"),
    ):
        proc = subprocess.run([sys.executable, "-m", "seek", *args], capture_output=True,
                              text=True, env=env, timeout=60)  # fmt: skip
        assert proc.returncode == 1 and proc.stdout == ""
        assert proc.stderr.startswith("seek: error: ") and message in proc.stderr
        assert proc.stderr.count("\n") == 1
    both = CliRunner().invoke(cli, ["trust", "--list", "--revoke"])
    assert both.exit_code == 2 and "cannot be used together" in both.output


def test_only_seek_trust_writes_the_record():
    """`seek mcp`, `serve`, `ui` and `watch` never trust on their own: no module but the
    `seek trust` command calls the functions that write the record."""
    import ast

    import seek

    writers = {"trust", "revoke", "_write_store"}
    src = Path(seek.__file__).parent
    callers = set()
    for path in src.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in writers:
                    callers.add(path.relative_to(src).as_posix())
    assert callers == {"cli/trust_cmd.py", "settings/trust.py"}


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (".seek.toml", b"snippets = '\xff\xfe'\n", "cannot parse"),
        ("pyproject.toml", b"tool = 5\n", None),  # no [tool.seek] table: nothing to read
        ("pyproject.toml", b"[tool]\nseek = 'x'\n", None),
        (".seek.toml", b"#" * (1 << 20) + b"\nsnippets = 3\n", "over 1 MiB"),
    ],
)
def test_a_malformed_workspace_file_is_one_clear_error(tmp_path, name, content, message):
    root = tmp_path / "ws"
    root.mkdir()
    (root / name).write_bytes(content)
    user = tmp_path / "config.toml"
    if message is None:
        assert load(root, user).snippets == 10
    else:
        with pytest.raises(SettingsError, match=message):
            load(root, user)


def test_a_deleted_workspace_is_listed_missing_and_can_be_revoked(isolated):
    import shutil

    root = isolated / "gone"
    write_config(root, "pyproject", {"team_url": "http://127.0.0.1:9"})
    run("trust", str(root))
    shutil.rmtree(root)
    assert json.loads(run("trust", "--list", "--json"))["trusted"][0]["state"] == "missing"
    assert run("trust", "--revoke", str(root)).startswith("Revoked trust in ")
    assert json.loads(run("trust", "--list", "--json"))["trusted"] == []


# -- what mutation testing found unpinned (bench/mutation-survivors.md, "trust") --------------


def test_a_file_of_exactly_the_limit_is_read_and_an_unreadable_one_is_named(tmp_path):
    from seek.settings.trust import MAX_CONFIG_BYTES

    root = tmp_path / "ws"
    root.mkdir()
    body = b"snippets = 3\n"
    (root / ".seek.toml").write_bytes(body + b"#" * (MAX_CONFIG_BYTES - len(body)))
    assert load(root, tmp_path / "config.toml").snippets == 3
    folder = tmp_path / "odd" / ".seek.toml"
    folder.mkdir(parents=True)
    with pytest.raises(SettingsError, match=r"cannot read .*\.seek\.toml: Is a directory"):
        read_config(folder)


def test_the_record_keeps_when_each_file_was_trusted(tmp_path, monkeypatch):
    import tempfile
    import time

    from seek.settings.trust import TRUST_FILE

    store = tmp_path / "config" / TRUST_FILE
    config = read_config(write_config(tmp_path / "ws", "seek_toml", {"team_url": "x"}))
    # The record is written beside itself, then renamed: never through the system's
    # temporary folder (another file system: the rename would not be atomic, or fail).
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-folder"))
    before = time.time()
    trust(store, config)
    assert before <= read_store(store)[config.key()].trusted_at <= time.time()
    # A record written by hand or by an older seek, without the time, still trusts.
    store.write_text(json.dumps({"trusted": [{"path": config.key(), "sha256": config.sha256}]}))
    assert read_store(store)[config.key()].trusted_at == 0.0


def test_a_failed_write_leaves_the_old_record_and_no_temporary_file(tmp_path, monkeypatch):
    store = tmp_path / "config" / "trust.json"
    config = read_config(write_config(tmp_path / "ws", "seek_toml", {"team_url": "x"}))
    trust(store, config)
    saved = store.read_text()

    def refuse(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="No space left"):
        revoke(store, [config.path])
    assert store.read_text() == saved
    assert [p.name for p in store.parent.iterdir()] == ["trust.json"]


def test_a_damaged_record_is_an_error_for_revoke_and_names_what_broke(tmp_path):
    store = tmp_path / "trust.json"
    store.write_text('{"trusted": [')
    with pytest.raises(SettingsError, match=r"\(JSONDecodeError\); fix or delete it"):
        revoke(store, [tmp_path / "ws" / ".seek.toml"])
    assert store.read_text() == '{"trusted": ['


def test_describe_and_its_line(tmp_path):
    import hashlib

    from seek.settings.trust import describe, describe_line

    user = tmp_path / "config" / "config.toml"
    root = tmp_path / "ws"
    path = write_config(root, "seek_toml", {"team_url": "x", "chat_url": "y", "snippets": 2})
    info = describe(root, user)
    assert info is not None
    assert info["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    real = str(path.resolve())
    assert describe_line(info) == (
        f"{real}: untrusted, ignoring team_url, chat_url (review it, then "
        f"`seek trust {root.resolve()}`)"
    )
    trust(store_path(user), read_config(path))
    assert describe_line(describe(root, user)) == f"{real}: trusted (applies team_url, chat_url)"
    assert describe_line(None) == "no .seek.toml or [tool.seek] in the workspace"


def test_settings_written_with_dashes_are_judged_as_with_underscores():
    data = {"chunk-max-chars": 800, "serve-hosts": ["x"], "team-url": "http://127.0.0.1:9"}
    config = WorkspaceConfig(Path("/w/.seek.toml"), "/w/.seek.toml", "0" * 64, data)
    assert config.needs_trust() == ["team-url"]


# -- an untrusted workspace may only tighten (issue 43) -----------------------------------


def _attack(name: str):
    """The value a hostile workspace picks: the far end of the range, on the side its rule
    forbids (the most it could read, return or make seek do)."""
    from seek.settings import _RANGES
    from seek.settings.trust import AT_LEAST, AT_MOST

    allowed, rule = _RANGES[name], RULES[name]
    if rule is AT_MOST:
        return allowed.high
    if rule is AT_LEAST:
        return allowed.low + 1 if allowed.above else allowed.low
    assert rule is HALF_TO_YOURS
    return 1


def _tighter(name: str):
    """A value on the allowed side of the default: it applies as written."""
    from seek.settings import Settings
    from seek.settings.trust import AT_LEAST, AT_MOST

    default, rule = getattr(Settings(), name), RULES[name]
    if rule is AT_MOST:
        return default / 2 if isinstance(default, float) else default // 2
    if rule is AT_LEAST:
        return default * 2
    return default * 3 // 4  # HALF_TO_YOURS


def _wider(name: str):
    """A valid value past what an untrusted file may set (a trusted one sets it)."""
    from seek.settings import _RANGES, Settings
    from seek.settings.trust import AT_MOST

    default, rule = getattr(Settings(), name), RULES[name]
    if rule is AT_MOST:
        return min(_RANGES[name].high, default * 2)
    return _attack(name) if rule is not HALF_TO_YOURS else default // 4


@pytest.mark.parametrize("name", sorted(n for n, rule in RULES.items() if rule in NARROWING))
def test_a_workspace_number_may_only_tighten_the_users(tmp_path, caplog, name):
    """Findings 5 and 9d: a workspace file's counts, budgets and sizes stay on the side of
    the user's value that reads, returns and does less; a tighter value applies as written;
    the file trusted applies it as written; the user's own environment is never capped."""
    from seek.settings import Settings

    default = getattr(Settings(), name)
    root = tmp_path / "ws"
    user = tmp_path / "config" / "config.toml"
    config = write_config(root, "seek_toml", {name: _attack(name)})
    with caplog.at_level(logging.WARNING, logger="seek.settings"):
        settings = load(root, user)
    if RULES[name] is HALF_TO_YOURS:  # smaller blocks, but not so small they multiply rows
        assert getattr(settings, name) == (default + 1) // 2
    else:
        assert getattr(settings, name) == default and settings.source_of(name) == "default"
    assert f"keeping {name} within your own values" in caplog.text
    assert "may only tighten" in caplog.text and f"`seek trust {root.resolve()}`" in caplog.text

    write_config(root, "seek_toml", {name: _tighter(name)})
    tight = load(root, user)
    assert getattr(tight, name) == _tighter(name) and tight.source_of(name) == str(config)

    write_config(root, "seek_toml", {name: _wider(name)})
    trust(store_path(user), read_config(config))
    assert getattr(load(root, user), name) == _wider(name)  # reviewed: the user's word

    mine = load_settings(root, env={f"SEEK_{name.upper()}": str(_wider(name))},
                         user_config=tmp_path / "other" / "config.toml")  # fmt: skip
    assert getattr(mine, name) == _wider(name) and mine.source_of(name).startswith("env ")


def test_the_users_own_values_are_the_cap_and_flags_are_never_capped(tmp_path):
    user = tmp_path / "config" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text("snippets = 20\nupdate_on_save = false\nmax_file_bytes = 1000000\n")
    root = tmp_path / "ws"
    write_config(root, "pyproject", {"snippets": 30, "max_file_bytes": 900_000,
                                     "update_on_save": True, "rrf_k": 1})  # fmt: skip
    settings = load(root, user)
    assert settings.snippets == 20 and settings.source_of("snippets") == str(user)
    assert settings.max_file_bytes == 900_000  # under the user's: applies
    assert settings.update_on_save is False  # may turn it off, never on
    assert settings.rrf_k == 1  # changes only the order: any value in range
    flagged = load_settings(root, overrides={"snippets": 30}, env={}, user_config=user)
    assert flagged.snippets == 30 and flagged.source_of("snippets") == "flag"
    write_config(root, "seek_toml", {"update_on_save": False})
    assert load(root, tmp_path / "none.toml").update_on_save is False


def test_the_workspaces_ignored_globs_add_to_the_users_even_trusted(tmp_path):
    """Finding 6: a workspace's list never replaces the user's own exclusions."""
    user = tmp_path / "config" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('ignored_globs = ["private/**", "*.pem"]\n')
    root = tmp_path / "ws"
    config = write_config(root, "seek_toml", {"ignored_globs": ["build/", "*.pem"]})
    settings = load(root, user)
    assert settings.ignored_globs == ("private/**", "*.pem", "build/")
    assert settings.source_of("ignored_globs") == f"{user} + {config}"
    trust(store_path(user), read_config(config))
    assert load(root, user).ignored_globs == ("private/**", "*.pem", "build/")
    alone = load(root, tmp_path / "none.toml")  # no user list: the workspace's own
    assert alone.ignored_globs == ("build/", "*.pem")
    assert alone.source_of("ignored_globs") == str(config)


def test_a_bad_value_in_a_workspace_file_is_an_error_not_a_cap(tmp_path):
    root = tmp_path / "ws"
    write_config(root, "seek_toml", {"chunk_max_chars": 0})
    with pytest.raises(SettingsError, match=r"chunk_max_chars must be > 0 .*, not 0 \(from "):
        load(root, tmp_path / "none.toml")


def test_every_safe_setting_has_a_rule():
    from seek.settings import _RANGES, Settings
    from seek.settings.trust import ANY, AT_LEAST, AT_MOST, tighten

    assert set(RULES) == set(WORKSPACE_SAFE)
    numbers = {n for n in WORKSPACE_SAFE if type(getattr(Settings(), n)) in (int, float)}
    assert numbers <= set(_RANGES)
    assert [n for n, r in RULES.items() if r is ANY] == ["rrf_k"]
    assert tighten("snippets", 30, 10, trusted=False) == 10 and RULES["snippets"] is AT_MOST
    assert tighten("snippets", 30, 10, trusted=True) == 30
    assert RULES["rerank_threshold"] is AT_LEAST and RULES["watch_debounce_s"] is AT_LEAST


# -- trust names the one file in force (issue 43 finding 3) --------------------------------


def test_seek_trust_records_only_the_file_in_force(isolated):
    root = isolated / "ws"
    write_config(root, "pyproject", {"team_url": "http://127.0.0.1:9"})
    seek_toml = write_config(root, "seek_toml", {"snippets": 4})
    store = isolated / "xdg" / "seek" / "trust.json"
    run("trust", str(root))
    assert list(read_store(store)) == [str(seek_toml.resolve())]
    refused = CliRunner().invoke(cli, ["trust", str(root / "pyproject.toml")])
    assert refused.exit_code == 1 and "is not in force: seek reads" in str(refused.exception)
    seek_toml.unlink()  # a commit brings [tool.seek] into force: not the file trusted
    shown = json.loads(run("-C", str(root), "config", "--json"))
    assert shown["team_url"]["source"] == "default"
    assert shown["workspace_config"]["state"] == "changed"
    run("trust", str(root / "pyproject.toml"))  # reviewed: now that one, and only it
    assert [Path(p).name for p in read_store(store)] == ["pyproject.toml"]
    shown = json.loads(run("-C", str(root), "config", "--json"))
    assert shown["team_url"]["source"].endswith("[tool.seek]")
    write_config(root, "seek_toml", {"snippets": 4})  # and back: not trusted either
    shown = json.loads(run("-C", str(root), "config", "--json"))
    assert shown["workspace_config"]["state"] == "changed"


def test_a_record_naming_both_files_trusts_only_the_seek_toml(isolated):
    """``seek trust`` before issue 43 recorded both files of a folder; only ``.seek.toml``
    was in force and shown for review, so the ``pyproject.toml`` entry counts for nothing."""
    root = isolated / "ws"
    pyproject = write_config(root, "pyproject", {"team_url": "http://127.0.0.1:9"})
    seek_toml = write_config(root, "seek_toml", {"snippets": 4})
    store = isolated / "xdg" / "seek" / "trust.json"
    store.parent.mkdir(parents=True)
    entries = [{"path": str(p.resolve()), "sha256": read_config(p).sha256, "trusted_at": 1.0}
               for p in (seek_toml, pyproject)]  # fmt: skip
    store.write_text(json.dumps({"version": 1, "trusted": entries}))
    listed = {Path(e["path"]).name: e["state"]
              for e in json.loads(run("trust", "--list", "--json"))["trusted"]}  # fmt: skip
    assert listed == {".seek.toml": "trusted", "pyproject.toml": "not in force"}
    seek_toml.unlink()
    assert load(root, isolated / "xdg" / "seek" / "config.toml").team_url == ""


def test_the_security_page_table_says_each_settings_rule():
    """docs/security.md's table of workspace settings matches the code: each setting's row
    says its rule as ``RULES`` does, those needing trust and the user-only ones have theirs."""
    import re

    from seek.settings import setting_names

    page = (Path(__file__).parents[1] / "docs" / "security.md").read_text(encoding="utf-8")
    table = page[page.index("| Settings | From an untrusted workspace file |") :]
    rows = [line.split(" | ") for line in table.splitlines()[2:] if line.startswith("| `")]
    says = {}
    for names, rule in rows:
        for name in re.findall(r"`([a-z_]+)`", names):
            says[name] = rule
    assert set(says) == set(setting_names())
    for name, rule in RULES.items():
        assert says[name].startswith(rule.says), name
    for name in set(setting_names()) - set(RULES):
        wanted = "never, even trusted" if name in USER_ONLY else "ignored until you `seek trust`"
        assert says[name].startswith(wanted), name
