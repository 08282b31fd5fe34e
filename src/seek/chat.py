"""``seek ask``: build the context, stream a chat model's answer, remember the session.

Chat servers: Ollama (``POST /api/chat``, newline-delimited JSON) and OpenAI-compatible
(``POST /v1/chat/completions``, server-sent events), model and address from the settings.
The prompt is the template (``~/.config/seek/prompt.md`` when it exists, else the built-in
one) with ``{question}`` and ``{blocks}`` filled in. A session (``--session NAME``) keeps
the last question and the files of its answer next to the index: a follow-up ("and how is
it tested?") is searched together with the previous question, and those files get focus
passes (reference §6.2-§6.3). Only this module talks to chat servers.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from seek.errors import SeekError, SettingsError
from seek.httperrors import server_message
from seek.retrieve import search
from seek.retrieve.context import ContextResult, build_context
from seek.settings import Settings, user_config_path
from seek.store import index_dir_for
from seek.text import search_text

DEFAULT_TEMPLATE = """Here is code from the workspace that may be relevant to the question below. \
Each block is labelled with its file and line range: cite those labels in your answer, and \
ignore blocks that do not bear on the question.

{blocks}

Question: {question}
"""
CHAT_URLS = {"ollama": "http://localhost:11434", "openai": "https://api.openai.com"}
CHAT_ROUTES = {"ollama": "/api/chat", "openai": "/v1/chat/completions"}
CHAT_TIMEOUT_S = 300.0
_SESSION_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class ChatError(SeekError):
    """The chat server could not answer."""


@dataclass
class Answer:
    text: str
    context: ContextResult
    searched: str
    """The search text: the question, preceded by the previous one for a follow-up."""


def prompt_template() -> str:
    path = user_config_path().with_name("prompt.md")
    return path.read_text(encoding="utf-8") if path.is_file() else DEFAULT_TEMPLATE


def session_path(root: Path, settings: Settings, name: str) -> Path:
    if not _SESSION_NAME.match(name):
        raise SettingsError("a session name is 1-64 letters, digits, '.', '_' or '-'")
    return index_dir_for(root, settings) / "sessions" / f"{name}.json"


def load_session(path: Path) -> tuple[str | None, tuple[str, ...]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return str(data["question"]), tuple(str(f) for f in data.get("files", []))
    except (OSError, ValueError, KeyError, TypeError):
        return None, ()


def save_session(path: Path, question: str, files: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"question": question, "files": files}), encoding="utf-8")
    os.replace(tmp, path)


def chat_endpoint(settings: Settings) -> str:
    provider = settings.chat_provider
    if provider not in CHAT_ROUTES:
        raise SettingsError(f"chat_provider must be ollama or openai, not {provider!r}")
    url = (settings.chat_url or CHAT_URLS[provider]).rstrip("/")
    if url.endswith(("/chat", "/completions")):
        return url
    if url.endswith("/v1"):
        return url + "/chat/completions"
    return url + CHAT_ROUTES[provider]


def stream_chat(settings: Settings, model: str, prompt: str) -> Iterator[str]:
    """The answer's pieces as the server sends them."""
    if not model:
        raise SettingsError("no chat model: pass --model or set chat_model in the settings")
    url = chat_endpoint(settings)
    server = "/".join(url.split("/")[:3])
    body = {"model": model, "messages": [{"role": "user", "content": prompt}], "stream": True}
    headers = {}
    if settings.chat_api_key_env:
        key = os.environ.get(settings.chat_api_key_env, "")
        if not key:
            raise SettingsError(f"the API key variable ${settings.chat_api_key_env} is not set")
        headers["Authorization"] = f"Bearer {key}"
    try:
        with httpx.stream(
            "POST", url, json=body, headers=headers, timeout=CHAT_TIMEOUT_S
        ) as response:
            if response.status_code >= 400:
                response.read()
                raise ChatError(_http_error(response, model, settings, server))
            if settings.chat_provider == "ollama":
                yield from _ollama_pieces(response)
            else:
                yield from _sse_pieces(response)
    except httpx.TimeoutException as exc:
        raise ChatError(f"{server} did not answer within {CHAT_TIMEOUT_S:g} s") from exc
    except httpx.TransportError as exc:
        hint = (
            " — is Ollama running? (`ollama serve`)" if settings.chat_provider == "ollama" else ""
        )
        raise ChatError(f"cannot reach {server}{hint}") from exc


def _http_error(response: httpx.Response, model: str, settings: Settings, server: str) -> str:
    message = server_message(response)
    if response.status_code == 401:
        return f"401: check the API key in ${settings.chat_api_key_env or 'chat_api_key_env'}"
    if response.status_code == 404 and "not found" in message.lower():
        return f"model {model!r} not found on the server — pull it first"
    return f"{server} answered HTTP {response.status_code}: {message}"


def _ollama_pieces(response: httpx.Response) -> Iterator[str]:
    for line in response.iter_lines():
        if not line.strip():
            continue
        data = json.loads(line)
        if data.get("error"):
            raise ChatError(str(data["error"]))
        piece = (data.get("message") or {}).get("content", "")
        if piece:
            yield piece
        if data.get("done"):
            return


def _sse_pieces(response: httpx.Response) -> Iterator[str]:
    for line in response.iter_lines():
        if not line.startswith("data:"):
            continue
        payload = line[5:].strip()
        if payload == "[DONE]":
            return
        data = json.loads(payload)
        for choice in data.get("choices", []):
            piece = (choice.get("delta") or {}).get("content") or ""
            if piece:
                yield piece


def ask(
    root: Path,
    question: str,
    settings: Settings,
    *,
    model: str | None = None,
    session: str | None = None,
    on_piece: Callable[[str], None] = lambda piece: None,
) -> Answer:
    """Answer ``question`` from the workspace's code with the chat model, streaming pieces."""
    question = question.strip()
    if not question:
        raise SettingsError("the question is empty")
    store = session_path(root, settings, session) if session else None
    previous, focus = load_session(store) if store else (None, ())
    searched = search_text(question, previous)
    found = search(root, searched, settings, k=settings.rerank_top, focus=focus)
    context = build_context(root, found, settings)
    prompt = prompt_template().format(blocks=context.prompt(), question=question)
    pieces = []
    for piece in stream_chat(settings, model or settings.chat_model, prompt):
        pieces.append(piece)
        on_piece(piece)
    if store:
        files = list(dict.fromkeys(b.path for b in context.blocks if b.kind != "team"))
        save_session(store, question, files)
    return Answer("".join(pieces), context, searched)
