"""OpenAI Responses API adapter: neutral requests and decisions to and from /v1/responses JSON.

Choices this wire format forces (see the providers reference, section 3):

- Stateless: every request sends `store: false` and asks for
  `reasoning.encrypted_content`, and the whole history (every output item of
  earlier turns, verbatim) is re-sent each turn.
- There is no finish reason. `finish_reason` is the response `status`, except
  that an incomplete response becomes `incomplete:<incomplete_details.reason>`
  (e.g. `incomplete:max_output_tokens`) so that one string maps to `stop`.
- A call is a `function_call` output item; its id is `call_id` (not `id`).
  Hosted tool items (`web_search_call`, `mcp_call`, ...) stay in the assistant
  turn and are never reported as calls.
- A response with `status: failed` (inside a 2xx) and the in-stream `error` /
  `response.failed` events become a ProviderError that keeps the HTTP status
  the stream arrived with; it is retryable when its code is `server_error` or
  `rate_limit_exceeded`.
- A stream that ends without `response.completed|incomplete|failed` is
  truncated: finish_reason None, stop "other", and kind "invalid" when it holds
  any call (more calls may have been cut off), otherwise "text".
- Tool results carry no error flag in this format: `is_error` results are sent
  like any other, their content says what went wrong.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..canonical import canonical_json
from ..contract import ToolSpec
from ..decision import Decision, DecisionKind, ProviderError, Stop, ToolCall
from ..exchange import (
    HistoryItem,
    Message,
    RequestSettings,
    RequestView,
    StreamEvent,
    ToolChoice,
    ToolResult,
    WireItem,
    WireRequest,
    WireResponse,
)
from . import _wire

NAME = "openai_responses"
VERSION = "1"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
API_KEY_HEADER = "authorization"
API_KEY_PREFIX = "Bearer "

PATH = "/responses"
INCLUDE = ("reasoning.encrypted_content",)
"""Asked for on every request so reasoning items can be replayed with `store: false`."""

SIMULATOR_MODEL = "fcreplay-simulator"

_STOPS: Mapping[str, Stop] = {
    "completed": "end",
    "incomplete:max_output_tokens": "length",
    "incomplete:content_filter": "content_filter",
}
"""finish_reason → stop; every other status (failed, cancelled, queued...) maps to "other"."""

_NATURAL_FINISH: Mapping[Stop, str] = {
    "length": "incomplete:max_output_tokens",
    "content_filter": "incomplete:content_filter",
}
"""finish_reason to render when a decision has none; anything else renders as completed."""

_RETRYABLE_CODES = frozenset({"server_error", "rate_limit_exceeded"})
"""Codes (ResponseErrorCode) or types of a failure inside a 2xx that are worth retrying."""

_QUOTA = "insufficient_quota"
"""Billing exhaustion arrives as a 429 but never clears by waiting."""

_RETRY_HINT = re.compile(r"try again in (?:(\d+)m)?(\d+(?:\.\d+)?)(ms|s)\b", re.IGNORECASE)
"""OpenAI writes the wait into the message ("Please try again in 644ms"); headers may lack it."""

_TEXT_KEYS: Mapping[str, str] = {"output_text": "text", "refusal": "refusal"}
"""Visible content part types of a message item and the key holding their text."""

_DEFAULT_REFUSAL = "I'm sorry, but I can't help with that request."

_FRAGMENT_SIZES = (1, 3, 2, 6, 4, 5)
"""Delta sizes cycled when rendering streams: uneven, like real token fragments."""

_CREATED_AT = 1_740_000_000


# ---------------------------------------------------------------------------
# Requests


def wire_schema(parameters: dict[str, Any], strict: bool) -> dict[str, Any]:
    """Return `parameters` as sent: unchanged, or with the strict-mode transform.

    Strict mode (reference §2.3) needs `additionalProperties: false` on every
    object and every property listed in `required`. Optional properties are
    made required and nullable (`"null"` added to `type`, and to `enum` when
    there is one; schemas without `type` are wrapped as `anyOf [schema, null]`).
    A schema-valued `additionalProperties` is replaced by false: that one is a
    loss, not a reversible change. Keywords strict mode may reject (`allOf`,
    `minLength`...) are left in place for a strict-mode lint to report: the
    transform never drops a constraint silently.
    """
    if not strict:
        return copy.deepcopy(parameters)
    transformed: dict[str, Any] = _strict(parameters)
    return transformed


def _strict(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_strict(item) for item in schema]
    if not isinstance(schema, dict):
        return copy.deepcopy(schema)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(
            value, dict
        ):
            out[key] = {name: _strict(sub) for name, sub in value.items()}
        elif key in ("items", "prefixItems", "anyOf", "oneOf", "allOf", "not", "contains"):
            out[key] = _strict(value)
        else:
            out[key] = copy.deepcopy(value)
    if _is_object(out):
        out["additionalProperties"] = False
        properties = out.get("properties")
        if isinstance(properties, dict):
            required = out.get("required")
            listed = list(required) if isinstance(required, list) else []
            missing = [name for name in properties if name not in listed]
            for name in missing:
                properties[name] = _nullable(properties[name])
            if missing or not isinstance(required, list):
                out["required"] = listed + missing
    return out


def _is_object(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    return (
        kind == "object"
        or (isinstance(kind, list) and "object" in kind)
        or (kind is None and "properties" in schema)
    )


def _nullable(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema  # a boolean schema: true already admits null
    kind = schema.get("type")
    if isinstance(kind, str | list) and "const" not in schema:
        types = [kind] if isinstance(kind, str) else list(kind)
        out = dict(schema)
        if "null" not in types:
            out["type"] = [*types, "null"]
        enum = out.get("enum")
        if isinstance(enum, list) and None not in enum:
            out["enum"] = [*enum, None]
        return out
    branches = schema.get("anyOf")
    if isinstance(branches, list) and set(schema) == {"anyOf"}:
        if {"type": "null"} in branches:
            return schema
        return {"anyOf": [*branches, {"type": "null"}]}
    return {"anyOf": [schema, {"type": "null"}]}


def build_request(
    model: str,
    messages: Sequence[HistoryItem],
    tools: Sequence[ToolSpec],
    settings: RequestSettings,
) -> WireRequest:
    """Build the POST /responses request for one turn (no credentials in it)."""
    body: dict[str, Any] = {"model": model}
    history = list(messages)
    first = history[0] if history else None
    if isinstance(first, Message) and first.role == "system":
        body["instructions"] = first.content
        history = history[1:]
    body["input"] = _input_items(history)
    choice = settings.tool_choice
    if choice.mode != "no_tools":
        body["tools"] = [_tool(spec, settings.strict) for spec in tools]
        body["tool_choice"] = _tool_choice(choice)
        if settings.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = settings.parallel_tool_calls
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.max_output_tokens is not None:
        body["max_output_tokens"] = settings.max_output_tokens
    body["store"] = False
    body["include"] = list(INCLUDE)
    headers = {"content-type": "application/json"}
    if settings.stream:
        body["stream"] = True
        headers["accept"] = "text/event-stream"
    return WireRequest("POST", PATH, headers, body, stream=settings.stream)


def _input_items(history: Sequence[HistoryItem]) -> list[Any]:
    items: list[Any] = []
    for entry in history:
        if isinstance(entry, Message):
            items.append({"role": entry.role, "content": entry.content})
        elif isinstance(entry.payload, list):
            # Tolerated for callers that kept a whole turn in one WireItem.
            items.extend(entry.payload)
        else:
            items.append(entry.payload)
    return items


def _tool(spec: ToolSpec, strict: bool) -> dict[str, Any]:
    # `strict` is always explicit: Responses functions are reportedly strict by default.
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": wire_schema(spec.parameters, strict),
        "strict": strict,
    }


def _tool_choice(choice: ToolChoice) -> str | dict[str, str]:
    if choice.mode == "forced":
        if not choice.tool:
            raise ValueError("tool_choice mode 'forced' needs a tool name")
        return {"type": "function", "name": choice.tool}
    return choice.mode


def read_request(body: Any, path: str = PATH) -> RequestView:
    """Read back what a /responses request body asked for (inverse of build_request)."""
    if not isinstance(body, dict):
        body = {}
    items = body.get("input")
    model = body.get("model")
    parallel = body.get("parallel_tool_calls")
    return RequestView(
        model=model if isinstance(model, str) else None,
        last_user_text=_last_user_text(items),
        tool_result_turns=_result_turns(items),
        tool_names=tuple(spec.name for spec in sent_tools(body)),
        tool_choice=_read_choice(body),
        parallel_tool_calls=parallel if isinstance(parallel, bool) else None,
        stream=body.get("stream") is True,
    )


def _last_user_text(items: Any) -> str | None:
    if isinstance(items, str):
        return items
    if not isinstance(items, list):
        return None
    for item in reversed(items):
        if not isinstance(item, dict) or item.get("role") != "user":
            continue
        if item.get("type", "message") != "message":
            continue
        content = item.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "".join(
                part["text"]
                for part in content
                if isinstance(part, dict) and isinstance(part.get("text"), str)
            )
    return None


def _result_turns(items: Any) -> int:
    # Results of one turn are consecutive items, so each run of them is one turn.
    if not isinstance(items, list):
        return 0
    turns = 0
    previous = False
    for item in items:
        current = isinstance(item, dict) and item.get("type") == "function_call_output"
        if current and not previous:
            turns += 1
        previous = current
    return turns


def _read_choice(body: Mapping[str, Any]) -> ToolChoice:
    value = body.get("tool_choice")
    if "tools" not in body and value is None:
        return ToolChoice("no_tools")
    if value in ("auto", "required", "none"):
        return ToolChoice(value)
    if isinstance(value, dict):
        if value.get("type") == "function" and isinstance(value.get("name"), str):
            return ToolChoice("forced", value["name"])
        if value.get("type") == "allowed_tools" and value.get("mode") == "required":
            return ToolChoice("required")
    return ToolChoice("auto")


def sent_tools(request_body: Any) -> list[ToolSpec]:
    """The function tools a request declared, in order, with their schemas as sent.

    Hosted tools (web_search, file_search, mcp...) are skipped. Strict schemas
    are returned as sent: compare them with `wire_schema(canonical, True)`.
    """
    tools = request_body.get("tools") if isinstance(request_body, dict) else None
    if not isinstance(tools, list):
        return []
    specs: list[ToolSpec] = []
    for tool in tools:
        if not isinstance(tool, dict) or tool.get("type") != "function":
            continue
        name = tool.get("name")
        if not isinstance(name, str):
            continue
        description = tool.get("description")
        parameters = tool.get("parameters")
        specs.append(
            ToolSpec(
                name=name,
                description=description if isinstance(description, str) else "",
                # The spec says omitted (null) parameters mean an empty argument list.
                parameters=parameters
                if isinstance(parameters, dict)
                else {"type": "object", "properties": {}},
                effect="read",
            )
        )
    return specs


# ---------------------------------------------------------------------------
# Responses


def parse_decision(status: int, body: Any) -> Decision | ProviderError:
    """Turn a non-streamed /responses answer into a Decision or a ProviderError."""
    if not 200 <= status < 300:
        return _http_error(status, body)
    if not isinstance(body, dict):
        return _odd_body(status, body)
    output = body.get("output")
    if body.get("status") == "failed" or (body.get("error") and not isinstance(output, list)):
        return _failed(status, body.get("error"), body)
    if not isinstance(output, list):
        if "status" not in body:
            return _odd_body(status, body)
        output = []
    return _decide(
        _finish_reason(body.get("status"), body.get("incomplete_details")),
        output,
        _model(body),
        raw=body,
    )


def _finish_reason(status: Any, details: Any) -> str | None:
    if not isinstance(status, str):
        return None
    if status != "incomplete":
        return status
    reason = details.get("reason") if isinstance(details, dict) else None
    return f"incomplete:{reason}" if isinstance(reason, str) and reason else "incomplete"


def _model(response: Mapping[str, Any]) -> str | None:
    model = response.get("model")
    return model if isinstance(model, str) else None


def _decide(
    finish_reason: str | None,
    output: list[Any],
    model: str | None,
    raw: Any,
    truncated: bool = False,
) -> Decision:
    items = [item for item in output if isinstance(item, dict)]
    call_items = [item for item in items if item.get("type") == "function_call"]
    calls = tuple(_call(item) for item in call_items)
    text, refused = _visible_text(items)
    stop: Stop = "other" if truncated else _wire.map_stop(_STOPS, finish_reason, "end")
    kind: DecisionKind
    if calls:
        cut = (
            truncated
            or stop == "length"
            or any(item.get("status") == "incomplete" for item in call_items)
        )
        malformed = any(call.arguments is None for call in calls)
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
    )


def _call(item: Mapping[str, Any]) -> ToolCall:
    raw = item.get("arguments")
    if raw is not None and not isinstance(raw, str | dict):
        raw = json.dumps(raw, ensure_ascii=False)
    call_id = item.get("call_id")
    name = item.get("name")
    return ToolCall(
        call_id=call_id if isinstance(call_id, str) else None,
        name=name if isinstance(name, str) else "",
        arguments=_wire.decode_arguments(raw),
        raw_arguments=raw,
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
            key = _TEXT_KEYS.get(part_type) if isinstance(part_type, str) else None
            if key is None or not isinstance(part.get(key), str):
                continue
            parts.append(part[key])
            refused = refused or part["type"] == "refusal"
    return ("".join(parts) if parts else None), refused


# ---------------------------------------------------------------------------
# Streams


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
        self.items[index] = copy.deepcopy(item)
        if isinstance(item.get("id"), str):
            self.ids[item["id"]] = index

    def item(self, data: Mapping[str, Any], stub: Mapping[str, Any]) -> dict[str, Any] | None:
        index = self.index(data)
        if index is None:
            return None
        if index not in self.items:
            # A delta before its output_item.added: start from what the delta tells.
            self.items[index] = {**copy.deepcopy(dict(stub)), "id": data.get("item_id")}
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
            content.append({"type": kind, _TEXT_KEYS[kind]: ""})
        if not isinstance(content[index], dict):
            content[index] = {"type": kind, _TEXT_KEYS[kind]: ""}
        part: dict[str, Any] = content[index]
        return part

    def output(self) -> list[Any]:
        return [self.items[index] for index in sorted(self.items)]


def _on_response(state: _Stream, data: Mapping[str, Any]) -> None:
    response = data.get("response")
    if isinstance(response, dict) and _model(response):
        state.model = _model(response)


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


def _on_part(state: _Stream, data: Mapping[str, Any]) -> None:
    part = data.get("part")
    if not isinstance(part, dict):
        return
    kind = part.get("type")
    slot = state.part(data, kind if isinstance(kind, str) and kind in _TEXT_KEYS else "output_text")
    if slot is not None:
        slot.clear()
        slot.update(copy.deepcopy(part))


def _text_handlers(kind: str) -> tuple[Callable[[_Stream, Mapping[str, Any]], None], ...]:
    key = _TEXT_KEYS[kind]

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

_HANDLERS: Mapping[str, Callable[[_Stream, Mapping[str, Any]], None]] = {
    "response.created": _on_response,
    "response.in_progress": _on_response,
    "response.queued": _on_response,
    "response.output_item.added": _on_item,
    "response.output_item.done": _on_item,
    "response.function_call_arguments.delta": _on_arguments_delta,
    "response.function_call_arguments.done": _on_arguments_done,
    "response.content_part.added": _on_part,
    "response.content_part.done": _on_part,
    "response.output_text.delta": _text_delta,
    "response.output_text.done": _text_done,
    "response.refusal.delta": _refusal_delta,
    "response.refusal.done": _refusal_done,
    "response.completed": _on_terminal,
    "response.incomplete": _on_terminal,
}


def parse_stream(status: int, events: Sequence[StreamEvent]) -> Decision | ProviderError:
    """Reassemble a /responses SSE stream into the Decision its non-streamed twin gives."""
    raw = [{"event": event.event, "data": event.data} for event in events]
    if not 200 <= status < 300:
        body = next((event.data for event in events if event.data not in (None, "")), None)
        return _http_error(status, body, raw)
    state = _Stream()
    for event in events:
        data = event.data
        if not isinstance(data, dict):
            continue  # `data: [DONE]` and other non-JSON lines carry nothing
        kind = data.get("type") if isinstance(data.get("type"), str) else event.event
        if kind == "error" or data.get("error"):
            return _stream_error(status, data, raw)
        if kind == "response.failed":
            response = data.get("response")
            error = response.get("error") if isinstance(response, dict) else None
            return _failed(status, error, raw)
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is not None:
            handler(state, data)
        if state.terminal is not None:
            break
    if state.terminal is None:
        return _decide(None, state.output(), state.model, raw, truncated=True)
    response = state.terminal
    final = response.get("output")
    # The terminal event's output is authoritative; an empty one is taken as omitted.
    output = final if isinstance(final, list) and final else state.output()
    response_status = response.get("status")
    return _decide(
        _finish_reason(
            response_status if isinstance(response_status, str) else state.terminal_status,
            response.get("incomplete_details"),
        ),
        output,
        _model(response) or state.model,
        raw,
    )


# ---------------------------------------------------------------------------
# Errors


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def _retry_after(message: str) -> float | None:
    match = _RETRY_HINT.search(message)
    if match is None:
        return None
    minutes, amount, unit = match.groups()
    seconds = float(amount) / 1000 if unit.lower() == "ms" else float(amount)
    return seconds + 60 * int(minutes or 0)


def _error_fields(body: Any, status: int) -> tuple[str | None, str | None, str]:
    """(type, code, message) of an error body of any shape seen in the wild."""
    if isinstance(body, list) and body and isinstance(body[0], dict) and "data" in body[0]:
        # An error status answered to a stream request, kept as recorded events.
        body = body[0]["data"]
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, str) and error:
            return _text(body.get("type")), _text(body.get("code")), error
        source = error if isinstance(error, dict) else body
        message = _text(source.get("message"))
        if message is None:
            detail = body.get("detail", body)
            message = detail if isinstance(detail, str) else _json_text(detail)
        return _text(source.get("type")), _text(source.get("code")), message
    if isinstance(body, str) and body.strip():
        return None, None, body.strip()
    if body is None or body == "":
        return None, None, f"HTTP {status} with an empty body"
    return None, None, _json_text(body)


def _json_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:
        return repr(value)


def _http_error(status: int, body: Any, raw: Any = None) -> ProviderError:
    type_, code, message = _error_fields(body, status)
    quota = _QUOTA in (type_, code)
    return ProviderError(
        status=status,
        type=type_,
        code=code,
        message=message,
        retryable=_wire.is_retryable(status) and not quota,
        retry_after=_retry_after(message),
        raw=body if raw is None else raw,
    )


def _failed(status: int, error: Any, raw: Any) -> ProviderError:
    """A model-side failure reported inside a 2xx (`status: failed` or an error event)."""
    type_, code, message = _error_fields({"error": error} if error else {}, status)
    if not error:
        message = "the response failed without an error object"
    return ProviderError(
        status=status,
        type=type_,
        code=code,
        message=message,
        retryable=bool({code, type_} & _RETRYABLE_CODES),
        retry_after=_retry_after(message),
        raw=raw,
    )


def _stream_error(status: int, data: Mapping[str, Any], raw: Any) -> ProviderError:
    nested = data.get("error")
    if nested:
        return _failed(status, nested, raw)
    # The spec's ResponseErrorEvent is flat and has no error type of its own.
    flat = {key: data.get(key) for key in ("code", "message")}
    return _failed(status, flat, raw)


def _odd_body(status: int, body: Any) -> ProviderError:
    return ProviderError(
        status=status,
        type=None,
        code=None,
        message="not a Responses API body: " + _json_text(body)[:200],
        retryable=False,
        raw=body,
    )


# ---------------------------------------------------------------------------
# Next turn


def append_tool_result(
    messages: Sequence[HistoryItem],
    decision: Decision,
    results: Sequence[ToolResult],
) -> list[HistoryItem]:
    """History for the next turn: every output item verbatim, then one output per result.

    Each item is its own WireItem, in the order the response gave them, so
    reasoning items stay right before their function_call.
    """
    history = list(messages)
    turn = decision.assistant_turn
    if isinstance(turn, list | tuple):
        items = list(turn)
    elif isinstance(turn, dict):
        items = [turn]
    else:
        items = _synthesized_turn(decision)
    history.extend(WireItem(item) for item in items)
    for result, call_id in zip(results, _result_ids(decision, results), strict=True):
        history.append(
            WireItem(
                {
                    "type": "function_call_output",
                    "call_id": call_id,
                    "output": _wire.result_text(result.content),
                }
            )
        )
    return history


def _synthesized_turn(decision: Decision) -> list[dict[str, Any]]:
    # Only for decisions rebuilt from JSON, which lost the provider's own items.
    items: list[dict[str, Any]] = []
    if decision.text:
        items.append({"role": "assistant", "content": decision.text})
    items.extend(
        {
            "type": "function_call",
            "call_id": call.call_id,
            "name": call.name,
            "arguments": _raw_text(call),
        }
        for call in decision.calls
    )
    return items


def _result_ids(decision: Decision, results: Sequence[ToolResult]) -> list[str | None]:
    # Results without an id take the id of the next unanswered call of that name.
    unused = [call for call in decision.calls if call.call_id is not None]
    taken = {result.call_id for result in results if result.call_id is not None}
    unused = [call for call in unused if call.call_id not in taken]
    ids: list[str | None] = []
    for result in results:
        if result.call_id is not None:
            ids.append(result.call_id)
            continue
        match = next((call for call in unused if call.name == result.name), None)
        if match is not None:
            unused.remove(match)
        ids.append(match.call_id if match is not None else None)
    return ids


def _raw_text(call: ToolCall) -> str:
    if isinstance(call.raw_arguments, str):
        return call.raw_arguments
    if isinstance(call.raw_arguments, dict):
        return _wire.encode_arguments(call.raw_arguments)
    return _wire.encode_arguments(call.arguments) if call.arguments is not None else ""


# ---------------------------------------------------------------------------
# Rendering (the simulator's side of the wire)


def render_response(decision: Decision, stream: bool = False) -> WireResponse:
    """A realistic /responses body, or SSE events, that parse back to `decision`."""
    body = _render_body(decision)
    if not stream:
        return WireResponse(200, {"content-type": "application/json"}, body=body)
    return WireResponse(
        200, {"content-type": "text/event-stream; charset=utf-8"}, events=_render_events(body)
    )


def _render_body(decision: Decision) -> dict[str, Any]:
    seed = hashlib.sha256(canonical_json(decision.to_json()).encode("utf-8")).hexdigest()
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
                "arguments": _raw_text(call),
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
        "model": decision.model or SIMULATOR_MODEL,
        "output": output,
        "parallel_tool_calls": True,
        "store": False,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 0,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 0,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 0,
        },
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


class _Events:
    """Builds stream events with the running sequence_number every event carries."""

    def __init__(self) -> None:
        self.events: list[StreamEvent] = []

    def add(self, kind: str, **fields: Any) -> None:
        data = {"type": kind, **fields, "sequence_number": len(self.events)}
        self.events.append(StreamEvent(kind, data))


def _render_events(body: dict[str, Any]) -> tuple[StreamEvent, ...]:
    out = _Events()
    shell = {**body, "status": "in_progress", "incomplete_details": None, "output": []}
    shell["usage"] = None
    out.add("response.created", response=shell)
    out.add("response.in_progress", response=shell)
    for index, item in enumerate(body["output"]):
        _render_item_events(out, index, item)
    terminal = "response.incomplete" if body["status"] == "incomplete" else "response.completed"
    out.add(terminal, response=body)
    return tuple(out.events)


def _render_item_events(out: _Events, index: int, item: dict[str, Any]) -> None:
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
            key = _TEXT_KEYS[part["type"]]
            prefix = "response.output_text" if part["type"] == "output_text" else "response.refusal"
            at = {**where, "content_index": content_index}
            out.add("response.content_part.added", part={**part, key: ""}, **at)
            for fragment in _fragments(part[key]):
                out.add(f"{prefix}.delta", delta=fragment, **at)
            out.add(f"{prefix}.done", **{key: part[key]}, **at)
            out.add("response.content_part.done", part=part, **at)
    else:
        out.add("response.output_item.added", item=item, output_index=index)
    out.add("response.output_item.done", item=item, output_index=index)


def render_error(error: ProviderError, stream: bool = False) -> WireResponse:
    """The Responses error envelope, or (stream=True) an `error` event inside a 200 stream."""
    if stream:
        out = _Events()
        shell = _render_body(Decision(kind="text", model=SIMULATOR_MODEL))
        shell.update(status="in_progress", output=[], usage=None)
        out.add("response.created", response=shell)
        out.add("response.in_progress", response=shell)
        out.add("error", code=error.code, message=error.message, param=None)
        return WireResponse(
            200, {"content-type": "text/event-stream; charset=utf-8"}, events=tuple(out.events)
        )
    headers = {"content-type": "application/json"}
    if error.retry_after is not None:
        headers["retry-after"] = _seconds(error.retry_after)
    body = {
        "error": {
            "message": error.message,
            "type": error.type,
            "param": None,
            "code": error.code,
        }
    }
    return WireResponse(error.status, headers, body=body)


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
