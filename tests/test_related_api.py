"""``POST /v1/related`` (seek.web.related) against a real server on 127.0.0.1."""

import httpx
import pytest
from seek_server import running

from seek.serving.config import ServeConfig

pytestmark = pytest.mark.slow


@pytest.fixture
def config(make_tree, seek_home):
    root = make_tree({
        "src/retry.py": "def configure_retries(policy):\n    return RetryPolicy(policy)\n",
        "src/retry_again.py": "def retry_policy(policy):\n    return RetryPolicy(policy)\n",
        "src/client.py": "class HttpClient:\n    def send(self, request):\n        return 1\n",
    })  # fmt: skip
    return ServeConfig(workspaces=(root,), overrides={"home": str(seek_home)})


def test_related_finds_other_files_like_the_chunk_at_a_line(config):
    with running(config) as url:
        httpx.post(f"{url}/v1/index", json={}, timeout=60)
        found = httpx.post(
            f"{url}/v1/related", json={"file": "src/retry.py", "line": 2, "k": 2}, timeout=60
        )
    assert found.status_code == 200, found.text
    hits = found.json()["hits"]
    assert hits and hits[0]["path"] == "src/retry_again.py"
    assert all(h["path"] != "src/retry.py" for h in hits)
    assert found.json()["workspace"] == "ws"


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"line": 1}, 400),
        ({"file": "src/retry.py"}, 400),
        ({"file": "src/retry.py", "line": 0}, 400),
        ({"file": "src/retry.py", "line": True}, 400),
        ({"file": "../outside.py", "line": 1}, 400),
        ({"file": "/etc/passwd", "line": 1}, 400),
        ({"file": "src/retry.py", "line": 1, "path": "/etc"}, 403),
        ({"file": "src/missing.py", "line": 1}, 422),
    ],
)
def test_bad_requests_get_one_line_errors(config, body, status):
    with running(config) as url:
        httpx.post(f"{url}/v1/index", json={}, timeout=60)
        answer = httpx.post(f"{url}/v1/related", json=body, timeout=60)
    assert answer.status_code == status, answer.text
    message = answer.json()["error"]["message"]
    assert message and "\n" not in message and "Traceback" not in message
