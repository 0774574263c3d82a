"""Chat Completions answers and errors rendered for the simulator (the other side of the wire)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fcreplay.adapters import _usage, _wire
from fcreplay.adapters._openai_errors import error_object, retry_after
from fcreplay.decision import Decision, ProviderError, ToolCall
from fcreplay.neutral import StreamEvent, WireResponse

JSON_HEADERS = {"content-type": "application/json"}
SSE_HEADERS = {"content-type": "text/event-stream"}

_FINISH_FOR_STOP = {"length": "length", "content_filter": "content_filter"}
_RESPONSE_ID = "chatcmpl-fcreplay"
_USAGE = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
_PIECE = 6
"""Characters per rendered stream fragment: small, like the tokens real streams carry."""


def render_response(decision: Decision, stream: bool = False) -> WireResponse:
    """Render a realistic body or SSE stream that parses back into `decision`."""
    finish = decision.finish_reason or _natural_finish(decision)
    message = assistant_message(decision)
    model = decision.model or _wire.SIMULATOR_MODEL
    if stream:
        chunks = _chunks(message, finish, model, _usage_block(decision))
        return WireResponse(200, dict(SSE_HEADERS), events=tuple(chunks))
    body = {
        "id": _RESPONSE_ID,
        "object": "chat.completion",
        "created": 0,
        "model": model,
        # The API always writes `refusal`, null when the model did not refuse.
        "choices": [
            {
                "index": 0,
                "message": {"refusal": None, **message},
                "logprobs": None,
                "finish_reason": finish,
            }
        ],
        "usage": _usage_block(decision),
    }
    return WireResponse(200, dict(JSON_HEADERS), body)


def _usage_block(decision: Decision) -> dict[str, Any]:
    return _usage.openai_chat_block(decision.usage) if decision.usage else dict(_USAGE)


def assistant_message(decision: Decision) -> dict[str, Any]:
    """The assistant message a Chat Completions body would hold for `decision`."""
    refused = decision.kind == "refusal"
    message: dict[str, Any] = {"role": "assistant", "content": None if refused else decision.text}
    if refused and decision.stop != "content_filter":
        message["refusal"] = decision.text or ""
    if decision.calls:
        message["tool_calls"] = [_wire_call(call) for call in decision.calls]
    return message


def render_error(error: ProviderError, stream: bool = False) -> WireResponse:
    """Render an OpenAI error envelope; in a stream, a `data: {"error": ...}` event in a 200."""
    message = error.message
    if error.retry_after is not None and retry_after(message) is None:
        # The body is the only place parsing finds a delay; milliseconds are its precision.
        seconds = f"{error.retry_after:.3f}".rstrip("0").rstrip(".") or "0"
        message = f"{message} Please try again in {seconds}s."
    envelope = error_object(error, message)
    if not stream:
        return WireResponse(error.status, dict(JSON_HEADERS), {"error": envelope})
    envelope["status_code"] = error.status  # as Groq does, so the status survives the 200
    events = (StreamEvent(None, {"error": envelope}), StreamEvent(None, "[DONE]"))
    return WireResponse(200, dict(SSE_HEADERS), events=events)


def _natural_finish(decision: Decision) -> str:
    if decision.stop in _FINISH_FOR_STOP:
        return _FINISH_FOR_STOP[decision.stop]
    if decision.kind == "invalid" and decision.calls:
        # Only a cut-off explains an invalid turn whose arguments all parse.
        broken = any(call.arguments is None for call in decision.calls)
        return "tool_calls" if broken else "length"
    return "tool_calls" if decision.calls or decision.kind == "invalid" else "stop"


def _wire_call(call: ToolCall) -> dict[str, Any]:
    function: dict[str, Any] = {"name": call.name}
    if call.raw_arguments is not None:
        function["arguments"] = call.raw_arguments
    else:  # a scripted call given decoded arguments only; none is the empty object
        function["arguments"] = _wire.encode_arguments(call.arguments or {})
    item: dict[str, Any] = {"type": "function", "function": function}
    return item if call.call_id is None else {"id": call.call_id, **item}


def _chunks(
    message: Mapping[str, Any], finish: str, model: str, usage: dict[str, Any]
) -> Iterator[StreamEvent]:
    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> StreamEvent:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return StreamEvent(None, {**head, "choices": [choice]})

    head = {"id": _RESPONSE_ID, "object": "chat.completion.chunk", "created": 0, "model": model}
    yield chunk({"role": "assistant", "content": ""})
    for key in ("content", "refusal"):
        if isinstance(message.get(key), str):
            yield from (chunk({key: piece}) for piece in _pieces(message[key]))
    for index, call in enumerate(message.get("tool_calls", [])):
        function = call["function"]
        first = {"index": index, **call, "function": {"name": function["name"]}}
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            first["function"]["arguments"] = ""
            yield chunk({"tool_calls": [first]})
            for piece in _wire.pieces(arguments, _PIECE):
                fragment = {"index": index, "function": {"arguments": piece}}
                yield chunk({"tool_calls": [fragment]})
        else:  # an object, or none at all: whole in one delta, as Ollama sends calls
            if "arguments" in function:
                first["function"]["arguments"] = arguments
            yield chunk({"tool_calls": [first]})
    yield chunk({}, finish)
    yield StreamEvent(None, {**head, "choices": [], "usage": usage})
    yield StreamEvent(None, "[DONE]")


def _pieces(text: str) -> list[str]:
    # An empty text still streams as one empty fragment, so the field is there.
    return _wire.pieces(text, _PIECE) or [""]
