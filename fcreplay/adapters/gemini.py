"""Google Gemini `generateContent` (v1beta) wire format: requests, decisions, streams, errors.

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
  `finish_reason` None, with whatever text and whole calls had arrived.
- Tool results go back as one `user` content with one `functionResponse` per
  call; the response object is the result itself, or `{"error": result}` for an
  error result (the SDK's own convention for errors).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

from ..canonical import canonical_hash, normalize
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
from ..jsonsource import pointer
from ._wire import is_retryable, map_stop

NAME = "gemini"
VERSION = "1"
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
API_KEY_HEADER = "x-goog-api-key"
API_KEY_PREFIX = ""

_PATH = "/v1beta/models/{model}:generateContent"
_STREAM_PATH = "/v1beta/models/{model}:streamGenerateContent?alt=sse"
_JSON_HEADERS = {"content-type": "application/json"}
_RESPONSE_HEADERS = {"content-type": "application/json; charset=UTF-8"}
_STREAM_HEADERS = {"content-type": "text/event-stream"}
_MODEL_IN_PATH = re.compile(r"models/([^/:?]+):")
BLOCK_PREFIX = "blockReason:"
"""`finish_reason` prefix of a prompt blocked before any candidate was produced."""
_SIMULATED_SIGNATURE = "ZmNyZXBsYXktc2ltdWxhdG9y"  # base64("fcreplay-simulator")
_SIMULATED_MODEL = "fcreplay-simulator"

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

_FILTERED: Stop = "content_filter"
_MALFORMED: Stop = "malformed_call"
_OTHER: Stop = "other"
_STOPS: dict[str, Stop] = {
    "STOP": "end",
    "MAX_TOKENS": "length",
    **dict.fromkeys(
        (
            "SAFETY",
            "RECITATION",
            "LANGUAGE",
            "BLOCKLIST",
            "PROHIBITED_CONTENT",
            "SPII",
            "IMAGE_SAFETY",
            "IMAGE_PROHIBITED_CONTENT",
            "IMAGE_RECITATION",
        ),
        _FILTERED,
    ),
    **dict.fromkeys(
        ("MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"), _MALFORMED
    ),
    **dict.fromkeys(("OTHER", "FINISH_REASON_UNSPECIFIED", "NO_IMAGE", "IMAGE_OTHER"), _OTHER),
}
_NATURAL_FINISH: dict[Stop, str] = {
    "tool_call": "STOP",
    "end": "STOP",
    "length": "MAX_TOKENS",
    "content_filter": "SAFETY",
    "refusal": "SAFETY",
    "malformed_call": "MALFORMED_FUNCTION_CALL",
    "pause": "OTHER",
    "other": "OTHER",
}
_CANONICAL_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_RPC = "type.googleapis.com/google.rpc."
_QUOTA_METRIC = "generativelanguage.googleapis.com/generate_content_requests"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?)s\s*$")


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
            payload = copy.deepcopy(item.payload)
            contents.extend(payload if isinstance(payload, list) else [payload])
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
        declarations = [_declaration(tool, settings.strict) for tool in tools]
        body["tools"] = [{"functionDeclarations": declarations}]
        body["toolConfig"] = {"functionCallingConfig": _calling_config(choice)}
    generation: dict[str, Any] = {}
    if settings.temperature is not None:
        generation["temperature"] = settings.temperature
    if settings.max_output_tokens is not None:
        generation["maxOutputTokens"] = settings.max_output_tokens
    if generation:
        body["generationConfig"] = generation
    model_id = model.removeprefix("models/")
    path = (_STREAM_PATH if settings.stream else _PATH).format(model=model_id)
    return WireRequest("POST", path, dict(_JSON_HEADERS), body, stream=settings.stream)


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
    request = _as_dict(body)
    contents = [item for item in _as_list(request.get("contents")) if isinstance(item, dict)]
    last_user_text: str | None = None
    for content in reversed(contents):
        parts = _parts_of(content)
        if content.get("role", "user") != "user" or any(map(_is_response_part, parts)):
            continue
        texts = [part["text"] for part in parts if isinstance(part.get("text"), str)]
        if texts:
            last_user_text = "".join(texts)
            break
    turns = sum(1 for content in contents if any(map(_is_response_part, _parts_of(content))))
    names = tuple(spec.name for spec in sent_tools(request))
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
    config = _as_dict(request.get("toolConfig", request.get("tool_config")))
    calling = _as_dict(config.get("functionCallingConfig", config.get("function_calling_config")))
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
    for entry in _as_list(_as_dict(request_body).get("tools")):
        if not isinstance(entry, dict):
            continue
        declarations = entry.get("functionDeclarations", entry.get("function_declarations"))
        for declaration in _as_list(declarations):
            if not isinstance(declaration, dict) or not isinstance(declaration.get("name"), str):
                continue
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


def _declared_schema(declaration: Mapping[str, Any]) -> dict[str, Any]:
    for key in ("parametersJsonSchema", "parameters_json_schema"):
        if isinstance(declaration.get(key), dict):
            return cast("dict[str, Any]", copy.deepcopy(declaration[key]))
    if isinstance(declaration.get("parameters"), dict):
        return cast("dict[str, Any]", from_openapi_subset(declaration["parameters"]))
    # A no-argument function is declared without parameters.
    return {"type": "object", "properties": {}}


# ---------------------------------------------------------------- schemas

_SCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_VALUES = frozenset(
    {
        "items",
        "additionalItems",
        "additionalProperties",
        "unevaluatedItems",
        "unevaluatedProperties",
        "propertyNames",
        "contains",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)


def wire_schema(parameters: dict[str, Any], strict: bool) -> dict[str, Any]:
    """Return the JSON Schema sent as `parametersJsonSchema` for `parameters`.

    Only `$schema` is removed (wherever it appears as a keyword): the Gemini
    API rejects it. Gemini has no strict mode, so `strict` changes nothing and
    the transform is the same, reversible-up-to-`$schema` one either way.
    """
    del strict  # no provider-side strict mode to prepare the schema for
    return cast("dict[str, Any]", _without_schema_uri(parameters))


def _without_schema_uri(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return copy.deepcopy(schema)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "$schema":
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _without_schema_uri(sub) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_without_schema_uri(sub) for sub in value]
        elif key in _SCHEMA_VALUES:
            out[key] = (
                [_without_schema_uri(sub) for sub in value]
                if isinstance(value, list)
                else _without_schema_uri(value)
            )
        else:
            out[key] = copy.deepcopy(value)
    return out


_SUBSET_KEPT = frozenset(
    {
        "format",
        "title",
        "description",
        "example",
        "default",
        "required",
        "propertyOrdering",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "minProperties",
        "maxProperties",
    }
)
_SUBSET_HANDLED = frozenset(
    {"type", "enum", "const", "nullable", "properties", "items", "anyOf", "oneOf", "allOf"}
)
_SUBSET_CONSUMED = frozenset({"$defs", "definitions"})
_SUBSET_ONLY = frozenset({"nullable", "propertyOrdering", "property_ordering"})


def to_openapi_subset(schema: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """Convert JSON Schema to the `parameters` Schema subset of the Gemini API.

    Types become upper-case names; a type array or an `anyOf` branch of
    `{"type": "null"}` becomes `nullable`; `const` becomes a one-value `enum`;
    number enums become strings with `format: "enum"` (the documented form);
    local `$ref`s are inlined. Keywords outside the subset are dropped and
    returned as `(JSON pointer of the schema in the input, keyword)` pairs, in
    the order met: `additionalProperties`, `$schema`, `exclusiveMinimum`,
    `exclusiveMaximum`, `multipleOf`, `propertyNames`, ... . `oneOf` is sent as
    `anyOf` and listed too, since exclusivity is lost. A cyclic `$ref` is dropped.
    """
    converter = _SubsetConverter(schema)
    converted = converter.convert(schema, "")
    return converted, converter.dropped


class _SubsetConverter:
    """One JSON Schema → OpenAPI-subset conversion, collecting what it drops."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.dropped: list[tuple[str, str]] = []
        self._expanding: list[str] = []

    def drop(self, at: str, keyword: str) -> None:
        if (at, keyword) not in self.dropped:
            self.dropped.append((at, keyword))

    def convert(self, schema: Any, at: str) -> dict[str, Any]:
        if schema is True or schema == {}:
            return {}
        if not isinstance(schema, dict):
            self.drop(at, json.dumps(schema))
            return {}
        base: dict[str, Any] = {}
        ref = schema.get("$ref")
        if ref is not None:
            target = self._resolve(ref)
            if target is None or ref in self._expanding:
                self.drop(at, "$ref")
            else:
                self._expanding.append(ref)
                base = self.convert(target, ref[1:])
                self._expanding.pop()
        plain = self._convert_plain(schema, at)
        return {**base, **plain}

    def _resolve(self, ref: Any) -> Any:
        if not isinstance(ref, str) or not ref.startswith("#"):
            return None
        node: Any = self.root
        for raw in ref[1:].split("/")[1:]:
            key = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                return None
        return node

    def _convert_plain(self, schema: dict[str, Any], at: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        nullable = schema.get("nullable") is True
        kind = schema.get("type")
        if isinstance(kind, str):
            out["type"] = kind.upper()
        elif isinstance(kind, list):
            named = [str(item).upper() for item in kind if item != "null"]
            nullable = nullable or "null" in kind
            if len(named) == 1:
                out["type"] = named[0]
            elif named:
                out["anyOf"] = [{"type": name} for name in named]
            else:
                out["type"] = "NULL"
        nullable = self._convert_enum(schema, at, out) or nullable
        for keyword in ("anyOf", "oneOf"):
            branches = schema.get(keyword)
            if not isinstance(branches, list):
                continue
            if keyword == "oneOf":
                self.drop(at, "oneOf")
            kept = []
            for index, branch in enumerate(branches):
                if isinstance(branch, dict) and branch.get("type") == "null" and len(branch) == 1:
                    nullable = True
                else:
                    kept.append(self.convert(branch, at + pointer(keyword, index)))
            if len(kept) == 1 and "anyOf" not in out:
                out.update(kept[0])
            elif kept:
                out["anyOf"] = kept
        everything = schema.get("allOf")
        if isinstance(everything, list):
            if len(everything) == 1:
                out.update(self.convert(everything[0], at + pointer("allOf", 0)))
            else:
                self.drop(at, "allOf")
        properties = schema.get("properties")
        if isinstance(properties, dict):
            out["properties"] = {
                name: self.convert(sub, at + pointer("properties", name))
                for name, sub in properties.items()
            }
        if "items" in schema:
            if isinstance(schema["items"], dict | bool):
                out["items"] = self.convert(schema["items"], at + pointer("items"))
            else:
                self.drop(at, "items")
        for key, value in schema.items():
            if key in _SUBSET_KEPT and key not in out:
                out[key] = copy.deepcopy(value)
            elif key not in _SUBSET_KEPT | _SUBSET_HANDLED | _SUBSET_CONSUMED and key != "$ref":
                self.drop(at, key)
        if nullable:
            out["nullable"] = True
        return out

    def _convert_enum(self, schema: dict[str, Any], at: str, out: dict[str, Any]) -> bool:
        """Fill `out["enum"]`; return whether a null value made the schema nullable."""
        if "enum" in schema and isinstance(schema["enum"], list):
            keyword, values = "enum", list(schema["enum"])
        elif "const" in schema:
            keyword, values = "const", [schema["const"]]
        else:
            return False
        nullable = None in values
        values = [value for value in values if value is not None]
        if all(isinstance(value, str) for value in values):
            out["enum"] = values
        elif all(
            isinstance(value, int | float) and not isinstance(value, bool) for value in values
        ):
            out["enum"] = [json.dumps(value) for value in values]
            out["format"] = "enum"
        else:
            self.drop(at, keyword)
        return nullable


def from_openapi_subset(schema: Any) -> Any:
    """Read a `parameters` Schema back as JSON Schema (types lower-case, nullable as a union).

    The inverse of `to_openapi_subset` for everything that conversion keeps.
    """
    if not isinstance(schema, dict):
        return copy.deepcopy(schema)
    out: dict[str, Any] = {}
    numeric_enum = schema.get("format") == "enum" and schema.get("type") in ("INTEGER", "NUMBER")
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            out["type"] = value.lower()
        elif key in _SUBSET_ONLY or (key == "format" and numeric_enum):
            continue
        elif key == "enum" and numeric_enum and isinstance(value, list):
            out["enum"] = [json.loads(item) if isinstance(item, str) else item for item in value]
        elif key in ("properties", "defs") and isinstance(value, dict):
            name = "$defs" if key == "defs" else key
            out[name] = {prop: from_openapi_subset(sub) for prop, sub in value.items()}
        elif key in ("items", "additionalProperties"):
            out[key] = from_openapi_subset(value)
        elif key == "anyOf" and isinstance(value, list):
            out[key] = [from_openapi_subset(sub) for sub in value]
        elif key == "ref" and isinstance(value, str):
            out["$ref"] = value.replace("#/defs/", "#/$defs/")
        else:
            out[key] = copy.deepcopy(value)
    if schema.get("nullable") is True:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        elif isinstance(out.get("anyOf"), list):
            out["anyOf"].append({"type": "null"})
        if isinstance(out.get("enum"), list):
            out["enum"].append(None)
    return out


# ---------------------------------------------------------------- responses


def parse_decision(status: int, body: Any) -> Decision | ProviderError:
    """Turn a `generateContent` response body into a Decision or a ProviderError.

    A JSON-array body (`streamGenerateContent` without `alt=sse`) is read as
    the list of its chunks.
    """
    if isinstance(body, bytes | str):
        try:
            body = json.loads(body)
        except ValueError:
            if 200 <= status < 300:
                return _invalid_body(status, body)
            return _error(status, body)
    if not 200 <= status < 300:
        return _error(status, body)
    if isinstance(body, list):
        return _from_chunks(status, body, raw=body)
    if not isinstance(body, dict):
        return _invalid_body(status, body)
    if "error" in body:
        return _error(status, body)
    return _decide(body, raw=body, turn=_first_candidate(body).get("content"))


def parse_stream(status: int, events: Sequence[StreamEvent]) -> Decision | ProviderError:
    """Assemble a `streamGenerateContent` stream (SSE events or JSON-array chunks).

    Each event is one whole GenerateContentResponse chunk: text parts are
    deltas (merged), `functionCall` parts arrive whole, `finishReason` comes
    with the last chunk. Empty `{"text": ""}` parts, which some models send
    with the final chunk, are not kept in the assembled turn.
    """
    raw = [{"event": event.event, "data": event.data} for event in events]
    chunks: list[Any] = []
    for event in events:
        chunks.extend(event.data if isinstance(event.data, list) else [event.data])
    if not 200 <= status < 300:
        errors = (chunk for chunk in chunks if isinstance(chunk, dict) and "error" in chunk)
        return _error(status, next(errors, chunks[0] if chunks else None))
    return _from_chunks(status, chunks, raw=raw)


def _from_chunks(status: int, chunks: Sequence[Any], raw: Any) -> Decision | ProviderError:
    parts: list[dict[str, Any]] = []
    role = "model"
    finish: str | None = None
    feedback: Any = None
    model: Any = None
    answered = False
    for chunk in chunks:
        if isinstance(chunk, str | bytes):
            if not chunk.strip():
                continue
            return _invalid_body(status, chunk)
        if not isinstance(chunk, dict):
            continue
        if "error" in chunk:
            return _error(status, chunk)
        model = chunk.get("modelVersion", model)
        feedback = chunk.get("promptFeedback", feedback)
        candidate = _first_candidate(chunk)
        if not candidate:
            continue
        answered = True
        content = _as_dict(candidate.get("content"))
        role = content["role"] if isinstance(content.get("role"), str) else role
        for part in _parts_of(content):
            _merge_part(parts, part)
        if isinstance(candidate.get("finishReason"), str):
            finish = candidate["finishReason"]
    response: dict[str, Any] = {}
    if answered:
        candidate = {"content": {"role": role, "parts": parts}}
        if finish is not None:
            candidate["finishReason"] = finish
        response["candidates"] = [candidate]
    if feedback is not None:
        response["promptFeedback"] = feedback
    if model is not None:
        response["modelVersion"] = model
    turn = response["candidates"][0]["content"] if answered else None
    return _decide(response, raw=raw, turn=turn)


_TEXT_KEYS = frozenset({"text", "thought"})


def _merge_part(parts: list[dict[str, Any]], part: dict[str, Any]) -> None:
    """Append a streamed part, joining a text delta to the text part before it."""
    if set(part) <= _TEXT_KEYS and part.get("text") == "":
        return
    previous = parts[-1] if parts else None
    if (
        previous is not None
        and isinstance(previous.get("text"), str)
        and isinstance(part.get("text"), str)
        and set(previous) <= _TEXT_KEYS
        and set(part) <= _TEXT_KEYS | {"thoughtSignature"}
        and previous.get("thought", False) == part.get("thought", False)
    ):
        previous["text"] += part["text"]
        if "thoughtSignature" in part:
            previous["thoughtSignature"] = part["thoughtSignature"]
        return
    parts.append(copy.deepcopy(part))


def _decide(response: Mapping[str, Any], *, raw: Any, turn: Any) -> Decision:
    model = response.get("modelVersion")
    model = model if isinstance(model, str) else None
    candidate = _first_candidate(response)
    if not candidate:
        block = _as_dict(response.get("promptFeedback")).get("blockReason")
        if isinstance(block, str):
            return Decision(
                kind="refusal",
                finish_reason=BLOCK_PREFIX + block,
                stop="content_filter",
                raw_response=raw,
                model=model,
            )
        return Decision(
            kind="invalid", finish_reason=None, stop="other", raw_response=raw, model=model
        )
    parts = _parts_of(_as_dict(candidate.get("content")))
    calls = tuple(call for call in map(_call, parts) if call is not None)
    text = "".join(
        part["text"]
        for part in parts
        if isinstance(part.get("text"), str) and part.get("thought") is not True
    )
    finish = candidate.get("finishReason")
    finish = finish if isinstance(finish, str) else None
    stop = map_stop(_STOPS, finish, default="other")
    if calls and stop == "end":
        stop = "tool_call"
    return Decision(
        kind=_kind(calls, stop, finished=finish is not None),
        text=text or None,
        calls=calls,
        finish_reason=finish,
        stop=stop,
        raw_response=raw,
        assistant_turn=copy.deepcopy(turn),
        model=model,
    )


def _kind(calls: tuple[ToolCall, ...], stop: Stop, *, finished: bool) -> DecisionKind:
    if not finished:
        return "invalid"  # the turn never ended, so neither text nor calls are final
    if calls:
        unusable = stop in ("length", "malformed_call")
        return "invalid" if unusable or any(c.arguments is None for c in calls) else "tool_call"
    if stop == "content_filter":
        return "refusal"
    return "invalid" if stop == "malformed_call" else "text"


def _call(part: Mapping[str, Any]) -> ToolCall | None:
    call = part.get("functionCall")
    if not isinstance(call, dict):
        return None
    raw = call.get("args")
    # `args` is a protobuf Struct: an object or nothing, never JSON text to decode.
    # Struct numbers are doubles, so integral floats go back to ints (as the SDK does).
    arguments = {} if raw is None else normalize(raw) if isinstance(raw, dict) else None
    call_id = call.get("id")
    name = call.get("name")
    return ToolCall(
        call_id=call_id if isinstance(call_id, str) else None,
        name=name if isinstance(name, str) else "",
        arguments=arguments,
        raw_arguments=copy.deepcopy(raw),
    )


def _first_candidate(response: Mapping[str, Any]) -> dict[str, Any]:
    candidates = _as_list(response.get("candidates"))
    return candidates[0] if candidates and isinstance(candidates[0], dict) else {}


def _parts_of(content: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [part for part in _as_list(content.get("parts")) if isinstance(part, dict)]


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# ---------------------------------------------------------------- errors


def _error(status: int, body: Any) -> ProviderError:
    """Read a `google.rpc.Status` envelope, tolerating strings, arrays and flat shapes."""
    error: Any = body
    if isinstance(error, bytes | str):
        try:
            error = json.loads(error)
        except ValueError:
            text = error.decode("utf-8", "replace") if isinstance(error, bytes) else error
            error = text.strip()
    if isinstance(error, list):
        error = next((item for item in error if isinstance(item, dict)), None)
    if isinstance(error, dict) and "error" in error:
        error = error["error"]
    if not isinstance(error, dict):
        said = str(error) if error not in (None, "") else f"HTTP {status}"
        return ProviderError(status, None, None, said, is_retryable(status), raw=body)
    code = error.get("code")
    if 200 <= status < 300 and type(code) is int and 400 <= code < 600:
        status = code  # an error envelope inside a 200 stream carries the real status
    name = error.get("status")
    canonical: str | None = (
        name if isinstance(name, str) else code if isinstance(code, str) else None
    )
    message = error.get("message")
    details = [detail for detail in _as_list(error.get("details")) if isinstance(detail, dict)]
    reasons = (detail["reason"] for detail in details if isinstance(detail.get("reason"), str))
    delays = (_seconds(detail.get("retryDelay")) for detail in details)
    per_day = any(
        "PerDay" in str(violation.get("quotaId", ""))
        for detail in details
        for violation in _as_list(detail.get("violations"))
        if isinstance(violation, dict)
    )
    return ProviderError(
        status=status,
        type=canonical,
        code=next(reasons, None),
        message=message if isinstance(message, str) else f"HTTP {status}",
        # A per-day quota will not come back in seconds, whatever RetryInfo says.
        retryable=is_retryable(status) and not per_day,
        retry_after=next((delay for delay in delays if delay is not None), None),
        raw=body,
    )


def _seconds(value: Any) -> float | None:
    """Read a protobuf Duration: "34s", "1.5s", or {"seconds": 34, "nanos": 0}."""
    if isinstance(value, str):
        match = _DURATION.match(value)
        return float(match.group(1)) if match else None
    if isinstance(value, dict):
        seconds, nanos = value.get("seconds", 0), value.get("nanos", 0)
        try:
            return float(seconds) + float(nanos) / 1e9
        except (TypeError, ValueError):
            return None
    return None


def _invalid_body(status: int, body: Any) -> ProviderError:
    shown = body if isinstance(body, str) else type(body).__name__
    return ProviderError(
        status=status,
        type="invalid_response",
        code=None,
        message=f"not a GenerateContentResponse: {str(shown)[:120]!r}",
        retryable=False,
        raw=body,
    )


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
        turn = {"role": "model", "parts": _model_parts(decision, signed=False)}
    responses = [
        {"functionResponse": _function_response(result, call_id)}
        for result, call_id in _in_call_order(decision.calls, results)
    ]
    return [
        *messages,
        WireItem(copy.deepcopy(turn)),
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
    content = copy.deepcopy(dict(result.content))
    response: dict[str, Any] = {}
    if call_id is not None:
        response["id"] = call_id
    response["name"] = result.name
    response["response"] = {"error": content} if result.is_error else content
    return response


# ---------------------------------------------------------------- rendering


def render_response(decision: Decision, stream: bool = False) -> WireResponse:
    """Render a decision as a realistic Gemini response body or SSE chunk list."""
    model = decision.model or _SIMULATED_MODEL
    finish = _finish_for(decision)
    envelope: dict[str, Any] = {
        "modelVersion": model,
        "responseId": "fcr" + canonical_hash(decision.to_json())[:21],
    }
    usage = {
        "promptTokenCount": 64,
        "candidatesTokenCount": 8 + len(decision.text or "") // 4 + 16 * len(decision.calls),
    }
    usage["totalTokenCount"] = usage["promptTokenCount"] + usage["candidatesTokenCount"]
    if finish is not None and finish.startswith(BLOCK_PREFIX):
        blocked = {
            "promptFeedback": {"blockReason": finish.removeprefix(BLOCK_PREFIX)},
            "usageMetadata": {"promptTokenCount": 64, "totalTokenCount": 64},
            **envelope,
        }
        if stream:
            return WireResponse(200, dict(_STREAM_HEADERS), events=(StreamEvent(None, blocked),))
        return WireResponse(200, dict(_RESPONSE_HEADERS), body=blocked)
    parts = _model_parts(decision, signed=True)
    if not stream:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts} if parts else {}}
        if finish is not None:
            candidate["finishReason"] = finish
        candidate["index"] = 0
        body = {"candidates": [candidate], "usageMetadata": usage, **envelope}
        return WireResponse(200, dict(_RESPONSE_HEADERS), body=body)
    pieces: list[list[dict[str, Any]]] = []
    for part in parts:
        if "text" in part:
            pieces.extend([{"text": fragment}] for fragment in _fragments(part["text"]))
        else:
            pieces.append([part])
    if decision.calls and finish is not None:
        pieces.append([{"text": ""}])  # as observed: calls, then an empty text part that finishes
    chunks: list[dict[str, Any]] = []
    for piece in pieces or [[]]:
        content = {"role": "model", "parts": piece} if piece else {}
        chunks.append({"candidates": [{"content": content, "index": 0}], **envelope})
    if finish is not None:
        chunks[-1]["candidates"][0]["finishReason"] = finish
        chunks[-1]["usageMetadata"] = usage
    events = tuple(StreamEvent(None, chunk) for chunk in chunks)
    return WireResponse(200, dict(_STREAM_HEADERS), events=events)


def _finish_for(decision: Decision) -> str | None:
    if decision.finish_reason is not None:
        return decision.finish_reason
    if decision.kind == "invalid" and decision.stop == "other":
        return None  # an unfinished turn: the candidate carries no finishReason
    return _NATURAL_FINISH[decision.stop]


def _model_parts(decision: Decision, *, signed: bool) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if decision.text:
        parts.append({"text": decision.text})
    for index, call in enumerate(decision.calls):
        function: dict[str, Any] = {"name": call.name}
        args = call.raw_arguments if call.raw_arguments is not None else call.arguments or None
        if args is not None:
            function["args"] = copy.deepcopy(args)
        if call.call_id is not None:
            function["id"] = call.call_id
        part: dict[str, Any] = {"functionCall": function}
        if signed and index == 0:
            part["thoughtSignature"] = _SIMULATED_SIGNATURE
        parts.append(part)
    return parts


def _fragments(text: str, count: int = 3) -> list[str]:
    size = max(1, -(-len(text) // count))
    return [text[start : start + size] for start in range(0, len(text), size)]


def render_error(error: ProviderError, stream: bool = False) -> WireResponse:
    """Render the `google.rpc.Status` envelope of `error`.

    Gemini answers a failed streaming request with the same plain JSON body
    (not an SSE event), so `stream` changes nothing. A 429 names a per-minute
    quota when retryable and a per-day quota when not; `retry_after` becomes
    a RetryInfo detail.
    """
    del stream  # errors to streaming requests are plain bodies too
    details: list[dict[str, Any]] = []
    if error.code:
        details.append(
            {
                "@type": _RPC + "ErrorInfo",
                "reason": error.code,
                "domain": "googleapis.com",
                "metadata": {"service": "generativelanguage.googleapis.com"},
            }
        )
    if error.status == 429:
        period = "PerMinute" if error.retryable else "PerDay"
        details.append(
            {
                "@type": _RPC + "QuotaFailure",
                "violations": [
                    {
                        "quotaMetric": _QUOTA_METRIC,
                        "quotaId": f"GenerateRequests{period}PerProjectPerModel",
                    }
                ],
            }
        )
    if error.retry_after is not None:
        seconds = f"{error.retry_after:.9f}".rstrip("0").rstrip(".")
        details.append({"@type": _RPC + "RetryInfo", "retryDelay": seconds + "s"})
    envelope: dict[str, Any] = {
        "code": error.status,
        "message": error.message,
        "status": error.type or _CANONICAL_STATUS.get(error.status, "UNKNOWN"),
    }
    if details:
        envelope["details"] = details
    return WireResponse(error.status, dict(_RESPONSE_HEADERS), body={"error": envelope})
