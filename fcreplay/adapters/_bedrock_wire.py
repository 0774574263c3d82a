"""Bedrock Converse answers: bodies and ConverseStream events read into Decisions, and rendered.

A body is `{"output": {"message": {"role", "content": [blocks]}}, "stopReason", "usage"}`
with `text`, `toolUse {toolUseId, name, input}` and `reasoningContent` blocks. A stream
is AWS event-stream messages (`cassettes.eventstream` turns them into events named by
type): `messageStart`, `contentBlockStart` (a `toolUse` start carries id and name),
`contentBlockDelta` (`text`, `toolUse.input` as JSON text to concatenate,
`reasoningContent`), `contentBlockStop`, `messageStop {stopReason}`, `metadata`, and
`exception:<type>` events for failures after the 200 (docs/providers.md §8).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from fcreplay.adapters import _usage, _wire
from fcreplay.adapters._wire import as_dict, as_list
from fcreplay.decision import Decision, DecisionKind, ProviderError, Stop, Usage
from fcreplay.neutral import StreamEvent, WireResponse

_STOPS: dict[str, Stop] = {
    "end_turn": "end",
    "stop_sequence": "end",
    "tool_use": "tool_call",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
    "malformed_model_output": "malformed_call",
    "malformed_tool_use": "malformed_call",
}
_ERROR_TYPES = {
    400: "ValidationException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}
"""The exception each status stands for when the body does not say (the AWS reference)."""
_JSON = {"content-type": "application/json"}
_STREAM = {"content-type": "application/vnd.amazon.eventstream"}
_PIECE = 10
EXCEPTION = "exception:"


def parse_decision(status: int, body: Any) -> Decision | ProviderError:
    """Read a non-streamed Converse answer (or its error body)."""
    if not 200 <= status < 300 or not isinstance(body, dict) or "output" not in body:
        return read_error(status, body)
    message = as_dict(as_dict(body.get("output")).get("message"))
    decision = decide(message, body.get("stopReason"), raw=body)
    return _usage.with_usage(decision, _usage.bedrock(body.get("usage")))


def parse_stream(status: int, events: Sequence[StreamEvent]) -> Decision | ProviderError:
    """Reassemble ConverseStream events into the Decision of the non-streamed twin."""
    if not 200 <= status < 300:
        return read_error(status, events[0].data if events else None)
    blocks: dict[int, dict[str, Any]] = {}
    buffers: dict[int, str] = {}
    stop_reason: Any = None
    stopped = False
    for event in events:
        name, data = event.event or "", as_dict(event.data)
        if name.startswith((EXCEPTION, "error:")):
            return read_error(status, data, name.split(":", 1)[1])
        index = data.get("contentBlockIndex", 0)
        index = index if isinstance(index, int) else 0
        if name == "contentBlockStart":
            start = as_dict(as_dict(data.get("start")).get("toolUse"))
            if start:
                blocks[index] = {"toolUse": {**start, "input": {}}}
                buffers[index] = ""
        elif name == "contentBlockDelta":
            _delta(blocks, buffers, index, as_dict(data.get("delta")))
        elif name == "messageStop":
            stop_reason, stopped = data.get("stopReason"), True
    for index, text in buffers.items():
        use = blocks[index]["toolUse"]
        try:
            use["input"] = json.loads(text) if text.strip() else {}
        except ValueError:
            use["input"] = text  # kept as sent: the call reads as invalid
    message = {"role": "assistant", "content": [blocks[i] for i in sorted(blocks)]}
    decision = decide(message, stop_reason, raw=_wire.raw_events(events))
    if not stopped:
        return _wire.truncated(decision, len(events))
    return _usage.with_usage(decision, _usage.bedrock_stream(events))


def _delta(
    blocks: dict[int, dict[str, Any]], buffers: dict[int, str], index: int, delta: dict[str, Any]
) -> None:
    if isinstance(delta.get("text"), str):
        block = blocks.setdefault(index, {"text": ""})
        block["text"] = str(block.get("text", "")) + delta["text"]
    elif isinstance(as_dict(delta.get("toolUse")).get("input"), str):
        buffers[index] = buffers.get(index, "") + delta["toolUse"]["input"]
    elif isinstance(delta.get("reasoningContent"), dict):
        reasoning = blocks.setdefault(index, {"reasoningContent": {"reasoningText": {"text": ""}}})
        text = as_dict(as_dict(reasoning.get("reasoningContent")).get("reasoningText"))
        part = delta["reasoningContent"]
        if isinstance(part.get("text"), str):
            text["text"] = str(text.get("text", "")) + part["text"]
        if isinstance(part.get("signature"), str):
            text["signature"] = part["signature"]


def decide(message: dict[str, Any], stop_reason: Any, raw: Any) -> Decision:
    """The Decision of an assistant message and its stop reason."""
    finish = stop_reason if isinstance(stop_reason, str) else None
    blocks = [as_dict(block) for block in as_list(message.get("content"))]
    calls = tuple(
        _wire.tool_call(use.get("toolUseId"), use.get("name"), use.get("input"))
        for use in (as_dict(block.get("toolUse")) for block in blocks)
        if use
    )
    texts = [block["text"] for block in blocks if isinstance(block.get("text"), str)]
    stop = _wire.map_stop(_STOPS, finish, "end")
    kind: DecisionKind = "text"
    if calls:
        broken = stop in ("length", "malformed_call") or any(c.arguments is None for c in calls)
        kind = "invalid" if broken else "tool_call"
        stop = "tool_call" if stop == "end" else stop
    elif stop == "content_filter":
        kind = "refusal"
    elif stop in ("malformed_call", "tool_call"):
        kind = "invalid"
    return Decision(
        kind=kind,
        text="".join(texts) or None,
        calls=calls,
        finish_reason=finish,
        stop=stop,
        raw_response=raw,
        assistant_turn=message,
    )


def read_error(status: int, body: Any, kind: str | None = None) -> ProviderError:
    """An error body (`{"message": ...}`) or an exception event, as a ProviderError."""
    data = as_dict(body)
    message = data.get("message", data.get("Message"))
    code = status if not 200 <= status < 300 else 500 if kind else 502
    named = kind or (str(data["__type"]).split("#")[-1] if "__type" in data else None)
    error_type = named or _ERROR_TYPES.get(code)
    if kind:  # an exception after the 200: its type says what the status would have been
        code = next((s for s, t in _ERROR_TYPES.items() if t.lower() == kind.lower()), code)
    text = message if isinstance(message, str) else _wire.json_text(body) if body else ""
    return ProviderError(
        status=code,
        type=error_type[0].upper() + error_type[1:] if error_type else None,
        code=None,
        message=text or f"HTTP {status}",
        retryable=_wire.is_retryable(code),
        raw=body,
    )


# --- rendering, for the simulator ---------------------------------------------------


def content_blocks(decision: Decision) -> list[dict[str, Any]]:
    """The content blocks of an assistant message carrying `decision`."""
    blocks: list[dict[str, Any]] = []
    if decision.text:
        blocks.append({"text": decision.text})
    for call in decision.calls:
        raw = call.raw_arguments if call.raw_arguments is not None else call.arguments
        use = {"toolUseId": call.call_id or "", "name": call.name, "input": raw or {}}
        blocks.append({"toolUse": use})
    return blocks


def _natural_stop(decision: Decision) -> str:
    if decision.stop == "length":
        return "max_tokens"
    if decision.stop == "malformed_call":
        return "malformed_tool_use"
    if decision.kind == "refusal":
        return "content_filtered"
    return "tool_use" if decision.calls else "end_turn"


def render_response(decision: Decision, stream: bool = False) -> WireResponse:
    """A Converse body, or its ConverseStream events, that parse back into `decision`."""
    stop = decision.finish_reason or _natural_stop(decision)
    blocks = content_blocks(decision)
    usage = _usage.bedrock_block(decision.usage or Usage(0, 0))
    if not stream:
        body = {
            "output": {"message": {"role": "assistant", "content": blocks}},
            "stopReason": stop,
            "usage": usage,
            "metrics": {"latencyMs": 0},
        }
        return WireResponse(200, dict(_JSON), body)
    events = [StreamEvent("messageStart", {"role": "assistant"})]
    for index, block in enumerate(blocks):
        at = {"contentBlockIndex": index}
        if "toolUse" in block:
            use = block["toolUse"]
            start = {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}
            events.append(StreamEvent("contentBlockStart", {**at, "start": start}))
            raw = (
                use["input"]
                if isinstance(use["input"], str)
                else _wire.encode_arguments(use["input"])
            )
            for piece in _wire.pieces(raw, _PIECE) or [""]:
                events.append(
                    StreamEvent("contentBlockDelta", {**at, "delta": {"toolUse": {"input": piece}}})
                )
        else:
            for piece in _wire.pieces(block["text"], _PIECE):
                events.append(StreamEvent("contentBlockDelta", {**at, "delta": {"text": piece}}))
        events.append(StreamEvent("contentBlockStop", at))
    events.append(StreamEvent("messageStop", {"stopReason": stop}))
    events.append(StreamEvent("metadata", {"usage": usage, "metrics": {"latencyMs": 0}}))
    return WireResponse(200, dict(_STREAM), events=tuple(events))


def render_error(error: ProviderError, stream: bool = False) -> WireResponse:
    """`{"message": ...}` with the status and `x-amzn-errortype`; in a stream, an exception
    event after the 200."""
    kind = error.type or _ERROR_TYPES.get(error.status, "InternalServerException")
    if stream:
        name = EXCEPTION + kind[0].lower() + kind[1:]
        events = (
            StreamEvent("messageStart", {"role": "assistant"}),
            StreamEvent(name, {"message": error.message}),
        )
        return WireResponse(200, dict(_STREAM), events=events)
    headers = {**_JSON, "x-amzn-errortype": kind}
    return WireResponse(error.status, headers, {"message": error.message})
