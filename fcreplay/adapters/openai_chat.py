"""OpenAI Chat Completions wire format, also spoken by OpenAI-compatible servers.

The same module serves vLLM, Ollama `/v1`, llama.cpp, Groq, DeepSeek, Mistral and
other compatible servers through a `base_url`, so parsing tolerates their known
differences (providers reference §6.4): missing or empty call ids, arguments sent
as an object, tool calls without `type`/`index`, whole calls in one stream delta,
`finish_reason` of `stop`/`tool`/null with calls, reasoning fields, and error
envelopes with an int `code`, flat, string or FastAPI `detail` shapes.

Decisions made here:
- A call is a call whenever call items are present. The stop is then "tool_call"
  even if the provider said `stop` or nothing (OpenAI answers a named tool choice
  with `stop`). Calls cut off by `length` or `content_filter` make the turn "invalid".
- `finish_reason: tool_calls` (or `tool`) with no function call in the message is
  "invalid": the provider claims a call we cannot read (e.g. a `custom` tool call,
  which stays in the raw body only).
- The deprecated `function_call` message field is one call with no id; its result
  goes back as a `{"role": "function", "name": ...}` message, the only reply that
  format accepts.
- A stream with neither a `finish_reason` nor `data: [DONE]` was cut short: kind
  "invalid", stop "other", finish_reason None, with whatever text and calls arrived.
- Non-strict requests omit the `strict` key, which compatible servers may reject.
- Chat Completions has no error flag on tool results; the error travels inside the
  result content, which is sent unchanged.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..contract import ToolSpec
from ..decision import Decision, DecisionKind, ProviderError, Stop, ToolCall
from ..exchange import (
    HistoryItem,
    Message,
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
from . import _wire

NAME = "openai_chat"
VERSION = "1"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
API_KEY_HEADER = "authorization"
API_KEY_PREFIX = "Bearer "

_PATH = "/chat/completions"
_JSON = {"content-type": "application/json"}
_SSE = {"content-type": "text/event-stream"}

_STOP: dict[str, Stop] = {
    "stop": "end",
    "tool_calls": "tool_call",
    "tool": "tool_call",  # old llama.cpp
    "function_call": "tool_call",  # deprecated functions API
    "length": "length",
    "model_length": "length",  # Mistral
    "content_filter": "content_filter",
}
_CUT_OFF: frozenset[Stop] = frozenset({"length", "content_filter"})
_FINISH_FOR_STOP = {"length": "length", "content_filter": "content_filter"}

_READ_CHOICE: dict[str, ToolMode] = {
    "auto": "auto",
    "required": "required",
    "any": "required",  # Mistral's spelling
    "none": "none",
}
_RESULT_ROLES = frozenset({"tool", "function"})

_STREAMED_TEXT = ("content", "refusal", "reasoning_content", "reasoning")
"""Delta string fields that concatenate; only `content` is visible text."""

_RETRYABLE_BY_KIND = {
    "insufficient_quota": False,
    "server_error": True,
    "rate_limit_exceeded": True,
}
"""Error `code`/`type` values that decide retrying better than the status does."""

_RETRY_HINT = re.compile(r"try again in ((?:\d+(?:\.\d+)?(?:ms|h|m|s))+)", re.IGNORECASE)
_RETRY_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}

_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties"})
"""Keywords whose values map names to subschemas."""
_SCHEMA_KEYS = frozenset(
    {"items", "prefixItems", "anyOf", "oneOf", "allOf", "not", "if", "then", "else", "contains"}
)
"""Keywords whose values are a subschema or a list of them."""

_RESPONSE_ID = "chatcmpl-fcreplay"
_USAGE = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
_PIECE = 6
"""Characters per rendered stream fragment: small, like the tokens real streams carry."""


# --- requests -------------------------------------------------------------------------


def wire_schema(parameters: dict[str, Any], strict: bool) -> dict[str, Any]:
    """Return the `parameters` schema as sent: unchanged, or in strict (Structured Outputs) form.

    Strict form: every object gets `additionalProperties: false` and lists every
    property in `required`; a property that was optional becomes nullable, through a
    `["T", "null"]` type union, or `anyOf: [schema, {"type": "null"}]` when the schema
    has no plain type or restricts values with `enum`/`const` (a type union would not
    let null through those). Keywords strict mode may not support are left in place,
    so the provider's 400 shows them instead of a constraint vanishing silently.
    """
    schema = copy.deepcopy(parameters)
    return _strict_schema(schema) if strict else schema


def _strict_schema(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_strict_schema(sub) for sub in schema]
    if not isinstance(schema, dict):
        return schema
    for key, sub in schema.items():
        if key in _SCHEMA_MAPS and isinstance(sub, dict):
            schema[key] = {name: _strict_schema(value) for name, value in sub.items()}
        elif key in _SCHEMA_KEYS:
            schema[key] = _strict_schema(sub)
    types = schema.get("type")
    if "object" in (types if isinstance(types, list) else [types]) or "properties" in schema:
        properties = schema.setdefault("properties", {})
        required = list(_list(schema.get("required")))
        optional = [name for name in properties if name not in required]
        for name in optional:
            properties[name] = _nullable(properties[name])
        schema["required"] = required + optional
        schema["additionalProperties"] = False
    return schema


def _nullable(schema: Any) -> Any:
    if not isinstance(schema, dict) or _accepts_null(schema):
        return schema
    types = schema.get("type")
    if "enum" in schema or "const" in schema or not isinstance(types, str | list):
        return {"anyOf": [schema, {"type": "null"}]}
    return {**schema, "type": [*([types] if isinstance(types, str) else types), "null"]}


def _accepts_null(schema: Mapping[str, Any]) -> bool:
    types = schema.get("type")
    typed = types == "null" or (isinstance(types, list) and "null" in types)
    if typed and ("enum" not in schema or None in schema["enum"]):
        return True
    branches = schema.get("anyOf")
    return isinstance(branches, list) and any(
        isinstance(branch, dict) and branch.get("type") == "null" for branch in branches
    )


def build_request(
    model: str,
    messages: Sequence[HistoryItem],
    tools: Sequence[ToolSpec],
    settings: RequestSettings,
) -> WireRequest:
    """Build a Chat Completions request; no tools at all when the list is empty."""
    body: dict[str, Any] = {"model": model, "messages": _wire_messages(messages)}
    choice = settings.tool_choice
    if tools and choice.mode != "no_tools":
        body["tools"] = [_declaration(tool, settings.strict) for tool in tools]
        body["tool_choice"] = _tool_choice(choice)
        if settings.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = settings.parallel_tool_calls
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.max_output_tokens is not None:
        body["max_completion_tokens"] = settings.max_output_tokens
    if settings.stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return WireRequest("POST", _PATH, dict(_JSON), body, stream=settings.stream)


def _wire_messages(messages: Sequence[HistoryItem]) -> list[Any]:
    wire: list[Any] = []
    for item in messages:
        if isinstance(item, Message):
            # "system", not "developer": older models and compatible servers reject the latter.
            wire.append({"role": item.role, "content": item.content})
        elif isinstance(item.payload, list):
            wire.extend(item.payload)
        else:
            wire.append(item.payload)
    return wire


def _declaration(tool: ToolSpec, strict: bool) -> dict[str, Any]:
    function: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "parameters": wire_schema(tool.parameters, strict),
    }
    if strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def _tool_choice(choice: ToolChoice) -> str | dict[str, Any]:
    if choice.mode != "forced":
        return choice.mode
    if not choice.tool:
        raise ValueError("a forced tool choice needs the name of the tool")
    return {"type": "function", "function": {"name": choice.tool}}


def sent_tools(request_body: Any) -> list[ToolSpec]:
    """Return the function tools a request declared, parameters exactly as sent."""
    if not isinstance(request_body, dict):
        return []
    declared = [
        item.get("function")
        for item in _list(request_body.get("tools"))
        if isinstance(item, dict) and item.get("type", "function") == "function"
    ]
    declared += _list(request_body.get("functions"))  # deprecated functions API
    return [
        ToolSpec(
            name=function["name"],
            description=function.get("description") or "",
            parameters=_declared_parameters(function.get("parameters")),
        )
        for function in declared
        if isinstance(function, dict) and isinstance(function.get("name"), str)
    ]


def _declared_parameters(parameters: Any) -> dict[str, Any]:
    # The spec: omitted parameters declare a function without arguments.
    return parameters if isinstance(parameters, dict) else {"type": "object", "properties": {}}


def read_request(body: Any, path: str) -> RequestView:
    """Read back what a request asked for (the stream flag is in the body, not the path)."""
    body = body if isinstance(body, dict) else {}
    messages = [item for item in _list(body.get("messages")) if isinstance(item, dict)]
    users = [item.get("content") for item in messages if item.get("role") == "user"]
    roles = [item.get("role") for item in messages]
    result_turns = sum(
        1
        for index, role in enumerate(roles)
        if role in _RESULT_ROLES and (index == 0 or roles[index - 1] not in _RESULT_ROLES)
    )
    tools = sent_tools(body)
    parallel = body.get("parallel_tool_calls")
    model = body.get("model")
    return RequestView(
        model=model if isinstance(model, str) else None,
        last_user_text=_text(users[-1]) if users else None,
        tool_result_turns=result_turns,
        tool_names=tuple(tool.name for tool in tools),
        tool_choice=_read_choice(body.get("tool_choice")) if tools else ToolChoice("no_tools"),
        parallel_tool_calls=parallel if isinstance(parallel, bool) else None,
        stream=body.get("stream") is True,
    )


def _read_choice(choice: Any) -> ToolChoice:
    if isinstance(choice, dict):
        function = choice.get("function")
        name = function.get("name") if isinstance(function, dict) else None
        if isinstance(name, str):
            return ToolChoice("forced", name)
    return ToolChoice(_READ_CHOICE.get(choice, "auto") if isinstance(choice, str) else "auto")


# --- responses ------------------------------------------------------------------------


def parse_decision(status: int, body: Any) -> Decision | ProviderError:
    """Read a non-streamed response body (error envelopes included)."""
    if not 200 <= status < 300 or _is_error(body):
        return _error(status, body)
    choice = _first_choice(body)
    if choice is None:
        return _error(status, body, fallback="the response has no choices")
    message = choice.get("message")
    return _decide(
        message if isinstance(message, dict) else {},
        choice.get("finish_reason"),
        body.get("model"),
        raw=body,
    )


def _first_choice(body: Any) -> dict[str, Any] | None:
    choices = body.get("choices") if isinstance(body, dict) else None
    for choice in _list(choices):
        # n=1 is all fcreplay asks for; other choices stay in the raw body.
        if isinstance(choice, dict) and choice.get("index", 0) == 0:
            return choice
    return None


def _decide(message: dict[str, Any], finish: Any, model: Any, raw: Any) -> Decision:
    finish_reason = finish if isinstance(finish, str) else None
    calls = tuple(_calls(message))
    text = _text(message.get("content"))
    refusal = message.get("refusal")
    stop = _wire.map_stop(_STOP, finish_reason, "end")
    kind: DecisionKind = "text"
    if calls:
        broken = stop in _CUT_OFF or any(call.arguments is None for call in calls)
        kind = "invalid" if broken else "tool_call"
        stop = "tool_call" if stop == "end" else stop
    elif isinstance(refusal, str):
        kind, text = "refusal", refusal or None
        stop = "refusal" if stop == "end" else stop
    elif stop == "tool_call":
        kind = "invalid"
    elif stop == "content_filter" and text is None:
        kind = "refusal"
    return Decision(
        kind=kind,
        text=text,
        calls=calls,
        finish_reason=finish_reason,
        stop=stop,
        raw_response=raw,
        assistant_turn=message,
        model=model if isinstance(model, str) else None,
    )


def _calls(message: Mapping[str, Any]) -> Iterator[ToolCall]:
    for item in _list(message.get("tool_calls")):
        if not isinstance(item, dict) or item.get("type", "function") != "function":
            continue  # custom tools and unknown item types stay in the raw body
        # Old llama.cpp put name and arguments on the item itself.
        function = item.get("function", item)
        if isinstance(function, dict):
            yield _call(item.get("id"), function)
    legacy = message.get("function_call")
    if isinstance(legacy, dict):
        yield _call(None, legacy)


def _call(call_id: Any, function: Mapping[str, Any]) -> ToolCall:
    raw = function.get("arguments")
    if not (raw is None or isinstance(raw, str | dict)):
        raw = json.dumps(raw, ensure_ascii=False)  # a list or a number: kept as its JSON text
    name = function.get("name")
    return ToolCall(
        call_id=call_id if isinstance(call_id, str) and call_id else None,
        name=name if isinstance(name, str) else "",
        arguments=_wire.decode_arguments(raw),
        raw_arguments=raw,
    )


def _text(content: Any) -> str | None:
    if isinstance(content, list):  # content parts, accepted in requests and by some servers
        content = "".join(
            part["text"]
            for part in content
            if isinstance(part, dict)
            and part.get("type") == "text"
            and isinstance(part.get("text"), str)
        )
    return content if isinstance(content, str) and content else None


def parse_stream(status: int, events: Sequence[StreamEvent]) -> Decision | ProviderError:
    """Reassemble a streamed response; gives the Decision of its non-streamed twin."""
    raw = [{"event": event.event, "data": event.data} for event in events]
    if not 200 <= status < 300:
        return _error(status, events[0].data if events else None)
    stream = _StreamedTurn()
    done = False
    for event in events:
        data = event.data
        if isinstance(data, str) and data.strip() == "[DONE]":
            done = True
            break
        if event.event == "error" or _is_error(data):  # Groq `event: error`, OpenAI/vLLM data
            return _error(status, data)
        if isinstance(data, dict):
            stream.add(data)
    decision = _decide(stream.message(), stream.finish_reason, stream.model, raw)
    if done or stream.finish_reason is not None:
        return decision
    return replace(decision, kind="invalid", stop="other")


class _StreamedTurn:
    """Accumulates choice 0 of a stream into the message a non-streamed body would hold."""

    def __init__(self) -> None:
        self.texts: dict[str, list[str]] = {}
        self.calls: list[dict[str, Any]] = []
        self.by_index: dict[int, dict[str, Any]] = {}
        self.function_call: dict[str, Any] | None = None
        self.finish_reason: str | None = None
        self.model: str | None = None

    def add(self, chunk: Mapping[str, Any]) -> None:
        if self.model is None and isinstance(chunk.get("model"), str):
            self.model = chunk["model"]
        for choice in _list(chunk.get("choices")):  # [] in the usage chunk
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict):
                self._delta(delta)
            if isinstance(choice.get("finish_reason"), str):
                self.finish_reason = choice["finish_reason"]

    def _delta(self, delta: Mapping[str, Any]) -> None:
        for key in _STREAMED_TEXT:
            if isinstance(delta.get(key), str):
                self.texts.setdefault(key, []).append(delta[key])
        for item in _list(delta.get("tool_calls")):
            if isinstance(item, dict):
                self._tool_call(item)
        if isinstance(delta.get("function_call"), dict):
            self.function_call = self.function_call or {}
            _merge_function(self.function_call, delta["function_call"])

    def _tool_call(self, item: Mapping[str, Any]) -> None:
        index = item.get("index")
        function = item.get("function", item)  # old llama.cpp: name and arguments on the item
        fragment = function if isinstance(function, dict) else {}
        if isinstance(index, int) and index in self.by_index:
            call = self.by_index[index]
        elif isinstance(index, int) or "id" in item or "name" in fragment or not self.calls:
            # A new call; without an index (Mistral) it arrives whole in this delta.
            call = {}
            self.calls.append(call)
            if isinstance(index, int):
                self.by_index[index] = call
        else:
            call = self.calls[-1]
        if "id" in item:
            call["id"] = item["id"]
        kind = item.get("type")
        call["type"] = kind if isinstance(kind, str) else call.get("type", "function")
        _merge_function(call.setdefault("function", {}), fragment)

    def message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": None}
        message.update({key: "".join(parts) for key, parts in self.texts.items()})
        if self.calls:
            message["tool_calls"] = self.calls
        if self.function_call is not None:
            message["function_call"] = self.function_call
        return message


def _merge_function(target: dict[str, Any], fragment: Mapping[str, Any]) -> None:
    name, known = fragment.get("name"), target.get("name", "")
    # OpenAI sends the name once; some routers (OpenRouter) repeat it whole in every
    # fragment, and a server that splits it would need the pieces joined.
    if isinstance(name, str) and name != known:
        target["name"] = known + name
    if "arguments" in fragment:
        arguments = fragment["arguments"]
        if isinstance(arguments, str) and isinstance(target.get("arguments"), str):
            target["arguments"] += arguments
        else:
            target["arguments"] = arguments  # first fragment, or a whole object


# --- errors ---------------------------------------------------------------------------


def _is_error(body: Any) -> bool:
    return isinstance(body, dict) and (
        body.get("error") is not None
        or body.get("object") == "error"
        or ("detail" in body and "choices" not in body)
    )


def _error(status: int, body: Any, fallback: str | None = None) -> ProviderError:
    found = body.get("error", body) if isinstance(body, dict) else body
    fields: Mapping[str, Any] = found if isinstance(found, dict) else {}
    message = fields.get("message", fields.get("detail")) if fields else found
    if not isinstance(message, str) or not message:
        shown = message or found
        message = fallback or (_json_text(shown) if shown else f"HTTP {status}")
    kind, code = fields.get("type"), fields.get("code")
    # In-stream errors come inside a 200; their own status (Groq `status_code`, vLLM int
    # `code`, Mistral `raw_status_code`) is the one that says what went wrong.
    if not 400 <= status < 600:
        inner = (fields.get("status_code"), code, fields.get("raw_status_code"))
        status = next((v for v in inner if isinstance(v, int) and 400 <= v < 600), status)
    verdicts = [_RETRYABLE_BY_KIND.get(str(value)) for value in (code, kind)]
    retryable = next((v for v in verdicts if v is not None), _wire.is_retryable(status))
    return ProviderError(
        status=status,
        type=None if kind is None else str(kind),
        code=None if code is None else str(code),
        message=message[:2000],  # an HTML error page is not a message worth keeping whole
        retryable=retryable,
        retry_after=_retry_after(message) if retryable else None,
        raw=body,
    )


def _retry_after(message: str) -> float | None:
    """Seconds from OpenAI's "Please try again in 1m2.5s" hint, the only delay in the body."""
    hint = _RETRY_HINT.search(message)
    if hint is None:
        return None
    return sum(float(n) * _SECONDS[unit] for n, unit in _RETRY_PART.findall(hint.group(1)))


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def render_error(error: ProviderError, stream: bool = False) -> WireResponse:
    """Render an OpenAI error envelope; in a stream, a `data: {"error": ...}` event in a 200."""
    message = error.message
    if error.retry_after is not None and _retry_after(message) is None:
        # The body is the only place parsing finds a delay; milliseconds are its precision.
        seconds = f"{error.retry_after:.3f}".rstrip("0").rstrip(".") or "0"
        message = f"{message} Please try again in {seconds}s."
    envelope: dict[str, Any] = {
        "message": message,
        "type": error.type,
        "param": None,
        "code": error.code,
    }
    if not stream:
        return WireResponse(error.status, dict(_JSON), {"error": envelope})
    envelope["status_code"] = error.status  # as Groq does, so the status survives the 200
    events = (StreamEvent(None, {"error": envelope}), StreamEvent(None, "[DONE]"))
    return WireResponse(200, dict(_SSE), events=events)


# --- next turn ------------------------------------------------------------------------


def append_tool_result(
    messages: Sequence[HistoryItem],
    decision: Decision,
    results: Sequence[ToolResult],
) -> list[HistoryItem]:
    """Append the assistant turn verbatim, then one `tool` message per result, in call order.

    A call the provider sent without an id cannot be answered by id, so it gets a
    position-based id (`call00000`, nine alphanumerics so Mistral accepts it too) in
    the replayed assistant message and in its result; results without a call id take
    those ids in order. Calls that had an id are replayed untouched.
    """
    turn = decision.assistant_turn
    turn = turn if isinstance(turn, dict) else _assistant_message(decision)
    if not isinstance(turn.get("tool_calls"), list) and isinstance(turn.get("function_call"), dict):
        replies = [
            {"role": "function", "name": result.name, "content": _wire.result_text(result.content)}
            for result in results
        ]
        return [*messages, WireItem(turn), *map(WireItem, replies)]
    turn, ids = _with_call_ids(turn)
    unanswered = iter(call_id for call_id, had_id in ids if not had_id)
    replies = []
    for result in results:
        call_id = result.call_id or next(unanswered, None)
        if call_id is None:
            raise ValueError(f"the result for {result.name!r} has no call id and no call is left")
        replies.append(
            {"role": "tool", "tool_call_id": call_id, "content": _wire.result_text(result.content)}
        )
    order = {call_id: position for position, (call_id, _) in enumerate(ids)}
    replies.sort(key=lambda reply: order.get(reply["tool_call_id"], len(order)))
    return [*messages, WireItem(turn), *map(WireItem, replies)]


def _with_call_ids(turn: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, bool]]]:
    """Return the turn with an id on every call, and each call's id with whether it had one."""
    calls: list[Any] = []
    ids: list[tuple[str, bool]] = []
    for position, call in enumerate(_list(turn.get("tool_calls"))):
        call_id = call.get("id") if isinstance(call, dict) else None
        if isinstance(call_id, str) and call_id:
            ids.append((call_id, True))
        else:
            call_id = f"call{position:05d}"
            ids.append((call_id, False))
            call = {**call, "id": call_id} if isinstance(call, dict) else call
        calls.append(call)
    if all(had_id for _, had_id in ids):
        return turn, ids
    return {**turn, "tool_calls": calls}, ids


# --- rendering (the simulator's side) -------------------------------------------------


def render_response(decision: Decision, stream: bool = False) -> WireResponse:
    """Render a realistic body or SSE stream that parses back into `decision`."""
    finish = decision.finish_reason or _natural_finish(decision)
    message = _assistant_message(decision)
    model = decision.model or "fcreplay-simulator"
    if stream:
        return WireResponse(200, dict(_SSE), events=tuple(_chunks(message, finish, model)))
    body = {
        "id": _RESPONSE_ID,
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": dict(_USAGE),
    }
    return WireResponse(200, dict(_JSON), body)


def _natural_finish(decision: Decision) -> str:
    if decision.stop in _FINISH_FOR_STOP:
        return _FINISH_FOR_STOP[decision.stop]
    if decision.kind == "invalid" and decision.calls:
        # Only a cut-off explains an invalid turn whose arguments all parse.
        broken = any(call.arguments is None for call in decision.calls)
        return "tool_calls" if broken else "length"
    return "tool_calls" if decision.calls or decision.kind == "invalid" else "stop"


def _assistant_message(decision: Decision) -> dict[str, Any]:
    refused = decision.kind == "refusal"
    message: dict[str, Any] = {"role": "assistant", "content": None if refused else decision.text}
    if refused and decision.stop != "content_filter":
        message["refusal"] = decision.text or ""
    if decision.calls:
        message["tool_calls"] = [_wire_call(call) for call in decision.calls]
    return message


def _wire_call(call: ToolCall) -> dict[str, Any]:
    function: dict[str, Any] = {"name": call.name}
    if call.raw_arguments is not None:
        function["arguments"] = call.raw_arguments
    elif call.arguments:  # a scripted call given decoded arguments only
        function["arguments"] = _wire.encode_arguments(call.arguments)
    item: dict[str, Any] = {"type": "function", "function": function}
    return item if call.call_id is None else {"id": call.call_id, **item}


def _chunks(message: Mapping[str, Any], finish: str, model: str) -> Iterator[StreamEvent]:
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
            for piece in _pieces(arguments) if arguments else []:
                fragment = {"index": index, "function": {"arguments": piece}}
                yield chunk({"tool_calls": [fragment]})
        else:  # an object, or none at all: whole in one delta, as Ollama sends calls
            if "arguments" in function:
                first["function"]["arguments"] = arguments
            yield chunk({"tool_calls": [first]})
    yield chunk({}, finish)
    yield StreamEvent(None, {**head, "choices": [], "usage": dict(_USAGE)})
    yield StreamEvent(None, "[DONE]")


def _pieces(text: str) -> list[str]:
    return [text[i : i + _PIECE] for i in range(0, len(text), _PIECE)] or [""]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
