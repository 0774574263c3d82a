"""Send one recorded request through the official SDK of its API and return the parsed calls.

Copied, with `calls.py`, into the generated pytest project of the pytest-recording
anchor (`sdk_anchor.py`); nothing here knows about cassettes. The request is the
recorded JSON body: keyword arguments the SDK method knows go as arguments, the
rest as `extra_body`. Streams are consumed the way the SDK documents (chunks
accumulated; Anthropic's `messages.stream(...).get_final_message()`). An answer
with an error status raises the SDK's own error (clients never retry).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anthropic
import openai
from calls import Call, arguments


@dataclass
class Clients:
    """One client per SDK, pointed at the recorded origin, never retrying."""

    openai: Any
    anthropic: Any
    gemini: Any


def make_clients(origin: str, http_client: Any = None) -> Clients:
    """Clients for `origin` (e.g. http://127.0.0.1:8765); google-genai when installed."""
    gemini = None
    try:
        from google import genai
        from google.genai import types
    except ImportError:  # pragma: no cover - the test extra installs it
        pass
    else:
        options = types.HttpOptions(base_url=origin, api_version="v1beta")
        gemini = genai.Client(api_key="replay", http_options=options)
    extra = {} if http_client is None else {"http_client": http_client}
    return Clients(
        openai=openai.OpenAI(base_url=origin + "/v1", api_key="replay", max_retries=0, **extra),
        anthropic=anthropic.Anthropic(base_url=origin, api_key="replay", max_retries=0, **extra),
        gemini=gemini,
    )


def status_of(error: BaseException) -> int | None:
    """The HTTP status an SDK error carries (each SDK names it its own way)."""
    for name in ("status_code", "code", "status"):
        value = getattr(error, name, None)
        if isinstance(value, int):
            return value
    return None


def split(method: Callable[..., Any], body: dict[str, Any]) -> dict[str, Any]:
    """The body as keyword arguments of `method`; what it does not know goes in extra_body."""
    known = _parameters(method)
    kwargs = {k: v for k, v in body.items() if k in known}
    extra = {k: v for k, v in body.items() if k not in known}
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


_KNOWN: dict[Any, frozenset[str]] = {}


def _parameters(method: Callable[..., Any]) -> frozenset[str]:
    key = getattr(method, "__func__", method)
    found = _KNOWN.get(key)
    if found is None:
        found = frozenset(inspect.signature(method).parameters) - {"extra_body"}
        _KNOWN[key] = found
    return found


def send(clients: Clients, path: str, body: dict[str, Any]) -> list[Call]:
    """POST the recorded body to `path` through its SDK; the calls of the answer."""
    if path.endswith("/chat/completions"):
        return _chat(clients.openai, body)
    if path.endswith("/responses"):
        return _responses(clients.openai, body)
    if path.endswith("/messages"):
        return _anthropic(clients.anthropic, body)
    return _gemini(clients.gemini, path, body)


def _chat(client: Any, body: dict[str, Any]) -> list[Call]:
    create = client.chat.completions.create
    if not body.get("stream"):
        message = create(**split(create, body)).choices[0].message
        found = message.tool_calls or []
        return [(c.function.name, arguments(c.function.arguments)) for c in found]
    names: dict[int, str] = {}
    texts: dict[int, str] = {}
    for chunk in create(**split(create, body)):
        for choice in chunk.choices:
            for call in choice.delta.tool_calls or []:
                if call.function and call.function.name:
                    names[call.index] = call.function.name
                if call.function and call.function.arguments:
                    texts[call.index] = texts.get(call.index, "") + call.function.arguments
    return [(names[i], arguments(texts.get(i, ""))) for i in sorted(names)]


def _responses(client: Any, body: dict[str, Any]) -> list[Call]:
    create = client.responses.create
    if body.get("stream"):
        response = None
        for event in create(**split(create, body)):
            if event.type == "response.completed":
                response = event.response
        output = response.output if response is not None else []
    else:
        output = create(**split(create, body)).output
    return [(i.name, arguments(i.arguments)) for i in output if i.type == "function_call"]


def _anthropic(client: Any, body: dict[str, Any]) -> list[Call]:
    if body.get("stream"):
        rest = {k: v for k, v in body.items() if k != "stream"}
        with client.messages.stream(**split(client.messages.stream, rest)) as stream:
            message = stream.get_final_message()
    else:
        message = client.messages.create(**split(client.messages.create, body))
    return [(b.name, b.input) for b in message.content if b.type == "tool_use"]


def _gemini(client: Any, path: str, body: dict[str, Any]) -> list[Call]:
    if client is None:  # pragma: no cover - without google-genai
        raise RuntimeError("google-genai is not installed")
    model, _, method = path.rsplit("/", 1)[-1].partition(":")
    config = dict(body.get("generationConfig") or {})
    for key in ("systemInstruction", "tools", "toolConfig", "safetySettings"):
        if key in body:
            config[key] = body[key]
    if method.startswith("stream"):
        chunks = client.models.generate_content_stream(
            model=model, contents=body["contents"], config=config
        )
        calls = [call for chunk in chunks for call in chunk.function_calls or []]
    else:
        response = client.models.generate_content(
            model=model, contents=body["contents"], config=config
        )
        calls = response.function_calls or []
    # A call without arguments has no `args` on the wire: the SDK says None, read as {}.
    return [(call.name, call.args if call.args is not None else {}) for call in calls]


def assert_exchanges(clients: Clients, exchanges: list[list[Any]]) -> None:
    """Send each [path, body, status, expected calls] in order; assert what the SDK parsed.

    An error status must come back as the SDK's error with that status. Names are
    compared always, arguments where the recording's parse to an object (the
    simulator's deliberately broken arguments stay text, which SDKs read differently).
    """
    for path, body, status, expected in exchanges:
        if status >= 400:
            try:
                send(clients, path, body)
            except Exception as error:  # each SDK raises its own status error class
                assert status_of(error) == status, f"{path}: {error!r}, recorded {status}"
                continue
            raise AssertionError(f"{path}: no error raised, recorded status {status}")
        found = send(clients, path, body)
        assert [name for name, _ in found] == [name for name, _ in expected], (found, expected)
        for (_, got), (_, want) in zip(found, expected, strict=True):
            if isinstance(want, dict):
                assert got == want, (got, want)
