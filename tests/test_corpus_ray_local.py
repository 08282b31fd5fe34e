"""The local Ray instance ``seek corpus index`` starts (no ``--ray ADDRESS``) listens on
every network interface, so it must check a token: Ray does for a new local instance from
2.59, and seek refuses to start one with an older Ray (seek.corpus.fanout,
``_refuse_open_local_ray``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import ray

from seek.corpus.fanout import RayRunner
from seek.corpus.location import CorpusError

pytestmark = pytest.mark.scale


def test_an_older_ray_is_not_started(monkeypatch):
    monkeypatch.setattr(ray, "__version__", "2.58.1")
    assert not ray.is_initialized()
    with pytest.raises(CorpusError) as caught:
        RayRunner(workers=1)
    message = str(caught.value)
    assert "Ray 2.58.1 would start a local instance" in message
    assert "ray>=2.59" in message and "\n" not in message
    assert not ray.is_initialized()  # nothing was started


def test_the_local_instance_refuses_a_client_without_its_token(tmp_path, monkeypatch):
    """Another program on the machine (no token: its own empty HOME, no RAY_* settings)
    cannot join the instance seek started; with the instance's token it can (so the refusal
    is the token's, not the network's)."""
    # Ray's own default, as a user has it (the token is made in, or read from, HOME's
    # ~/.ray/auth_token; the HOME is left as it is: Ray's process keeps the token it read)
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        monkeypatch.delenv(name, raising=False)
    runner = RayRunner(workers=1)
    try:
        gcs = ray.get_runtime_context().gcs_address
        token_file = Path(os.path.expanduser("~/.ray/auth_token"))
        assert os.environ.get("RAY_AUTH_MODE") == "token" and token_file.is_file()
        join = (
            "import ray, sys\n"
            f"ray.init(address={gcs!r}, log_to_driver=False)\n"
            "print('JOINED', int(ray.cluster_resources().get('CPU', 0)))\n"
        )
        stranger = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        stranger["HOME"] = str(tmp_path / "stranger")
        refused = subprocess.run([sys.executable, "-c", join], env=stranger,
                                 capture_output=True, text=True, timeout=180)  # fmt: skip
        assert refused.returncode != 0 and "JOINED" not in refused.stdout
        friend = {**stranger, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token_file)}
        joined = subprocess.run([sys.executable, "-c", join], env=friend,
                                capture_output=True, text=True, timeout=180)  # fmt: skip
        assert "JOINED 1" in joined.stdout, joined.stderr[-2000:]
    finally:
        runner.close()
        os.environ.pop("RAY_AUTH_MODE", None)  # Ray sets it for its new instance
