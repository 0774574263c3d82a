"""Anthropic Messages answers read into Decisions: bodies, and SSE streams rebuilt by block."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import fcreplay.jsoncopy as jsoncopy
import fcreplay.strictjson as strictjson
from fcreplay.adapters import _usage, _wire
from fcreplay.adapters._anthropic_errors import (
    is_error_envelope,
    is_error_event,
    read_error,
    status_of_error,
)
from fcreplay.adapters._wire import as_dict, map_stop
from fcreplay.decision import Decision, DecisionKind, ProviderError, Stop, Usage
from fcreplay.neutral import StreamEvent

_STOP: dict[str, Stop] = {
    "tool_use": "tool_call",
    "end_turn": "end",
    "stop_sequence": "end",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "refusal",
    "pause_turn": "pause",
}

_TOOL_INPUT_BLOCKS = frozenset({"tool_use", "server_tool_use"})
"""Blocks whose `input` streams as `input_json_delta` fragments."""


def parse_decision(status: int, body: Any) -> Decision | ProviderError:
    """Turn a non-streamed Messages response (or error body) into a Decision or an error."""
    usage = _usage.anthropic(body.get("usage") if isinstance(body, dict) else None)
    return _parse_body(status, body, usage)


def _parse_body(status: int, body: Any, usage: Usage | None) -> Decision | ProviderError:
    # The usage goes into the Decision as it is made (`_usage.with_usage` would make it twice).
    if not 200 <= status < 300:
        return read_error(status, body)
    if is_error_envelope(body):
        return read_error(status_of_error(body), body)
    if not isinstance(body, dict) or not isinstance(body.get("content"), list):
        return ProviderError(
            status=status,
            type="invalid_response",
            code=None,
            message=f"response body is not an Anthropic message: {_preview(body)}",
            retryable=False,
            raw=body,
        )
    stop_reason = body.get("stop_reason")
    return _decide(
        content=body["content"],
        finish_reason=stop_reason if isinstance(stop_reason, str) else None,
        model=body.get("model"),
        raw=body,
        usage=usage,
    )


def parse_stream(status: int, events: Sequence[StreamEvent]) -> Decision | ProviderError:
    """Reassemble a Messages SSE stream into the Decision its non-streamed twin would give.

    Blocks are rebuilt by `index` like the SDK's `accumulate_event`; `ping` and
    unknown events are ignored; an `error` event becomes a ProviderError.
    """
    return _parse_events(status, events)


def _parse_events(status: int, events: Sequence[StreamEvent]) -> Decision | ProviderError:
    raw = _wire.raw_events(events)
    if not 200 <= status < 300:
        for event in events:
            if is_error_event(event):
                return read_error(status, event.data, raw=raw)
        return read_error(status, None, raw=raw)

    model: Any = None
    blocks: dict[int, dict[str, Any] | None] = {}
    buffers: dict[int, list[str]] = {}
    finish_reason: str | None = None
    finished = False
    # message_start's usage, updated by each message_delta's (output counts are totals),
    # gathered in the same pass.
    counts: dict[str, Any] = {}
    for event in events:
        # The first error event is the answer: what was read before it is dropped (the
        # reading has no other effect), so the events are not looked through twice.
        data = event.data
        if is_error_event(event):
            return read_error(status_of_error(data), data, raw=raw)
        if not isinstance(data, dict):
            continue
        kind = data.get("type", event.event)
        index = data.get("index")
        if kind == "message_start" and isinstance(message := data.get("message"), dict):
            model = message.get("model")
            counts.update(as_dict(message.get("usage")))
        elif kind == "content_block_start" and isinstance(index, int) and index >= 0:
            # Kept by index, not in a list padded up to it: an index of 10**12 in a
            # broken stream must not allocate a list that long.
            block = data.get("content_block")
            blocks[index] = jsoncopy.copied(block) if isinstance(block, dict) else None
        elif kind == "content_block_delta" and isinstance(index, int):
            target = blocks.get(index)
            delta = data.get("delta")
            if target is not None and isinstance(delta, dict):
                _apply_delta(target, delta, buffers.setdefault(index, []))
        elif kind == "message_delta":
            if isinstance(delta := data.get("delta"), dict):
                reason = delta.get("stop_reason")
                finish_reason = reason if isinstance(reason, str) else finish_reason
            counts.update({k: v for k, v in as_dict(data.get("usage")).items() if v is not None})
        elif kind == "message_stop":
            finished = True
    for index, pieces in buffers.items():
        target = blocks[index]
        if target is not None and _wire.one_of(target.get("type"), _TOOL_INPUT_BLOCKS):
            target["input"] = _finish_input("".join(pieces), target.get("input"))
    content = [blocks[index] for index in sorted(blocks) if blocks[index] is not None]
    # A cut turn is kept without its usage, as `_usage.with_usage` leaves the error it becomes.
    usage = _usage.anthropic(counts) if counts and finished else None
    decision = _decide(content, finish_reason, model, raw, usage)
    return decision if finished else _wire.truncated(decision, len(events))


def _decide(
    content: list[Any],
    finish_reason: str | None,
    model: Any,
    raw: Any,
    usage: Usage | None = None,
) -> Decision:
    blocks = [block for block in content if isinstance(block, dict)]
    texts = [
        block["text"]
        for block in blocks
        if block.get("type") == "text" and isinstance(block.get("text"), str)
    ]
    # `input` is an object; a streamed buffer that did not parse stays the string it was.
    calls = tuple(
        _wire.tool_call(block.get("id"), block.get("name"), block.get("input"))
        for block in blocks
        if block.get("type") == "tool_use"
    )
    stop = map_stop(_STOP, finish_reason, "other")
    kind: DecisionKind
    if finish_reason == "refusal":
        kind = "refusal"
    elif calls:
        broken = any(call.arguments is None for call in calls)
        kind = "invalid" if broken or stop == "length" else "tool_call"
    else:
        kind = "text"
    return Decision(
        kind=kind,
        text="".join(texts) if texts else None,
        calls=calls,
        finish_reason=finish_reason,
        stop=stop,
        raw_response=raw,
        assistant_turn={"role": "assistant", "content": content},
        model=model if isinstance(model, str) else None,
        usage=usage,
    )


def _apply_delta(block: dict[str, Any], delta: Mapping[str, Any], buffer: list[str]) -> None:
    kind = delta.get("type")
    if kind == "text_delta" and block.get("type") == "text":
        block["text"] = str(block.get("text") or "") + str(delta.get("text", ""))
    elif kind == "input_json_delta" and _wire.one_of(block.get("type"), _TOOL_INPUT_BLOCKS):
        buffer.append(str(delta.get("partial_json") or ""))
    elif kind == "thinking_delta" and block.get("type") == "thinking":
        block["thinking"] = str(block.get("thinking") or "") + str(delta.get("thinking", ""))
    elif kind == "signature_delta" and block.get("type") == "thinking":
        block["signature"] = delta.get("signature")
    elif kind == "citations_delta" and block.get("type") == "text":
        citations = block.get("citations")
        block["citations"] = [
            *(citations if isinstance(citations, list) else []),
            delta.get("citation"),
        ]


def _finish_input(buffer: str, start_input: Any) -> Any:
    """The `input` of a streamed tool block: the parsed buffer, or the buffer when broken."""
    if buffer == "":
        # No fragments (or only ""): the object announced at content_block_start, i.e. {}.
        return start_input if isinstance(start_input, dict) else {}
    try:
        value = strictjson.loads(buffer)
    except ValueError:
        return buffer
    return value if isinstance(value, dict) else buffer


def _preview(body: Any) -> str:
    return (body if isinstance(body, str) else _wire.json_text(body))[:200]
