"""The tool calls in a recorded answer, read with the standard library only.

    calls = response_calls("anthropic", interaction["response"])   # [(name, arguments)]

Used by the floor (read + parse every cassette + extract its calls) and to write
what the pytest-recording anchor's tests assert. It reads fcreplay's cassette
layout (`parsed_body`, or `sse` events with parsed `data`) for the four adapters
of the generated suites; arguments that are not JSON stay the raw text, an answer
with an error status has no calls.
"""

from __future__ import annotations

import json
from typing import Any

Call = tuple[str, Any]


def response_calls(adapter: str, response: dict[str, Any]) -> list[Call]:
    """The calls a recorded response holds, in order."""
    status = response.get("status", {}).get("code", 200)
    if not 200 <= status < 300:
        return []
    events = response.get("sse")
    if events is not None:
        data = [event.get("data") for event in events if isinstance(event.get("data"), dict)]
        return STREAMED[adapter](data)
    body = response.get("parsed_body")
    return WHOLE[adapter](body) if isinstance(body, dict) else []


def arguments(text: Any) -> Any:
    """Arguments sent as JSON text, parsed; anything else as it is."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _chat(body: dict[str, Any]) -> list[Call]:
    choices = body.get("choices") or [{}]
    calls = (choices[0].get("message") or {}).get("tool_calls") or []
    return [(c["function"]["name"], arguments(c["function"].get("arguments"))) for c in calls]


def _chat_stream(chunks: list[dict[str, Any]]) -> list[Call]:
    names: dict[int, str] = {}
    texts: dict[int, str] = {}
    for chunk in chunks:
        for choice in chunk.get("choices") or []:
            for call in (choice.get("delta") or {}).get("tool_calls") or []:
                index = call.get("index", 0)
                function = call.get("function") or {}
                if function.get("name"):
                    names[index] = function["name"]
                texts[index] = texts.get(index, "") + (function.get("arguments") or "")
    return [(names[i], arguments(texts.get(i, ""))) for i in sorted(names)]


def _responses(body: dict[str, Any]) -> list[Call]:
    return [
        (item["name"], arguments(item.get("arguments")))
        for item in body.get("output") or []
        if item.get("type") == "function_call"
    ]


def _responses_stream(events: list[dict[str, Any]]) -> list[Call]:
    for event in events:
        if event.get("type") == "response.completed":
            return _responses(event.get("response") or {})
    return []


def _anthropic(body: dict[str, Any]) -> list[Call]:
    return [
        (block["name"], block.get("input"))
        for block in body.get("content") or []
        if block.get("type") == "tool_use"
    ]


def _anthropic_stream(events: list[dict[str, Any]]) -> list[Call]:
    names: dict[int, str] = {}
    texts: dict[int, str] = {}
    for event in events:
        kind = event.get("type")
        index = event.get("index", 0)
        if kind == "content_block_start" and event["content_block"].get("type") == "tool_use":
            names[index] = event["content_block"]["name"]
        elif kind == "content_block_delta" and event["delta"].get("type") == "input_json_delta":
            texts[index] = texts.get(index, "") + event["delta"].get("partial_json", "")
    return [(names[i], arguments(texts.get(i) or "{}")) for i in sorted(names)]


def _gemini(body: dict[str, Any]) -> list[Call]:
    candidates = body.get("candidates") or [{}]
    parts = (candidates[0].get("content") or {}).get("parts") or []
    return [
        (part["functionCall"]["name"], part["functionCall"].get("args", {}))
        for part in parts
        if "functionCall" in part
    ]


def _gemini_stream(chunks: list[dict[str, Any]]) -> list[Call]:
    return [call for chunk in chunks for call in _gemini(chunk)]


WHOLE = {
    "openai_chat": _chat,
    "openai_responses": _responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
}
STREAMED = {
    "openai_chat": _chat_stream,
    "openai_responses": _responses_stream,
    "anthropic": _anthropic_stream,
    "gemini": _gemini_stream,
}


def adapter_of(uri: str) -> str:
    """The adapter a recorded request's URL speaks (the four of the generated suites)."""
    path = uri.split("?", 1)[0]
    if path.endswith("/chat/completions"):
        return "openai_chat"
    if path.endswith("/responses"):
        return "openai_responses"
    if path.endswith("/messages"):
        return "anthropic"
    if "GenerateContent" in path or "generateContent" in path:
        return "gemini"
    raise ValueError(f"no adapter of the generated suites speaks {uri}")
