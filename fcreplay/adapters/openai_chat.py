"""OpenAI Chat Completions wire format, also spoken by OpenAI-compatible servers.

The same module serves vLLM, Ollama `/v1`, llama.cpp, Groq, DeepSeek, Mistral and
other compatible servers through a `base_url`, so parsing tolerates their known
differences (providers reference §6.4): missing or empty call ids, arguments sent
as an object, tool calls without `type`/`index`, whole calls in one stream delta,
`finish_reason` of `stop`/`tool`/null with calls, reasoning fields, and error
envelopes with an int `code`, flat, string or FastAPI `detail` shapes.

This module is the public face: requests, the next turn, its `CAPABILITIES`, and the
rest of the adapter protocols re-exported from its private siblings (`_openai_chat_decision`
reads answers and error bodies, `_openai_chat_render` renders both for the
simulator; `_openai_strict`, `_openai_errors` and `_openai_lint` are shared with the
Responses adapter).

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
  "invalid", stop "other", finish_reason None, with whatever text and calls arrived
  (the rule all adapters share, `_wire.truncated`). `[DONE]` without a finish
  reason is a complete turn: some routers never send one.
- Strict requests send `wire_schema(parameters, True)` (the transform shared with
  the Responses adapter); non-strict requests omit the `strict` key, which
  compatible servers may reject.
- Chat Completions has no error flag on tool results; the error travels inside the
  result content, which is sent unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fcreplay.adapters import _wire
from fcreplay.adapters._openai_chat_decision import content_text
from fcreplay.adapters._openai_chat_decision import parse_decision as parse_decision
from fcreplay.adapters._openai_chat_decision import parse_stream as parse_stream
from fcreplay.adapters._openai_chat_history import read_history as read_history
from fcreplay.adapters._openai_chat_render import JSON_HEADERS, assistant_message
from fcreplay.adapters._openai_chat_render import render_error as render_error
from fcreplay.adapters._openai_chat_render import render_response as render_response
from fcreplay.adapters._openai_lint import OPENAI_RULES
from fcreplay.adapters._openai_strict import wire_schema as wire_schema
from fcreplay.adapters._wire import as_list, declarations
from fcreplay.adapters.capabilities import Capabilities
from fcreplay.decision import Decision
from fcreplay.inputs.contract import ToolSpec
from fcreplay.neutral import (
    HistoryItem,
    RequestSettings,
    RequestView,
    ToolChoice,
    ToolMode,
    ToolResult,
    WireItem,
    WireRequest,
)

NAME = "openai_chat"
VERSION = "3"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
API_KEY_HEADER = "authorization"
API_KEY_PREFIX = "Bearer "

_PATH = "/chat/completions"

CAPABILITIES = Capabilities(
    url_markers=(_PATH,),
    conversation_keys=frozenset({"messages"}),
    string_arguments=True,  # `function.arguments` is JSON text
    lint=OPENAI_RULES,
)

_READ_CHOICE: dict[str, ToolMode] = {
    "auto": "auto",
    "required": "required",
    "any": "required",  # Mistral's spelling
    "none": "none",
}
_RESULT_ROLES = frozenset({"tool", "function"})


# --- requests -------------------------------------------------------------------------


def build_request(
    model: str,
    messages: Sequence[HistoryItem],
    tools: Sequence[ToolSpec],
    settings: RequestSettings,
) -> WireRequest:
    """Build a Chat Completions request; no tools at all when the list is empty."""
    # Every Message keeps its role: "system", not "developer", which older models and
    # compatible servers reject.
    body: dict[str, Any] = {"model": model, "messages": _wire.history_payload(messages)}
    choice = settings.tool_choice
    if tools and choice.mode != "no_tools":
        body["tools"] = declarations(tools, settings.strict, _declaration)
        body["tool_choice"] = _tool_choice(choice)
        if settings.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = settings.parallel_tool_calls
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.top_p is not None:
        body["top_p"] = settings.top_p
    if settings.max_output_tokens is not None:
        body["max_completion_tokens"] = settings.max_output_tokens
    if settings.stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return WireRequest("POST", _PATH, dict(JSON_HEADERS), body, stream=settings.stream)


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
    return [
        ToolSpec(
            name=function["name"],
            description=function.get("description") or "",
            parameters=_declared_parameters(function.get("parameters")),
        )
        for function in _declared_functions(request_body)
    ]


def _declared_functions(request_body: Any) -> list[dict[str, Any]]:
    """The function objects a request declared that name their function."""
    if not isinstance(request_body, dict):
        return []
    declared = [
        item.get("function")
        for item in as_list(request_body.get("tools"))
        if isinstance(item, dict) and item.get("type", "function") == "function"
    ]
    declared += as_list(request_body.get("functions"))  # deprecated functions API
    return [
        function
        for function in declared
        if isinstance(function, dict) and isinstance(function.get("name"), str)
    ]


def _declared_parameters(parameters: Any) -> dict[str, Any]:
    # The spec: omitted parameters declare a function without arguments.
    return parameters if isinstance(parameters, dict) else {"type": "object", "properties": {}}


def read_request(body: Any, path: str) -> RequestView:
    """Read back what a request asked for (the stream flag is in the body, not the path)."""
    body = body if isinstance(body, dict) else {}
    messages = [item for item in as_list(body.get("messages")) if isinstance(item, dict)]
    users = [item.get("content") for item in messages if item.get("role") == "user"]
    roles = [item.get("role") for item in messages]
    result_turns = sum(
        1
        for index, role in enumerate(roles)
        if role in _RESULT_ROLES and (index == 0 or roles[index - 1] not in _RESULT_ROLES)
    )
    # Names only: the tools' specs are built when they are judged (`sent_tools`).
    names = tuple(function["name"] for function in _declared_functions(body))
    parallel = body.get("parallel_tool_calls")
    model = body.get("model")
    return RequestView(
        model=model if isinstance(model, str) else None,
        last_user_text=content_text(users[-1]) if users else None,
        tool_result_turns=result_turns,
        tool_names=names,
        tool_choice=_read_choice(body.get("tool_choice")) if names else ToolChoice("no_tools"),
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
    turn = turn if isinstance(turn, dict) else assistant_message(decision)
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
    for position, call in enumerate(as_list(turn.get("tool_calls"))):
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
