"""Ollama native `/api/chat` answers: read into Decisions (bodies, NDJSON streams) and rendered.

Wire facts (docs/providers.md §6.5): the answer is one object with `message`
(`content`, optional `thinking`, `tool_calls[].function.{name, arguments}` where
`arguments` is a JSON object) and `done` / `done_reason`; a stream is one such
object per line, `done: true` on the last; errors are `{"error": "<text>"}`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fcreplay.adapters import _usage, _wire
from fcreplay.adapters._wire import as_dict, as_list
from fcreplay.decision import Decision, DecisionKind, ProviderError, Stop, ToolCall
from fcreplay.neutral import StreamEvent, WireResponse

_STOPS: dict[str, Stop] = {"stop": "end", "length": "length"}
_JSON = {"content-type": "application/json; charset=utf-8"}
_NDJSON = {"content-type": "application/x-ndjson"}
_CREATED = "2026-01-01T00:00:00Z"
_PIECE = 8


def parse_decision(status: int, body: Any) -> Decision | ProviderError:
    """Read a non-streamed `/api/chat` answer (or its error)."""
    if not 200 <= status < 300 or "error" in as_dict(body) or not isinstance(body, dict):
        return read_error(status, body)
    decision = _decide(as_dict(body.get("message")), body, raw=body)
    return _usage.with_usage(decision, _usage.ollama(body))


def parse_stream(status: int, events: Sequence[StreamEvent]) -> Decision | ProviderError:
    """Reassemble an NDJSON stream into the Decision of its non-streamed twin."""
    chunks = [event.data for event in events]
    if not 200 <= status < 300:
        return read_error(status, chunks[0] if chunks else None)
    content: list[str] = []
    thinking: list[str] = []
    calls: list[Any] = []
    last: dict[str, Any] = {}
    role = "assistant"
    for chunk in chunks:
        if not isinstance(chunk, dict):
            continue
        if "error" in chunk:
            return read_error(status, chunk)
        message = as_dict(chunk.get("message"))
        role = message.get("role", role)
        if isinstance(message.get("content"), str):
            content.append(message["content"])
        if isinstance(message.get("thinking"), str):
            thinking.append(message["thinking"])
        calls.extend(as_list(message.get("tool_calls")))  # each call arrives whole
        last = chunk
    message = {"role": role, "content": "".join(content)}
    if thinking:
        message["thinking"] = "".join(thinking)
    if calls:
        message["tool_calls"] = calls
    decision = _decide(message, last, raw=_wire.raw_events(events))
    if last.get("done") is not True:
        return _wire.truncated(decision, len(events))
    return _usage.with_usage(decision, _usage.ollama(last))


def _decide(message: dict[str, Any], final: dict[str, Any], raw: Any) -> Decision:
    reason = final.get("done_reason")
    finish = reason if isinstance(reason, str) else None
    calls = tuple(
        _wire.tool_call(call.get("id"), as_dict(call.get("function")).get("name"), _arguments(call))
        for call in map(as_dict, as_list(message.get("tool_calls")))
    )
    text = message.get("content") if isinstance(message.get("content"), str) else None
    stop = _wire.map_stop(_STOPS, finish, "end")
    kind: DecisionKind = "text"
    if calls:
        broken = stop == "length" or any(call.arguments is None for call in calls)
        kind = "invalid" if broken else "tool_call"
        stop = "tool_call" if stop == "end" else stop
    model = final.get("model")
    return Decision(
        kind=kind,
        text=text or None,
        calls=calls,
        finish_reason=finish,
        stop=stop,
        raw_response=raw,
        assistant_turn=message,
        model=model if isinstance(model, str) else None,
    )


def _arguments(call: dict[str, Any]) -> Any:
    return as_dict(call.get("function")).get("arguments")


def read_error(status: int, body: Any) -> ProviderError:
    """The ProviderError of an `{"error": "..."}` body (or of anything that is no answer)."""
    error = as_dict(body).get("error")
    message = error if isinstance(error, str) else _wire.json_text(body) if body else ""
    if isinstance(error, dict):  # some proxies in front of Ollama nest it
        message = str(error.get("message", message))
    code = status if not 200 <= status < 300 else 500
    return ProviderError(
        status=code,
        type=None,
        code=None,
        message=message or f"HTTP {status}",
        retryable=_wire.is_retryable(code),
        raw=body,
    )


# --- rendering, for the simulator ---------------------------------------------------


def assistant_message(decision: Decision) -> dict[str, Any]:
    """The `message` of an answer carrying `decision`."""
    message: dict[str, Any] = {"role": "assistant", "content": decision.text or ""}
    if decision.calls:
        message["tool_calls"] = [
            {
                **({"id": call.call_id} if call.call_id else {}),
                "function": {"index": index, "name": call.name, "arguments": _object(call)},
            }
            for index, call in enumerate(decision.calls)
        ]
    return message


def _object(call: ToolCall) -> Any:
    if isinstance(call.raw_arguments, dict):
        return call.raw_arguments
    return call.arguments if call.arguments is not None else {}


def render_response(decision: Decision, stream: bool = False) -> WireResponse:
    """An `/api/chat` answer (or its NDJSON lines) that parses back into `decision`."""
    model = decision.model or _wire.SIMULATOR_MODEL
    reason = decision.finish_reason or ("length" if decision.stop == "length" else "stop")
    message = assistant_message(decision)
    final = {"model": model, "created_at": _CREATED, "message": message, "done": True}
    counts = _usage.ollama_counts(decision.usage) if decision.usage else {"eval_count": 0}
    final.update(done_reason=reason, total_duration=0, **counts)
    if not stream:
        return WireResponse(200, dict(_JSON), final)
    lines: list[dict[str, Any]] = [
        {
            "model": model,
            "created_at": _CREATED,
            "message": {"role": "assistant", "content": piece},
            "done": False,
        }
        for piece in _wire.pieces(message["content"], _PIECE)
    ]
    if "tool_calls" in message:
        calls = {"role": "assistant", "content": "", "tool_calls": message["tool_calls"]}
        lines.append({"model": model, "created_at": _CREATED, "message": calls, "done": False})
    end = {**final, "message": {"role": "assistant", "content": ""}}
    events = tuple(StreamEvent(None, line) for line in [*lines, end])
    return WireResponse(200, dict(_NDJSON), events=events)


def render_error(error: ProviderError, stream: bool = False) -> WireResponse:
    """`{"error": "..."}` with the status; in a stream, an error line after a 200."""
    if stream:
        return WireResponse(
            200, dict(_NDJSON), events=(StreamEvent(None, {"error": error.message}),)
        )
    return WireResponse(error.status, dict(_JSON), {"error": error.message})
