"""AWS Bedrock Converse API: `POST /model/{modelId}/converse` and `/converse-stream`.

Requests, the next turn, read-back and history here; `_bedrock_wire` reads and
renders answers (docs/providers.md §8). Wire facts this module follows:

- Tools are `toolConfig.tools[].toolSpec {name, description, inputSchema: {json}}`;
  `toolConfig.toolChoice` is `{"auto": {}}`, `{"any": {}}` or `{"tool": {"name"}}`.
  There is no "none" choice: "none" leaves the tools out, unless the history holds
  `toolUse` blocks, which need the `toolConfig` (then the tools go without a
  `toolChoice`, read back as "auto"; lint says so). No parallel-call switch, no strict flag.
- Messages hold content blocks: user text as `[{"text": ...}]`, system prompts in
  the top-level `system` list, settings in `inferenceConfig` (`maxTokens`,
  `temperature`, `topP`).
- Results are one `user` message with a `toolResult {toolUseId, content: [{"json":
  result}]}` block per call, `status: "error"` on error results; the assistant
  message is replayed verbatim.
- Streams are the AWS binary event stream (`Capabilities.stream_framing`); one
  without `messageStop` is truncated (`_wire.truncated`).
- Auth is SigV4 or a Bedrock API key (`Authorization: Bearer`); fcreplay sends the
  key from `api_key_env` as a Bearer token and does not sign requests.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote, unquote

import fcreplay.jsoncopy as jsoncopy
from fcreplay.adapters._bedrock_wire import content_blocks
from fcreplay.adapters._bedrock_wire import parse_decision as parse_decision
from fcreplay.adapters._bedrock_wire import parse_stream as parse_stream
from fcreplay.adapters._bedrock_wire import render_error as render_error
from fcreplay.adapters._bedrock_wire import render_response as render_response
from fcreplay.adapters._wire import as_dict, as_list, declarations, payload_items
from fcreplay.adapters.capabilities import TOOL_MODES, Capabilities, StreamPath
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

NAME = "bedrock_converse"
VERSION = "1"
DEFAULT_BASE_URL = "https://bedrock-runtime.us-east-1.amazonaws.com"
API_KEY_HEADER = "authorization"
API_KEY_PREFIX = "Bearer "

_PATH = "/model/{model}/converse"
_STREAM_PATH = "/model/{model}/converse-stream"
_MODEL_IN_PATH = re.compile(r"/model/([^/]+)/converse")
_RULE = "docs/providers.md §8"


def _lint(subject: LintSubject) -> Found:
    yield (
        "note",
        "",
        "Bedrock Converse has no 'none' tool choice: such a request leaves the tools out, or "
        "sends them without a toolChoice once the history holds tool calls",
        _RULE,
    )
    if subject.strict:
        yield ("warning", "", "Bedrock Converse: the strict flag is not sent", _RULE)


CAPABILITIES = Capabilities(
    url_markers=("/converse", "/converse-stream"),
    stream_path=StreamPath("/converse-stream"),
    conversation_keys=frozenset({"messages"}),
    parallel_knob=frozenset(),
    tool_choice_modes=TOOL_MODES - {"none"},
    broken_call_stop="malformed_call",
    stream_framing="aws-eventstream",
    lint=LintRules(
        Provider(
            label="Bedrock Converse",
            name=re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
            name_rule=f"{_RULE}: ToolSpecification.name is 1-64 [a-zA-Z0-9_-]",
            max_tools=None,
            max_tools_level="note",
            max_tools_rule=_RULE,
            legacy_name=lambda name: re.fullmatch(r"[a-zA-Z][a-zA-Z0-9_]*", name) is not None,
            legacy_name_message="an older Bedrock service model allowed [a-zA-Z][a-zA-Z0-9_]* only",
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
    """Build a Converse (or ConverseStream) request for the history, tools and settings."""
    system: list[dict[str, str]] = []
    wire: list[Any] = []
    for item in messages:
        if isinstance(item, WireItem):
            wire.extend(jsoncopy.copied(payload_items(item)))
        elif item.role == "system":
            if wire:
                raise ValueError("bedrock_converse: system text goes before the conversation")
            system.append({"text": item.content})
        else:
            wire.append({"role": item.role, "content": [{"text": item.content}]})
    body: dict[str, Any] = {"messages": wire}
    if system:
        body["system"] = system
    choice = settings.tool_choice
    # No "none" choice: the tools are left out, unless the history's toolUse blocks
    # need the toolConfig (then they go without a toolChoice).
    needed = choice.mode != "none" or any(
        "toolUse" in block or "toolResult" in block
        for message in wire
        for block in map(as_dict, as_list(as_dict(message).get("content")))
    )
    if tools and choice.mode != "no_tools" and needed:
        config: dict[str, Any] = {"tools": declarations(tools, settings.strict, _tool_spec)}
        if choice.mode == "forced":
            if not choice.tool:
                raise ValueError("bedrock_converse: a forced tool choice needs a tool name")
            config["toolChoice"] = {"tool": {"name": choice.tool}}
        elif choice.mode in ("auto", "required"):
            config["toolChoice"] = {"auto": {}} if choice.mode == "auto" else {"any": {}}
        body["toolConfig"] = config
    inference: dict[str, Any] = {}
    if settings.max_output_tokens is not None:
        inference["maxTokens"] = settings.max_output_tokens
    if settings.temperature is not None:
        inference["temperature"] = settings.temperature
    if settings.top_p is not None:
        inference["topP"] = settings.top_p
    if inference:
        body["inferenceConfig"] = inference
    path = (_STREAM_PATH if settings.stream else _PATH).format(model=quote(model, safe=""))
    headers = {"content-type": "application/json"}
    return WireRequest("POST", path, headers, body, stream=settings.stream)


def _tool_spec(tool: ToolSpec, strict: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": tool.name}
    if tool.description:
        spec["description"] = tool.description
    spec["inputSchema"] = {"json": tool.parameters}
    return {"toolSpec": spec}


def wire_schema(parameters: dict[str, Any], strict: bool) -> dict[str, Any]:
    """The schema as sent under `inputSchema.json`: unchanged."""
    return parameters


def sent_tools(request_body: Any) -> list[ToolSpec]:
    """The tool specs a request declared, schemas as sent."""
    specs = []
    for tool in as_list(as_dict(as_dict(request_body).get("toolConfig")).get("tools")):
        spec = as_dict(as_dict(tool).get("toolSpec"))
        schema = as_dict(spec.get("inputSchema")).get("json")
        if isinstance(spec.get("name"), str):
            specs.append(
                ToolSpec(
                    name=spec["name"],
                    description=str(spec.get("description") or ""),
                    parameters=schema if isinstance(schema, dict) else {"type": "object"},
                )
            )
    return specs


def read_request(body: Any, path: str) -> RequestView:
    """Read back what a request asked for; the model and the stream flag are in the path."""
    body = as_dict(body)
    last_user_text: str | None = None
    turns = 0
    for message in map(as_dict, as_list(body.get("messages"))):
        if message.get("role") != "user":
            continue
        blocks = [as_dict(block) for block in as_list(message.get("content"))]
        if any("toolResult" in block for block in blocks):
            turns += 1
        else:
            last_user_text = "".join(str(b["text"]) for b in blocks if "text" in b)
    names = tuple(spec.name for spec in sent_tools(body))
    match = _MODEL_IN_PATH.search(path)
    return RequestView(
        model=unquote(match.group(1)) if match else None,
        last_user_text=last_user_text,
        tool_result_turns=turns,
        tool_names=names,
        tool_choice=_read_choice(body) if names else ToolChoice("no_tools"),
        parallel_tool_calls=None,
        stream=path.split("?", 1)[0].endswith("/converse-stream"),
    )


def _read_choice(body: dict[str, Any]) -> ToolChoice:
    choice = as_dict(as_dict(body.get("toolConfig")).get("toolChoice"))
    name = as_dict(choice.get("tool")).get("name")
    if isinstance(name, str):
        return ToolChoice("forced", name)
    return ToolChoice("required" if "any" in choice else "auto")


def append_tool_result(
    messages: Sequence[HistoryItem],
    decision: Decision,
    results: Sequence[ToolResult],
) -> list[HistoryItem]:
    """Append the assistant message verbatim and one user message of `toolResult` blocks,
    in call order; a result without an id takes the next unanswered call of its tool."""
    turn = decision.assistant_turn
    turn = (
        turn
        if isinstance(turn, dict)
        else {"role": "assistant", "content": content_blocks(decision)}
    )
    pending = [call for call in decision.calls if call.call_id]
    blocks: list[tuple[int, dict[str, Any]]] = []
    for result in results:
        call = next((c for c in pending if c.call_id == result.call_id), None) or next(
            (c for c in pending if result.call_id is None and c.name == result.name), None
        )
        if call is not None:
            pending.remove(call)
        call_id = result.call_id or (call.call_id if call else None)
        block: dict[str, Any] = {"toolUseId": call_id, "content": [{"json": dict(result.content)}]}
        if result.is_error:
            block["status"] = "error"
        order = decision.calls.index(call) if call is not None else len(decision.calls)
        blocks.append((order, {"toolResult": block}))
    blocks.sort(key=lambda pair: pair[0])
    reply = {"role": "user", "content": [block for _, block in blocks]}
    return [*messages, WireItem(turn), WireItem(reply)]


def read_history(body: Any) -> History:
    """The tool-loop view of a request: `toolUse` turns and the `toolResult` messages after."""
    found = []
    for index, message in enumerate(as_list(as_dict(body).get("messages"))):
        blocks = [as_dict(block) for block in as_list(as_dict(message).get("content"))]
        calls = tuple(
            HistoryCall(_text(use.get("toolUseId")), str(use.get("name") or ""))
            for use in (as_dict(b.get("toolUse")) for b in blocks)
            if use
        )
        results = tuple(
            HistoryResult(_text(res.get("toolUseId")), None, res.get("status") == "error")
            for res in (as_dict(b.get("toolResult")) for b in blocks)
            if res
        )
        found.append(HistoryMessage(index, f"/messages/{index}", calls, results))
    return History(tuple(found), placement="next_message")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
