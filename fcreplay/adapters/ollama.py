"""Ollama's native chat API, `POST /api/chat`: requests, the next turn, read-back and history.

Ollama also serves the OpenAI Chat shape at `/v1` (use `openai_chat` for that); the
native API differs (docs/providers.md §6.5): call `arguments` are JSON objects,
`stream` defaults to true (so it is always sent), streams are NDJSON, settings go
under `options` (`num_predict` is the output-token limit), there is no tool choice
and no parallel-call switch, and results are `{"role": "tool", "tool_name", "content"}`
messages (with `tool_call_id` when the call had an id). `_ollama_wire` reads and
renders answers.

Choices: a request in "none" mode, or with no tools, sends no `tools` (the API has
no way to declare tools it may not use); "required" and "forced" cannot be asked for
and are sent like "auto" (lint says so). A stream without its `done: true` line is
truncated (`_wire.truncated`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from fcreplay.adapters import _wire
from fcreplay.adapters._ollama_wire import assistant_message
from fcreplay.adapters._ollama_wire import parse_decision as parse_decision
from fcreplay.adapters._ollama_wire import parse_stream as parse_stream
from fcreplay.adapters._ollama_wire import render_error as render_error
from fcreplay.adapters._ollama_wire import render_response as render_response
from fcreplay.adapters._wire import as_dict, as_list
from fcreplay.adapters.capabilities import Capabilities
from fcreplay.decision import Decision
from fcreplay.history import History, HistoryCall, HistoryMessage, HistoryResult
from fcreplay.inputs.contract import ToolSpec
from fcreplay.lint.rules import Found, LintRules, LintSubject, Provider
from fcreplay.neutral import (
    HistoryItem,
    RequestSettings,
    RequestView,
    ToolChoice,
    ToolResult,
    WireItem,
    WireRequest,
)

NAME = "ollama"
VERSION = "1"
DEFAULT_BASE_URL = "http://localhost:11434"
API_KEY_HEADER = "authorization"
API_KEY_PREFIX = "Bearer "
"""A local server needs no key; Ollama's cloud and proxies in front of it take a Bearer."""

PATH = "/api/chat"
_RULE = "docs/providers.md §6.5"


def _lint(subject: LintSubject) -> Found:
    yield (
        "note",
        "",
        "Ollama's native API has no tool choice: forced and required requests go out as "
        "auto, and none without tools",
        _RULE,
    )
    if subject.strict:
        yield ("warning", "", "Ollama's native API has no strict flag; it is not sent", _RULE)


CAPABILITIES = Capabilities(
    url_markers=(PATH,),
    conversation_keys=frozenset({"messages"}),
    parallel_knob=frozenset(),  # no parallel-call switch
    tool_choice_modes=frozenset({"auto", "no_tools"}),
    # `arguments` is an object: broken JSON shows as a call cut off at the token limit.
    broken_call_stop="length",
    stream_framing="ndjson",
    lint=LintRules(
        Provider(
            label="Ollama",
            name=re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
            name_rule=_RULE,
            max_tools=None,
            max_tools_level="note",
            max_tools_rule=_RULE,
        ),
        _lint,
    ),
)


def build_request(
    model: str,
    messages: Sequence[HistoryItem],
    tools: Sequence[ToolSpec],
    settings: RequestSettings,
) -> WireRequest:
    """Build an `/api/chat` request; `stream` is always explicit (the API defaults to true)."""
    body: dict[str, Any] = {"model": model, "messages": _wire.history_payload(messages)}
    if tools and settings.tool_choice.mode not in ("none", "no_tools"):
        body["tools"] = _wire.declarations(tools, settings.strict, _declaration)
    options: dict[str, Any] = {}
    if settings.temperature is not None:
        options["temperature"] = settings.temperature
    if settings.top_p is not None:
        options["top_p"] = settings.top_p
    if settings.max_output_tokens is not None:
        options["num_predict"] = settings.max_output_tokens
    if options:
        body["options"] = options
    body["stream"] = settings.stream
    headers = {"content-type": "application/json"}
    return WireRequest("POST", PATH, headers, body, stream=settings.stream)


def _declaration(tool: ToolSpec, strict: bool) -> dict[str, Any]:
    function = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    return {"type": "function", "function": function}


def wire_schema(parameters: dict[str, Any], strict: bool) -> dict[str, Any]:
    """The schema as sent: unchanged (no strict mode to transform for)."""
    return parameters


def sent_tools(request_body: Any) -> list[ToolSpec]:
    """The function tools a request declared, parameters as sent."""
    specs = []
    for item in as_list(as_dict(request_body).get("tools")):
        function = as_dict(as_dict(item).get("function"))
        if isinstance(function.get("name"), str):
            parameters = function.get("parameters")
            specs.append(
                ToolSpec(
                    name=function["name"],
                    description=str(function.get("description") or ""),
                    parameters=parameters
                    if isinstance(parameters, dict)
                    else {"type": "object", "properties": {}},
                )
            )
    return specs


def read_request(body: Any, path: str = PATH) -> RequestView:
    """Read back what a request asked for (tools present: "auto"; none: "no_tools")."""
    body = as_dict(body)
    messages = [as_dict(item) for item in as_list(body.get("messages"))]
    users = [m.get("content") for m in messages if m.get("role") == "user"]
    roles = [m.get("role") for m in messages]
    turns = sum(
        1
        for index, role in enumerate(roles)
        if role == "tool" and (index == 0 or roles[index - 1] != "tool")
    )
    names = tuple(spec.name for spec in sent_tools(body))
    model = body.get("model")
    return RequestView(
        model=model if isinstance(model, str) else None,
        last_user_text=users[-1] if users and isinstance(users[-1], str) else None,
        tool_result_turns=turns,
        tool_names=names,
        tool_choice=ToolChoice("auto" if names else "no_tools"),
        parallel_tool_calls=None,
        stream=body.get("stream", True) is not False,
    )


def append_tool_result(
    messages: Sequence[HistoryItem],
    decision: Decision,
    results: Sequence[ToolResult],
) -> list[HistoryItem]:
    """Append the assistant message verbatim, then one `tool` message per result, in order."""
    turn = decision.assistant_turn
    turn = turn if isinstance(turn, dict) else assistant_message(decision)
    ids = {call.call_id for call in decision.calls if call.call_id}
    replies = []
    for result in results:
        reply: dict[str, Any] = {"role": "tool", "tool_name": result.name}
        if result.call_id in ids:
            reply["tool_call_id"] = result.call_id
        reply["content"] = _wire.result_text(result.content)
        replies.append(reply)
    return [*messages, WireItem(turn), *map(WireItem, replies)]


def read_history(body: Any) -> History:
    """The tool-loop view of a request's `messages` (results follow their turn directly)."""
    found = []
    with_ids = True
    for index, message in enumerate(as_list(as_dict(body).get("messages"))):
        message = as_dict(message)
        calls: tuple[HistoryCall, ...] = ()
        results: tuple[HistoryResult, ...] = ()
        if message.get("role") == "assistant":
            calls = tuple(
                HistoryCall(
                    call.get("id") if isinstance(call.get("id"), str) else None,
                    str(as_dict(call.get("function")).get("name") or ""),
                )
                for call in map(as_dict, as_list(message.get("tool_calls")))
            )
            with_ids = with_ids and all(call.call_id for call in calls)
        elif message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            name = message.get("tool_name")
            results = (
                HistoryResult(
                    call_id if isinstance(call_id, str) else None,
                    name if isinstance(name, str) else None,
                ),
            )
        found.append(HistoryMessage(index, f"/messages/{index}", calls, results))
    return History(tuple(found), placement="right_after", pairing="id" if with_ids else "name")
