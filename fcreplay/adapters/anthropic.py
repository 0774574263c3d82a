"""Adapter for the Anthropic Messages API: requests, responses, SSE streams and errors.

Wire facts follow the providers reference, section 4. Choices made where the
format leaves room (each is pinned by tests/adapters/test_anthropic.py):

- Calls are `tool_use` blocks; `input` is an object, kept as both `raw_arguments`
  and `arguments`. `server_tool_use` and `*_tool_result` blocks run on Anthropic's
  side: they stay in the raw body and the assistant turn and are never calls.
- Kind: a `refusal` stop gives "refusal" (text and any calls kept); calls give
  "tool_call", or "invalid" when an argument is not a JSON object or the turn hit a
  length limit (`max_tokens`, `model_context_window_exceeded`): a turn cut short
  may hold a half-written call or lack the rest of a parallel set, so none of its
  calls is safe to run.
- A stream without `message_stop` is truncated: kind "invalid" with whatever text
  and calls had arrived, `finish_reason` None and stop "other". A text prefix
  cannot be told from a turn that would have gone on to call a tool, so it is not
  reported as a text answer.
- A streamed `tool_use` whose JSON buffer does not parse to an object keeps the
  buffer as `raw_arguments` (arguments None), and the assembled turn carries that
  string as `input`. `render_response` writes such a call the same way in a
  non-streamed body; the real API never does, but it lets the simulator inject a
  malformed call and `parse_decision` reads it back instead of failing.
- Spend caps: `billing_error`, and any error whose message speaks of usage or
  spend limits, credit balance, billing or quota, is not retryable even on 429
  (the API answers spend-cap 429s without `retry-after`; parsing sees only the
  body, so the message is what is left to go on).
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..canonical import canonical_json
from ..contract import ToolSpec
from ..decision import Decision, DecisionKind, ProviderError, Stop, ToolCall
from ..exchange import (
    HistoryItem,
    RequestSettings,
    RequestView,
    StreamEvent,
    ToolChoice,
    ToolMode,
    ToolResult,
    WireItem,
    WireRequest,
    WireResponse,
)
from ._wire import decode_arguments, is_retryable, map_stop, result_text

NAME = "anthropic"
VERSION = "1"
DEFAULT_BASE_URL = "https://api.anthropic.com"
API_KEY_HEADER = "x-api-key"
API_KEY_PREFIX = ""

PATH = "/v1/messages"
ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 1024
"""`max_tokens` is required by the API; used when the settings leave it open."""
SIMULATOR_MODEL = "fcreplay-simulator"

_HEADERS = {"content-type": "application/json", "anthropic-version": ANTHROPIC_VERSION}

_STOP: dict[str, Stop] = {
    "tool_use": "tool_call",
    "end_turn": "end",
    "stop_sequence": "end",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "refusal",
    "pause_turn": "pause",
}

_CHOICE_TYPE: dict[ToolMode, str] = {
    "auto": "auto",
    "required": "any",
    "forced": "tool",
    "none": "none",
}
_CHOICE_MODE: dict[str, ToolMode] = {wire: mode for mode, wire in _CHOICE_TYPE.items()}

_STATUS_BY_ERROR_TYPE: dict[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
_ERROR_TYPE_BY_STATUS: dict[int, str] = {
    status: kind for kind, status in _STATUS_BY_ERROR_TYPE.items()
}
_NOT_RETRYABLE_TYPES = frozenset({"billing_error"})
_SPEND_LIMIT = re.compile(
    r"usage limit|spend(?:ing)? (?:limit|cap)|credit balance|billing|quota|extra usage"
    r"|regain access",
    re.IGNORECASE,
)
"""Messages of errors that retrying will not fix (observed: "You have reached your
specified API usage limits. You will regain access on ...", "Your credit balance is
too low ...", "Extra usage is required for long context requests.")."""

_FINISH_FOR_KIND: dict[DecisionKind, str] = {
    "tool_call": "tool_use",
    "text": "end_turn",
    "refusal": "refusal",
    "invalid": "max_tokens",
}
"""The natural `stop_reason` rendered when a decision does not name one."""

_TOOL_INPUT_BLOCKS = frozenset({"tool_use", "server_tool_use"})
"""Blocks whose `input` streams as `input_json_delta` fragments."""

_TEXT_PIECE = 16
_JSON_PIECE = 12
"""Fragment sizes for rendered streams: small enough to split every realistic value."""


# --- strict schema transform -------------------------------------------------------

_STRICT_STRING_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)


def wire_schema(parameters: dict[str, Any], strict: bool) -> dict[str, Any]:
    """Return the `input_schema` sent for `parameters`, with the strict transform if asked.

    Without strict the schema goes out unchanged. With strict it is rewritten the
    way anthropic-sdk-python's `transform_schema` (2.14.0) rewrites schemas, key for
    key, because that is the shape Anthropic's own client sends:

    - every object gets `additionalProperties: false` (any other value is dropped)
      and a `properties` map; `required` is kept;
    - `oneOf` becomes `anyOf`; of `anyOf`/`oneOf`/`allOf` only the first present is kept;
    - a primitive `enum` or `const` replaces `type`;
    - string `format` is kept when the API supports it; array `minItems` when 0 or 1;
      `items`, `$defs`, `$ref` (alone, siblings dropped), `description`, `title` are kept;
    - every other keyword (minimum, maximum, exclusive*, multipleOf, minLength,
      maxLength, pattern, minItems > 1, maxItems, uniqueItems, default, other
      formats, ...) is removed and appended to the description as
      `"\\n\\n{minimum: 1, maximum: 10}"` (Python `str` of each value, as the SDK does).

    The transform is lossy: schema diff reports it as a documented difference.
    Where the SDK raises (a node without type, enum, const or combinator; a
    boolean schema; a list of types) this function keeps the node as far as it can.
    """
    if not strict:
        return copy.deepcopy(parameters)
    return _strict_schema(parameters)


def _strict_node(node: Any) -> Any:
    return _strict_schema(node) if isinstance(node, dict) else copy.deepcopy(node)


def _strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    rest = dict(schema)
    out: dict[str, Any] = {}
    defs = rest.pop("$defs", None)
    if isinstance(defs, dict):
        out["$defs"] = {name: _strict_node(node) for name, node in defs.items()}
    ref = rest.pop("$ref", None)
    if ref is not None:
        out["$ref"] = ref
        return out

    type_ = rest.pop("type", None)
    any_of = rest.pop("anyOf", None)
    one_of = rest.pop("oneOf", None)
    all_of = rest.pop("allOf", None)
    enum = rest.get("enum")
    if isinstance(enum, list) and enum and all(_is_primitive(value) for value in enum):
        out["enum"] = list(rest.pop("enum"))
    if "const" in rest and _is_primitive(rest["const"]):
        out["const"] = rest.pop("const")
    has_literals = "enum" in out or "const" in out
    if has_literals:
        type_ = None

    if isinstance(any_of, list):
        out["anyOf"] = [_strict_node(variant) for variant in any_of]
    elif isinstance(one_of, list):
        out["anyOf"] = [_strict_node(variant) for variant in one_of]
    elif isinstance(all_of, list):
        out["allOf"] = [_strict_node(variant) for variant in all_of]
    elif not has_literals and type_ is not None:
        out["type"] = copy.deepcopy(type_)

    description = rest.pop("description", None)
    if description is not None:
        out["description"] = description
    title = rest.pop("title", None)
    if title is not None:
        out["title"] = title

    types = set(type_) if isinstance(type_, list) else {type_}
    if "object" in types:
        properties = rest.pop("properties", {})
        if isinstance(properties, dict):
            out["properties"] = {key: _strict_node(node) for key, node in properties.items()}
        rest.pop("additionalProperties", None)
        out["additionalProperties"] = False
        required = rest.pop("required", None)
        if required is not None:
            out["required"] = list(required) if isinstance(required, list) else required
    if "string" in types:
        string_format = rest.pop("format", None)
        if string_format in _STRICT_STRING_FORMATS:
            out["format"] = string_format
        elif string_format:
            rest["format"] = string_format
    if "array" in types:
        items = rest.pop("items", None)
        if isinstance(items, list):
            out["items"] = [_strict_node(item) for item in items]
        elif items is not None:
            out["items"] = _strict_node(items)
        min_items = rest.pop("minItems", None)
        if min_items is not None and (min_items == 0 or min_items == 1):
            out["minItems"] = min_items
        elif min_items is not None:
            rest["minItems"] = min_items

    if rest:
        # The SDK's wording, so a strict request built here matches one built by the SDK.
        leftovers = "{" + ", ".join(f"{key}: {value}" for key, value in rest.items()) + "}"
        previous = out.get("description")
        out["description"] = (previous + "\n\n" if previous is not None else "") + leftovers
    return out


def _is_primitive(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


# --- requests --------------------------------------------------------------------


def build_request(
    model: str,
    messages: Sequence[HistoryItem],
    tools: Sequence[ToolSpec],
    settings: RequestSettings,
) -> WireRequest:
    """Build the Messages request body for `model`, the history, the tools and the settings.

    Leading system messages go to the top-level `system` field; a system message
    after the conversation has started has no place in this format (ValueError).
    Without tools (or in no_tools mode) neither `tools` nor `tool_choice` is sent:
    a choice among no tools would only be noise in the cassette, and the API's own
    default without tools is "none".
    """
    system: list[str] = []
    wire_messages: list[Any] = []
    for item in messages:
        if isinstance(item, WireItem):
            payload = item.payload
            wire_messages.extend(payload if isinstance(payload, list) else [payload])
        elif item.role == "system":
            if wire_messages:
                raise ValueError(
                    "the Anthropic Messages API takes system text only before the conversation "
                    "(top-level `system`); move the system message to the start"
                )
            system.append(item.content)
        else:
            wire_messages.append({"role": item.role, "content": item.content})

    max_tokens = settings.max_output_tokens
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens,
    }
    if system:
        body["system"] = "\n\n".join(system)
    body["messages"] = wire_messages
    choice = settings.tool_choice
    if tools and choice.mode != "no_tools":
        body["tools"] = [_tool_param(tool, settings.strict) for tool in tools]
        body["tool_choice"] = _tool_choice_param(choice, settings.parallel_tool_calls)
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.stream:
        body["stream"] = True
    return WireRequest(
        method="POST", path=PATH, headers=dict(_HEADERS), body=body, stream=settings.stream
    )


def _tool_param(tool: ToolSpec, strict: bool) -> dict[str, Any]:
    param: dict[str, Any] = {"name": tool.name}
    if tool.description:
        param["description"] = tool.description
    param["input_schema"] = wire_schema(tool.parameters, strict)
    if strict:
        param["strict"] = True
    return param


def _tool_choice_param(choice: ToolChoice, parallel: bool | None) -> dict[str, Any]:
    param: dict[str, Any] = {"type": _CHOICE_TYPE[choice.mode]}
    if choice.mode == "forced":
        if not choice.tool:
            raise ValueError("tool_choice mode 'forced' needs the name of the tool to force")
        param["name"] = choice.tool
    # The API refuses disable_parallel_tool_use next to {"type": "none"}.
    if parallel is not None and choice.mode != "none":
        param["disable_parallel_tool_use"] = not parallel
    return param


def read_request(body: Any, path: str) -> RequestView:
    """Read back what a Messages request body asked for (the inverse of `build_request`)."""
    if not isinstance(body, dict):
        return RequestView(None, None, 0, (), ToolChoice("no_tools"), None, False)
    model = body.get("model")
    last_user_text: str | None = None
    result_turns = 0
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            last_user_text = content
        elif isinstance(content, list):
            blocks = [block for block in content if isinstance(block, dict)]
            if any(block.get("type") == "tool_result" for block in blocks):
                result_turns += 1
            else:
                last_user_text = "".join(
                    str(block.get("text", "")) for block in blocks if block.get("type") == "text"
                )
    tools = sent_tools(body)
    choice, parallel = _read_tool_choice(body)
    return RequestView(
        model=model if isinstance(model, str) else None,
        last_user_text=last_user_text,
        tool_result_turns=result_turns,
        tool_names=tuple(tool.name for tool in tools),
        tool_choice=choice,
        parallel_tool_calls=parallel,
        stream=body.get("stream") is True,
    )


def _read_tool_choice(body: Mapping[str, Any]) -> tuple[ToolChoice, bool | None]:
    if not body.get("tools"):
        return ToolChoice("no_tools"), None
    param = body.get("tool_choice")
    if not isinstance(param, dict):
        return ToolChoice("auto"), None
    mode = _CHOICE_MODE.get(str(param.get("type")), "auto")
    name = param.get("name") if mode == "forced" else None
    disable = param.get("disable_parallel_tool_use")
    parallel = (not disable) if isinstance(disable, bool) else None
    return ToolChoice(mode, name if isinstance(name, str) else None), parallel


def sent_tools(request_body: Any) -> list[ToolSpec]:
    """The function tools a request declared, as canonical specs (server tools skipped).

    The schema is the `input_schema` as sent: after a strict transform it differs
    from the contract, which is what schema diff is there to show.
    """
    if not isinstance(request_body, dict) or not isinstance(request_body.get("tools"), list):
        return []
    specs: list[ToolSpec] = []
    for tool in request_body["tools"]:
        if not isinstance(tool, dict) or tool.get("type", "custom") != "custom":
            continue
        name, schema = tool.get("name"), tool.get("input_schema")
        if not isinstance(name, str) or not isinstance(schema, dict):
            continue
        description = tool.get("description")
        specs.append(
            ToolSpec(
                name=name,
                description=description if isinstance(description, str) else "",
                parameters=schema,
                effect="read",
            )
        )
    return specs


# --- responses -------------------------------------------------------------------


def parse_decision(status: int, body: Any) -> Decision | ProviderError:
    """Turn a non-streamed Messages response (or error body) into a Decision or an error."""
    if not 200 <= status < 300:
        return _error(status, body)
    if _is_error_envelope(body):
        return _error(_status_of_error(body), body)
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
        truncated=False,
    )


def _decide(
    content: list[Any], finish_reason: str | None, model: Any, raw: Any, truncated: bool
) -> Decision:
    blocks = [block for block in content if isinstance(block, dict)]
    texts = [
        block["text"]
        for block in blocks
        if block.get("type") == "text" and isinstance(block.get("text"), str)
    ]
    calls = tuple(
        _tool_call(block, index)
        for index, block in enumerate(blocks)
        if block.get("type") == "tool_use"
    )
    stop = "other" if truncated else map_stop(_STOP, finish_reason, "other")
    kind: DecisionKind
    if truncated:
        kind = "invalid"
    elif finish_reason == "refusal":
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
        finish_reason=None if truncated else finish_reason,
        stop=stop,
        raw_response=raw,
        assistant_turn={"role": "assistant", "content": content},
        model=model if isinstance(model, str) else None,
    )


def _tool_call(block: Mapping[str, Any], index: int) -> ToolCall:
    raw = block.get("input")
    if raw is not None and not isinstance(raw, dict | str):
        # Not an object and not a buffer: keep it, as JSON text, for the reviewer.
        raw = json.dumps(raw, ensure_ascii=False)
    call_id = block.get("id")
    name = block.get("name")
    return ToolCall(
        call_id=call_id if isinstance(call_id, str) else None,
        name=name if isinstance(name, str) else "",
        arguments=decode_arguments(raw),
        raw_arguments=raw,
    )


def parse_stream(status: int, events: Sequence[StreamEvent]) -> Decision | ProviderError:
    """Reassemble a Messages SSE stream into the Decision its non-streamed twin would give.

    Blocks are rebuilt by `index` like the SDK's `accumulate_event`; `ping` and
    unknown events are ignored; an `error` event becomes a ProviderError.
    """
    raw = [{"event": event.event, "data": event.data} for event in events]
    for event in events:
        if _is_error_event(event):
            error_status = status if not 200 <= status < 300 else _status_of_error(event.data)
            return _error(error_status, event.data, raw=raw)
    if not 200 <= status < 300:
        return _error(status, None, raw=raw)

    model: Any = None
    blocks: list[dict[str, Any] | None] = []
    buffers: dict[int, list[str]] = {}
    finish_reason: str | None = None
    finished = False
    for event in events:
        data = event.data
        if not isinstance(data, dict):
            continue
        kind = data.get("type", event.event)
        index = data.get("index")
        if kind == "message_start" and isinstance(data.get("message"), dict):
            model = data["message"].get("model")
        elif kind == "content_block_start" and isinstance(index, int) and index >= 0:
            block = data.get("content_block")
            while len(blocks) <= index:
                blocks.append(None)
            blocks[index] = copy.deepcopy(block) if isinstance(block, dict) else None
        elif kind == "content_block_delta" and isinstance(index, int):
            target = blocks[index] if 0 <= index < len(blocks) else None
            delta = data.get("delta")
            if target is not None and isinstance(delta, dict):
                _apply_delta(target, delta, buffers.setdefault(index, []))
        elif kind == "message_delta" and isinstance(data.get("delta"), dict):
            reason = data["delta"].get("stop_reason")
            finish_reason = reason if isinstance(reason, str) else finish_reason
        elif kind == "message_stop":
            finished = True
    for index, pieces in buffers.items():
        target = blocks[index]
        if target is not None and target.get("type") in _TOOL_INPUT_BLOCKS:
            target["input"] = _finish_input("".join(pieces), target.get("input"))
    content = [block for block in blocks if block is not None]
    return _decide(content, finish_reason, model, raw, truncated=not finished)


def _apply_delta(block: dict[str, Any], delta: Mapping[str, Any], buffer: list[str]) -> None:
    kind = delta.get("type")
    if kind == "text_delta" and block.get("type") == "text":
        block["text"] = str(block.get("text") or "") + str(delta.get("text", ""))
    elif kind == "input_json_delta" and block.get("type") in _TOOL_INPUT_BLOCKS:
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
        value = json.loads(buffer)
    except json.JSONDecodeError:
        return buffer
    return value if isinstance(value, dict) else buffer


def _is_error_event(event: StreamEvent) -> bool:
    data = event.data
    return event.event == "error" or (isinstance(data, dict) and data.get("type") == "error")


def _status_of_error(data: Any) -> int:
    """The HTTP status an error type stands for, for errors that arrive inside a 200."""
    kind = _error_fields(data)[0]
    return _STATUS_BY_ERROR_TYPE.get(kind or "", 500)


# --- errors ----------------------------------------------------------------------


def _is_error_envelope(body: Any) -> bool:
    return isinstance(body, dict) and (body.get("type") == "error" or "error" in body)


def _error_fields(body: Any) -> tuple[str | None, str | None, str]:
    """(type, code, message) of an error body, whatever its shape."""
    if isinstance(body, str):
        return None, None, body.strip()[:500]
    if not isinstance(body, dict):
        return None, None, ""
    inner = body.get("error")
    if isinstance(inner, str):
        return _text_or_none(body.get("type"), skip="error"), None, inner
    source = inner if isinstance(inner, dict) else body
    kind = _text_or_none(source.get("type"), skip="error")
    code = source.get("code")
    message = source.get("message")
    return (
        kind,
        str(code) if isinstance(code, str | int) and not isinstance(code, bool) else None,
        message if isinstance(message, str) else "",
    )


def _text_or_none(value: Any, skip: str) -> str | None:
    return value if isinstance(value, str) and value != skip else None


def _error(status: int, body: Any, raw: Any = None) -> ProviderError:
    kind, code, message = _error_fields(body)
    retryable = (
        is_retryable(status)
        and kind not in _NOT_RETRYABLE_TYPES
        and not _SPEND_LIMIT.search(message)
    )
    return ProviderError(
        status=status,
        type=kind,
        code=code,
        message=message or f"HTTP {status}",
        retryable=retryable,
        retry_after=None,
        raw=body if raw is None else raw,
    )


def _preview(body: Any) -> str:
    text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False, default=str)
    return text[:200]


# --- history ---------------------------------------------------------------------


def append_tool_result(
    messages: Sequence[HistoryItem],
    decision: Decision,
    results: Sequence[ToolResult],
) -> list[HistoryItem]:
    """Append the assistant turn verbatim, then ONE user message of `tool_result` blocks.

    Results go in call order (the API wants one block per `tool_use`, all in the
    user turn that follows it). A result without a call id takes the id of the
    first unanswered call of the same tool. With no results only the assistant
    turn is appended (the `pause_turn` case: resend it to let the model go on).
    """
    history: list[HistoryItem] = list(messages)
    turn = decision.assistant_turn
    if not isinstance(turn, dict):
        turn = {"role": "assistant", "content": _content_blocks(decision)}
    history.append(WireItem(turn))
    if not results:
        return history
    order = {call.call_id: position for position, call in enumerate(decision.calls)}
    ids = _result_ids(decision.calls, results)
    ranked = sorted(zip(ids, results, strict=True), key=lambda pair: order.get(pair[0], len(order)))
    blocks: list[dict[str, Any]] = []
    for call_id, result in ranked:
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": call_id,
            "content": result_text(result.content),
        }
        if result.is_error:
            block["is_error"] = True
        blocks.append(block)
    history.append(WireItem({"role": "user", "content": blocks}))
    return history


def _result_ids(calls: Sequence[ToolCall], results: Sequence[ToolResult]) -> list[str]:
    taken = {result.call_id for result in results if result.call_id is not None}
    ids: list[str] = []
    for result in results:
        if result.call_id is not None:
            ids.append(result.call_id)
            continue
        match = next(
            (
                call.call_id
                for call in calls
                if call.name == result.name and call.call_id and call.call_id not in taken
            ),
            None,
        )
        if match is None:
            raise ValueError(f"no call id for the result of {result.name!r}: no unanswered call")
        taken.add(match)
        ids.append(match)
    return ids


# --- rendering (simulator) -------------------------------------------------------


def render_response(decision: Decision, stream: bool = False) -> WireResponse:
    """Render `decision` as a Messages body, or as its SSE events when `stream`."""
    model = decision.model or SIMULATOR_MODEL
    finish_reason = decision.finish_reason or _FINISH_FOR_KIND[decision.kind]
    content = _content_blocks(decision)
    message_id = (
        "msg_" + hashlib.sha256(canonical_json(decision.to_json()).encode("utf-8")).hexdigest()[:24]
    )
    output_tokens = max(1, len(json.dumps(content, ensure_ascii=False)) // 4)
    if not stream:
        body = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": finish_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": output_tokens},
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
                "usage": {"input_tokens": 0, "output_tokens": 1},
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
            usage={"output_tokens": output_tokens},
        )
    )
    events.append(_event("message_stop"))
    return WireResponse(
        status=200, headers={"content-type": "text/event-stream"}, events=tuple(events)
    )


def _content_blocks(decision: Decision) -> list[dict[str, Any]]:
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
        deltas = [
            {"type": "text_delta", "text": piece} for piece in _pieces(block["text"], _TEXT_PIECE)
        ]
    else:
        start = {**block, "input": {}}
        arguments = block["input"]
        text = arguments if isinstance(arguments, str) else _json_text(arguments)
        # The API opens every tool_use with an empty fragment; {} streams as that alone.
        deltas = [
            {"type": "input_json_delta", "partial_json": piece}
            for piece in ["", *_pieces(text, _JSON_PIECE)]
        ]
    return [
        _event("content_block_start", index=index, content_block=start),
        *(_event("content_block_delta", index=index, delta=delta) for delta in deltas),
        _event("content_block_stop", index=index),
    ]


def _json_text(arguments: Mapping[str, Any]) -> str:
    return "" if not arguments else json.dumps(arguments, ensure_ascii=False)


def _pieces(text: str, size: int) -> list[str]:
    return [text[start : start + size] for start in range(0, len(text), size)]


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
