"""API fuzzing (issue 12 campaign): schemathesis generates requests from the OpenAPI document
`seek serve` serves, valid ones and invalid ones, against a real server on 127.0.0.1.
Every answer must be below 500, and every 4xx a JSON error."""

import time
from collections import Counter

import httpx
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from seek_server import running

from seek.serving.config import ServeConfig
from seek.web.graph import TOOLS

pytestmark = pytest.mark.slow

EXAMPLES = {GenerationMode.POSITIVE: 100, GenerationMode.NEGATIVE: 150}
"""Per operation and mode (4 operations); hypothesis stops early where it runs out of new
requests (the status endpoint has one optional field). Halved from 200/330 to keep the suite
short: with the one defect this campaign found put back (a 500 on the path "~nosuchuser"),
the halved campaign found it in 2 of 3 runs and the full one in 1 of 2, so the extra examples
did not make it reliable; the hand-made requests below now ask for it every time."""
GRAPH_ROUTES = tuple(f"/v1/{tool}" for tool in TOOLS)
"""The code graph's routes (def ... map, impact, changed, review, history, tests) share one
handler and its checks (seek.web.graph): a third of the examples each, so they add about
40 % to the campaign instead of doubling it (and the campaign stays within the tests'
120 s on a loaded machine: 154 s with review and tests at full share)."""
MIN_REQUESTS = 1_000


def check_answer(response, answers):
    answers[response.status_code] += 1
    assert response.status_code < 500, f"{response.status_code}: {response.text[:300]}"
    if response.status_code >= 400:
        error = response.json()["error"]
        assert isinstance(error["code"], str) and isinstance(error["message"], str)
    else:
        assert isinstance(response.json(), dict)


def hostile_requests(url):
    """What a generator from the schema does not write: wrong hosts, origins, media types,
    methods, broken framing of JSON, odd paths."""
    port = url.rsplit(":", 1)[1]
    bodies = [b"", b"{", b"[]", b"null", b'"x"', b"{" * 1000, b"[" * 30_000, b"\xff\xfe",
              b'{"query": "\\ud800"}', b'{"query": "x", "k": 1e400}', b'{"query": 1}',
              b'{"query": "x", "path": {"a": 1}}', b'{"question": "x", "budget": 1.5}',
              b'{"query": "x", "question": "x", "path": "~nosuchuser"}',
              b'{"query": "x", "question": "x", "path": "~"}']  # fmt: skip
    for endpoint in ("/v1/search", "/v1/context", "/v1/index", "/v1/status", "/v1/nope", "/"):
        for method in ("GET", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"):
            yield method, endpoint, {"Content-Type": "application/json"}, b"{}"
        for body in bodies:
            yield "POST", endpoint, {"Content-Type": "application/json"}, body
        for headers in ({"Host": "evil.example"}, {"Host": f"localhost:{port}x"},
                        {"Origin": "null"}, {"Origin": "http://127.0.0.1:1"},
                        {"Content-Type": "text/plain"}, {"Content-Type": "application/jsonx"},
                        {"Authorization": "Bearer x"}):  # fmt: skip
            yield "POST", endpoint, {"Content-Type": "application/json", **headers}, b"{}"
    for query in ("path=%00", "path=%ff%fe", "path=" + "a" * 5000, "path=..", "path=/",
                  "path=~nosuchuser", "path=~/x"):  # fmt: skip
        yield "GET", f"/v1/status?{query}", {}, b""


def test_generated_requests_get_no_server_errors(make_tree, seek_home):
    root = make_tree({"src/retry.py": "def configure_retries(policy):\n    return policy\n",
                      "README.md": "# Demo\n\nRetries.\n"})  # fmt: skip
    config = ServeConfig(workspaces=(root,), overrides={"home": str(seek_home)})
    answers: Counter[int] = Counter()
    started = time.monotonic()
    with running(config) as url:
        document = httpx.get(f"{url}/v1/openapi.json").json()
        schema = schemathesis.openapi.from_dict(document)
        session = requests.Session()
        for result in schema.get_all_operations():
            operation = result.ok()
            share = 3 if operation.path in GRAPH_ROUTES else 1
            for mode, examples in EXAMPLES.items():

                @given(case=operation.as_strategy(generation_mode=mode))
                @settings(
                    max_examples=examples // share,
                    deadline=None,
                    database=None,
                    phases=[Phase.generate],
                    suppress_health_check=list(HealthCheck),
                )
                def call(case):
                    check_answer(case.call(base_url=url, session=session, timeout=60), answers)

                call()
        with httpx.Client(base_url=url, timeout=60) as client:
            for method, endpoint, headers, body in hostile_requests(url):
                check_answer(client.request(method, endpoint, headers=headers, content=body),
                             answers)  # fmt: skip
    total = sum(answers.values())
    print(f"fuzz: {total} requests in {time.monotonic() - started:.1f} s, by status "
          f"{dict(sorted(answers.items()))}")  # fmt: skip
    assert total >= MIN_REQUESTS
    assert answers[200] >= 100  # the generator reached the endpoints' real work too
