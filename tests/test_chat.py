"""`seek ask` against a real streaming chat server on 127.0.0.1 (Ollama NDJSON, OpenAI SSE)."""

import json
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler

import pytest
from conftest import HashEmbedder
from local_http import serving

from seek.chat import Turn, ask, chat_endpoint, history_messages, session_path
from seek.errors import ChatError
from seek.index.indexer import index_workspace

ANSWER = ["Retries are ", "configured in ", "src/retry.py (lines 1-2)."]


@contextmanager
def chat_server(models=("llama3",), bodies=None):
    prompts = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            prompts.append(body["messages"][-1]["content"])
            if bodies is not None:
                bodies.append(body)
            if body["model"] not in models:
                data = json.dumps({"error": f"model '{body['model']}' not found"}).encode()
                self.send_response(404)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            self.send_response(200)
            self.end_headers()
            if self.path == "/api/chat":
                for piece in ANSWER:
                    line = {"message": {"role": "assistant", "content": piece}, "done": False}
                    self.wfile.write((json.dumps(line) + "\n").encode())
                self.wfile.write(b'{"message": {"content": ""}, "done": true}\n')
            else:
                for piece in ANSWER:
                    chunk = {"choices": [{"index": 0, "delta": {"content": piece}}]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

    with serving(Handler) as url:
        yield url, prompts


@pytest.fixture
def workspace(make_tree, settings_for):
    root = make_tree({
        "src/retry.py": "def configure_retries(policy):\n    return RetryPolicy(policy)\n",
        "tests/test_retry.py": "def test_configure_retries():\n    assert configure_retries(1)\n",
    })  # fmt: skip
    return root


def settings(settings_for, url, provider="ollama"):
    return settings_for(chat_provider=provider, chat_url=url, chat_model="llama3")


@pytest.mark.parametrize("provider", ["ollama", "openai"])
def test_answer_streams_with_the_context_in_the_prompt(workspace, settings_for, provider):
    with chat_server() as (url, prompts):
        s = settings(settings_for, url, provider)
        index_workspace(workspace, s, embedder=HashEmbedder())
        pieces = []
        answer = ask(workspace, "how are retries configured?", s, on_piece=pieces.append)
    assert pieces == ANSWER and answer.text == "".join(ANSWER)
    heading = "src/retry.py (lines 1-2) · configure_retries"  # the block's enclosing symbol
    assert f"{heading}\n```py\ndef configure_retries" in prompts[0]
    assert prompts[0].rstrip().endswith("Question: how are retries configured?")


def test_a_session_turns_follow_ups_into_focused_searches(workspace, settings_for):
    with chat_server() as (url, _):
        s = settings(settings_for, url)
        index_workspace(workspace, s, embedder=HashEmbedder())
        first = ask(workspace, "how are retries configured?", s, session="work")
        second = ask(workspace, "and how is it tested?", s, session="work")
        fresh = ask(workspace, "and how is it tested?", s, session="other")
    assert first.searched == "how are retries configured?"
    assert second.searched == "how are retries configured?\nand how is it tested?"
    assert fresh.searched == "and how is it tested?"


def test_a_session_sends_the_previous_turns_to_the_chat_model(workspace, settings_for):
    bodies = []
    with chat_server(bodies=bodies) as (url, _):
        s = settings(settings_for, url)
        index_workspace(workspace, s, embedder=HashEmbedder())
        ask(workspace, "how are retries configured?", s, session="work")
        ask(workspace, "and how is it tested?", s, session="work")
        ask(workspace, "and how is it tested?", s, session="other")
    first, second, fresh = (body["messages"] for body in bodies)
    assert len(first) == 1 and len(fresh) == 1  # no history before a session's first turn
    assert second[:2] == [
        {"role": "user", "content": "how are retries configured?"},
        {"role": "assistant", "content": "".join(ANSWER)},
    ]
    assert second[2]["role"] == "user"
    assert second[2]["content"].rstrip().endswith("Question: and how is it tested?")
    stored = json.loads(session_path(workspace, s, "work").read_text())["turns"]
    assert [t["question"] for t in stored] == [
        "how are retries configured?",
        "and how is it tested?",
    ]


def test_history_is_trimmed_to_the_budget_newest_first():
    turns = [Turn(f"question {i}", "answer " * 100 + str(i)) for i in range(5)]
    messages = history_messages(turns, budget=1_500)
    assert [m["content"] for m in messages if m["role"] == "user"] == ["question 3", "question 4"]
    assert sum(len(m["content"]) for m in messages) <= 1_500
    only = history_messages([Turn("why?", "x" * 5_000 + " the end")], budget=100)
    assert only[0]["content"] == "why?" and only[1]["content"].endswith(" the end")
    assert len(only[1]["content"]) <= 100


def test_clear_errors(workspace, settings_for):
    s = settings(settings_for, "http://127.0.0.1:9")
    index_workspace(workspace, s, embedder=HashEmbedder())
    with pytest.raises(ChatError, match=r"cannot reach http://127.0.0.1:9 — is Ollama running"):
        ask(workspace, "how are retries configured?", s)
    with chat_server() as (url, _):
        with pytest.raises(ChatError, match="model 'nope' not found on the server — pull it first"):
            ask(workspace, "how are retries configured?", settings(settings_for, url), model="nope")


def test_chat_endpoints(settings_for):
    assert chat_endpoint(settings_for()) == "http://localhost:11434/api/chat"
    s = settings_for(chat_provider="openai", chat_url="http://localhost:1234/v1")
    assert chat_endpoint(s) == "http://localhost:1234/v1/chat/completions"


def test_a_follow_up_focuses_on_the_previous_answers_files(workspace, settings_for, monkeypatch):
    # docs/commands.md, "seek ask": with --session, "the previous answer's files get their own
    # search passes". The real search runs; this only records what it was asked.
    import seek.chat

    calls = []
    real_context = seek.chat.workspace_context

    def recording_context(root, text, settings, **kwargs):
        calls.append(kwargs.get("focus", ()))
        return real_context(root, text, settings, **kwargs)

    monkeypatch.setattr(seek.chat, "workspace_context", recording_context)
    with chat_server() as (url, _):
        s = settings(settings_for, url)
        index_workspace(workspace, s, embedder=HashEmbedder())
        first = ask(workspace, "how are retries configured?", s, session="work")
        ask(workspace, "and how is it tested?", s, session="work")
    answered = tuple(dict.fromkeys(b.path for b in first.context.blocks))
    assert answered and calls[0] == ()
    assert calls[1] == answered
