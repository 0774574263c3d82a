"""Anthropic Messages answers and errors rendered for the simulator: bodies and SSE events."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from fcreplay.adapters import _usage, _wire
from fcreplay.adapters._anthropic_errors import STATUS_BY_ERROR_TYPE
from fcreplay.canonical import canonical_hash
from fcreplay.decision import Decision, DecisionKind, ProviderError
from fcreplay.neutral import StreamEvent, WireResponse

_ERROR_TYPE_BY_STATUS: dict[int, str] = {
    status: kind for kind, status in STATUS_BY_ERROR_TYPE.items()
}

_FINISH_FOR_KIND: dict[DecisionKind, str] = {
    "tool_call": "tool_use",
    "text": "end_turn",
    "refusal": "refusal",
    "invalid": "max_tokens",
}
"""The natural `stop_reason` rendered when a decision does not name one."""

_TEXT_PIECE = 16
_JSON_PIECE = 12
"""Fragment sizes for rendered streams: small enough to split every realistic value."""


def render_response(decision: Decision, stream: bool = False) -> WireResponse:
    """Render `decision` as a Messages body, or as its SSE events when `stream`."""
    model = decision.model or _wire.SIMULATOR_MODEL
    finish_reason = decision.finish_reason or _FINISH_FOR_KIND[decision.kind]
    content = content_blocks(decision)
    message_id = "msg_" + canonical_hash(decision.to_json())[:24]
    output_tokens = max(1, len(json.dumps(content, ensure_ascii=False)) // 4)
    usage = (
        _usage.anthropic_block(decision.usage)
        if decision.usage
        else {"input_tokens": 0, "output_tokens": output_tokens}
    )
    if not stream:
        body = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": finish_reason,
            "stop_sequence": None,
            "usage": usage,
        }
        return WireResponse(status=200, headers={"content-type": "application/json"}, body=body)
    events: list[StreamEvent] = [
        _event(
            "message_start",
            message={
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {**usage, "output_tokens": 1},
            },
        )
    ]
    for index, block in enumerate(content):
        events.extend(_block_events(index, block))
        if index == 0:
            events.append(StreamEvent("ping", {"type": "ping"}))
    events.append(
        _event(
            "message_delta",
            delta={"stop_reason": finish_reason, "stop_sequence": None},
            usage={"output_tokens": usage["output_tokens"]},
        )
    )
    events.append(_event("message_stop"))
    return WireResponse(
        status=200, headers={"content-type": "text/event-stream"}, events=tuple(events)
    )


def content_blocks(decision: Decision) -> list[dict[str, Any]]:
    """The `content` blocks of the assistant message for `decision`."""
    blocks: list[dict[str, Any]] = []
    if decision.text is not None:
        blocks.append({"type": "text", "text": decision.text})
    for position, call in enumerate(decision.calls):
        if isinstance(call.raw_arguments, dict):
            arguments: Any = call.raw_arguments
        elif call.arguments is not None:
            arguments = call.arguments
        else:
            arguments = call.raw_arguments if call.raw_arguments is not None else {}
        blocks.append(
            {
                "type": "tool_use",
                "id": call.call_id or f"toolu_sim{position:02d}",
                "name": call.name,
                "input": arguments,
            }
        )
    return blocks


def _block_events(index: int, block: Mapping[str, Any]) -> list[StreamEvent]:
    if block["type"] == "text":
        start: dict[str, Any] = {"type": "text", "text": ""}
        pieces = _wire.pieces(block["text"], _TEXT_PIECE)
        deltas = [{"type": "text_delta", "text": piece} for piece in pieces]
    else:
        start = {**block, "input": {}}
        arguments = block["input"]
        text = arguments if isinstance(arguments, str) else _json_text(arguments)
        # The API opens every tool_use with an empty fragment; {} streams as that alone.
        deltas = [
            {"type": "input_json_delta", "partial_json": piece}
            for piece in ["", *_wire.pieces(text, _JSON_PIECE)]
        ]
    return [
        _event("content_block_start", index=index, content_block=start),
        *(_event("content_block_delta", index=index, delta=delta) for delta in deltas),
        _event("content_block_stop", index=index),
    ]


def _json_text(arguments: Mapping[str, Any]) -> str:
    return "" if not arguments else json.dumps(arguments, ensure_ascii=False)


def _event(kind: str, **fields: Any) -> StreamEvent:
    return StreamEvent(kind, {"type": kind, **fields})


def render_error(error: ProviderError, stream: bool = False) -> WireResponse:
    """Render `error` as the API's error envelope, or as an `error` event in a 200 stream."""
    kind = error.type or _ERROR_TYPE_BY_STATUS.get(
        error.status, "api_error" if error.status >= 500 else "invalid_request_error"
    )
    envelope: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": error.message}}
    if stream:
        return WireResponse(
            status=200,
            headers={"content-type": "text/event-stream"},
            events=(StreamEvent("error", envelope),),
        )
    headers = {"content-type": "application/json"}
    if error.retry_after is not None:
        headers["retry-after"] = str(max(0, math.ceil(error.retry_after)))
    envelope["request_id"] = "req_simulator"
    return WireResponse(status=error.status, headers=headers, body=envelope)
