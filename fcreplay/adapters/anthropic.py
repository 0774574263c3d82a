"""Adapter for the Anthropic Messages API: requests, responses, SSE streams and errors.

This module is the public face: requests, the next turn, its `CAPABILITIES`, and the
rest of the adapter protocols re-exported from its private siblings (`_anthropic_schema`
is the strict transform, `_anthropic_decision` reads bodies and streams,
`_anthropic_errors` error envelopes, `_anthropic_render` renders answers and
errors for the simulator, `_anthropic_lint` holds the provider's lint rules).

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
  and calls had arrived, `finish_reason` None and stop "other" (the rule all
  adapters share, `_wire.truncated`). A text prefix cannot be told from a turn
  that would have gone on to call a tool, so it is not reported as a text answer.
- A streamed `tool_use` whose JSON buffer does not parse to an object keeps the
  buffer as `raw_arguments` (arguments None), and the assembled turn carries that
  string as `input`. `render_response` writes such a call the same way in a
  non-streamed body; the real API never does, but it lets the simulator inject a
  malformed call and `parse_decision` reads it back instead of failing.
- `temperature` and `top_p` are opt-in (`CAPABILITIES.opt_in_settings`): the engine
  passes them only when a target sets them in its own `settings`, not from the
  suite-wide defaults.
- Spend caps: `billing_error`, and any error whose message speaks of usage or
  spend limits, credit balance, billing or quota, is not retryable even on 429
  (the API answers spend-cap 429s without `retry-after`; parsing sees only the
  body, so the message is what is left to go on).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fcreplay.adapters._anthropic_decision import parse_decision as parse_decision
from fcreplay.adapters._anthropic_decision import parse_stream as parse_stream
from fcreplay.adapters._anthropic_history import read_history as read_history
from fcreplay.adapters._anthropic_lint import ANTHROPIC_RULES
from fcreplay.adapters._anthropic_render import content_blocks
from fcreplay.adapters._anthropic_render import render_error as render_error
from fcreplay.adapters._anthropic_render import render_response as render_response
from fcreplay.adapters._anthropic_schema import wire_schema as wire_schema
from fcreplay.adapters._wire import SIMULATOR_MODEL as SIMULATOR_MODEL
from fcreplay.adapters._wire import declarations, payload_items, result_text
from fcreplay.adapters.capabilities import TOOL_MODES, Capabilities
from fcreplay.decision import Decision, ToolCall
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

NAME = "anthropic"
VERSION = "2"
DEFAULT_BASE_URL = "https://api.anthropic.com"
API_KEY_HEADER = "x-api-key"
API_KEY_PREFIX = ""

PATH = "/v1/messages"
ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 1024
"""`max_tokens` is required by the API; used when the settings leave it open."""

_HEADERS = {"content-type": "application/json", "anthropic-version": ANTHROPIC_VERSION}

CAPABILITIES = Capabilities(
    url_markers=("/messages",),  # whether or not the base URL ends in /v1
    conversation_keys=frozenset({"messages"}),
    # The parallel policy lives in tool_choice, and {"type": "none"} takes none (§4.4).
    parallel_knob=TOOL_MODES - {"none"},
    # `input` is an object, so broken JSON cannot be sent: a call cut off at max_tokens.
    broken_call_stop="length",
    lint=ANTHROPIC_RULES,
    # The SDK's MessageCreateParams no longer declares them and recent models refuse them.
    opt_in_settings=frozenset({"temperature", "top_p"}),
)

_CHOICE_TYPE: dict[ToolMode, str] = {
    "auto": "auto",
    "required": "any",
    "forced": "tool",
    "none": "none",
}
_CHOICE_MODE: dict[str, ToolMode] = {wire: mode for mode, wire in _CHOICE_TYPE.items()}


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
            wire_messages.extend(payload_items(item))
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
        body["tools"] = declarations(tools, settings.strict, _tool_param)
        body["tool_choice"] = _tool_choice_param(choice, settings.parallel_tool_calls)
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.top_p is not None:
        body["top_p"] = settings.top_p
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
        turn = {"role": "assistant", "content": content_blocks(decision)}
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
