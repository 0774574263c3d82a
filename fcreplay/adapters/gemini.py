"""Google Gemini `generateContent` (v1beta) wire format: requests, decisions, streams, errors.

This module is the public face: requests, the next turn, its `CAPABILITIES`, and the
rest of the adapter protocols re-exported from its private siblings (`_gemini_schema`
converts schemas, `_gemini_decision` reads bodies and streams, `_gemini_errors`
error envelopes, `_gemini_render` renders answers and errors for the simulator,
`_gemini_lint` holds the provider's lint rules).

Choices this adapter makes (see the providers reference, section 5):

- Tools are declared with `parametersJsonSchema` (plain JSON Schema, `$schema`
  stripped), which carries the contract losslessly. The `parameters` OpenAPI
  subset is converted by `to_openapi_subset` (for lint and for reading other
  clients' recordings), never sent by default.
- Gemini has no strict flag and no parallel-call toggle: `strict` changes
  nothing and `parallel_tool_calls` is never sent.
- A call is a `functionCall` part. `finishReason` is `STOP` for calls too;
  `MAX_TOKENS` with a call, or a malformed-call finish reason, makes the
  decision `invalid`. A prompt blocked before any candidate (no candidates,
  `promptFeedback.blockReason`) is a refusal whose `finish_reason` is
  `"blockReason:<REASON>"`, since the response has no finishReason of its own.
- A candidate without any `finishReason` (a stream that ended early: Gemini has
  no sentinel, so this is how truncation shows) is `invalid`, stop `other`,
  `finish_reason` None, with whatever text and whole calls had arrived (the
  rule all adapters share, `_wire.truncated`).
- Tool results go back as one `user` content with one `functionResponse` per
  call; the response object is the result itself, or `{"error": result}` for an
  error result (the SDK's own convention for errors).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

import fcreplay.jsoncopy as jsoncopy
import fcreplay.strictjson as strictjson
from fcreplay.adapters._gemini_decision import BLOCK_PREFIX as BLOCK_PREFIX
from fcreplay.adapters._gemini_decision import parse_decision as parse_decision
from fcreplay.adapters._gemini_decision import parse_stream as parse_stream
from fcreplay.adapters._gemini_decision import parts_of
from fcreplay.adapters._gemini_history import read_history as read_history
from fcreplay.adapters._gemini_lint import GEMINI_RULES
from fcreplay.adapters._gemini_render import model_parts
from fcreplay.adapters._gemini_render import render_error as render_error
from fcreplay.adapters._gemini_render import render_response as render_response
from fcreplay.adapters._gemini_schema import from_openapi_subset as from_openapi_subset
from fcreplay.adapters._gemini_schema import to_openapi_subset as to_openapi_subset
from fcreplay.adapters._gemini_schema import wire_schema as wire_schema
from fcreplay.adapters._wire import as_dict, as_list, declarations, payload_items
from fcreplay.adapters.capabilities import Capabilities, StreamPath
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

NAME = "gemini"
VERSION = "2"
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
API_KEY_HEADER = "x-goog-api-key"
API_KEY_PREFIX = ""

_PATH = "/v1beta/models/{model}:generateContent"
_STREAM_PATH = "/v1beta/models/{model}:streamGenerateContent?alt=sse"
_JSON_HEADERS = {"content-type": "application/json"}
_MODEL_IN_PATH = re.compile(r"models/([^/:?]+):")

CAPABILITIES = Capabilities(
    url_markers=(":streamGenerateContent", ":generateContent"),
    # Without alt=sse a stream is one JSON array of the chunks.
    stream_path=StreamPath(":streamGenerateContent", sse_query=("alt", "sse")),
    conversation_keys=frozenset({"contents"}),
    # No parallel-call toggle at all (docs/providers.md §1.1, §5.4).
    parallel_knob=frozenset(),
    # `args` is an object: broken JSON arrives as a MALFORMED_FUNCTION_CALL stop, no call.
    broken_call_stop="malformed_call",
    lint=GEMINI_RULES,
)

_ROLES = {"user": "user", "assistant": "model"}
_MODES: dict[ToolMode, str] = {"auto": "AUTO", "required": "ANY", "forced": "ANY", "none": "NONE"}
_CHOICES: dict[str, ToolMode] = {
    "AUTO": "auto",
    "ANY": "required",
    "NONE": "none",
    # VALIDATED lets the model answer in text or calls, as AUTO does.
    "VALIDATED": "auto",
    "MODE_UNSPECIFIED": "auto",
}


# ---------------------------------------------------------------- requests


def build_request(
    model: str,
    messages: Sequence[HistoryItem],
    tools: Sequence[ToolSpec],
    settings: RequestSettings,
) -> WireRequest:
    """Build a `generateContent` (or `streamGenerateContent?alt=sse`) request."""
    system: dict[str, Any] | None = None
    contents: list[Any] = []
    for index, item in enumerate(messages):
        if isinstance(item, WireItem):
            contents.extend(jsoncopy.copied(payload_items(item)))
        elif item.role == "system":
            if index != 0:
                raise ValueError("gemini: only a leading system message is supported")
            system = {"parts": [{"text": item.content}]}
        else:
            contents.append({"role": _ROLES[item.role], "parts": [{"text": item.content}]})
    body: dict[str, Any] = {}
    if system is not None:
        body["systemInstruction"] = system
    body["contents"] = contents
    choice = settings.tool_choice
    if tools and choice.mode != "no_tools":
        body["tools"] = _wrapped(declarations(tools, settings.strict, _declaration))
        body["toolConfig"] = {"functionCallingConfig": _calling_config(choice)}
    generation: dict[str, Any] = {}
    if settings.temperature is not None:
        generation["temperature"] = settings.temperature
    if settings.top_p is not None:
        generation["topP"] = settings.top_p
    if settings.max_output_tokens is not None:
        generation["maxOutputTokens"] = settings.max_output_tokens
    if generation:
        body["generationConfig"] = generation
    model_id = model.removeprefix("models/")
    path = (_STREAM_PATH if settings.stream else _PATH).format(model=model_id)
    return WireRequest("POST", path, dict(_JSON_HEADERS), body, stream=settings.stream)


_WRAPPED: dict[int, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
"""The `tools` member of each shared declaration list, by the list's id (held)."""


def _wrapped(declared: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # Like the declarations, one read-only member for every request that sends them.
    hit = _WRAPPED.get(id(declared))
    if hit is None or hit[0] is not declared:
        if len(_WRAPPED) >= 256:
            _WRAPPED.clear()
        hit = (declared, strictjson.interned([{"functionDeclarations": declared}]))
        _WRAPPED[id(declared)] = hit
    return hit[1]


def _declaration(tool: ToolSpec, strict: bool) -> dict[str, Any]:
    declaration: dict[str, Any] = {"name": tool.name}
    if tool.description:
        declaration["description"] = tool.description
    declaration["parametersJsonSchema"] = wire_schema(tool.parameters, strict)
    return declaration


def _calling_config(choice: ToolChoice) -> dict[str, Any]:
    config: dict[str, Any] = {"mode": _MODES[choice.mode]}
    if choice.mode == "forced":
        if not choice.tool:
            raise ValueError("gemini: a forced tool choice needs a tool name")
        config["allowedFunctionNames"] = [choice.tool]
    return config


def read_request(body: Any, path: str) -> RequestView:
    """Read back what a sent request asked for (the inverse of `build_request`)."""
    request = as_dict(body)
    contents = [item for item in as_list(request.get("contents")) if isinstance(item, dict)]
    last_user_text: str | None = None
    for content in reversed(contents):
        parts = parts_of(content)
        if content.get("role", "user") != "user" or any(map(_is_response_part, parts)):
            continue
        texts = [part["text"] for part in parts if isinstance(part.get("text"), str)]
        if texts:
            last_user_text = "".join(texts)
            break
    turns = sum(1 for content in contents if any(map(_is_response_part, parts_of(content))))
    # Names only: converting and copying every schema is for `sent_tools`.
    names = tuple(declaration["name"] for declaration in _declarations(request))
    match = _MODEL_IN_PATH.search(path)
    return RequestView(
        model=match.group(1) if match else None,
        last_user_text=last_user_text,
        tool_result_turns=turns,
        tool_names=names,
        tool_choice=_read_choice(request, names),
        parallel_tool_calls=None,
        stream=":streamGenerateContent" in path,
    )


def _is_response_part(part: Mapping[str, Any]) -> bool:
    return "functionResponse" in part or "function_response" in part


def _read_choice(request: Mapping[str, Any], names: tuple[str, ...]) -> ToolChoice:
    if not names:
        return ToolChoice("no_tools")
    config = as_dict(request.get("toolConfig", request.get("tool_config")))
    calling = as_dict(config.get("functionCallingConfig", config.get("function_calling_config")))
    mode = calling.get("mode")
    mode = mode.upper() if isinstance(mode, str) else "AUTO"
    allowed = calling.get("allowedFunctionNames", calling.get("allowed_function_names"))
    if mode == "ANY" and isinstance(allowed, list) and len(allowed) == 1:
        return ToolChoice("forced", str(allowed[0]))
    return ToolChoice(_CHOICES.get(mode, "auto"))


def sent_tools(request_body: Any) -> list[ToolSpec]:
    """Return the function declarations of a request body as canonical ToolSpecs.

    Reads `parametersJsonSchema` as is and converts the `parameters` OpenAPI
    subset back to JSON Schema; camelCase and snake_case field names are both
    read, since other clients' recordings use either. Built-in tools are skipped.
    """
    specs: list[ToolSpec] = []
    for declaration in _declarations(request_body):
        description = declaration.get("description")
        specs.append(
            ToolSpec(
                name=declaration["name"],
                description=description if isinstance(description, str) else "",
                parameters=_declared_schema(declaration),
                effect="read",
            )
        )
    return specs


def _declarations(request_body: Any) -> list[dict[str, Any]]:
    """The function declarations of a request body that name their function."""
    found: list[dict[str, Any]] = []
    for entry in as_list(as_dict(request_body).get("tools")):
        if not isinstance(entry, dict):
            continue
        declarations = entry.get("functionDeclarations", entry.get("function_declarations"))
        for declaration in as_list(declarations):
            if isinstance(declaration, dict) and isinstance(declaration.get("name"), str):
                found.append(declaration)
    return found


def _declared_schema(declaration: Mapping[str, Any]) -> dict[str, Any]:
    for key in ("parametersJsonSchema", "parameters_json_schema"):
        if isinstance(declaration.get(key), dict):
            return cast("dict[str, Any]", jsoncopy.copied(declaration[key]))
    if isinstance(declaration.get("parameters"), dict):
        return cast("dict[str, Any]", from_openapi_subset(declaration["parameters"]))
    # A no-argument function is declared without parameters.
    return {"type": "object", "properties": {}}


# ---------------------------------------------------------------- history


def append_tool_result(
    messages: Sequence[HistoryItem],
    decision: Decision,
    results: Sequence[ToolResult],
) -> list[HistoryItem]:
    """Append the model turn verbatim and one `user` content of `functionResponse` parts."""
    turn = decision.assistant_turn
    if turn is None:
        # A decision rebuilt from JSON has no provider turn; no signature can be invented.
        turn = {"role": "model", "parts": model_parts(decision, signed=False)}
    responses = [
        {"functionResponse": _function_response(result, call_id)}
        for result, call_id in _in_call_order(decision.calls, results)
    ]
    return [
        *messages,
        WireItem(jsoncopy.copied(turn)),
        WireItem({"role": "user", "parts": responses}),
    ]


def _in_call_order(
    calls: Sequence[ToolCall], results: Sequence[ToolResult]
) -> list[tuple[ToolResult, str | None]]:
    """Pair results with calls, in call order: by id, else the next result of that tool.

    Gemini matches responses to calls by position (and id when there is one),
    so a result without an id takes the id of the call it answers. Results
    that answer no call keep their place after the rest.
    """
    pending = list(results)
    ordered: list[tuple[ToolResult, str | None]] = []
    for call in calls:
        match = next(
            (item for item in pending if call.call_id and item.call_id == call.call_id), None
        ) or next((item for item in pending if not item.call_id and item.name == call.name), None)
        if match is not None:
            pending.remove(match)
            ordered.append((match, match.call_id or call.call_id))
    ordered.extend((item, item.call_id) for item in pending)
    return ordered


def _function_response(result: ToolResult, call_id: str | None) -> dict[str, Any]:
    content = jsoncopy.copied(dict(result.content))
    response: dict[str, Any] = {}
    if call_id is not None:
        response["id"] = call_id
    response["name"] = result.name
    response["response"] = {"error": content} if result.is_error else content
    return response
