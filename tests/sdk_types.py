"""The official SDKs' own types as oracles for wire bodies: request keys and strict responses.

`undeclared(value, type)` walks a request body along an SDK's TypedDict request type
(openai, anthropic) and names every key the type does not declare; Gemini's pydantic
types forbid unknown fields themselves. `response_problems` validates a response body
or stream event against the SDK's response model in pydantic's strict mode (JSON input,
so enums may be strings), which is how a missing required field shows.
"""

from __future__ import annotations

import collections.abc
import json
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union, get_args, get_origin

import pydantic
from anthropic.types import Message, RawMessageStreamEvent
from anthropic.types.message_create_params import (
    MessageCreateParamsNonStreaming,
    MessageCreateParamsStreaming,
)
from google.genai import types as genai
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.chat.completion_create_params import (
    CompletionCreateParamsNonStreaming,
    CompletionCreateParamsStreaming,
)
from openai.types.responses import Response, ResponseStreamEvent
from openai.types.responses.response_create_params import (
    ResponseCreateParamsNonStreaming,
    ResponseCreateParamsStreaming,
)
from typing_extensions import get_type_hints, is_typeddict

_SEQUENCES = {list, collections.abc.Iterable, collections.abc.Sequence, tuple}
_MAPPINGS = {dict, collections.abc.Mapping}


def undeclared(value: Any, kind: Any, path: str = "") -> list[str]:
    """JSON pointers of the keys in `value` that the type `kind` does not declare."""
    origin = get_origin(kind)
    if kind is Any or kind is object:
        return []
    if is_typeddict(kind):
        if not isinstance(value, dict):
            return [f"{path}: {type(value).__name__} where {kind.__name__} is declared"]
        hints = get_type_hints(kind)
        found: list[str] = []
        for key, item in value.items():
            if key not in hints:
                found.append(f"{path}/{key}")
            else:
                found += undeclared(item, hints[key], f"{path}/{key}")
        return found
    if origin in (Union, types.UnionType):
        members = [member for member in get_args(kind) if fits(value, member)]
        fitting = [undeclared(value, member, path) for member in members]
        # The member that declares the most of the value is the one it was meant as.
        return min(fitting, key=len) if fitting else [f"{path}: no declared shape fits"]
    if origin in _SEQUENCES and isinstance(value, list):
        (item_kind, *_) = get_args(kind) or (Any,)
        items = enumerate(value)
        return [p for i, item in items for p in undeclared(item, item_kind, f"{path}/{i}")]
    if origin in _MAPPINGS and isinstance(value, dict):
        value_kind = get_args(kind)[1] if get_args(kind) else Any
        return [p for k, item in value.items() for p in undeclared(item, value_kind, f"{path}/{k}")]
    if origin is Literal:
        return [] if value in get_args(kind) else [f"{path}: {value!r} not in {get_args(kind)}"]
    return []


def fits(value: Any, kind: Any) -> bool:
    """Whether `value` can be of the union member `kind` (its `type` literal, its base type)."""
    origin = get_origin(kind)
    if is_typeddict(kind):
        if not isinstance(value, dict):
            return False
        hints = get_type_hints(kind)
        tag = hints.get("type")
        if get_origin(tag) is Literal and "type" in value:
            return value["type"] in get_args(tag)
        required = getattr(kind, "__required_keys__", frozenset())
        return set(required) <= set(value) or not required
    if origin is Literal:
        return value in get_args(kind)
    if origin in _SEQUENCES:
        return isinstance(value, list)
    if origin in _MAPPINGS:
        return isinstance(value, dict)
    if origin in (Union, types.UnionType):
        return any(fits(value, member) for member in get_args(kind))
    if kind is type(None):
        return value is None
    if isinstance(kind, type):
        if kind is float:
            return isinstance(value, int | float) and not isinstance(value, bool)
        return isinstance(value, kind)
    return True


_GEMINI_PARTS: dict[str, type[pydantic.BaseModel]] = {
    "systemInstruction": genai.Content,
    "toolConfig": genai.ToolConfig,
    "generationConfig": genai.GenerationConfig,
}


def gemini_undeclared(body: dict[str, Any]) -> list[str]:
    """Keys the google-genai types do not declare (they forbid unknown fields themselves)."""
    found = [f"/{key}" for key in body if key not in {*_GEMINI_PARTS, "contents", "tools"}]
    checks: list[tuple[str, Any, type[pydantic.BaseModel]]] = [
        *((f"/contents/{i}", item, genai.Content) for i, item in enumerate(body["contents"])),
        *((f"/tools/{i}", item, genai.Tool) for i, item in enumerate(body.get("tools", []))),
        *((f"/{key}", body[key], model) for key, model in _GEMINI_PARTS.items() if key in body),
    ]
    for where, value, model in checks:
        try:
            model.model_validate(value)
        except pydantic.ValidationError as exc:
            found += [f"{where}: {error['msg']} at {error['loc']}" for error in exc.errors()]
    return found


def request_undeclared(api: str, body: dict[str, Any]) -> list[str]:
    """What the SDK of `api` does not declare in a request body."""
    stream = body.get("stream") is True
    if api == "gemini":
        return gemini_undeclared(body)
    kinds: dict[str, tuple[Any, Any]] = {
        "openai_chat": (CompletionCreateParamsNonStreaming, CompletionCreateParamsStreaming),
        "openai_responses": (ResponseCreateParamsNonStreaming, ResponseCreateParamsStreaming),
        "anthropic": (MessageCreateParamsNonStreaming, MessageCreateParamsStreaming),
    }
    return undeclared(body, kinds[api][stream])


def _strict(model: type[pydantic.BaseModel]) -> Callable[[Any], None]:
    def check(value: Any) -> None:
        model.model_validate_json(json.dumps(value), strict=True)

    return check


def _event_models(union: Any) -> dict[str, type[pydantic.BaseModel]]:
    members = get_args(get_args(union)[0]) if get_origin(union) is typing.Annotated else ()
    members = members or get_args(union)
    models: dict[str, type[pydantic.BaseModel]] = {}
    for member in members:
        tag = member.model_fields["type"].annotation
        models.update(dict.fromkeys(get_args(tag), member))
    return models


_RESPONSES_EVENTS = _event_models(ResponseStreamEvent)
_ANTHROPIC_EVENTS = _event_models(RawMessageStreamEvent)


def _tagged(models: dict[str, type[pydantic.BaseModel]]) -> Callable[[Any], None]:
    def check(value: Any) -> None:
        _strict(models[value["type"]])(value)

    return check


RESPONSE_MODELS: dict[str, tuple[Callable[[Any], None], Callable[[Any], None]]] = {
    "openai_chat": (_strict(ChatCompletion), _strict(ChatCompletionChunk)),
    "openai_responses": (_strict(Response), _tagged(_RESPONSES_EVENTS)),
    "anthropic": (_strict(Message), _tagged(_ANTHROPIC_EVENTS)),
    "gemini": (_strict(genai.GenerateContentResponse), _strict(genai.GenerateContentResponse)),
}
"""api -> (check of a response body, check of one stream event's data)."""


def response_problems(api: str, body: Any, events: Any) -> list[str]:
    """Strict-mode validation errors of a 2xx response (its body or each stream event)."""
    body_check, event_check = RESPONSE_MODELS[api]
    found: list[str] = []
    values = [body] if events is None else [e.data for e in events if isinstance(e.data, dict)]
    for index, value in enumerate(values):
        if api == "anthropic" and value.get("type") == "ping":
            continue
        try:
            (body_check if events is None else event_check)(value)
        except pydantic.ValidationError as exc:
            found += [f"#{index} {error['loc']}: {error['msg']}" for error in exc.errors()]
    return found
