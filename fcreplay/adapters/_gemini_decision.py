"""Gemini answers read into Decisions: bodies, SSE chunks and JSON-array streams."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import fcreplay.jsoncopy as jsoncopy
import fcreplay.strictjson as strictjson
from fcreplay.adapters import _usage, _wire
from fcreplay.adapters._gemini_errors import invalid_body, read_error
from fcreplay.adapters._wire import as_dict, as_list, map_stop
from fcreplay.canonical import normalize
from fcreplay.decision import Decision, DecisionKind, ProviderError, Stop, ToolCall, Usage
from fcreplay.neutral import StreamEvent

BLOCK_PREFIX = "blockReason:"
"""`finish_reason` prefix of a prompt blocked before any candidate was produced."""

_FILTERED: Stop = "content_filter"
_MALFORMED: Stop = "malformed_call"
_OTHER: Stop = "other"
_STOPS: dict[str, Stop] = {
    "STOP": "end",
    "MAX_TOKENS": "length",
    **dict.fromkeys(
        (
            "SAFETY",
            "RECITATION",
            "LANGUAGE",
            "BLOCKLIST",
            "PROHIBITED_CONTENT",
            "SPII",
            "IMAGE_SAFETY",
            "IMAGE_PROHIBITED_CONTENT",
            "IMAGE_RECITATION",
            "MODEL_ARMOR",  # Vertex AI's prompt and response screening
        ),
        _FILTERED,
    ),
    **dict.fromkeys(
        ("MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"), _MALFORMED
    ),
    **dict.fromkeys(("OTHER", "FINISH_REASON_UNSPECIFIED", "NO_IMAGE", "IMAGE_OTHER"), _OTHER),
}


_VERTEX_FINISH: tuple[str, ...] = (
    "FINISH_REASON_UNSPECIFIED",
    "STOP",
    "MAX_TOKENS",
    "SAFETY",
    "RECITATION",
    "OTHER",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "MALFORMED_FUNCTION_CALL",
    "MODEL_ARMOR",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
    "IMAGE_OTHER",
    "UNEXPECTED_TOOL_CALL",
    "NO_IMAGE",
)
"""Vertex AI's `Candidate.FinishReason` by number (google.cloud.aiplatform.v1), which
`$alt=json;enum-encoding=int` responses send instead of the names."""
_VERTEX_BLOCK = ("BLOCKED_REASON_UNSPECIFIED", "SAFETY", "OTHER", "BLOCKLIST", "PROHIBITED_CONTENT")


def enum_name(value: Any, names: Sequence[str]) -> str | None:
    """An enum value as its name: a name as sent, a number (enum-encoding=int) looked up."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return names[value] if 0 <= value < len(names) else f"{names[0]}:{value}"
    return None


def parse_decision(status: int, body: Any) -> Decision | ProviderError:
    """Turn a `generateContent` response body into a Decision or a ProviderError.

    A JSON-array body (`streamGenerateContent` without `alt=sse`) is read as
    the list of its chunks.
    """
    return _parse_body(status, body, _gemini_body_usage(body))


def _parse_body(status: int, body: Any, usage: Usage | None) -> Decision | ProviderError:
    # The usage goes into the Decision as it is made (`_usage.with_usage` would make it twice).
    if isinstance(body, bytes | str):
        try:
            body = strictjson.loads(body)
        except ValueError:
            if 200 <= status < 300:
                return invalid_body(status, body)
            return read_error(status, body)
    if not 200 <= status < 300:
        return read_error(status, body)
    if isinstance(body, list):
        return _from_chunks(status, body, raw=body, usage=usage)
    if not isinstance(body, dict):
        return invalid_body(status, body)
    if "error" in body:
        return read_error(status, body)
    return _decide(body, raw=body, turn=first_candidate(body).get("content"), usage=usage)


def parse_stream(status: int, events: Sequence[StreamEvent]) -> Decision | ProviderError:
    """Assemble a `streamGenerateContent` stream (SSE events or JSON-array chunks).

    Each event is one whole GenerateContentResponse chunk: text parts are
    deltas (merged), `functionCall` parts arrive whole, `finishReason` comes
    with the last chunk. Empty `{"text": ""}` parts, which some models send
    with the final chunk, are not kept in the assembled turn.
    """
    return _parse_events(status, events, _usage.gemini_chunks(_stream_chunks(events)))


def _gemini_body_usage(body: Any) -> Usage | None:
    if isinstance(body, bytes | str):
        try:
            body = strictjson.loads(body)
        except ValueError:
            return None
    return _usage.gemini_chunks(body if isinstance(body, list) else [body])


def _stream_chunks(events: Sequence[StreamEvent]) -> list[Any]:
    chunks: list[Any] = []
    for event in events:
        chunks.extend(event.data if isinstance(event.data, list) else [event.data])
    return chunks


def _parse_events(
    status: int, events: Sequence[StreamEvent], usage: Usage | None
) -> Decision | ProviderError:
    raw = _wire.raw_events(events)
    chunks: list[Any] = []
    for event in events:
        chunks.extend(event.data if isinstance(event.data, list) else [event.data])
    if not 200 <= status < 300:
        errors = (chunk for chunk in chunks if isinstance(chunk, dict) and "error" in chunk)
        return read_error(status, next(errors, chunks[0] if chunks else None))
    return _from_chunks(status, chunks, raw=raw, usage=usage)


def _from_chunks(
    status: int, chunks: Sequence[Any], raw: Any, usage: Usage | None
) -> Decision | ProviderError:
    if not chunks:
        return _wire.truncated(Decision("invalid", raw_response=raw), 0)
    parts: list[dict[str, Any]] = []
    role = "model"
    finish: str | None = None
    feedback: Any = None
    model: Any = None
    answered = False
    for chunk in chunks:
        if isinstance(chunk, str | bytes):
            if not chunk.strip():
                continue
            return invalid_body(status, chunk)
        if not isinstance(chunk, dict):
            continue
        if "error" in chunk:
            return read_error(status, chunk)
        model = chunk.get("modelVersion", model)
        feedback = chunk.get("promptFeedback", feedback)
        candidate = first_candidate(chunk)
        if not candidate:
            continue
        answered = True
        content = as_dict(candidate.get("content"))
        role = content["role"] if isinstance(content.get("role"), str) else role
        for part in parts_of(content):
            _merge_part(parts, part)
        finish = enum_name(candidate.get("finishReason"), _VERTEX_FINISH) or finish
    response: dict[str, Any] = {}
    if answered:
        candidate = {"content": {"role": role, "parts": parts}}
        if finish is not None:
            candidate["finishReason"] = finish
        response["candidates"] = [candidate]
    if feedback is not None:
        response["promptFeedback"] = feedback
    if model is not None:
        response["modelVersion"] = model
    turn = response["candidates"][0]["content"] if answered else None
    return _decide(response, raw=raw, turn=turn, chunks=len(chunks), usage=usage)


_TEXT_KEYS = frozenset({"text", "thought"})


def _merge_part(parts: list[dict[str, Any]], part: dict[str, Any]) -> None:
    """Append a streamed part, joining a text delta to the text part before it."""
    if set(part) <= _TEXT_KEYS and part.get("text") == "":
        return
    previous = parts[-1] if parts else None
    if (
        previous is not None
        and isinstance(previous.get("text"), str)
        and isinstance(part.get("text"), str)
        and set(previous) <= _TEXT_KEYS
        and set(part) <= _TEXT_KEYS | {"thoughtSignature"}
        and previous.get("thought", False) == part.get("thought", False)
    ):
        previous["text"] += part["text"]
        if "thoughtSignature" in part:
            previous["thoughtSignature"] = part["thoughtSignature"]
        return
    parts.append(jsoncopy.copied(part))


def _decide(
    response: Mapping[str, Any],
    *,
    raw: Any,
    turn: Any,
    chunks: int | None = None,
    usage: Usage | None = None,
) -> Decision | ProviderError:
    model = response.get("modelVersion")
    model = model if isinstance(model, str) else None
    candidate = first_candidate(response)
    if not candidate:
        feedback = as_dict(response.get("promptFeedback")).get("blockReason")
        block = enum_name(feedback, _VERTEX_BLOCK)
        if isinstance(block, str):
            return Decision(
                kind="refusal",
                finish_reason=BLOCK_PREFIX + block,
                stop="content_filter",
                raw_response=raw,
                model=model,
                usage=usage,
            )
        return Decision(
            kind="invalid",
            finish_reason=None,
            stop="other",
            raw_response=raw,
            model=model,
            usage=usage,
        )
    parts = parts_of(as_dict(candidate.get("content")))
    calls = tuple(call for call in map(_call, parts) if call is not None)
    text = "".join(
        part["text"]
        for part in parts
        if isinstance(part.get("text"), str) and part.get("thought") is not True
    )
    finish = enum_name(candidate.get("finishReason"), _VERTEX_FINISH)
    stop = map_stop(_STOPS, finish, default="other")
    if calls and stop == "end":
        stop = "tool_call"
    # Gemini streams have no end sentinel: a candidate without any finishReason is how
    # a turn that never ended shows, so neither its text nor its calls are final. A
    # stream cut so is a failure to answer (kept without its usage, as
    # `_usage.with_usage` leaves the error it becomes); a whole body without one is an
    # odd answer.
    cut = finish is None and chunks is not None
    decision = Decision(
        kind=_kind(calls, stop),
        text=text or None,
        calls=calls,
        finish_reason=finish,
        stop=stop,
        raw_response=raw,
        assistant_turn=jsoncopy.copied(turn),
        model=model,
        usage=None if cut else usage,
    )
    if finish is not None:
        return decision
    if chunks is None:
        return replace(decision, kind="invalid", stop="other", finish_reason=None)
    return _wire.truncated(decision, chunks)


def _kind(calls: tuple[ToolCall, ...], stop: Stop) -> DecisionKind:
    if calls:
        unusable = stop in ("length", "malformed_call")
        return "invalid" if unusable or any(c.arguments is None for c in calls) else "tool_call"
    if stop == "content_filter":
        return "refusal"
    return "invalid" if stop == "malformed_call" else "text"


def _call(part: Mapping[str, Any]) -> ToolCall | None:
    call = part.get("functionCall")
    if not isinstance(call, dict):
        return None
    raw = call.get("args")
    # `args` is a protobuf Struct: an object or nothing, never JSON text to decode.
    # Struct numbers are doubles, so integral floats go back to ints (as the SDK does).
    arguments = {} if raw is None else normalize(raw) if isinstance(raw, dict) else None
    call_id = call.get("id")
    name = call.get("name")
    return ToolCall(
        call_id=call_id if isinstance(call_id, str) else None,
        name=name if isinstance(name, str) else "",
        arguments=arguments,
        raw_arguments=jsoncopy.copied(raw),
    )


def first_candidate(response: Mapping[str, Any]) -> dict[str, Any]:
    """The first candidate of a response, or {} when there is none."""
    candidates = as_list(response.get("candidates"))
    return candidates[0] if candidates and isinstance(candidates[0], dict) else {}


def parts_of(content: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The parts of a `content` object that are objects."""
    return [part for part in as_list(content.get("parts")) if isinstance(part, dict)]
