"""OpenAI Responses API adapter: neutral requests and decisions to and from /v1/responses JSON.

This module is the public face: requests, the next turn, its `CAPABILITIES`, and the
rest of the adapter protocols re-exported from its private siblings
(`_openai_responses_decision` reads bodies, `_openai_responses_stream` streams,
`_openai_responses_errors` error bodies and events, `_openai_responses_render`
renders answers and errors for the simulator; `_openai_strict`, `_openai_errors`
and `_openai_lint` are shared with the Chat Completions adapter).

Choices this wire format forces (see the providers reference, section 3):

- Stateless: every request sends `store: false`, and the whole history (every
  output item of earlier turns, verbatim) is re-sent each turn. `include` is not
  sent: non-reasoning models refuse `reasoning.encrypted_content` with a 400, so a
  reasoning-model target asks for it in its `extra_body` (docs/config.md).
- Without tools (or in no_tools mode) neither `tools`, `tool_choice` nor
  `parallel_tool_calls` is sent.
- There is no finish reason. `finish_reason` is the response `status`, except
  that an incomplete response becomes `incomplete:<incomplete_details.reason>`
  (e.g. `incomplete:max_output_tokens`) so that one string maps to `stop`.
- A call is a `function_call` output item; its id is `call_id` (not `id`).
  Free-form `custom_tool_call` items (their `input` kept raw, never decoded) and
  `tool_search_call` items the client executes (`execution: "client"`, named
  `tool_search`) are calls too: the client must answer them, with a
  `custom_tool_call_output` or a `tool_search_output` (the result's `tools` list).
  Hosted tool items (`web_search_call`, `mcp_call`, a server-run tool search...)
  stay in the assistant turn and are never reported as calls.
- A response with `status: failed` (inside a 2xx) and the in-stream `error` /
  `response.failed` events become a ProviderError that keeps the HTTP status
  the stream arrived with; it is retryable when its code is `server_error` or
  `rate_limit_exceeded`.
- A stream that ends without `response.completed|incomplete|failed` is
  truncated: kind "invalid", finish_reason None, stop "other", with whatever
  text and calls had arrived (the rule all adapters share, `_wire.truncated`).
- Tool results carry no error flag in this format: `is_error` results are sent
  like any other, their content says what went wrong.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fcreplay.adapters import _wire
from fcreplay.adapters._openai_lint import OPENAI_RULES
from fcreplay.adapters._openai_responses_decision import parse_decision as parse_decision
from fcreplay.adapters._openai_responses_history import read_history as read_history
from fcreplay.adapters._openai_responses_render import raw_text
from fcreplay.adapters._openai_responses_render import render_error as render_error
from fcreplay.adapters._openai_responses_render import render_response as render_response
from fcreplay.adapters._openai_responses_stream import parse_stream as parse_stream
from fcreplay.adapters._openai_strict import wire_schema as wire_schema
from fcreplay.adapters._wire import SIMULATOR_MODEL as SIMULATOR_MODEL
from fcreplay.adapters._wire import declarations
from fcreplay.adapters.capabilities import Capabilities
from fcreplay.decision import Decision
from fcreplay.inputs.contract import ToolSpec
from fcreplay.neutral import (
    HistoryItem,
    Message,
    RequestSettings,
    RequestView,
    ToolChoice,
    ToolResult,
    WireItem,
    WireRequest,
)

NAME = "openai_responses"
VERSION = "3"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
API_KEY_HEADER = "authorization"
API_KEY_PREFIX = "Bearer "

PATH = "/responses"
CAPABILITIES = Capabilities(
    url_markers=(PATH,),
    conversation_keys=frozenset({"input"}),
    string_arguments=True,  # `function_call.arguments` is JSON text
    lint=OPENAI_RULES,
)


# ---------------------------------------------------------------------------
# Requests


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
    body["input"] = _wire.history_payload(history)
    choice = settings.tool_choice
    if tools and choice.mode != "no_tools":
        body["tools"] = declarations(tools, settings.strict, _tool)
        body["tool_choice"] = _tool_choice(choice)
        if settings.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = settings.parallel_tool_calls
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.max_output_tokens is not None:
        body["max_output_tokens"] = settings.max_output_tokens
    if settings.top_p is not None:
        body["top_p"] = settings.top_p
    body["store"] = False
    headers = {"content-type": "application/json"}
    if settings.stream:
        body["stream"] = True
        headers["accept"] = "text/event-stream"
    return WireRequest("POST", PATH, headers, body, stream=settings.stream)


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


_OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})


def _result_turns(items: Any) -> int:
    # Results of one turn are consecutive items, so each run of them is one turn.
    if not isinstance(items, list):
        return 0
    turns = 0
    previous = False
    for item in items:
        current = isinstance(item, dict) and item.get("type") in _OUTPUT_TYPES
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
    kinds = {item.get("call_id"): item.get("type") for item in items if isinstance(item, dict)}
    for result, call_id in zip(results, _result_ids(decision, results), strict=True):
        history.append(WireItem(_output(kinds.get(call_id), call_id, result)))
    return history


def _output(kind: Any, call_id: str | None, result: ToolResult) -> dict[str, Any]:
    """The input item answering one call, in the shape its call item's type needs."""
    if kind == "tool_search_call":
        tools = result.content.get("tools")
        return {
            "type": "tool_search_output",
            "call_id": call_id,
            "execution": "client",
            "tools": tools if isinstance(tools, list) else [],
        }
    output_type = (
        "custom_tool_call_output" if kind == "custom_tool_call" else "function_call_output"
    )
    return {"type": output_type, "call_id": call_id, "output": _wire.result_text(result.content)}


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
            "arguments": raw_text(call),
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
