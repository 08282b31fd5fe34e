"""``seek models pull|list|remove`` against a local stand-in for the hub (``hub_server.py``)
serving a tiny cross-encoder built here (``tiny_reranker.py``). No test touches the network:
``SEEK_HUB_URL`` points at 127.0.0.1."""

import hashlib
import json
import socket
import sys
from contextlib import contextmanager

import pytest
from filelock import FileLock
from hub_server import COMMIT, Hub, serve
from tiny_reranker import build_model

from seek.cli import main, models_cmd
from seek.errors import ModelError, RerankerUnavailable
from seek.rerank.hub import KNOWN, models_dir, pulled_models, resolve_reranker
from seek.rerank.pull import hub_url, pull
from seek.retrieve.context import build_context
from seek.retrieve.types import Hit, SearchResult

NAME = "ms-marco-minilm-l6"
MODEL = KNOWN[NAME]


@pytest.fixture
def tiny(tmp_path):
    folder = build_model(tmp_path / "tiny")
    return {p.name: p.read_bytes() for p in folder.iterdir()}


@pytest.fixture
def env(tmp_path, seek_home, monkeypatch):
    """A clean environment: seek's home is the test's, no user config, no token or mirror."""
    monkeypatch.setenv("SEEK_HOME", str(seek_home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("HF_TOKEN", "HF_ENDPOINT", "SEEK_HUB_URL", "SEEK_RERANKER_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


@pytest.fixture
def hub(env, tiny):
    content = Hub()
    content.add(MODEL.repo, MODEL.onnx_file, tiny["model.onnx"])
    content.add(MODEL.repo, "tokenizer.json", tiny["tokenizer.json"])
    with serve(content) as running:
        env.setenv("SEEK_HUB_URL", running.url)
        yield running


@pytest.fixture
def seek(capsys, monkeypatch):
    """Run the real entry point in this process: (exit code, stdout, stderr)."""

    def run(*args):
        monkeypatch.setattr(sys, "argv", ["seek", *args])
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code
        out, err = capsys.readouterr()
        return code, out, err

    return run


def model_folder(seek_home):
    return seek_home / "models" / NAME


def leftovers(seek_home):
    """Anything under the models folder besides finished models and lock files."""
    root = seek_home / "models"
    return sorted(
        p.name for p in root.iterdir() if p.name.startswith(".") and not p.name.endswith(".lock")
    )


def test_pull_writes_the_model_and_its_source_then_says_how_to_use_it(hub, seek, seek_home, tiny):
    code, out, err = seek("models", "pull", NAME)
    assert code == 0 and err == ""
    folder = model_folder(seek_home)
    assert sorted(p.name for p in folder.iterdir()) == [
        "model.onnx",
        "source.json",
        "tokenizer.json",
    ]
    assert (folder / "model.onnx").read_bytes() == tiny["model.onnx"]
    source = json.loads((folder / "source.json").read_text())
    assert source["repo"] == MODEL.repo and source["licence"] == "Apache-2.0"
    assert source["commit"] == COMMIT and source["hub"] == hub.url
    assert source["files"]["model.onnx"] == {
        "path": "onnx/model.onnx",
        "bytes": len(tiny["model.onnx"]),
        "sha256": hashlib.sha256(tiny["model.onnx"]).hexdigest(),
    }
    assert source["pulled_at"].endswith("+00:00")
    assert [path for path, _ in hub.requests] == [
        f"/{MODEL.repo}/resolve/main/onnx/model.onnx",
        f"/{MODEL.repo}/resolve/main/tokenizer.json",
    ]
    assert f"into {folder}" in out and "It loads and scores." in out
    assert out.splitlines()[-1] == f'reranker_model = "{NAME}"'
    assert leftovers(seek_home) == []


def test_a_pulled_name_as_reranker_model_scores_with_it(hub, seek, seek_home, settings_for):
    assert seek("models", "pull", NAME)[0] == 0
    settings = settings_for(reranker_model=NAME, widen_chars=0, imports_chars=0)
    assert resolve_reranker(settings) == model_folder(seek_home)
    hits = [
        Hit("a.py", 1, 1, 0.0, "http word"),
        Hit("b.py", 1, 1, 0.0, "retry policy"),
        Hit("c.py", 1, 1, 0.0, "cache cache"),
    ]
    root = seek_home.parent / "ws"
    for hit in hits:
        (root / hit.path).parent.mkdir(parents=True, exist_ok=True)
        (root / hit.path).write_text(hit.content + "\n")
    out = build_context(root, SearchResult("retry", "retry", hits), settings)
    assert [b.path for b in out.blocks] == ["b.py", "a.py"] and out.notes == []


def test_list_shows_known_models_what_is_pulled_and_the_one_in_use(hub, seek, seek_home, tmp_path):
    code, out, _ = seek("models", "list")
    assert code == 0 and all(name in out for name in KNOWN)
    assert "not set" in out and str(model_folder(seek_home)) not in out
    seek("models", "pull", NAME)
    config = tmp_path / "config" / "seek" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'reranker_model = "{NAME}"\n')
    code, out, _ = seek("models", "list")
    line = next(line for line in out.splitlines() if NAME in line and "/" in line)
    assert line.startswith("*") and line.endswith(str(model_folder(seek_home)))
    listed = json.loads(seek("models", "list", "--json")[1])
    assert listed["models_dir"] == str(seek_home / "models")
    mine = next(m for m in listed["models"] if m["name"] == NAME)
    assert mine["in_use"] and mine["folder"] == str(model_folder(seek_home))
    # Pulling again when it is already the reranker: nothing downloaded, and it says so.
    before = len(hub.requests)
    code, out, _ = seek("models", "pull", NAME)
    assert code == 0 and "already in" in out and f"from {config}" in out
    assert len(hub.requests) == before


def test_force_downloads_again_and_replaces_the_model(hub, seek, seek_home, tmp_path):
    assert seek("models", "pull", NAME)[0] == 0
    again = build_model(tmp_path / "typed", token_types=True)
    hub.add(MODEL.repo, MODEL.onnx_file, (again / "model.onnx").read_bytes())
    hub.add(MODEL.repo, "tokenizer.json", (again / "tokenizer.json").read_bytes())
    code, out, _ = seek("models", "pull", NAME)
    assert "already in" in out and "--force" in out
    assert (model_folder(seek_home) / "model.onnx").read_bytes() != (
        again / "model.onnx"
    ).read_bytes()
    code, out, _ = seek("models", "pull", NAME, "--force")
    assert code == 0 and "Pulled" in out
    assert (model_folder(seek_home) / "model.onnx").read_bytes() == (
        again / "model.onnx"
    ).read_bytes()
    assert leftovers(seek_home) == []


def test_unreachable_hub_is_one_line(env, seek, seek_home):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env.setenv("SEEK_HUB_URL", f"http://127.0.0.1:{port}")
    code, out, err = seek("models", "pull", NAME)
    assert code == 1 and out == "" and len(err.splitlines()) == 1
    assert err.startswith(f"seek: error: cannot reach http://127.0.0.1:{port} (")
    assert "Connection refused" in err
    assert err.rstrip().endswith("— models pull needs internet; seek works offline without it")
    assert pulled_models_now(seek_home) == []


def pulled_models_now(seek_home):
    root = seek_home / "models"
    return [p.name for p in root.iterdir() if not p.name.startswith(".")] if root.exists() else []


def test_missing_file_names_the_url_and_status(hub, seek, seek_home):
    code, _, err = seek("models", "pull", "jina-reranker-tiny")
    url = f"{hub.url}/jinaai/jina-reranker-v1-tiny-en/resolve/main/onnx/model.onnx"
    assert code == 1
    assert err.splitlines() == [
        f"seek: error: cannot download {url}: HTTP 404 Not Found (Entry not found)"
    ]
    assert pulled_models_now(seek_home) == [] and leftovers(seek_home) == []


def test_refused_access_suggests_a_token_or_says_it_was_refused(hub, seek, env):
    hub.status = 401
    err = seek("models", "pull", NAME)[2]
    assert "HTTP 401 Unauthorized (Access to this repo is restricted; set HF_TOKEN" in err
    env.setenv("HF_TOKEN", "hf_secret")
    err = seek("models", "pull", NAME)[2]
    assert err.strip().endswith("HF_TOKEN was not accepted)") and len(err.splitlines()) == 1
    assert hub.requests[-1][1] == "Bearer hf_secret"


def test_unknown_name_lists_the_known_ones(env, seek, seek_home):
    code, _, err = seek("models", "pull", "gpt-5")
    assert code == 1
    assert err.splitlines() == [f"seek: error: unknown model 'gpt-5'; known: {', '.join(KNOWN)}"]
    assert not (seek_home / "models").exists()


def test_a_dropped_connection_leaves_nothing(hub, seek, seek_home):
    hub.truncate = True
    code, _, err = seek("models", "pull", NAME)
    assert code == 1 and len(err.splitlines()) == 1
    assert "was interrupted" in err and "nothing was kept" in err
    assert pulled_models_now(seek_home) == [] and leftovers(seek_home) == []


def test_ctrl_c_mid_download_leaves_nothing(hub, seek_home, settings_for):
    def interrupt(name, done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        pull(MODEL, models_dir(settings_for()), progress=interrupt)
    assert pulled_models_now(seek_home) == [] and leftovers(seek_home) == []


def test_ctrl_c_on_the_command_line_exits_130_and_leaves_nothing(hub, seek, seek_home, env):
    @contextmanager
    def interrupting(heading):
        def update(name, done, total):
            raise KeyboardInterrupt

        yield update

    env.setattr(models_cmd, "_progress_bar", interrupting)
    code, out, err = seek("models", "pull", NAME)
    assert code == 130 and err.splitlines()[-1] == "seek: aborted"
    assert pulled_models_now(seek_home) == [] and leftovers(seek_home) == []


def test_one_pull_per_name_at_a_time(hub, seek, seek_home):
    root = seek_home / "models"
    root.mkdir()
    with FileLock(root / f".{NAME}.lock"):
        code, _, err = seek("models", "pull", NAME)
    assert code == 1 and f"another seek is pulling {NAME}" in err
    assert seek("models", "pull", NAME)[0] == 0


def test_the_hub_is_seek_hub_url_else_hf_endpoint_else_hugging_face():
    assert hub_url({}) == "https://huggingface.co"
    assert hub_url({"HF_ENDPOINT": "https://mirror.example/"}) == "https://mirror.example"
    both = {"HF_ENDPOINT": "https://mirror.example", "SEEK_HUB_URL": "http://127.0.0.1:9"}
    assert hub_url(both) == "http://127.0.0.1:9"


def test_a_model_that_does_not_load_is_not_kept_and_the_old_one_stays(hub, seek, seek_home, tiny):
    assert seek("models", "pull", NAME)[0] == 0
    hub.add(MODEL.repo, MODEL.onnx_file, b"this is not an onnx model")
    code, _, err = seek("models", "pull", NAME, "--force")
    assert code == 1 and len(err.splitlines()) == 1
    assert "was downloaded but does not work as a cross-encoder" in err
    assert (model_folder(seek_home) / "model.onnx").read_bytes() == tiny["model.onnx"]
    assert leftovers(seek_home) == []


def test_redirects_are_followed_the_checksum_checked_and_the_token_kept_home(
    env, tiny, seek, seek_home
):
    files = Hub()
    with serve(files) as cdn:
        hub = Hub(redirect_to=cdn.url)
        for name, path in MODEL.files().items():
            hub.add(MODEL.repo, path, tiny[name])
            files.add(MODEL.repo, path, tiny[name])
        with serve(hub):
            env.setenv("SEEK_HUB_URL", hub.url)
            env.setenv("HF_TOKEN", "hf_secret")
            assert seek("models", "pull", NAME)[0] == 0
            source = json.loads((model_folder(seek_home) / "source.json").read_text())
            assert source["commit"] == COMMIT
            assert {auth for _, auth in hub.requests} == {"Bearer hf_secret"}
            assert {auth for _, auth in cdn.requests} == {None}  # another origin: no token
            hub.linked_etag = "ab" * 32
            code, _, err = seek("models", "pull", NAME, "--force")
    assert code == 1 and f"does not match the hub's SHA-256 {'ab' * 32}" in err
    assert (model_folder(seek_home) / "model.onnx").read_bytes() == tiny["model.onnx"]


def test_a_killed_pull_is_cleaned_up_by_the_next_one(hub, seek, seek_home, settings_for):
    stale = seek_home / "models" / f".{NAME}.partial-dead"
    stale.mkdir(parents=True)
    (stale / "model.onnx").write_bytes(b"half")
    (stale / "tokenizer.json").write_bytes(b"{}")
    assert pulled_models(settings_for()) == {}  # a dot-folder is not a model
    assert seek("models", "pull", NAME)[0] == 0
    assert not stale.exists() and leftovers(seek_home) == []


def test_remove(hub, seek, seek_home):
    seek("models", "pull", NAME)
    code, out, _ = seek("models", "remove", NAME)
    assert code == 0 and not model_folder(seek_home).exists()
    code, _, err = seek("models", "remove", NAME)
    assert code == 1 and "no pulled model named" in err
    assert seek("models", "remove", "../..")[0] == 1


# -- what reranker_model names ------------------------------------------------------------------


def test_reranker_model_is_a_folder_a_pulled_name_or_nothing(
    tmp_path, seek_home, settings_for, env
):
    assert resolve_reranker(settings_for()) is None
    folder = build_model(tmp_path / "mine")
    assert resolve_reranker(settings_for(reranker_model=str(folder))) == folder
    assert resolve_reranker(settings_for(reranker_model="mine")) == folder  # relative to cwd
    pulled = build_model(seek_home / "models" / "mine")
    assert resolve_reranker(settings_for(reranker_model="mine")) == pulled  # pulled wins
    assert resolve_reranker(settings_for(reranker_model="./mine")) == folder  # a path is a path
    assert pulled_models(settings_for()) == {"mine": pulled}


def test_a_name_that_is_not_pulled_says_how_to_pull_it(settings_for, env):
    with pytest.raises(RerankerUnavailable, match=f"`seek models pull {NAME}`"):
        resolve_reranker(settings_for(reranker_model=NAME))
    with pytest.raises(RerankerUnavailable, match="neither a folder nor a model in"):
        resolve_reranker(settings_for(reranker_model="no-such-model"))


def test_pull_rejects_a_hub_address_without_a_scheme(env, seek_home, settings_for):
    with pytest.raises(ModelError, match="must start with http"):
        pull(MODEL, models_dir(settings_for()), env={"SEEK_HUB_URL": "huggingface.co"})
