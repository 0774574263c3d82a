"""Responses API answers and errors rendered for the simulator: bodies and SSE events."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fcreplay.adapters import _usage, _wire
from fcreplay.adapters._openai_errors import error_object
from fcreplay.adapters._openai_responses_decision import TEXT_KEYS
from fcreplay.canonical import canonical_hash
from fcreplay.decision import Decision, ProviderError, ToolCall, Usage
from fcreplay.neutral import StreamEvent, WireResponse

JSON_HEADERS = {"content-type": "application/json"}
SSE_HEADERS = {"content-type": "text/event-stream; charset=utf-8"}

_NATURAL_FINISH: dict[str, str] = {
    "length": "incomplete:max_output_tokens",
    "content_filter": "incomplete:content_filter",
}
"""finish_reason to render when a decision has none; anything else renders as completed."""

_DEFAULT_REFUSAL = "I'm sorry, but I can't help with that request."

_FRAGMENT_SIZES = (1, 3, 2, 6, 4, 5)
"""Delta sizes cycled when rendering streams: uneven, like real token fragments."""

_CREATED_AT = 1_740_000_000


def render_response(decision: Decision, stream: bool = False) -> WireResponse:
    """A realistic /responses body, or SSE events, that parse back to `decision`."""
    body = render_body(decision)
    if not stream:
        return WireResponse(200, dict(JSON_HEADERS), body=body)
    return WireResponse(200, dict(SSE_HEADERS), events=_render_events(body))


def render_body(decision: Decision) -> dict[str, Any]:
    """The non-streamed response body for `decision`; its ids are stable hashes of it."""
    seed = canonical_hash(decision.to_json())
    finish = decision.finish_reason or _NATURAL_FINISH.get(decision.stop, "completed")
    status, _, reason = finish.partition(":")
    incomplete = status == "incomplete"
    output: list[dict[str, Any]] = []
    part = _render_part(decision)
    if part is not None:
        message_status = "incomplete" if incomplete and not decision.calls else "completed"
        output.append(
            {
                "id": f"msg_{seed[:48]}",
                "type": "message",
                "status": message_status,
                "content": [part],
                "role": "assistant",
            }
        )
    last = len(decision.calls) - 1
    for index, call in enumerate(decision.calls):
        cut = decision.stop == "length" and index == last
        output.append(
            {
                "id": f"fc_{seed[:46]}{index:02x}",
                "type": "function_call",
                "status": "incomplete" if cut else "completed",
                "arguments": raw_text(call),
                "call_id": call.call_id or f"call_{seed[-22:]}{index:02x}",
                "name": call.name,
            }
        )
    return {
        "id": f"resp_{seed[:48]}",
        "object": "response",
        "created_at": _CREATED_AT,
        "status": status,
        "error": None,
        "incomplete_details": {"reason": reason} if incomplete and reason else None,
        "instructions": None,
        "model": decision.model or _wire.SIMULATOR_MODEL,
        "output": output,
        "parallel_tool_calls": True,
        "store": False,
        "tool_choice": "auto",
        "tools": [],
        "usage": _usage.openai_responses_block(decision.usage or Usage(0, 0)),
    }


def _render_part(decision: Decision) -> dict[str, Any] | None:
    if decision.kind == "refusal":
        if decision.text is None and decision.stop == "content_filter":
            return None  # a safety block: no content at all
        text = decision.text if decision.text is not None else _DEFAULT_REFUSAL
        return {"type": "refusal", "refusal": text}
    if decision.text is None:
        return None
    return {"type": "output_text", "annotations": [], "logprobs": [], "text": decision.text}


def _fragments(text: str) -> Iterator[str]:
    start = 0
    step = 0
    while start < len(text):
        size = _FRAGMENT_SIZES[step % len(_FRAGMENT_SIZES)]
        yield text[start : start + size]
        start += size
        step += 1


class Events:
    """Builds stream events with the running sequence_number every event carries."""

    def __init__(self) -> None:
        self.events: list[StreamEvent] = []

    def add(self, kind: str, **fields: Any) -> None:
        data = {"type": kind, **fields, "sequence_number": len(self.events)}
        self.events.append(StreamEvent(kind, data))


def _render_events(body: dict[str, Any]) -> tuple[StreamEvent, ...]:
    out = Events()
    shell = {**body, "status": "in_progress", "incomplete_details": None, "output": []}
    shell["usage"] = None
    out.add("response.created", response=shell)
    out.add("response.in_progress", response=shell)
    for index, item in enumerate(body["output"]):
        _render_item_events(out, index, item)
    terminal = "response.incomplete" if body["status"] == "incomplete" else "response.completed"
    out.add(terminal, response=body)
    return tuple(out.events)


def _render_item_events(out: Events, index: int, item: dict[str, Any]) -> None:
    item_id = item.get("id")
    where = {"item_id": item_id, "output_index": index}
    if item["type"] == "function_call":
        out.add(
            "response.output_item.added",
            item={**item, "status": "in_progress", "arguments": ""},
            output_index=index,
        )
        for fragment in _fragments(item["arguments"]):
            out.add("response.function_call_arguments.delta", delta=fragment, **where)
        out.add(
            "response.function_call_arguments.done",
            arguments=item["arguments"],
            name=item["name"],
            **where,
        )
    elif item["type"] == "message":
        out.add(
            "response.output_item.added",
            item={**item, "status": "in_progress", "content": []},
            output_index=index,
        )
        for content_index, part in enumerate(item["content"]):
            key = TEXT_KEYS[part["type"]]
            prefix = "response.output_text" if part["type"] == "output_text" else "response.refusal"
            at = {**where, "content_index": content_index}
            out.add("response.content_part.added", part={**part, key: ""}, **at)
            # Text events carry the token logprobs the SDK requires (none are asked for).
            logprobs: dict[str, Any] = {"logprobs": []} if part["type"] == "output_text" else {}
            for fragment in _fragments(part[key]):
                out.add(f"{prefix}.delta", delta=fragment, **at, **logprobs)
            out.add(f"{prefix}.done", **{key: part[key]}, **at, **logprobs)
            out.add("response.content_part.done", part=part, **at)
    else:
        out.add("response.output_item.added", item=item, output_index=index)
    out.add("response.output_item.done", item=item, output_index=index)


def raw_text(call: ToolCall) -> str:
    """The `arguments` string of a `function_call` item for `call`."""
    if isinstance(call.raw_arguments, str):
        return call.raw_arguments
    if isinstance(call.raw_arguments, dict):
        return _wire.encode_arguments(call.raw_arguments)
    return _wire.encode_arguments(call.arguments) if call.arguments is not None else ""


def render_error(error: ProviderError, stream: bool = False) -> WireResponse:
    """The Responses error envelope, or (stream=True) an `error` event inside a 200 stream.

    `retry_after` travels in the `retry-after` header, which parsing does not see.
    """
    if stream:
        out = Events()
        shell = render_body(Decision(kind="text", model=_wire.SIMULATOR_MODEL))
        shell.update(status="in_progress", output=[], usage=None)
        out.add("response.created", response=shell)
        out.add("response.in_progress", response=shell)
        out.add("error", code=error.code, message=error.message, param=None)
        return WireResponse(200, dict(SSE_HEADERS), events=tuple(out.events))
    headers = {"content-type": "application/json"}
    if error.retry_after is not None:
        headers["retry-after"] = _seconds(error.retry_after)
    return WireResponse(error.status, headers, body={"error": error_object(error)})


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
