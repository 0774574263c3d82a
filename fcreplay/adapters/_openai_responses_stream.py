"""Responses API SSE streams reassembled, event by event, into the Decision of their twin."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import fcreplay.jsoncopy as jsoncopy
from fcreplay.adapters import _usage, _wire
from fcreplay.adapters._openai_responses_decision import (
    TEXT_KEYS,
    decide,
    finish_reason_of,
    model_of,
)
from fcreplay.adapters._openai_responses_errors import failed, http_error, stream_error
from fcreplay.decision import Decision, ProviderError
from fcreplay.neutral import StreamEvent


def parse_stream(status: int, events: Sequence[StreamEvent]) -> Decision | ProviderError:
    """Reassemble a /responses SSE stream into the Decision its non-streamed twin gives."""
    return _usage.with_usage(
        _parse_stream_unmetered(status, events), _usage.openai_responses_stream(events)
    )


def _parse_stream_unmetered(status: int, events: Sequence[StreamEvent]) -> Decision | ProviderError:
    raw = _wire.raw_events(events)
    if not 200 <= status < 300:
        body = next((event.data for event in events if event.data not in (None, "")), None)
        return http_error(status, body, raw)
    state = _Stream()
    for event in events:
        data = event.data
        if not isinstance(data, dict):
            continue  # `data: [DONE]` and other non-JSON lines carry nothing
        kind = data.get("type") if isinstance(data.get("type"), str) else event.event
        if kind == "error" or data.get("error"):
            return stream_error(status, data, raw)
        if kind == "response.failed":
            response = data.get("response")
            error = response.get("error") if isinstance(response, dict) else None
            return failed(status, error, raw)
        handler = HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is not None:
            handler(state, data)
        if state.terminal is not None:
            break
    if state.terminal is None:
        return _wire.truncated(decide(None, state.output(), state.model, raw), len(events))
    response = state.terminal
    final = response.get("output")
    # The terminal event's output is authoritative; an empty one is taken as omitted.
    output = final if isinstance(final, list) and final else state.output()
    response_status = response.get("status")
    return decide(
        finish_reason_of(
            response_status if isinstance(response_status, str) else state.terminal_status,
            response.get("incomplete_details"),
        ),
        output,
        model_of(response) or state.model,
        raw,
    )


@dataclass
class _Stream:
    """What a stream has said so far, keyed by output_index."""

    items: dict[int, dict[str, Any]] = field(default_factory=dict)
    ids: dict[str, int] = field(default_factory=dict)
    model: str | None = None
    terminal: dict[str, Any] | None = None
    terminal_status: str | None = None

    def index(self, data: Mapping[str, Any]) -> int | None:
        index = data.get("output_index")
        if isinstance(index, int) and not isinstance(index, bool) and index >= 0:
            return index
        item_id = data.get("item_id")
        return self.ids.get(item_id) if isinstance(item_id, str) else None

    def put(self, data: Mapping[str, Any]) -> None:
        index = self.index(data)
        item = data.get("item")
        if index is None or not isinstance(item, dict):
            return
        # Copied because deltas are applied in place afterwards.
        self.items[index] = jsoncopy.copied(item)
        if isinstance(item.get("id"), str):
            self.ids[item["id"]] = index

    def item(self, data: Mapping[str, Any], stub: Mapping[str, Any]) -> dict[str, Any] | None:
        index = self.index(data)
        if index is None:
            return None
        if index not in self.items:
            # A delta before its output_item.added: start from what the delta tells.
            self.items[index] = {**jsoncopy.copied(dict(stub)), "id": data.get("item_id")}
        return self.items[index]

    def part(self, data: Mapping[str, Any], kind: str) -> dict[str, Any] | None:
        item = self.item(data, {"type": "message", "role": "assistant", "content": []})
        index = data.get("content_index", 0)
        if item is None or not isinstance(index, int) or isinstance(index, bool):
            return None
        content = item.get("content")
        if not isinstance(content, list):
            content = item["content"] = []
        # Parts arrive in order, so an index past the next free slot is noise, not a gap.
        if not 0 <= index <= len(content):
            return None
        if index == len(content):
            content.append({"type": kind, TEXT_KEYS[kind]: ""})
        if not isinstance(content[index], dict):
            content[index] = {"type": kind, TEXT_KEYS[kind]: ""}
        part: dict[str, Any] = content[index]
        return part

    def output(self) -> list[Any]:
        return [self.items[index] for index in sorted(self.items)]


def _on_response(state: _Stream, data: Mapping[str, Any]) -> None:
    response = data.get("response")
    if isinstance(response, dict) and model_of(response):
        state.model = model_of(response)


def _on_item(state: _Stream, data: Mapping[str, Any]) -> None:
    state.put(data)


def _on_arguments_delta(state: _Stream, data: Mapping[str, Any]) -> None:
    item = state.item(data, {"type": "function_call", "arguments": ""})
    delta = data.get("delta")
    if item is not None and isinstance(delta, str):
        previous = item.get("arguments")
        item["arguments"] = (previous if isinstance(previous, str) else "") + delta


def _on_arguments_done(state: _Stream, data: Mapping[str, Any]) -> None:
    item = state.item(data, {"type": "function_call", "arguments": ""})
    if item is None:
        return
    if isinstance(data.get("arguments"), str):
        item["arguments"] = data["arguments"]
    if isinstance(data.get("name"), str):
        item["name"] = data["name"]


def _on_custom_input_delta(state: _Stream, data: Mapping[str, Any]) -> None:
    item = state.item(data, {"type": "custom_tool_call", "input": ""})
    delta = data.get("delta")
    if item is not None and isinstance(delta, str):
        previous = item.get("input")
        item["input"] = (previous if isinstance(previous, str) else "") + delta


def _on_custom_input_done(state: _Stream, data: Mapping[str, Any]) -> None:
    item = state.item(data, {"type": "custom_tool_call", "input": ""})
    if item is not None and isinstance(data.get("input"), str):
        item["input"] = data["input"]


def _on_part(state: _Stream, data: Mapping[str, Any]) -> None:
    part = data.get("part")
    if not isinstance(part, dict):
        return
    kind = part.get("type")
    slot = state.part(data, kind if isinstance(kind, str) and kind in TEXT_KEYS else "output_text")
    if slot is not None:
        slot.clear()
        slot.update(jsoncopy.copied(part))


def _text_handlers(kind: str) -> tuple[Callable[[_Stream, Mapping[str, Any]], None], ...]:
    key = TEXT_KEYS[kind]

    def delta(state: _Stream, data: Mapping[str, Any]) -> None:
        part = state.part(data, kind)
        if part is not None and isinstance(data.get("delta"), str):
            previous = part.get(key)
            part[key] = (previous if isinstance(previous, str) else "") + data["delta"]

    def done(state: _Stream, data: Mapping[str, Any]) -> None:
        part = state.part(data, kind)
        if part is not None and isinstance(data.get(key), str):
            part[key] = data[key]

    return delta, done


def _on_terminal(state: _Stream, data: Mapping[str, Any]) -> None:
    response = data.get("response")
    state.terminal = response if isinstance(response, dict) else {}
    state.terminal_status = str(data.get("type", "")).removeprefix("response.")


_text_delta, _text_done = _text_handlers("output_text")
_refusal_delta, _refusal_done = _text_handlers("refusal")

HANDLERS: Mapping[str, Callable[[_Stream, Mapping[str, Any]], None]] = {
    "response.created": _on_response,
    "response.in_progress": _on_response,
    "response.queued": _on_response,
    "response.output_item.added": _on_item,
    "response.output_item.done": _on_item,
    "response.function_call_arguments.delta": _on_arguments_delta,
    "response.function_call_arguments.done": _on_arguments_done,
    "response.custom_tool_call_input.delta": _on_custom_input_delta,
    "response.custom_tool_call_input.done": _on_custom_input_done,
    "response.content_part.added": _on_part,
    "response.content_part.done": _on_part,
    "response.output_text.delta": _text_delta,
    "response.output_text.done": _text_done,
    "response.refusal.delta": _refusal_delta,
    "response.refusal.done": _refusal_done,
    "response.completed": _on_terminal,
    "response.incomplete": _on_terminal,
}
