"""Responses API bodies read into Decisions (`_openai_responses_stream` reads streams)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fcreplay.adapters import _usage, _wire
from fcreplay.adapters._openai_responses_errors import failed, http_error, odd_body
from fcreplay.decision import Decision, DecisionKind, ProviderError, Stop, ToolCall, Usage

_STOPS: Mapping[str, Stop] = {
    "completed": "end",
    "incomplete:max_output_tokens": "length",
    "incomplete:content_filter": "content_filter",
}
"""finish_reason → stop; every other status (failed, cancelled, queued...) maps to "other"."""

TEXT_KEYS: Mapping[str, str] = {"output_text": "text", "refusal": "refusal"}
"""Visible content part types of a message item and the key holding their text."""


def parse_decision(status: int, body: Any) -> Decision | ProviderError:
    """Turn a non-streamed /responses answer into a Decision or a ProviderError."""
    usage = _usage.openai_responses(body.get("usage") if isinstance(body, dict) else None)
    return _parse_body(status, body, usage)


def _parse_body(status: int, body: Any, usage: Usage | None) -> Decision | ProviderError:
    # The usage goes into the Decision as it is made (`_usage.with_usage` would make it twice).
    if not 200 <= status < 300:
        return http_error(status, body)
    if not isinstance(body, dict):
        return odd_body(status, body)
    output = body.get("output")
    if body.get("status") == "failed" or (body.get("error") and not isinstance(output, list)):
        return failed(status, body.get("error"), body)
    if not isinstance(output, list):
        if "status" not in body:
            return odd_body(status, body)
        output = []
    return decide(
        finish_reason_of(body.get("status"), body.get("incomplete_details")),
        output,
        model_of(body),
        raw=body,
        usage=usage,
    )


def finish_reason_of(status: Any, details: Any) -> str | None:
    """A response's finish_reason: its status, or `incomplete:<reason>` for a cut one."""
    if not isinstance(status, str):
        return None
    if status != "incomplete":
        return status
    reason = details.get("reason") if isinstance(details, dict) else None
    return f"incomplete:{reason}" if isinstance(reason, str) and reason else "incomplete"


def model_of(response: Mapping[str, Any]) -> str | None:
    """The model id a response reports, if any."""
    model = response.get("model")
    return model if isinstance(model, str) else None


TOOL_SEARCH = "tool_search"
"""The call name of a client-executed `tool_search_call` (the item has no name)."""


def is_client_call(item: Mapping[str, Any]) -> bool:
    """Whether an output item is a call the client must answer.

    Function calls, free-form custom tool calls and tool searches the client runs
    (`execution: "client"`); hosted tools run on OpenAI's side and stay in the turn.
    """
    kind = item.get("type")
    if kind == "tool_search_call":
        return item.get("execution") == "client"
    return kind in ("function_call", "custom_tool_call")


def _call(item: Mapping[str, Any]) -> ToolCall:
    if item.get("type") == "custom_tool_call":
        # Free-form input is text, not JSON: kept raw, never decoded.
        raw = item.get("input")
        return ToolCall(_id(item), _name(item), None, raw if isinstance(raw, str) else "")
    if item.get("type") == "tool_search_call":
        return _wire.tool_call(item.get("call_id"), TOOL_SEARCH, item.get("arguments"))
    return _wire.tool_call(item.get("call_id"), item.get("name"), item.get("arguments"))


def _id(item: Mapping[str, Any]) -> str | None:
    call_id = item.get("call_id")
    return call_id if isinstance(call_id, str) else None


def _name(item: Mapping[str, Any]) -> str:
    name = item.get("name")
    return name if isinstance(name, str) else ""


def decide(
    finish_reason: str | None,
    output: list[Any],
    model: str | None,
    raw: Any,
    usage: Usage | None = None,
) -> Decision:
    """The Decision for a response's output items and finish_reason, with `usage`."""
    items = [item for item in output if isinstance(item, dict)]
    call_items = [item for item in items if is_client_call(item)]
    calls = tuple(_call(item) for item in call_items)
    text, refused = _visible_text(items)
    stop: Stop = _wire.map_stop(_STOPS, finish_reason, "end")
    kind: DecisionKind
    if calls:
        cut = stop == "length" or any(item.get("status") == "incomplete" for item in call_items)
        malformed = any(
            call.arguments is None and item.get("type") != "custom_tool_call"
            for call, item in zip(calls, call_items, strict=True)
        )
        kind = "invalid" if cut or malformed else "tool_call"
        stop = "tool_call" if stop == "end" else stop
    elif refused:
        kind = "refusal"
        stop = "refusal" if stop == "end" else stop
    elif text is None and stop == "content_filter":
        kind = "refusal"  # blocked by the safety system before any content
    else:
        kind = "text"
    return Decision(
        kind=kind,
        text=text,
        calls=calls,
        finish_reason=finish_reason,
        stop=stop,
        raw_response=raw,
        assistant_turn=list(output),
        model=model,
        usage=usage,
    )


def _visible_text(items: Sequence[Mapping[str, Any]]) -> tuple[str | None, bool]:
    """Concatenated output_text and refusal text (None when there is none), and if refused."""
    parts: list[str] = []
    refused = False
    for item in items:
        content = item.get("content")
        if item.get("type") != "message" or not isinstance(content, list):
            continue
        for part in content:
            part_type = part.get("type") if isinstance(part, dict) else None
            key = TEXT_KEYS.get(part_type) if isinstance(part_type, str) else None
            if key is None or not isinstance(part.get(key), str):
                continue
            parts.append(part[key])
            refused = refused or part["type"] == "refusal"
    return ("".join(parts) if parts else None), refused
