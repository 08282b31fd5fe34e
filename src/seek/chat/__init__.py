"""``seek ask``: build the context, stream a chat model's answer, remember the session.

Chat servers: Ollama (``POST /api/chat``, newline-delimited JSON) and OpenAI-compatible
(``POST /v1/chat/completions``, server-sent events), model and address from the settings.
The prompt is the template (``~/.config/seek/prompt.md`` when it exists, else the built-in
one) with ``{question}`` and ``{blocks}`` filled in. A session (``--session NAME``) keeps
its turns (question, answer, the answer's files) next to the index: a follow-up ("and how
is it tested?") is searched together with the previous question, the previous answer's
files get focus passes (reference §6.2-§6.3), and the chat model receives the previous
turns as conversation messages, newest kept first within ``HISTORY_BUDGET_CHARS`` (issue
15). Only this module talks to chat servers, through :class:`seek.remote.Remote`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from seek.errors import ChatError, SettingsError
from seek.redact import one_line
from seek.remote import Remote, Response, join_route
from seek.retrieve.context import ContextResult
from seek.settings import Settings, user_config_path
from seek.store import index_dir_for
from seek.store.private import private_folder, private_opener
from seek.text import search_text
from seek.workspace import Workspaces
from seek.workspace import context as workspace_context

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
HISTORY_BUDGET_CHARS = 8_000
"""Characters of previous questions and answers sent with a session's question (about 2,000
tokens: room for the last few turns next to the 12,000 characters of code)."""
MAX_TURNS = 20
"""Turns a session file keeps."""


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


@dataclass(frozen=True)
class Turn:
    question: str
    answer: str
    files: tuple[str, ...] = ()


def load_session(path: Path) -> list[Turn]:
    """The session's turns, oldest first (none when the file is missing or unreadable; a
    session written by seek 0.1, with only the last question and files, is one turn)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if "turns" not in data:
            return [Turn(str(data["question"]), "", tuple(str(f) for f in data.get("files", [])))]
        return [
            Turn(str(t["question"]), str(t.get("answer", "")), tuple(map(str, t.get("files", []))))
            for t in data["turns"]
        ]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []


def save_session(path: Path, turns: list[Turn]) -> None:
    private_folder(path.parent)  # sessions hold questions, answers and code (issue 43)
    tmp = path.with_suffix(".tmp")
    data = {
        "turns": [
            {"question": t.question, "answer": t.answer, "files": list(t.files)}
            for t in turns[-MAX_TURNS:]
        ]
    }
    with open(tmp, "w", encoding="utf-8", opener=private_opener) as fh:
        fh.write(json.dumps(data))
    os.replace(tmp, path)


def history_messages(turns: list[Turn], budget: int = HISTORY_BUDGET_CHARS) -> list[dict]:
    """Chat messages for the previous turns, oldest first: whole turns, newest first, while
    they fit in ``budget`` characters; when even the newest does not fit, its question and
    the end of its answer (where the conclusion is) up to the budget."""
    kept: list[Turn] = []
    used = 0
    for turn in reversed(turns):
        size = len(turn.question) + len(turn.answer)
        if used + size > budget:
            if not kept and len(turn.question) < budget:
                room = budget - len(turn.question)
                kept.append(Turn(turn.question, "…" + turn.answer[-room:] if room else ""))
            break
        kept.append(turn)
        used += size
    messages = []
    for turn in reversed(kept):
        messages.append({"role": "user", "content": turn.question})
        if turn.answer:
            messages.append({"role": "assistant", "content": turn.answer})
    return messages


def chat_endpoint(settings: Settings) -> str:
    provider = settings.chat_provider
    if provider not in CHAT_ROUTES:
        raise SettingsError(f"chat_provider must be ollama or openai, not {provider!r}")
    return join_route(
        settings.chat_url or CHAT_URLS[provider], CHAT_ROUTES[provider],
        named=("/chat", "/completions"), v1_route="/chat/completions",
    )  # fmt: skip


def stream_chat(
    settings: Settings, model: str, prompt: str, history: list[dict] | None = None
) -> Iterator[str]:
    """The answer's pieces as the server sends them (``history``: earlier messages)."""
    if not model:
        raise SettingsError("no chat model: pass --model or set chat_model in the settings")
    url = chat_endpoint(settings)
    messages = [*(history or []), {"role": "user", "content": prompt}]
    body = {"model": model, "messages": messages, "stream": True}
    ollama = settings.chat_provider == "ollama"
    hint = " — is Ollama running? (`ollama serve`)" if ollama else ""
    token_env = settings.chat_api_key_env
    with Remote(
        url, error=ChatError, timeout_s=CHAT_TIMEOUT_S, token_env=token_env, hint=hint
    ) as remote:
        with remote.stream("POST", json=body) as response:
            remote.check(response, model=model, key_setting="chat_api_key_env")
            yield from (_ollama_pieces if ollama else _sse_pieces)(response)


def _ollama_pieces(response: Response) -> Iterator[str]:
    for line in response.iter_lines():
        if not line.strip():
            continue
        data = json.loads(line)
        if data.get("error"):
            raise ChatError(one_line(str(data["error"])))  # a server may echo the key
        piece = (data.get("message") or {}).get("content", "")
        if piece:
            yield piece
        if data.get("done"):
            return


def _sse_pieces(response: Response) -> Iterator[str]:
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
    on_context: Callable[[ContextResult], None] = lambda context: None,
    workspaces: Workspaces | None = None,
) -> Answer:
    """Answer ``question`` from the workspace's code with the chat model, streaming pieces;
    ``on_context`` gets the blocks sent before the model's first word (so a page can list
    the sources while the answer streams). A server passes its ``workspaces`` (its kept
    searchers); else the context is a one-shot call."""
    question = question.strip()
    if not question:
        raise SettingsError("the question is empty")
    store = session_path(root, settings, session) if session else None
    turns = load_session(store) if store else []
    previous, focus = (turns[-1].question, turns[-1].files) if turns else (None, ())
    searched = search_text(question, previous)
    if workspaces is None:
        context = workspace_context(root, searched, settings, focus=focus)
    else:
        context = workspaces.context(root, searched, settings=settings, focus=focus)
    on_context(context)
    prompt = prompt_template().format(blocks=context.prompt(), question=question)
    pieces = []
    history = history_messages(turns)
    for piece in stream_chat(settings, model or settings.chat_model, prompt, history):
        pieces.append(piece)
        on_piece(piece)
    if store:
        files = tuple(dict.fromkeys(b.path for b in context.blocks if b.kind != "team"))
        save_session(store, [*turns, Turn(question, "".join(pieces), files)])
    return Answer("".join(pieces), context, searched)
